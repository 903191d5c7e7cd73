package host

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Capability is a host function a guest program may call by name. It
// gets the call's arguments and returns the value the guest's call
// returns. Returning a CallError (or *CallError) throws it in the guest,
// where guest code can catch it; any other error stops Run, which
// returns it, and the same call is asked again by a later Run of the
// execution.
type Capability func(ctx context.Context, call Call) (value.Value, error)

// Call is one capability call of an execution.
type Call struct {
	Execution string        // Execution.ID
	Seq       int           // 0 for the execution's first call, then 1, 2, ...
	Name      string        // the capability called
	Args      []value.Value // as the guest passed them
}

// Decode decodes the arguments into dst, in order (see Decode); an
// argument the guest left out decodes as undefined.
func (c Call) Decode(dst ...any) error {
	for i, d := range dst {
		var v value.Value
		if i < len(c.Args) {
			v = c.Args[i]
		}
		if err := decodePath(v, d, fmt.Sprintf("%s argument %d", c.Name, i+1)); err != nil {
			return err
		}
	}
	return nil
}

// Execution is a program to run to completion.
type Execution struct {
	// ID names the execution in the Store; Run with an ID the store
	// knows continues (or reports) that execution.
	ID      string
	Program Program
	Inputs  map[string]value.Value
	// Capabilities are granted to the guest by name.
	Capabilities map[string]Capability
	Limits       Limits
}

// Runner runs executions to completion on a Pool, answering capability
// calls with the host's functions and saving a checkpoint to Store after
// every step. If a sidecar process dies at any point (a crash, a kill,
// the machine's OOM killer), the execution continues on a new process
// from its last checkpoint, by a raw resume with the full policy; the
// capability functions do not notice.
//
// Each call is answered once: the answer is stored before it is sent,
// and a resume after a crash reuses it. Only if the host process itself
// dies between a capability's return and the store's save is that call
// asked again (by a later Run of the same ID), so capabilities with
// effects outside the host should still be idempotent per
// (Execution, Seq).
//
// A Runner is safe for concurrent use; one execution ID runs at most once
// at a time per Runner.
type Runner struct {
	Pool *Pool
	// Store keeps checkpoints; nil means an in-memory store owned by
	// the Runner.
	Store Store
	// Key signs every snapshot the Runner resumes.
	Key Key
	// SealKey, if set, seals every execution the Runner starts (see
	// SealKey), so that the snapshot bytes in the Store hide the program,
	// inputs, calls and answers. Every resume sends it, hot or from the
	// stored bytes after a crash, so it must stay the same for as long as
	// stored executions are to be continued: one started under another
	// key, or without one, does not continue (Run returns the sidecar's
	// refusal, an *Error, and the checkpoint stays). The rest of a
	// Checkpoint (the pending call's Args, its Answer, the Result or
	// Failure) is not sealed: a Store that must keep those confidential
	// has to encrypt them itself.
	SealKey SealKey
	// MaxAttempts bounds how often one step is tried on a new process
	// after the previous one died during it; 0 means 20. Every step that
	// succeeds resets the count.
	MaxAttempts int

	mem     MemoryStore
	running sync.Map // execution IDs being run

	// observe, if set, is told where each resume ran and whether hot (tests).
	observe func(c *Client, hot bool)
}

// Run runs e to completion and returns its result. A guest failure
// (uncaught exception, limit, ...) is an *Error, and is stored: a later
// Run of the same ID returns it again, as it returns the result of an
// execution that completed. Delete the checkpoint from the Store when the
// result is no longer needed.
//
// If ctx is done, Run returns its error: a running segment is cancelled
// in the sidecar (see Client.Start) and the checkpoint stays, so a later
// Run with the same ID continues from there.
func (r *Runner) Run(ctx context.Context, e Execution) (value.Value, error) {
	switch {
	case r.Pool == nil:
		return value.Value{}, errors.New("Runner.Pool is nil")
	case r.Key.IsZero():
		return value.Value{}, errors.New("Runner.Key is not set")
	case e.ID == "":
		return value.Value{}, errors.New("Execution.ID is empty")
	case e.Program.ID == "" && len(e.Program.Bytes) == 0:
		return value.Value{}, errors.New("Execution.Program is empty")
	}
	if e.Program.ID == "" {
		e.Program.ID = sha256Hex(e.Program.Bytes)
	}
	if _, busy := r.running.LoadOrStore(e.ID, true); busy {
		return value.Value{}, fmt.Errorf("execution %q is already running", e.ID)
	}
	defer r.running.Delete(e.ID)
	store := r.store()
	cp, ok, err := store.Load(ctx, e.ID)
	if err != nil {
		return value.Value{}, err
	}
	if !ok {
		cp = nil
	} else if cp.ProgramID != e.Program.ID {
		return value.Value{}, fmt.Errorf("execution %q was stored with another program", e.ID)
	}
	x := &execution{r: r, e: e, store: store, cp: cp, caps: slices.Sorted(maps.Keys(e.Capabilities))}
	return x.run(ctx)
}

func (r *Runner) store() Store {
	if r.Store != nil {
		return r.Store
	}
	return &r.mem
}

// execution is the state of one Run.
type execution struct {
	r     *Runner
	e     Execution
	store Store
	caps  []string
	cp    *Checkpoint // nil before the start

	parked   lease  // where the execution was last parked
	home     *lease // &parked while that holds, else nil
	policyID string // the policy of the parked execution
}

func (x *execution) run(ctx context.Context) (value.Value, error) {
	maxTries := x.r.MaxAttempts
	if maxTries <= 0 {
		maxTries = maxAttempts
	}
	failures := 0
	for {
		cp := x.cp
		if cp != nil && cp.Done {
			if cp.Failure != "" {
				method := "resume"
				if cp.Calls == 0 {
					method = "start"
				}
				return value.Value{}, &Error{Method: method, Message: cp.Failure}
			}
			return cp.Result, nil
		}
		if cp != nil && cp.Answer == nil {
			if err := x.ask(ctx); err != nil {
				return value.Value{}, err
			}
			continue
		}
		st, snap, err := x.step(ctx)
		switch {
		case err == nil:
			failures = 0
			if err := x.advance(ctx, st, snap); err != nil {
				return value.Value{}, err
			}
		case ctx.Err() != nil:
			return value.Value{}, err
		case errors.Is(err, ErrProcessExited):
			// The process died under this step; retry on a new one.
			x.home = nil
			if failures++; failures >= maxTries {
				return value.Value{}, fmt.Errorf("execution %q: %d sidecar processes in a row died during one step; the last: %w", x.e.ID, failures, err)
			}
		case errors.Is(err, ErrRequestTooLarge) && cp != nil:
			// The answer cannot be sent: drop it so that a later Run asks
			// again rather than failing forever.
			retry := *cp
			retry.Answer = nil
			if serr := x.store.Save(ctx, x.e.ID, &retry); serr != nil {
				return value.Value{}, serr
			}
			return value.Value{}, fmt.Errorf("the answer to %s (call %d of execution %q): %w", cp.Capability, cp.Calls, x.e.ID, err)
		default:
			var se *Error
			if errors.As(err, &se) && se.Kind() != "" {
				// The execution itself failed: that is its outcome.
				done := &Checkpoint{ProgramID: x.e.Program.ID, Calls: x.calls(), Done: true, Failure: se.Message}
				if serr := x.store.Save(ctx, x.e.ID, done); serr != nil {
					return value.Value{}, serr
				}
				return value.Value{}, se
			}
			if isSealRefusal(err) {
				return value.Value{}, fmt.Errorf("execution %q: %w; Runner.SealKey must be the key it was started with", x.e.ID, err)
			}
			return value.Value{}, err
		}
	}
}

// calls is how many calls the step being run has answered, with its own.
func (x *execution) calls() int {
	if x.cp == nil {
		return 0
	}
	return x.cp.Calls + 1
}

// ask calls the capability the execution is suspended on and stores its
// answer before anything is sent.
func (x *execution) ask(ctx context.Context) error {
	cp := x.cp
	fn, ok := x.e.Capabilities[cp.Capability]
	if !ok {
		return fmt.Errorf("execution %q is suspended on capability %q, which it was not given", x.e.ID, cp.Capability)
	}
	v, err := callCapability(ctx, fn, Call{Execution: x.e.ID, Seq: cp.Calls, Name: cp.Capability, Args: cp.Args})
	var answer Payload
	var ce CallError
	var pce *CallError
	switch {
	case err == nil:
		if verr := v.Validate(); verr != nil {
			return fmt.Errorf("capability %s returned a value that cannot cross the boundary: %w", cp.Capability, verr)
		}
		answer = Return(v)
	case errors.As(err, &pce) && pce != nil:
		answer = Throw(*pce)
	case errors.As(err, &ce):
		answer = Throw(ce)
	default:
		return fmt.Errorf("capability %s: %w", cp.Capability, err)
	}
	next := *cp
	next.Answer = &answer
	if err := x.store.Save(ctx, x.e.ID, &next); err != nil {
		return err
	}
	x.cp = &next
	return nil
}

// callCapability runs fn, turning a panic into an error so that host code
// failing in one execution cannot take the others down.
func callCapability(ctx context.Context, fn Capability, call Call) (v value.Value, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return fn(ctx, call)
}

// step runs the next segment on a process: the start, or a resume with the
// stored answer, hot on the process holding the execution if it still
// runs, else from the stored bytes. A suspension comes with its full
// snapshot bytes.
func (x *execution) step(ctx context.Context) (*Step, []byte, error) {
	l, err := x.r.Pool.acquire(ctx, x.home)
	if err != nil {
		return nil, nil, err
	}
	defer x.r.Pool.release(l)
	x.home = nil
	var st *Step
	var base []byte
	if cp := x.cp; cp == nil {
		st, err = l.c.Start(ctx, StartRequest{Program: x.e.Program, Inputs: x.e.Inputs, Capabilities: x.caps,
			Limits: x.e.Limits, Delivery: DeliverDelta, SealKey: x.r.SealKey})
	} else {
		base = cp.Snapshot
		cold := ResumeRequest{Snapshot: cp.Snapshot, Policy: &Policy{Capabilities: x.caps, Limits: x.e.Limits},
			Key: x.r.Key, SealKey: x.r.SealKey, Payload: *cp.Answer, Delivery: DeliverDelta}
		hot := l.s == x.parked.s && l.gen == x.parked.gen
		if hot {
			st, err = l.c.Resume(ctx, ResumeRequest{SnapshotID: cp.SnapshotID, PolicyID: x.policyID, Key: x.r.Key,
				SealKey: x.r.SealKey, Payload: *cp.Answer, Delivery: DeliverDelta})
			if isUnknown(err, "snapshot_id") || isUnknown(err, "policy_id") {
				// The process let it go (its caches are bounded): use the bytes.
				hot = false
				st, err = l.c.Resume(ctx, cold)
			}
		} else {
			st, err = l.c.Resume(ctx, cold)
		}
		if x.r.observe != nil {
			x.r.observe(l.c, hot)
		}
	}
	if err != nil || st.Suspended == nil {
		return st, nil, err
	}
	full, err := st.Suspended.Extend(base)
	if err != nil {
		return nil, nil, l.c.broken(err)
	}
	x.parked = lease{s: l.s, gen: l.gen}
	x.home = &x.parked
	x.policyID = st.Suspended.PolicyID
	return st, full, nil
}

// advance stores the outcome of a step.
func (x *execution) advance(ctx context.Context, st *Step, snap []byte) error {
	next := &Checkpoint{ProgramID: x.e.Program.ID}
	if x.cp != nil {
		next.Calls = x.cp.Calls + 1
	}
	if s := st.Suspended; s != nil {
		next.SnapshotID, next.Snapshot, next.Capability, next.Args = s.SnapshotID, snap, s.Capability, s.Args
	} else {
		next.Done, next.Result = true, st.Value
	}
	if err := x.store.Save(ctx, x.e.ID, next); err != nil {
		return err
	}
	x.cp = next
	return nil
}
