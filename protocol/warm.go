package protocol

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// Warm prepares, in the background, what a process's first start or
// resume would otherwise pay for itself: the engine's realms, and the
// one-time initialisations of the runtime and standard library on the
// start path (warmProcess) at once, and on the path of a resume from
// snapshot bytes (engine.WarmResume) once the session is quiet
// (warmQuiet). A serving process calls it at startup; a compile also does.
// It is cheap to call again.
func (s *Session) Warm() {
	s.engine.Warm()
	processWarm.Do(func() {
		s.warming.Add(2)
		go func() {
			defer s.warming.Done()
			warmProcess()
		}()
		s.quiet.Store(afterQuiet(warmQuiet, warmGiveUp, engine.WarmResume, s.warming.Done))
	})
}

// processWarm begins the process's warm-up once.
var processWarm sync.Once

// The resume path's warm-up waits until no request has been read or
// served for warmQuiet. In a fresh process that had been idle, it took a
// 50 KB answer's cold resume from 1.64-1.72 to 1.34-1.58 ms (40 fresh
// processes, three runs each alternated), but run at once beside the
// start path's it kept both CPUs of a small machine busy for longer, and
// a resume sent at once after start-up (after a crash) took 0.1-0.3 ms
// longer for it. The start path's warm-up does not wait: a first start
// sent at once after the compile took 1.09-1.11 ms beside it, and
// 1.37-1.40 ms when it waited for quiet. A session that serves
// warmGiveUp requests before it is quiet has done, for real, what the
// warm-up would have: it is dropped.
const (
	warmQuiet  = 2 * time.Millisecond
	warmGiveUp = 256
)

// warmProcess does what the first start in a process would otherwise do
// for the first time, each costing it tens of microseconds (perf over 300
// fresh processes): the random source's per-process state (behind
// Entropy), the engine's (engine.WarmProcess), encoding/json's decoders
// for capabilities and limits.
func warmProcess() {
	RandomEntropy()
	engine.WarmProcess()
	opts := fields{
		{key: wire.FieldCapabilities, raw: json.RawMessage(`["a","b"]`)},
		{key: wire.FieldLimits, raw: json.RawMessage(`{"instruction_budget":1,"heap_limit_bytes":1048576,"max_outstanding_host_calls":1}`)},
		{key: wire.FieldProfile, raw: json.RawMessage(`true`)},
	}
	_, _ = opts.capabilities(wire.FieldCapabilities)
	_, _ = opts.limits(wire.FieldLimits)
	_, _ = opts.bool(wire.FieldProfile)
}

// quietRun runs a function, on a goroutine of its own, once its session
// has read and served no request for a while. The session reports each
// request read (begin) and served (end); while the run is pending both
// take a lock, and after it began or was dropped, an atomic load.
type quietRun struct {
	pending atomic.Bool // neither begun nor dropped

	mu       sync.Mutex
	timer    *time.Timer
	quiet    time.Duration
	inFlight int // requests read and not yet served
	left     int // requests served before it is dropped
	run      func()
	done     func()
}

// afterQuiet arranges for run to begin once quiet has passed with no
// request in flight, counting from now. done is called once when run has
// returned, or when it is dropped: after giveUp requests served, or by
// drop.
func afterQuiet(quiet time.Duration, giveUp int, run, done func()) *quietRun {
	q := &quietRun{quiet: quiet, left: giveUp, run: run, done: done}
	q.pending.Store(true)
	q.timer = time.AfterFunc(quiet, q.fire)
	return q
}

// fire is the timer's: it begins the run unless a request is in flight
// (one read after the timer fired holds it back; end sets the timer
// again) or the run has begun or been dropped.
func (q *quietRun) fire() {
	q.mu.Lock()
	begin := q.pending.Load() && q.inFlight == 0
	if begin {
		q.pending.Store(false)
	}
	q.mu.Unlock()
	if begin {
		defer q.done()
		q.run()
	}
}

// begin reports a request read.
func (q *quietRun) begin() {
	if q == nil || !q.pending.Load() {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.inFlight++
	q.timer.Stop()
}

// end reports a request served.
func (q *quietRun) end() {
	if q == nil || !q.pending.Load() {
		return
	}
	q.mu.Lock()
	if !q.pending.Load() {
		q.mu.Unlock()
		return
	}
	if q.inFlight > 0 { // a request read before the run was arranged was not counted
		q.inFlight--
	}
	q.left--
	if q.left <= 0 {
		q.pending.Store(false)
		q.timer.Stop()
		q.mu.Unlock()
		q.done()
		return
	}
	if q.inFlight == 0 {
		q.timer.Reset(q.quiet)
	}
	q.mu.Unlock()
}

// drop drops the run if it has not begun.
func (q *quietRun) drop() {
	if q == nil {
		return
	}
	q.mu.Lock()
	dropped := q.pending.Load()
	if dropped {
		q.pending.Store(false)
		q.timer.Stop()
	}
	q.mu.Unlock()
	if dropped {
		q.done()
	}
}
