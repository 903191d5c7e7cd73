package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/host"

	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

var (
	// ErrCancelled is matched by the error of every Run of an execution
	// that Runner.Cancel ended: the one running at the time, and every
	// later one, in this process or another reading the same Store.
	ErrCancelled = errors.New("execution cancelled")

	// ErrUnknownExecution is returned by Runner.Cancel for an ID that is
	// neither running in the Runner nor in its Store. Nothing is recorded:
	// a later Run of that ID starts it.
	ErrUnknownExecution = errors.New("no such execution")

	// ErrExecutionDone is returned by Runner.Cancel for an execution that
	// had already ended with a result or a guest failure (before the
	// cancel, or in a race with it). Its stored outcome stays.
	ErrExecutionDone = errors.New("execution already ended")
)

// cancelledFailure is the Failure text of a cancelled Checkpoint, so that
// a Store that does not keep Checkpoint.Cancelled still fails the
// execution rather than report a result.
const cancelledFailure = "execution cancelled by the host"

// runState is an execution ID claimed by a Run or a Cancel of a Runner.
type runState struct {
	cancelling bool                    // claimed by Cancel, not Run
	cancel     context.CancelCauseFunc // the Run's; nil for a Cancel
	done       chan struct{}           // closed when the claim ends

	mu        sync.Mutex
	requested bool  // Cancel asked the Run to end
	result    error // for Cancel, set before done closes
}

func (rs *runState) cancelRequested() bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.requested
}

// claim registers id as being run (cancel set) or cancelled (cancel
// nil). A Run or Cancel that finds a Cancel holding the id waits for it
// to end; a Run that finds a Run fails with ErrExecutionBusy, or waits
// for it to end if wait is set; a Cancel that finds a Run gets
// that Run's state, to end it.
func (r *Runner) claim(ctx context.Context, id string, cancel context.CancelCauseFunc, wait bool) (*runState, error) {
	for {
		r.mu.Lock()
		cur := r.runs[id]
		if cur == nil {
			if r.runs == nil {
				r.runs = map[string]*runState{}
			}
			rs := &runState{cancelling: cancel == nil, cancel: cancel, done: make(chan struct{})}
			r.runs[id] = rs
			r.mu.Unlock()
			return rs, nil
		}
		r.mu.Unlock()
		switch {
		case !cur.cancelling && cancel != nil && !wait:
			return nil, busyError(id)
		case !cur.cancelling && cancel != nil:
		case !cur.cancelling:
			return cur, nil
		}
		select {
		case <-cur.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (r *Runner) unclaim(id string, rs *runState) {
	r.mu.Lock()
	delete(r.runs, id)
	r.mu.Unlock()
	close(rs.done)
}

// Cancel ends execution id for good. If a Run of id is in progress in this
// Runner, it returns promptly with an error matching ErrCancelled: its
// running segment is cancelled in the sidecar in band (as when Run's ctx
// is done), the contexts of its running capability calls are cancelled,
// and Cancel waits for that Run to return (or for ctx). In every case the
// Store records the execution as cancelled (Checkpoint.Cancelled), its
// snapshot dropped, and every later Run of id returns an error matching
// ErrCancelled instead of continuing it, also after a restart of the host
// with a Store that outlives it (DirStore).
//
// Cancel returns nil once the execution is recorded cancelled, and also
// for one that already was (Cancel is idempotent). It returns an error
// matching ErrUnknownExecution, recording nothing, for an id the Store
// does not know and no Run of the Runner is starting; and ErrExecutionDone
// for one that had already completed or failed (a Run racing the cancel
// to its end included), whose outcome stays. If ctx ends before a running
// Run has returned, Cancel returns ctx's error, and the Run still records
// the cancel when it returns.
//
// Cancel stops only Runs of this Runner. With a LeaseStore, Cancel takes
// the execution's lease as a Run does, so an execution that a Run of
// another Runner or process holds is not recorded cancelled: Cancel fails
// with an error matching ErrExecutionBusy (cancel where the execution
// runs, or once its Run returned). With a Store without leases, that Run
// is not told, and its next save replaces the cancelled record.
func (r *Runner) Cancel(ctx context.Context, id string) error {
	if id == "" {
		return refuse(ErrInvalidRun, "execution ID is empty")
	}
	rs, err := r.claim(ctx, id, nil, false)
	if err != nil {
		return err
	}
	if rs.cancel != nil {
		// A Run holds id: end it; it records the cancel as it returns.
		rs.mu.Lock()
		rs.requested = true
		rs.cancel(fmt.Errorf("execution %q: %w", id, ErrCancelled))
		rs.mu.Unlock()
		select {
		case <-rs.done:
			return rs.result
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	defer r.unclaim(id, rs)
	hl, err := r.acquire(ctx, id, false)
	if err != nil {
		return err
	}
	defer hl.release(ctx)
	store := r.storeFor(hl.fence())
	cp, ok, err := store.Load(ctx, id)
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("execution %q: %w", id, ErrUnknownExecution)
	case cp.Cancelled:
		return nil
	case cp.Done:
		return fmt.Errorf("execution %q: %w", id, ErrExecutionDone)
	}
	return store.Save(ctx, id, cancelledCheckpoint(cp.ProgramID, cp.Calls, cp.HostCalls))
}

func cancelledCheckpoint(programID string, calls int, mode host.HostCalls) *Checkpoint {
	return &Checkpoint{ProgramID: programID, Calls: calls, HostCalls: mode, Done: true, Cancelled: true,
		Failure: cancelledFailure}
}

// endCancelled ends a Run that Cancel asked to end, once its calls have
// stopped: it records the cancel, unless the execution reached its end
// first, and tells Cancel how it went.
func (r *Runner) endCancelled(ctx context.Context, e Execution, rs *runState, x *execution, store Store, v value.Value, err error) (value.Value, error) {
	ctx = context.WithoutCancel(ctx)
	var cp *Checkpoint
	if x != nil {
		cp = x.cp
	} else {
		loaded, ok, lerr := store.Load(ctx, e.ID)
		if lerr != nil {
			rs.result = lerr
			return value.Value{}, lerr
		}
		if ok {
			cp = loaded
		}
	}
	var done *Checkpoint
	switch {
	case cp == nil: // cancelled before its start was stored
		done = cancelledCheckpoint(e.Program.ID, 0, "")
		if r.HostCalls != host.HostCallsOne {
			done.HostCalls = host.HostCallsBatch
		}
	case cp.Cancelled:
	case cp.Done:
		rs.result = fmt.Errorf("execution %q: %w", e.ID, ErrExecutionDone)
		return v, err
	default:
		done = cancelledCheckpoint(cp.ProgramID, cp.Calls, cp.HostCalls)
	}
	if done != nil {
		if serr := store.Save(ctx, e.ID, done); serr != nil {
			rs.result = fmt.Errorf("execution %q: recording the cancel: %w", e.ID, serr)
			return value.Value{}, rs.result
		}
		if x != nil {
			x.cp = done
		}
	}
	return value.Value{}, fmt.Errorf("execution %q: %w", e.ID, ErrCancelled)
}
