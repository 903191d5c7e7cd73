package protocol

import (
	"strconv"
	"sync"

	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// In-band cancel. The sidecar reads requests ahead while it serves one, so
// a cancel can arrive while a start or resume runs. A cancel takes effect
// when it is read (Session.Read), not when its turn to be answered comes:
// it reaches every start/resume with its target id that has been read and
// not yet answered (a flight), whether it is running or still waiting its
// turn. Such a request is answered `Limit: execution cancelled`: its
// segment is stopped, at once if it runs, at its first instruction if it
// has yet to begin, so the outcome (the execution ended, its parked state
// dropped) does not depend on which it was. The cancel, answered after it,
// reports was_running: true. Nothing else is cancellable: a cancel whose
// target is not in flight changes nothing and reports was_running: false.

// flight is a start or resume between being read and being answered.
type flight struct {
	id   uint64
	stop *engine.Stopper // ends the request's segment once it runs

	// Guarded by flights.mu.
	cancelled bool // a cancel was read while the flight was open
	settled   bool // its outcome is decided: no cancel reaches it any more
}

// flights are the open flights of a session, shared by the goroutine that
// reads requests and the one that serves them.
type flights struct {
	mu   sync.Mutex
	open []*flight // few: at most the requests read ahead, plus one
}

// add opens a flight for a start or resume just read.
func (fs *flights) add(id uint64) *flight {
	fl := &flight{id: id, stop: engine.NewStopper()}
	fs.mu.Lock()
	fs.open = append(fs.open, fl)
	fs.mu.Unlock()
	return fl
}

// cancel cancels every open flight with this id and reports whether there
// was one. A running segment is interrupted at once.
func (fs *flights) cancel(id uint64) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	found := false
	for _, fl := range fs.open {
		if fl.id == id {
			fl.cancelled = true
			fl.stop.Stop(engine.ErrCancelled)
			found = true
		}
	}
	return found
}

// settle decides fl's outcome: from here on no cancel reaches it. It
// reports whether one did before; calling it again gives the same answer.
func (fs *flights) settle(fl *flight) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if !fl.settled {
		fl.settled = true
		for i, o := range fs.open {
			if o == fl {
				fs.open = append(fs.open[:i], fs.open[i+1:]...)
				break
			}
		}
	}
	return fl.cancelled
}

// cancelAnswer is a cancel request, settled when it was read.
type cancelAnswer struct {
	target     uint64
	wasRunning bool
	err        error // the request was malformed: it cancelled nothing
}

// answer is a cancel of target, decoded with err when it was read: if it
// is well formed, it cancels target's flights at once.
func (fs *flights) answer(target uint64, err error) *cancelAnswer {
	if err != nil {
		return &cancelAnswer{err: err}
	}
	return &cancelAnswer{target: target, wasRunning: fs.cancel(target)}
}

// encode answers a well-formed cancel ({"kind":"cancelled"}).
func (c *cancelAnswer) encode(id uint64, jsonl bool) Response {
	b := okHeader(id, jsonl, 0)
	b = append(b, resultOf+wire.KindCancelled+`","`+wire.FieldTargetID+`":`...)
	b = strconv.AppendUint(b, c.target, 10)
	b = append(b, `,"`+wire.FieldWasRunning+`":`...)
	b = strconv.AppendBool(b, c.wasRunning)
	return Response{Header: append(b, "}}"...)}
}
