package engine

import (
	"sync"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
)

// ErrWallTime ends a segment that ran longer than its wall_time_ms.
var ErrWallTime = &Error{Kind: KindLimit, Message: "wall time exceeded"}

// A Stopper lets another goroutine end the segment an execution runs under
// it (a start, or one resume): the host cancelling it, or its wall-time
// limit running out. A segment that a Stopper stopped ends with the
// Stopper's error, whatever it was doing, even if it was about to suspend
// or complete; the execution is then over. A Stopper stopped before its
// segment begins ends it at its first instruction.
//
// goja's Interrupt is the mechanism, as for the limits the meter enforces;
// the interpreter looks for it between instructions and long built-ins
// every 1,024 iterations. The Stopper makes sure an interrupt only ever
// reaches the segment it was meant for, never a parked execution or a
// later segment.
type Stopper struct {
	mu      sync.Mutex
	err     *Error
	running *goja.Runtime // the runtime of the segment in progress; nil outside one
	timer   *time.Timer   // the segment's wall-time limit
	stopped chan struct{} // closed by the first Stop
}

// NewStopper returns a Stopper that has not stopped.
func NewStopper() *Stopper { return &Stopper{} }

// Stop ends the segment with err, now if it is running, or as soon as it
// begins. Only the first Stop counts.
func (s *Stopper) Stop(err *Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	s.err = err
	if s.stopped != nil {
		close(s.stopped)
	}
	if s.running != nil {
		s.running.Interrupt(err)
	}
}

// stopping returns a channel closed when the segment in progress is
// stopped, or nil outside a segment (a wait on it then waits forever).
func (s *Stopper) stopping() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil {
		return nil
	}
	if s.stopped == nil {
		s.stopped = make(chan struct{})
		if s.err != nil {
			close(s.stopped)
		}
	}
	return s.stopped
}

// Stopped reports the error the Stopper stopped with, or nil.
func (s *Stopper) Stopped() *Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// attach begins a segment on rt, with the wall-time limit of l.
func (s *Stopper) attach(rt *goja.Runtime, l time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running = rt
	if s.err != nil {
		rt.Interrupt(s.err)
		return
	}
	if l > 0 {
		s.timer = time.AfterFunc(l, func() { s.Stop(ErrWallTime) })
	}
}

// detach ends the segment: no interrupt reaches rt after it. It returns the
// error the segment was stopped with, if it was.
func (s *Stopper) detach() *Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running = nil
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	return s.err
}

// wallTime converts a wall_time_ms limit (0: none).
func wallTime(ms uint64) time.Duration {
	const most = uint64(1<<63-1) / uint64(time.Millisecond)
	return time.Duration(min(ms, most)) * time.Millisecond
}
