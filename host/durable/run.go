package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"

	"github.com/mustard-sidecar/mustard-sidecar/host/internal/link"
	"github.com/mustard-sidecar/mustard-sidecar/internal/convhook"

	"github.com/mustard-sidecar/mustard-sidecar/host"

	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Capability is a host function a guest program may call by name. It
// gets the call's arguments and returns the value the guest's call
// returns. Returning a host.CallError (or *host.CallError) throws it in the guest,
// where guest code can catch it (in async code it rejects that call's
// promise only); any other error stops Run, which returns it, and the
// same call is asked again by a later Run of the execution, unless a
// RetryPolicy (Runner.Retry, Execution.Retry) tries it again or makes the
// guest's call throw it.
//
// In batch mode (the Runner's default) several calls of one execution run
// at once, each on its own goroutine: a Capability must be safe for
// concurrent use. Its ctx is cancelled when Run ends (its own ctx done,
// the execution failed, or another call's error stopped it), and Run
// waits for every call to return.
type Capability func(ctx context.Context, call Call) (value.Value, error)

// Call is one capability call of an execution.
type Call struct {
	Execution string // Execution.ID
	// ID numbers the call within its execution from 1, the same on every
	// attempt, after crashes too: with Execution, an idempotency key for
	// capabilities with effects outside the host. In batch mode it is the
	// sidecar's call_id, in the order the guest made the calls; in
	// one-call mode, in the order they were answered.
	ID   uint64
	Seq  int           // ID-1: 0 for the execution's first call, then 1, 2, ...
	Name string        // the capability called
	Args []value.Value // as the guest passed them
	// Attempt counts the tries of this call within one Run: 1, then 2,
	// 3, ... when a RetryPolicy tries it again after an error.
	Attempt int
}

// Decode decodes the arguments into dst, in order, as value.Decode does,
// except that an `any` gets host.Undefined{} and host.Hole{} for
// undefined and holes, as in earlier releases; an argument the guest left
// out decodes as undefined.
func (c Call) Decode(dst ...any) error {
	for i, d := range dst {
		var v value.Value
		if i < len(c.Args) {
			v = c.Args[i]
		}
		if err := convhook.DecodePath(v, d, fmt.Sprintf("%s argument %d", c.Name, i+1)); err != nil {
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
	Program host.Program
	Inputs  map[string]value.Value
	// Capabilities are granted to the guest by name.
	Capabilities map[string]Capability
	Limits       host.Limits
	// Console is the execution's console mode (see host.StartRequest.Console),
	// re-asserted on every resume from the stored bytes: it must stay the
	// same for as long as the execution runs. Capabilities named
	// console.log, console.warn, ... are answered like any other (the
	// guest's call returns undefined whatever value they return; a
	// host.CallError throws in the guest).
	Console host.Console
	// Entry is how the program runs (see host.StartRequest.Entry); it matters
	// only for the start, and the execution keeps it.
	Entry host.Entry
	// Retry sets the RetryPolicy of capabilities by name, in place of
	// Runner.Retry.
	Retry map[string]RetryPolicy
	// OnLog, if set, receives each line the guest wrote with console
	// (ConsoleCollect), in order, from Run's goroutine.
	//
	// A segment's lines are delivered once its step is stored: after the
	// Store saved the checkpoint of the step they came with (its
	// suspension, result or guest failure), before the next segment
	// starts. So each segment's lines are delivered exactly once across
	// sidecar crashes: a process that died during a segment returned no
	// lines, and the segment run again on a new process returns them;
	// a stored step is never run again, and a resume returns only its own
	// segment's lines. Lines of a segment that does not get stored are
	// not delivered: one whose Run ended first (its ctx done, or Cancel),
	// which a later Run runs again. If the host process itself dies
	// between the save and the delivery, that segment's lines are lost
	// (the checkpoint does not keep them): at most once across host
	// crashes.
	OnLog func(host.LogLine)
}

// Runner runs executions to completion on a host.Pool, answering capability
// calls with the host's functions and saving a checkpoint to Store after
// every step. If a sidecar process dies at any point (a crash, a kill,
// the machine's OOM killer), the execution continues on a new process
// from its last checkpoint, by a raw resume with the full policy; the
// capability functions do not notice.
//
// By default the Runner starts executions in batch mode (host.HostCalls): every
// call the guest has outstanding (all of a Promise.all, say) runs at once,
// up to MaxConcurrentCalls per execution, and the execution is resumed as
// soon as any of them returned, with every answer that came in, while the
// others go on running; answers that come in during that resume go with
// the next one. A guest that calls capabilities only from plain top-level
// code makes one call at a time in either mode.
//
// Each call is answered once: each answer is stored before it is sent,
// and a resume after a crash sends it again. Only if the host process
// itself dies between a capability's return and the store's save, or Run
// returns while a call is still running, is that call asked again (by a
// later Run of the same ID), so capabilities with effects outside the
// host should still be idempotent per (Execution, ID).
//
// A Runner is safe for concurrent use; one execution ID runs at most once
// at a time per Runner, and, with a LeaseStore (MemoryStore, DirStore),
// once at a time across every Runner and process sharing the Store: a Run
// holds the execution's lease while it runs, renews it, and saves every
// checkpoint with its fencing token; another Run of the same ID fails with
// ErrExecutionBusy (or waits, WaitIfBusy), and takes the execution over
// only once the lease is released, has expired, or (DirStore) its holder's
// process has ended. A Run whose lease was taken over stops with
// ErrLeaseLost, and the Store refuses its writes. Cancel ends an execution
// for good.
type Runner struct {
	Pool *host.Pool
	// Store keeps checkpoints; nil means an in-memory store owned by
	// the Runner.
	Store Store
	// Key signs every snapshot the Runner resumes: it proves to the
	// sidecar that the host accepted those bytes. It guards the wire to
	// the sidecar processes, not the Store: the Runner trusts what its
	// Store returns and signs it, so a Runner with another host.Key (a process
	// restarted with a new GenerateKey) continues what an earlier one
	// stored, and whoever can write to the Store can make the Runner
	// resume bytes of their choosing. Keep the Store where only the host
	// can write, or seal executions (host.SealKey), which a Store writer
	// without the seal key cannot forge (see "Trust" in the package
	// documentation).
	Key host.Key
	// SealKey, if set, seals every execution the Runner starts (see
	// SealKey), so that the snapshot bytes in the Store hide the program,
	// inputs, calls and answers. Every resume sends it, hot or from the
	// stored bytes after a crash, so it must stay the same for as long as
	// stored executions are to be continued: one started under another
	// key, or without one, does not continue (Run returns the sidecar's
	// refusal, a *host.Error, and the checkpoint stays). The Runner seals the
	// rest of each Checkpoint of such an execution too (the calls'
	// capabilities and arguments, the answers, the Result or Failure)
	// before the Store sees it, in Checkpoint.Sealed, under a key derived
	// from host.SealKey for that purpose and bound to the execution id and the
	// step: nothing of a sealed execution is stored in plaintext.
	// Checkpoints stored unsealed still load; a sealed one loaded without
	// SealKey, or under another key, fails with ErrSealedCheckpoint.
	SealKey host.SealKey
	// MaxAttempts bounds how often one step is tried on a new process
	// after the previous one died during it; 0 means 20. Every step that
	// succeeds resets the count.
	MaxAttempts int
	// HostCalls is the mode of the executions the Runner starts: empty
	// or host.HostCallsBatch runs an execution's outstanding calls
	// concurrently; host.HostCallsOne answers one call per step, in the order
	// the sidecar presents them. An execution keeps the mode it started
	// in: one the Store already holds continues in the mode its
	// Checkpoint records (one call per step for checkpoints written
	// before batch mode).
	HostCalls host.HostCalls
	// MaxConcurrentCalls bounds how many capability functions run at
	// once for one execution in batch mode; 0 means
	// DefaultMaxConcurrentCalls. Calls past it wait for a running one to
	// return. (The guest itself cannot have more than its
	// max_outstanding_host_calls limit outstanding, 128 by default.)
	MaxConcurrentCalls int
	// Logger receives what an operator wants to know of the Runner's
	// executions, in structured records with an "execution" attribute:
	// cold resumes (Info, with the reason), steps retried on a new
	// process after one died under them (Warn), executions that hit a
	// limit (Warn, with the error code), answers too large to send
	// (Warn). nil means the host.Pool's PoolConfig.Logger, and if that is nil
	// too, nothing is logged.
	Logger *slog.Logger
	// Intercept wraps each Run, segment and capability call (see
	// Interceptor): where a host adds its tracing spans or metrics.
	Intercept Interceptor
	// Retry is what the Runner does when a capability returns an error
	// that is not a host.CallError (see RetryPolicy): the zero value stops
	// Run; with Attempts set, transient errors are tried again, and a
	// final one throws in the guest. Execution.Retry sets it per
	// capability.
	Retry RetryPolicy

	// WaitIfBusy makes a Run of an execution that another Run holds (in
	// this Runner, or through a LeaseStore in another Runner or process)
	// wait until that Run ends, or its lease expires, or ctx ends. By
	// default such a Run fails at once with an error matching
	// ErrExecutionBusy.
	WaitIfBusy bool
	// LeaseTTL is how long the lease a Run holds on its execution in a
	// LeaseStore lasts unrenewed; 0 means DefaultLeaseTTL. The Run renews
	// it every third of that. It bounds how long an execution whose
	// Runner hung (or, with a Store that cannot tell a dead holder from a
	// live one, died) stays busy for other Runners.
	LeaseTTL time.Duration
	// Owner names the Runner in the leases it holds (Lease.Owner, and
	// ExecutionStatus.Owner in listings); empty means one made up of the
	// host name, the process id and random digits.
	Owner string

	mem       MemoryStore
	ownerOnce sync.Once
	ownerName string
	sealers   sealers

	mu   sync.Mutex
	runs map[string]*runState // execution IDs being run or cancelled

	// observe, if set, is told where each resume ran and whether hot (tests).
	observe func(c *host.Client, hot bool)
}

// DefaultMaxConcurrentCalls is how many capability calls of one execution
// a Runner runs at once unless Runner.MaxConcurrentCalls says otherwise.
const DefaultMaxConcurrentCalls = 16

// Run runs e to completion and returns its result. A guest failure
// (uncaught exception, limit, ...) is a *host.Error, and is stored: a later
// Run of the same ID returns it again, as it returns the result of an
// execution that completed. Delete the checkpoint from the Store when the
// result is no longer needed.
//
// If ctx is done, Run returns its error: a running segment is cancelled
// in the sidecar (see host.Client.Start), running capability calls have their
// ctx cancelled, and the checkpoint stays, with every answer that came in,
// so a later Run with the same ID continues from there. To end an
// execution for good, use Cancel: then this Run, and every later one,
// returns an error matching ErrCancelled.
func (r *Runner) Run(ctx context.Context, e Execution) (value.Value, error) {
	switch {
	case r.Pool == nil:
		return value.Value{}, refuse(ErrInvalidRun, "Runner.Pool is nil")
	case r.Key.IsZero():
		return value.Value{}, refuse(ErrInvalidRun, "Runner.Key is not set")
	case e.ID == "":
		return value.Value{}, refuse(ErrInvalidRun, "Execution.ID is empty")
	case e.Program.ID == "" && len(e.Program.Bytes) == 0:
		return value.Value{}, refuse(ErrInvalidRun, "Execution.Program is empty")
	case r.HostCalls != "" && r.HostCalls != host.HostCallsOne && r.HostCalls != host.HostCallsBatch:
		return value.Value{}, refuse(ErrInvalidRun, "Runner.HostCalls %q is not a mode", r.HostCalls)
	}
	if e.Program.ID == "" {
		e.Program.ID = wire.SHA256Hex(e.Program.Bytes)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	rs, err := r.claim(ctx, e.ID, cancel, r.WaitIfBusy)
	if err != nil {
		return value.Value{}, err
	}
	defer r.unclaim(e.ID, rs)
	hl, err := r.acquire(ctx, e.ID, r.WaitIfBusy)
	if err != nil {
		return value.Value{}, err
	}
	store := r.storeFor(hl.fence())
	if hl != nil {
		r.renew(hl, cancel)
		defer hl.release(ctx)
	}
	var v value.Value
	called := false
	body := func(ctx context.Context) error {
		if called {
			return refuse(ErrInterceptor, "the Execution interceptor called next twice")
		}
		called = true
		var x *execution
		v, x, err = r.run(ctx, e, store)
		if rs.cancelRequested() {
			v, err = r.endCancelled(ctx, e, rs, x, store, v, err)
		}
		if cause := context.Cause(ctx); err != nil && errors.Is(cause, ErrLeaseLost) {
			err = cause
		}
		return err
	}
	if r.Intercept.Execution == nil {
		body(ctx)
	} else {
		err = r.Intercept.Execution(ctx, &ExecutionInfo{ID: e.ID, ProgramID: e.Program.ID}, body)
		if err == nil && !called {
			err = refuse(ErrInterceptor, "the Execution interceptor did not call next")
		}
	}
	return v, err
}

// logger is where the Runner logs.
func (r *Runner) logger() *slog.Logger {
	switch {
	case r.Logger != nil:
		return r.Logger
	case r.Pool != nil && link.PoolLogger(r.Pool) != nil:
		return link.PoolLogger(r.Pool)
	}
	return discardLogger
}

// run is Run once the execution ID is claimed; x is nil if the execution
// did not get as far as its checkpoint.
func (r *Runner) run(ctx context.Context, e Execution, store Store) (value.Value, *execution, error) {
	cp, ok, err := store.Load(ctx, e.ID)
	if err != nil {
		return value.Value{}, nil, err
	}
	if !ok {
		cp = nil
	} else if cp.ProgramID != e.Program.ID {
		return value.Value{}, nil, refuse(ErrProgramMismatch, "execution %q was stored with another program", e.ID)
	}
	x := &execution{r: r, e: e, store: store, cp: cp, caps: slices.Sorted(maps.Keys(e.Capabilities)), log: r.logger(),
		runCtx: ctx, madeIn: map[uint64]context.Context{}}
	if cp == nil {
		x.batch = r.HostCalls != host.HostCallsOne
	} else {
		x.batch = cp.HostCalls == host.HostCallsBatch
	}
	if x.batch {
		limit := r.MaxConcurrentCalls
		if limit <= 0 {
			limit = DefaultMaxConcurrentCalls
		}
		x.calls = newCallSet(ctx, limit, x.answer)
		defer x.stopCalls(ctx)
	}
	v, err := x.run(ctx)
	return v, x, err
}

// store is the Runner's Store as the Runner uses it without a lease.
func (r *Runner) store() Store { return r.storeFor(0) }

// storeFor is the Runner's Store as the Runner uses it: stamping the
// checkpoints it saves with fence and the time, and sealing and opening
// checkpoints under host.SealKey, if set (sealstore.go).
func (r *Runner) storeFor(fence uint64) Store {
	var st Store = stampStore{Store: r.baseStore(), fence: fence}
	if r.SealKey.IsZero() {
		return openingStore{st}
	}
	s, err := r.sealers.get(r.SealKey)
	if err != nil {
		return failingStore{err}
	}
	return &sealingStore{Store: st, s: s}
}

// execution is the state of one Run.
type execution struct {
	r     *Runner
	e     Execution
	store Store
	caps  []string
	cp    *Checkpoint // nil before the start
	batch bool        // host_calls "batch"
	calls *callSet    // batch mode: the capability calls running
	// maxSend, when positive, bounds the answers one resume sends (after
	// a resume with more did not fit in a request).
	maxSend int

	parked   link.Place  // where the execution was last parked
	home     *link.Place // &parked while that holds, else nil
	policyID string      // the policy of the parked execution

	journal snapJournal // the bytes of the last snapshot a step returned

	log    *slog.Logger
	runCtx context.Context // the Run's, as the Execution interceptor passed it
	// madeIn holds, for each outstanding call made in this Run, the
	// context the Segment interceptor gave the segment that made it.
	madeIn map[uint64]context.Context
	segs   int // segments tried in this Run
}

func (x *execution) run(ctx context.Context) (value.Value, error) {
	maxTries := x.r.MaxAttempts
	if maxTries <= 0 {
		maxTries = link.MaxAttempts
	}
	failures := 0
	attempt := 1
	for {
		cp := x.cp
		if cp != nil && cp.Done {
			if cp.Cancelled {
				return value.Value{}, fmt.Errorf("execution %q: %w", x.e.ID, ErrCancelled)
			}
			if cp.Failure != "" {
				method := "resume"
				if cp.Calls == 0 {
					method = "start"
				}
				return value.Value{}, link.StoredError(method, cp.Failure, cp.FailureCode)
			}
			return cp.Result, nil
		}
		var answers []host.Answer
		switch {
		case cp == nil:
		case x.batch:
			var err error
			if answers, err = x.ready(ctx); err != nil {
				return value.Value{}, err
			}
		case cp.Answer == nil:
			if err := x.ask(ctx); err != nil {
				return value.Value{}, err
			}
			continue
		default:
			answers = []host.Answer{{Payload: *cp.Answer}}
		}
		st, snap, err := x.segment(ctx, answers, attempt)
		attempt++
		switch {
		case err == nil:
			failures, attempt = 0, 1
			x.maxSend = 0
			if err := x.advance(ctx, st, snap, answers); err != nil {
				return value.Value{}, err
			}
			x.deliver(st.Logs)
		case ctx.Err() != nil:
			return value.Value{}, err
		case errors.Is(err, host.ErrProcessExited):
			// The process died under this step; retry on a new one.
			x.home = nil
			if failures++; failures >= maxTries {
				x.log.Error("sidecar processes keep dying during one step; giving up", "execution", x.e.ID,
					"attempts", failures, "error", err.Error())
				return value.Value{}, &refusal{fmt.Sprintf("execution %q: %d sidecar processes in a row died during one step; the last: %v",
					x.e.ID, failures, err), ErrProcessesKeepDying, err}
			}
			x.log.Warn("sidecar process died during a step; trying it on a new one", "execution", x.e.ID,
				"attempt", failures, "error", err.Error())
		case errors.Is(err, host.ErrRequestTooLarge) && len(answers) > 1:
			// Fewer answers at a time; the others stay stored for the
			// next resume.
			x.maxSend = len(answers) / 2
		case errors.Is(err, host.ErrRequestTooLarge) && cp != nil:
			// The answer cannot be sent: drop it so that a later Run asks
			// again rather than failing forever.
			retry := *cp
			name, n := cp.Capability, cp.Calls+1
			if x.batch {
				retry.Outstanding = slices.Clone(cp.Outstanding)
				for i, k := range retry.Outstanding {
					if k.ID == answers[0].ID {
						retry.Outstanding[i].Answer = nil
						name, n = k.Capability, int(k.ID)
					}
				}
			} else {
				retry.Answer = nil
			}
			if serr := x.store.Save(ctx, x.e.ID, &retry); serr != nil {
				return value.Value{}, serr
			}
			x.cp = &retry
			x.log.Warn("an answer is too large to send; it will be asked again", "execution", x.e.ID,
				"capability", name, "call", n, "error", err.Error())
			return value.Value{}, fmt.Errorf("the answer to %s (call %d of execution %q): %w", name, n, x.e.ID, err)
		default:
			var se *host.Error
			if errors.As(err, &se) && se.Kind() != "" {
				// The execution itself failed: that is its outcome.
				if errors.Is(se, host.ErrLimit) {
					x.log.Warn("execution hit a limit", "execution", x.e.ID, "code", se.Code, "error", se.Message)
				}
				done := &Checkpoint{ProgramID: x.e.Program.ID, Calls: x.answered(len(answers)), HostCalls: x.mode(),
					Done: true, Failure: se.Message, FailureCode: se.Code}
				if serr := x.store.Save(ctx, x.e.ID, done); serr != nil {
					return value.Value{}, serr
				}
				x.cp = done
				x.deliver(se.Logs)
				return value.Value{}, se
			}
			if errors.Is(err, host.ErrSealKey) {
				return value.Value{}, fmt.Errorf("execution %q: %w; Runner.SealKey must be the key it was started with", x.e.ID, err)
			}
			return value.Value{}, err
		}
	}
}

// deliver hands a stored segment's log lines to Execution.OnLog.
func (x *execution) deliver(lines []host.LogLine) {
	if x.e.OnLog == nil {
		return
	}
	for _, l := range lines {
		x.e.OnLog(l)
	}
}

// answered is how many calls the execution has answered once the step
// being run, sending sent answers, is done.
func (x *execution) answered(sent int) int {
	if x.cp == nil {
		return 0
	}
	return x.cp.Calls + sent
}

// mode is what a Checkpoint records of the execution's mode.
func (x *execution) mode() host.HostCalls {
	if x.batch {
		return host.HostCallsBatch
	}
	return "" // as before batch mode
}

// ask calls the capability a one-call execution is suspended on and
// stores its answer before anything is sent.
func (x *execution) ask(ctx context.Context) error {
	cp := x.cp
	fn, ok := x.e.Capabilities[cp.Capability]
	if !ok {
		return x.notGiven(cp.Capability)
	}
	id := uint64(cp.Calls) + 1
	answer, err := x.answer(ctx, x.valuesFor(id), fn, Call{Execution: x.e.ID, ID: id, Seq: cp.Calls, Name: cp.Capability, Args: cp.Args})
	if err != nil {
		return err
	}
	next := *cp
	next.Answer = &answer
	if err := x.store.Save(ctx, x.e.ID, &next); err != nil {
		return err
	}
	x.cp = &next
	return nil
}

func (x *execution) notGiven(name string) error {
	return refuse(ErrCapabilityNotGiven, "execution %q is suspended on capability %q, which it was not given", x.e.ID, name)
}

// answerOf turns what a capability returned into the answer to send, or
// the error that stops Run.
func answerOf(name string, v value.Value, err error) (host.Payload, error) {
	var ce host.CallError
	var pce *host.CallError
	switch {
	case err == nil:
		if verr := v.Validate(); verr != nil {
			return host.Payload{}, &refusal{fmt.Sprintf("capability %s returned a value that cannot cross the boundary: %v", name, verr), ErrInvalidAnswer, verr}
		}
		return host.Return(v), nil
	case errors.As(err, &pce) && pce != nil:
		return host.Throw(*pce), nil
	case errors.As(err, &ce):
		return host.Throw(ce), nil
	}
	return host.Payload{}, fmt.Errorf("capability %s: %w", name, err)
}

// callCapability runs fn through the Call interceptor, if any, with ctx
// carrying the values of values (valuesFor).
func (x *execution) callCapability(ctx, values context.Context, fn Capability, call Call) (value.Value, error) {
	wrap := x.r.Intercept.Call
	if wrap == nil {
		return callCapability(ctx, fn, call)
	}
	return wrap(valuesOf{Context: ctx, values: values}, call, func(ctx context.Context) (value.Value, error) {
		return callCapability(ctx, fn, call)
	})
}

// valuesFor is the context whose values a call's context carries: its
// segment's, if the call was made in this Run, else the Run's.
func (x *execution) valuesFor(id uint64) context.Context {
	if c := x.madeIn[id]; c != nil {
		return c
	}
	return x.runCtx
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

// ready returns the answers a batch-mode execution can be resumed with:
// it stores the answers of the calls that returned, starts the
// outstanding calls that are neither answered nor running, and waits
// until at least one answer is stored.
func (x *execution) ready(ctx context.Context) ([]host.Answer, error) {
	if len(x.cp.Outstanding) == 0 {
		// Nothing would ever come in: a Store that lost the calls.
		return nil, refuse(ErrBadCheckpoint, "the checkpoint of execution %q is in batch mode but lists no outstanding calls (does the Store keep Checkpoint.Outstanding?)", x.e.ID)
	}
	for {
		if err := x.collect(ctx); err != nil {
			return nil, err
		}
		var out []host.Answer
		for _, k := range x.cp.Outstanding {
			switch {
			case k.Answer != nil:
				out = append(out, host.Answer{ID: k.ID, Payload: *k.Answer})
			case !x.calls.running[k.ID]:
				fn, ok := x.e.Capabilities[k.Capability]
				if !ok {
					return nil, x.notGiven(k.Capability)
				}
				x.calls.start(fn, Call{Execution: x.e.ID, ID: k.ID, Seq: int(k.ID - 1), Name: k.Capability, Args: k.Args},
					x.valuesFor(k.ID))
			}
		}
		if len(out) > 0 {
			if x.maxSend > 0 && len(out) > x.maxSend {
				out = out[:x.maxSend]
			}
			return out, nil
		}
		select {
		case <-x.calls.returned:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// collect stores, in one save, the answers of the calls that returned
// since the last collect. It returns the first error that stops Run (the
// answers that came with it are stored all the same).
func (x *execution) collect(ctx context.Context) error {
	results := x.calls.take()
	var stop error
	var next *Checkpoint
	for _, res := range results {
		if res.err != nil {
			if stop == nil {
				stop = res.err
			}
			continue
		}
		if x.cp == nil || x.cp.Done {
			continue
		}
		if next == nil {
			c := *x.cp
			c.Outstanding = slices.Clone(c.Outstanding)
			next = &c
		}
		for i := range next.Outstanding {
			if next.Outstanding[i].ID == res.id && next.Outstanding[i].Answer == nil {
				a := res.answer
				next.Outstanding[i].Answer = &a
			}
		}
	}
	if next != nil {
		if err := x.store.Save(ctx, x.e.ID, next); err != nil {
			return err
		}
		x.cp = next
	}
	return stop
}

// stopCalls ends a batch-mode Run: it cancels the calls still running,
// waits for them, and stores the answers of those that returned anyway,
// so that a later Run does not ask them again.
func (x *execution) stopCalls(ctx context.Context) {
	x.calls.cancel()
	x.calls.wg.Wait()
	_ = x.collect(context.WithoutCancel(ctx))
}

// callSet runs the capability calls of one batch-mode execution, at most
// limit at once. Only the Run's goroutine starts calls and takes results.
type callSet struct {
	ctx     context.Context // cancelled when the Run ends
	cancel  context.CancelFunc
	call    func(ctx, values context.Context, fn Capability, call Call) (host.Payload, error)
	slots   chan struct{} // one token per running call
	wg      sync.WaitGroup
	running map[uint64]bool // started, result not yet taken

	mu       sync.Mutex
	results  []callResult
	returned chan struct{} // signalled when a result is added
}

type callResult struct {
	id     uint64
	answer host.Payload
	err    error // stops Run
}

func newCallSet(ctx context.Context, limit int, call func(ctx, values context.Context, fn Capability, call Call) (host.Payload, error)) *callSet {
	ctx, cancel := context.WithCancel(ctx)
	return &callSet{ctx: ctx, cancel: cancel, call: call, slots: make(chan struct{}, limit), running: map[uint64]bool{},
		returned: make(chan struct{}, 1)}
}

// start runs call on a goroutine of its own, once a slot is free.
func (s *callSet) start(fn Capability, call Call, values context.Context) {
	s.running[call.ID] = true
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		res := callResult{id: call.ID}
		select {
		case s.slots <- struct{}{}:
			if res.err = s.ctx.Err(); res.err == nil {
				res.answer, res.err = s.call(s.ctx, values, fn, call)
			}
			<-s.slots
		case <-s.ctx.Done():
			res.err = s.ctx.Err()
		}
		s.mu.Lock()
		s.results = append(s.results, res)
		s.mu.Unlock()
		select {
		case s.returned <- struct{}{}:
		default:
		}
	}()
}

// take returns the results that came in since the last take.
func (s *callSet) take() []callResult {
	s.mu.Lock()
	out := s.results
	s.results = nil
	s.mu.Unlock()
	for _, r := range out {
		delete(s.running, r.id)
	}
	return out
}

// segment runs step through the Segment interceptor, if any, and
// remembers the segment's context for the calls it made.
func (x *execution) segment(ctx context.Context, answers []host.Answer, attempt int) (*host.Step, []byte, error) {
	info := &SegmentInfo{Execution: x.e.ID, Start: x.cp == nil, Calls: x.answered(0), Answers: len(answers), Attempt: attempt}
	var st *host.Step
	var snap []byte
	segCtx := ctx
	called := false
	body := func(ctx context.Context) error {
		if called {
			return refuse(ErrInterceptor, "the Segment interceptor called next twice")
		}
		called, segCtx = true, ctx
		var err error
		st, snap, err = x.step(ctx, answers, info)
		return err
	}
	var err error
	if wrap := x.r.Intercept.Segment; wrap != nil {
		err = wrap(ctx, info, body)
		if err == nil && !called {
			err = refuse(ErrInterceptor, "the Segment interceptor did not call next")
		}
	} else {
		err = body(ctx)
	}
	if err != nil {
		return nil, nil, err
	}
	if s := st.Suspended; s != nil && x.r.Intercept.Call != nil {
		ids := []uint64{uint64(info.Calls + len(answers) + 1)}
		if x.batch {
			ids = ids[:0]
			for _, k := range s.Calls {
				ids = append(ids, k.ID)
			}
		}
		for id := range x.madeIn {
			if !slices.Contains(ids, id) {
				delete(x.madeIn, id)
			}
		}
		for _, id := range ids {
			if x.madeIn[id] == nil {
				x.madeIn[id] = segCtx
			}
		}
	}
	return st, snap, nil
}

// step runs the next segment on a process: the start, or a resume with
// the stored answers, hot on the process holding the execution if it
// still runs, else from the stored bytes. A suspension comes with its
// full snapshot bytes. It fills in info.
func (x *execution) step(ctx context.Context, answers []host.Answer, info *SegmentInfo) (*host.Step, []byte, error) {
	l, err := link.Acquire(x.r.Pool, ctx, x.home)
	if err != nil {
		return nil, nil, err
	}
	defer link.Release(x.r.Pool, l)
	client := l.Client.(*host.Client)
	info.PID = client.Pid()
	x.home = nil
	var st *host.Step
	var base []byte
	var baseID string
	if cp := x.cp; cp == nil {
		mode := host.HostCallsOne
		if x.batch {
			mode = host.HostCallsBatch
		}
		st, err = client.Start(ctx, host.StartRequest{Program: x.e.Program, Inputs: x.e.Inputs, Capabilities: x.caps,
			Limits: x.e.Limits, Delivery: host.DeliverDelta, SealKey: x.r.SealKey, HostCalls: mode, Console: x.e.Console,
			Entry: x.e.Entry})
	} else {
		base, baseID = cp.Snapshot, cp.SnapshotID
		cold := host.ResumeRequest{Snapshot: cp.Snapshot, Policy: &host.Policy{Capabilities: x.caps, Limits: x.e.Limits, HostCalls: x.mode(),
			Console: x.e.Console},
			Key: x.r.Key, SealKey: x.r.SealKey, Delivery: host.DeliverDelta}
		hot := host.ResumeRequest{SnapshotID: cp.SnapshotID, PolicyID: x.policyID, Key: x.r.Key, SealKey: x.r.SealKey,
			Delivery: host.DeliverDelta}
		if x.batch {
			cold.Answers, hot.Answers = answers, answers
		} else {
			cold.Payload, hot.Payload = answers[0].Payload, answers[0].Payload
		}
		isHot := l.Same(x.parked)
		reason := "new Run" // nothing parked by this Run
		if x.parked.Slot != nil {
			reason = "the process holding the execution ended"
		}
		if isHot {
			st, err = client.Resume(ctx, hot)
			if errors.Is(err, host.ErrUnknownSnapshotID) || errors.Is(err, host.ErrUnknownPolicyID) {
				// The process let it go (its caches are bounded): use the bytes.
				isHot, reason = false, "the process no longer held the execution"
			}
		}
		if !isHot {
			x.log.Info("cold resume", "execution", x.e.ID, "calls", cp.Calls, "reason", reason,
				"snapshot_bytes", len(cp.Snapshot), "pid", info.PID)
			st, err = client.Resume(ctx, cold)
		}
		info.Hot = isHot
		if x.r.observe != nil {
			x.r.observe(client, isHot)
		}
	}
	if err == nil {
		info.Logs = st.Logs
		if st.Suspended == nil {
			info.Done = true
		}
	}
	var se *host.Error
	if errors.As(err, &se) {
		info.Logs = se.Logs
		if se.Kind() != "" {
			info.Done = true
		}
	}
	if err != nil || st.Suspended == nil {
		return st, nil, err
	}
	if x.batch && len(st.Suspended.Calls) == 0 {
		return nil, nil, link.Broken(l.Client, fmt.Errorf("%w: a batch-mode step lists no calls", host.ErrProtocol))
	}
	full, err := x.journal.extend(st.Suspended, base, baseID)
	if err != nil {
		return nil, nil, link.Broken(l.Client, err)
	}
	x.parked = l
	x.home = &x.parked
	x.policyID = st.Suspended.PolicyID
	info.Suspended = true
	return st, full, nil
}

// advance stores the outcome of a step that sent sentAnswers.
func (x *execution) advance(ctx context.Context, st *host.Step, snap []byte, sentAnswers []host.Answer) error {
	next := &Checkpoint{ProgramID: x.e.Program.ID, Calls: x.answered(len(sentAnswers)), HostCalls: x.mode()}
	if s := st.Suspended; s != nil {
		next.SnapshotID, next.Snapshot, next.Capability, next.Args = s.SnapshotID, snap, s.Capability, s.Args
		if x.batch {
			// Answers stored but not sent in this step stay with their calls.
			kept := map[uint64]*host.Payload{}
			if x.cp != nil {
				for _, k := range x.cp.Outstanding {
					if k.Answer != nil && !slices.ContainsFunc(sentAnswers, func(a host.Answer) bool { return a.ID == k.ID }) {
						kept[k.ID] = k.Answer
					}
				}
			}
			next.Outstanding = make([]StoredCall, len(s.Calls))
			for i, k := range s.Calls {
				next.Outstanding[i] = StoredCall{PendingCall: k, Answer: kept[k.ID]}
			}
		}
	} else {
		next.Done, next.Result = true, st.Value
	}
	var err error
	if s := st.Suspended; s != nil && s.BaseID != "" && x.cp != nil && s.BaseID == x.cp.SnapshotID {
		// The new snapshot extends the stored one: the Store may append.
		err = appendOrSave(ctx, x.store, x.e.ID, next, x.cp.SnapshotID, len(x.cp.Snapshot))
	} else {
		err = x.store.Save(ctx, x.e.ID, next)
	}
	if err != nil {
		return err
	}
	x.cp = next
	return nil
}
