package engine

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Config describes one run of a program: a fresh start, or a replay of a
// snapshot's journal followed by the answers to its last suspension.
type Config struct {
	Program *Program
	Header  snapshot.Header // Program bytes in it are not re-read: Program is used
	Limits  policy.Limits

	// Seal, if not nil, seals the execution's journal (a fresh start's;
	// a replay continues its snapshot's under the seal it was loaded with).
	Seal *snapshot.Sealer

	// Stop, if not nil, lets another goroutine end this segment (the
	// start, or the replay and what follows it). A wall-time limit needs
	// none: the segment then makes its own.
	Stop *Stopper

	// Journal, for a resume from snapshot bytes: the execution is re-run
	// to the journal's last suspension, which Answers then answer. Raw
	// are the bytes Journal was loaded from, which the execution's journal
	// continues (for an unsealed journal, nil: its encoding), and Digest,
	// if not zero, their digest, which it takes over rather than hashing
	// them again.
	Journal *snapshot.Snapshot
	Raw     []byte
	Digest  snapshot.Digest
	Answers []Answer
}

// Payload is how the host answers a capability call.
type Payload struct {
	Cancelled bool
	Outcome   snapshot.Outcome
}

// Answer answers one outstanding call.
type Answer struct {
	CallID  uint64
	Payload Payload
}

// Step is what an execution did: suspended with calls outstanding,
// completed, or failed.
type Step struct {
	Err error // non-nil: the execution failed and is over

	Done  bool
	Value value.Value // the completion value when Done

	// Suspension. Capability and Args are the focus call's: the one a
	// one-at-a-time step presents (a synchronous call the guest waits
	// in, or else the oldest outstanding call).
	Capability string
	Args       []value.Value
	Focus      uint64
	// Calls are every outstanding call, in call order. The slice is the
	// execution's own and valid until it is resumed or abandoned: copy it
	// to keep it longer.
	Calls   []snapshot.HostCall
	NewFrom uint64 // calls from this id on were made since the last suspension
	Meter   snapshot.Meter
	Limits  policy.Limits // what the segment that suspended ran under

	// Snapshot is the suspension's snapshot: the execution's journal up
	// to this suspension (journal.go), never modified afterwards, and
	// SnapshotID its id.
	Snapshot   []byte
	SnapshotID string

	// Logs are the console lines the segment wrote (a failed one too).
	Logs []Log
}

// Suspended reports whether the step is a suspension.
func (s Step) Suspended() bool { return s.Err == nil && !s.Done }

// NewCalls returns the calls made since the previous suspension.
func (s Step) NewCalls() []snapshot.HostCall {
	for i := range s.Calls {
		if s.Calls[i].ID >= s.NewFrom {
			return s.Calls[i:]
		}
	}
	return nil
}

// Stats count an execution's work; Replayed is the number of journal calls
// made again from a snapshot rather than for the first time.
type Stats struct {
	Replayed int
}

// message is what a resume hands the parked execution.
type message struct {
	answers []Answer
	limits  policy.Limits
	stop    *Stopper
}

// Execution is a running program parked at a capability call. Its
// goroutine is blocked until Resume or Abandon.
//
// The execution's goroutine and its caller run as coroutines (iter.Pull):
// a resume switches straight to the parked goroutine and a suspension
// straight back, without the scheduler waking a thread for either side.
// With channels, each hand-off woke an idle thread that found nothing to
// do, a tenth of a hot resume.
type Execution struct {
	cfg    Config
	realm  *realm
	limits policy.Limits
	meter  snapshot.Meter
	stats  Stats

	// Host calls: every call made so far gets the next id; outstanding
	// holds those not answered, in call order. async counts the
	// outstanding calls that returned a promise. A version 1 journal
	// (legacy) replays an execution in which every call was synchronous.
	made        uint64
	journaled   uint64 // calls made before the last suspension
	outstanding []hostCall
	listed      []snapshot.HostCall // Step.Calls, reused from step to step
	roots       []goja.Value        // retain's roots, reused likewise
	answerBuf   []Answer            // a resume's answers, reused likewise
	async       uint64
	legacy      bool
	// adopt: the journal's meter readings were taken under an earlier
	// release's metering (snapshot format versions 3 and 4), so the replay takes
	// each as recorded where the current metering counts otherwise; the
	// calls, their arguments and their order must still match.
	adopt bool

	// The answer to the synchronous call the guest waits in (there is at
	// most one), until the guest takes it.
	syncAnswered bool
	syncOutcome  snapshot.Outcome

	// Replay: the journal being re-run and the next suspension in it;
	// nil once the execution has gone past the journal.
	replay *snapshot.Snapshot
	susp   int
	over   bool
	// argsEnc is a replayed call's arguments encoded, to compare with
	// the journal's (reused from call to call).
	argsEnc []byte
	stop    *Stopper // the running segment's, if it has one

	// The coroutine: step runs the goroutine to its next suspension
	// (false once it has returned, with final set), halt makes a parked
	// suspension give up and waits for the goroutine to end, yield is the
	// goroutine's side of both, and inbox is what step hands it.
	step  func() (Step, bool)
	halt  func()
	yield func(Step) bool
	inbox message
	final Step

	rt        *Runtime
	heap      heapState
	workCarry uint64 // built-in work not yet a whole instruction (meter.go)

	logs    logState       // the running segment's console lines (console.go)
	console policy.Console // the console mode the execution started with

	// The execution's journal (journal.go), begun at its first recorded
	// suspension, and the answers of the running resume, which the next
	// suspension records before the calls made since.
	journal    *snapshot.Builder
	unrecorded []Answer

	// Checkpoints (checkpoint.go): whether the execution writes them; the
	// realm before guest code ran; its capabilities, by which it names
	// its own objects; the number of arguments of the synchronous call
	// the guest waits in; the image's buffer, reused. settling is what
	// finish settles the outcome from (the program's result, or its entry
	// function's), which an image at rest holds; restImage says that the
	// execution was continued from one.
	images    bool
	base      *goja.ImageBase
	caps      []string
	argc      int
	imageBuf  []byte
	settling  goja.Value
	restImage bool
	callEntry bool // the program evaluates to the function to call
}

// Console is the console mode the execution started with.
func (x *Execution) Console() policy.Console { return x.console }

// errAbandoned ends an evicted execution's goroutine.
var errAbandoned = errors.New("execution abandoned")

func start(rt *Runtime, cfg Config) (*Execution, Step) {
	x := &Execution{
		rt:      rt,
		cfg:     cfg,
		limits:  cfg.Limits,
		console: policy.Console(cfg.Header.Console),
	}
	if j := cfg.Journal; j != nil {
		// The journal's meter readings mean what its program's metering
		// counts: a mix would replay with readings of another kind.
		if snapshot.Counted(j.Version) != cfg.Program.counted() {
			return nil, Step{Err: &Error{Kind: KindSerialization, Message: fmt.Sprintf(
				"snapshot format version %d does not match its program's format version %d", j.Version, cfg.Program.Version)}}
		}
		if err := overBudget(j.Last().Meter, cfg.Limits); err != nil {
			return nil, Step{Err: err}
		}
		x.replay, x.legacy = j, j.Version == 1
		x.adopt = snapshot.EarlierMetering(j.Version)
		// The replay holds the journal until its first suspension past
		// it, which continues its bytes; a parked execution keeps
		// nothing of it but the bytes.
	}
	if x.images = x.imageable(); x.images {
		x.caps, x.callEntry = cfg.Header.Capabilities, x.entryCall()
	}
	x.step, x.halt = iter.Pull(x.run)
	return x.next()
}

func (x *Execution) next() (*Execution, Step) {
	s, ok := x.step()
	if !ok {
		s = x.final
	}
	if !s.Suspended() {
		x.over = true
		return nil, s
	}
	return x, s
}

// Resume answers the focus call under limits and runs to the next step.
// The Execution must not be used again unless the step is a suspension
// (then Resume returns x itself).
func (x *Execution) Resume(p Payload, limits policy.Limits) (*Execution, Step) {
	return x.ResumeWith(nil, []Answer{{CallID: x.Focus(), Payload: p}}, limits)
}

// ResumeWith answers outstanding calls, in the order given, and runs under
// limits to the next step, with a Stopper that can end the segment (nil:
// none). A resume refused before it runs (answers that CheckAnswers
// refuses, or over a stricter budget) leaves the execution parked; one
// that a Stopper ended is over.
func (x *Execution) ResumeWith(stop *Stopper, answers []Answer, limits policy.Limits) (*Execution, Step) {
	if err := checkAnswers(len(x.outstanding), func(i int) uint64 { return x.outstanding[i].ID }, x.made, answers); err != nil {
		return x, Step{Err: err}
	}
	if err := overBudget(x.meter, limits); err != nil {
		return x, Step{Err: err}
	}
	// The answers are copied into a slice the execution reuses, so that
	// the caller's need not outlive the call (nor be allocated for it).
	x.answerBuf = append(x.answerBuf[:0], answers...)
	x.inbox = message{answers: x.answerBuf, limits: limits, stop: stop}
	return x.next()
}

// AnswerError is a resume's answers that do not fit the outstanding calls.
// Nothing has changed when a resume fails with one.
type AnswerError struct {
	Reason AnswerReason
	Msg    string
}

// AnswerReason says what is wrong with a resume's answers.
type AnswerReason int

const (
	NoAnswers     AnswerReason = iota // the resume answers no call
	UnknownCall                       // an id the execution never gave a call
	AnsweredTwice                     // a call answered before, or twice in the resume
)

func (e *AnswerError) Error() string { return e.Msg }

// CheckAnswers checks a resume's answers against the outstanding calls of
// an execution that has made `made` calls: at least one answer, each to an
// outstanding call, no call answered twice.
func CheckAnswers(outstanding []snapshot.HostCall, made uint64, answers []Answer) error {
	return checkAnswers(len(outstanding), func(i int) uint64 { return outstanding[i].ID }, made, answers)
}

// checkAnswers is CheckAnswers over the n outstanding calls whose ids id
// returns, so a parked execution checks its own without a copy.
func checkAnswers(n int, id func(int) uint64, made uint64, answers []Answer) error {
	if len(answers) == 0 {
		return &AnswerError{NoAnswers, "a resume must answer at least one call"}
	}
	for i, a := range answers {
		found := false
		for j := 0; j < n && !found; j++ {
			found = id(j) == a.CallID
		}
		repeated := false
		for _, b := range answers[:i] {
			repeated = repeated || b.CallID == a.CallID
		}
		switch {
		case a.CallID == 0 || a.CallID > made:
			return &AnswerError{UnknownCall, fmt.Sprintf("unknown call_id %d", a.CallID)}
		case !found || repeated:
			return &AnswerError{AnsweredTwice, fmt.Sprintf("call_id %d answered twice", a.CallID)}
		}
	}
	return nil
}

// Abandon ends a parked execution and waits for its goroutine to exit.
func (x *Execution) Abandon() {
	if x.over {
		return
	}
	x.over = true
	x.halt()
}

// overBudget refuses at once to resume an execution that has already used
// more than a (stricter) policy's cumulative budgets allow.
func overBudget(m snapshot.Meter, l policy.Limits) error {
	switch {
	case m.Instructions > l.InstructionBudget:
		return ErrInstructionBudget
	case m.Allocations > l.AllocationBudget:
		return ErrAllocationBudget
	}
	return nil
}

// Stats reports the execution's counters.
func (x *Execution) Stats() Stats { return x.stats }

// Meter reports the cumulative metering so far.
func (x *Execution) Meter() snapshot.Meter { return x.meter }

// run is the execution's goroutine: it yields each suspension and returns
// with the final step in x.final.
func (x *Execution) run(yield func(Step) bool) {
	x.yield = yield
	var final Step
	defer func() {
		if p := recover(); p != nil {
			final = Step{Err: &Error{Kind: KindRuntime, Message: "internal error"}}
			if _, ok := p.(runtime.Error); ok && x.restImage {
				// A state read from an image at rest that the
				// interpreter cannot run (damaged bytes the reader's
				// checks let through).
				final = Step{Err: errImageDoesNotRun}
			}
		}
		if err := x.detach(); err != nil {
			// Stopped: that decides the outcome, whatever the segment
			// did after the interrupt was sent.
			final = Step{Err: err, Meter: final.Meter}
		}
		if final.Err != nil {
			// The outcome is decided: no look at the heap, whose
			// collection can take hundreds of milliseconds on a large
			// heap and would delay the answer to a cancel.
			x.rt.endSegment(x)
		} else if x.rt.leaveSegment(x) {
			final = Step{Err: ErrHeapLimit, Meter: final.Meter}
		}
		if final.Err == ErrHeapLimit {
			// Give back what the failed execution allocated before the next
			// one starts, so its garbage neither counts against nor piles
			// up under the next execution's limit.
			x.realm, x.base = nil, nil
			debug.FreeOSMemory()
		}
		final.Logs = x.takeLogs()
		x.final = final
	}()
	final = x.execute()
	final.Meter = x.meter
}

func (x *Execution) execute() Step {
	h := x.cfg.Header
	r, err := x.rt.newRealm()
	if err != nil {
		return Step{Err: &Error{Kind: KindRuntime, Message: "realm could not be created"}}
	}
	if err := r.activate(x, h.Seed, h.ClockMillis); err != nil {
		return Step{Err: &Error{Kind: KindRuntime, Message: "realm could not be created"}}
	}
	rt := r.rt
	// A replay runs the journaled past under the limits it ran under.
	x.limits = x.segmentLimits(0)
	x.rt.enterSegment(x)
	x.attach(x.cfg.Stop, x.cfg.Limits)
	rt.SetMaxCallStackSize(x.maxCallStack(x.limits))
	global := rt.GlobalObject()
	ns := newNamespaces(r)
	for _, name := range h.Capabilities {
		if strings.IndexByte(name, '.') >= 0 {
			ns.add(name, r.newFunction(lastSegment(name), 0, x.capability(name)))
			continue
		}
		if err := checkGlobalName(global, name); err != nil {
			return Step{Err: err}
		}
		fn := r.newFunction(name, 0, x.capability(name))
		_ = global.DefineDataProperty(name, fn, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
	}
	if h.Console == snapshot.ConsoleCollect {
		x.installConsole(ns, h.Capabilities)
	}
	if err := ns.install(global); err != nil {
		return Step{Err: err}
	}
	if x.images {
		// What a checkpoint leaves out: the realm as it is now, made the
		// same way again by a resume from one (the inputs are the
		// guest's, and the image holds them).
		x.base = rt.MustardImageBase()
		if j := x.replay; j != nil && j.Checkpoint != nil {
			result, err := x.resumeCheckpoint(j)
			return x.finish(r, result, err)
		}
	}
	var args *goja.Object // entry call: the inputs object
	if h.Entry == snapshot.EntryCall {
		args = rt.NewObject()
	}
	// The inputs are memory the guest is given, counted as answers are
	// (settlement): together larger than the heap limit, the start fails
	// before they are made.
	var inputBytes uint64
	for _, in := range h.Inputs {
		inputBytes += importBytes(in.Value)
	}
	if inputBytes > x.limits.HeapLimitBytes {
		return Step{Err: ErrHeapLimit}
	}
	for _, in := range h.Inputs {
		if err := checkGlobalName(global, in.Key); err != nil {
			return Step{Err: err}
		}
		v := r.importValue(in.Value)
		_ = global.DefineDataProperty(in.Key, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
		if args != nil {
			_ = args.DefineDataProperty(in.Key, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
		}
	}
	// The realm holds the inputs now; the header stays until the first
	// suspension writes it into the journal: the execution, which may
	// stay parked for long, then keeps no second copy (journal.go).

	result, err := rt.RunProgram(x.cfg.Program.compiled)
	if err != nil {
		return Step{Err: x.failure(err)}
	}
	if args == nil {
		return x.finish(r, result, nil)
	}
	// The program evaluated to the function to call (awaited, for a
	// program with top-level await): its result is the execution's.
	if result, err = x.settled(result); err != nil {
		return Step{Err: err}
	}
	fn, ok := goja.AssertFunction(result)
	if !ok {
		return Step{Err: &Error{Kind: KindRuntime, Message: "TypeError: program did not evaluate to a function (got " + typeOf(result) + ")"}}
	}
	result, err = fn(goja.Undefined(), args)
	return x.finish(r, result, err)
}

// finish settles what the program completed with (or the failure it
// ended in) into the execution's final step.
func (x *Execution) finish(r *realm, result goja.Value, err error) Step {
	if err != nil {
		return Step{Err: x.failure(err)}
	}
	x.settling = result
	result, err = x.settled(result)
	x.settling = nil
	if err != nil {
		return Step{Err: err}
	}
	if x.replay != nil {
		return Step{Err: divergence("the program completed before reaching the suspended call")}
	}
	v, err := r.export(result)
	var refused *boundaryError
	switch {
	case err == errTooLarge:
		return Step{Err: ErrHeapLimit}
	case errors.As(err, &refused):
		// A guest value the boundary refuses is a runtime failure of the
		// guest's, as in the reference.
		return Step{Err: &Error{Kind: KindRuntime, Message: "result " + refused.msg}}
	case err != nil:
		// A limit that ran out while the result was copied out.
		return Step{Err: err}
	}
	return Step{Done: true, Value: v}
}

// settled runs the guest until nothing is outstanding, answering what it
// waits for, and returns what result settled to when it is a promise.
func (x *Execution) settled(result goja.Value) (goja.Value, error) {
	// The guest has nothing left to run: answer what it is waiting for
	// and let it run again, until nothing is outstanding.
	for len(x.outstanding) > 0 {
		if err := x.suspend(); err != nil {
			return nil, err
		}
		if err := x.realm.rt.MustardRunJobs(); err != nil {
			return nil, x.failure(err)
		}
	}
	p, ok := asPromise(result)
	if !ok {
		return result, nil
	}
	switch p.State() {
	case goja.PromiseStateFulfilled:
		return p.Result(), nil
	case goja.PromiseStateRejected:
		return nil, x.renderThrown(p.Result(), x.errorStack(p.Result()))
	}
	if x.replay != nil {
		return nil, divergence("the program completed before reaching the suspended call")
	}
	return nil, &Error{Kind: KindRuntime, Message: "the program's result is a promise that never settled"}
}

// typeOf is the guest's typeof of a value, read without running guest
// code.
func typeOf(v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "object"
	}
	switch v.(type) {
	case goja.String:
		return "string"
	case *goja.Symbol:
		return "symbol"
	case *goja.Object:
		if _, ok := goja.AssertFunction(v); ok {
			return "function"
		}
		return "object"
	}
	switch v.ExportType().Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int64, reflect.Float64:
		return "number"
	}
	return "bigint"
}

var promiseType = reflect.TypeOf((*goja.Promise)(nil))

// asPromise unwraps a promise without Export, which would copy (and run
// getters of) any other object.
func asPromise(v goja.Value) (*goja.Promise, bool) {
	o, ok := v.(*goja.Object)
	if !ok || o.ExportType() != promiseType {
		return nil, false
	}
	p, ok := o.Export().(*goja.Promise)
	return p, ok
}

// maxCallStack converts the call-depth limit to goja's stack size.
// Instrumented programs (format versions 1 and 2) get one more, for the
// metering call every function makes on entry (a hook call pushes no
// frame, but goja checks the depth as if it did).
func (x *Execution) maxCallStack(l policy.Limits) int {
	n := int(min(l.CallDepthLimit, 1<<30))
	if !x.cfg.Program.counted() {
		n++
	}
	return n
}

// checkGlobalName rejects an input or capability that would replace a
// built-in or another binding.
func checkGlobalName(global *goja.Object, name string) error {
	if strings.HasPrefix(name, ReservedPrefix) {
		return &Error{Kind: KindValidation, Message: fmt.Sprintf("global name %q uses the reserved prefix %s", name, ReservedPrefix)}
	}
	if !isIdentifier(name) {
		return &Error{Kind: KindValidation, Message: fmt.Sprintf("global name %q is not a valid identifier", name)}
	}
	if global.Get(name) != nil {
		return &Error{Kind: KindValidation, Message: fmt.Sprintf("global name %q is already defined", name)}
	}
	return nil
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// tick is the meter of instrumented programs (format versions 1 and 2):
// one instruction per function entry and loop iteration.
func (r *realm) tick(goja.FunctionCall) goja.Value {
	r.x.spend(1)
	return goja.Undefined()
}

// JobWeight is what one promise job (an await, a then) costs in
// instructions.
const JobWeight = 16

func (r *realm) tickJob(goja.FunctionCall) goja.Value {
	r.x.spend(JobWeight)
	return goja.Undefined()
}

// allocate counts one allocation at an instrumented site and returns the
// allocated value.
func (r *realm) allocate(c goja.FunctionCall) goja.Value {
	r.x.allocation()
	return c.Argument(0)
}

// allocation counts one object made by a literal or new expression.
func (x *Execution) allocation() {
	x.meter.Allocations++
	if x.meter.Allocations > x.limits.AllocationBudget {
		x.fail(ErrAllocationBudget)
		return
	}
	if x.heap.due.Load() == 0 {
		x.checkHeap()
	}
}

// spend charges instructions at a metering point. One comparison covers the
// budget, the periodic heap look and a look the watchdog asked for: due is
// the instruction count at which the slow path runs.
func (x *Execution) spend(n uint64) {
	x.meter.Instructions += n
	if x.meter.Instructions > x.heap.due.Load() {
		x.slowPoint()
	}
}

// slowPoint is where the guest pauses: out of budget, or to have its heap
// looked at (every heapCheckTicks instructions, or when the watchdog asks).
func (x *Execution) slowPoint() {
	if x.meter.Instructions > x.limits.InstructionBudget {
		x.fail(ErrInstructionBudget)
		return
	}
	x.checkHeap()
}

func divergence(detail string) error {
	return &Error{Kind: KindSerialization, Message: "snapshot replay diverged: " + detail}
}

// hostCall is a call the guest made and the host has not answered. An
// asynchronous call's answer settles its promise; a synchronous call's is
// kept in the Execution until the guest, waiting in the call, takes it.
type hostCall struct {
	snapshot.HostCall
	promise *goja.Promise // asynchronous calls
}

// capability returns the guest function for one granted capability. A
// call in plain top-level code is synchronous: it suspends the execution
// until the host answers and returns the answer. Anywhere else (in async
// code) it returns a promise at once and the call is queued; the execution
// suspends when the guest has nothing left to run. Replayed calls are
// checked against the journal.
func (x *Execution) capability(name string) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		rt := x.realm.rt
		args := make([]value.Value, len(call.Arguments))
		e := x.realm.exporter() // all the arguments share one limit
		for i, a := range call.Arguments {
			clear(e.seen) // each argument is its own value: o may be passed twice
			v, err := e.value(a, 0)
			var refused *boundaryError
			switch {
			case err == errTooLarge:
				rt.Interrupt(ErrHeapLimit)
				return goja.Undefined()
			case errors.As(err, &refused):
				panic(rt.NewTypeError(fmt.Sprintf("argument %d of %s: %s", i+1, name, refused.msg)))
			case err != nil:
				// A limit that ran out while the argument was copied out
				// ends the execution with that limit.
				rt.Interrupt(err)
				return goja.Undefined()
			}
			args[i] = v
		}
		sync := x.legacy || !rt.MustardInAsync()
		switch {
		case x.legacy && x.limits.MaxOutstandingHostCalls == 0,
			!sync && x.async >= x.limits.MaxOutstandingHostCalls:
			rt.Interrupt(ErrOutstandingCalls)
			return goja.Undefined()
		}
		x.made++
		c := hostCall{HostCall: snapshot.HostCall{ID: x.made, Capability: name, Args: args, Meter: x.meter, Sync: sync}}
		if j := x.replay; j != nil && c.ID <= j.Made() {
			rec := j.Call(c.ID)
			if x.adopt && rec.Meter != x.meter {
				x.meter, c.Meter = rec.Meter, rec.Meter
			}
			x.argsEnc = value.Array(args...).AppendCBOR(x.argsEnc[:0])
			if rec.Capability != name || !rec.SameArgs(x.argsEnc) || rec.Meter != x.meter || rec.Sync != sync {
				rt.Interrupt(divergence(fmt.Sprintf("host call %d does not match the journal", c.ID)))
				return goja.Undefined()
			}
			x.stats.Replayed++
		}
		if !sync {
			x.async++
			p, obj := rt.MustardNewPromise()
			c.promise = p
			x.outstanding = append(x.outstanding, c)
			return obj
		}
		x.outstanding = append(x.outstanding, c)
		x.argc = len(call.Arguments)
		return x.waitSync(name)
	}
}

// waitSync suspends until the synchronous call the guest waits in (to
// capability name) is answered, and returns the answer or throws it.
func (x *Execution) waitSync(name string) goja.Value {
	for !x.syncAnswered {
		if err := x.suspend(); err != nil {
			x.realm.rt.Interrupt(err)
			return goja.Undefined()
		}
	}
	x.syncAnswered = false
	o := x.syncOutcome
	x.syncOutcome = snapshot.Outcome{}
	if o.Error == nil && isConsoleCapability(name) {
		return goja.Undefined()
	}
	return x.answer(o)
}

// focus is the call a one-at-a-time step presents: a synchronous call the
// guest waits in (always the last call made), or else the oldest.
func (x *Execution) focus() *hostCall {
	if last := &x.outstanding[len(x.outstanding)-1]; last.Sync {
		return last
	}
	return &x.outstanding[0]
}

// suspend ends the running segment with calls outstanding and returns once
// some are answered: by the journal while replaying it, by the resume that
// reaches past it, or by a host resume. The answers have been applied.
func (x *Execution) suspend() error {
	focus := x.focus()
	if j := x.replay; j != nil {
		sp := &j.Suspensions[x.susp]
		if x.adopt {
			x.meter = sp.Meter
		}
		if sp.Focus != focus.ID || sp.Made != x.made || sp.Meter != x.meter {
			return divergence(fmt.Sprintf("suspension %d does not match the journal", x.susp+1))
		}
		x.susp++
		x.journaled = x.made
		// Each journaled resume began as a hot one did: from what the
		// execution kept, checked against the limits it resumed under.
		x.retain()
		next := x.cfg.Limits
		if x.susp < len(j.Suspensions) {
			next = x.segmentLimits(x.susp)
		}
		if x.keepsOver(next) {
			return ErrHeapLimit
		}
		x.setLimits(next)
		x.rebase()
		if x.susp < len(j.Suspensions) {
			return x.apply(sp.Answers, nil)
		}
		// The suspension the snapshot is at: from here on the execution
		// runs under the resume's policy, with the resume's answers.
		x.replay = nil
		answers := x.cfg.Answers
		x.cfg.Answers = nil
		x.unrecorded = answers
		return x.apply(nil, answers)
	}
	if err := x.detach(); err != nil {
		// Stopped just before suspending: the execution ends here
		// rather than parking with an interrupt pending.
		return err
	}
	if x.rt.suspendSegment(x) {
		return ErrHeapLimit
	}
	x.listed = x.listed[:0]
	for i := range x.outstanding {
		x.listed = append(x.listed, x.outstanding[i].HostCall)
	}
	step := Step{Capability: focus.Capability, Args: focus.Args, Focus: focus.ID,
		Calls: x.listed, NewFrom: x.journaled + 1, Meter: x.meter, Limits: x.limits, Logs: x.takeLogs()}
	x.record(&step)
	x.journaled = x.made
	if !x.yield(step) {
		return errAbandoned // halted
	}
	m := x.inbox
	x.inbox = message{}
	x.limits = m.limits
	x.rt.enterSegment(x)
	x.attach(m.stop, m.limits)
	x.realm.rt.SetMaxCallStackSize(x.maxCallStack(m.limits))
	if x.keepsOver(m.limits) {
		return ErrHeapLimit
	}
	x.unrecorded = m.answers
	return x.apply(nil, m.answers)
}

// apply delivers answers in order (journaled ones, or a resume's). A
// cancelled answer ends the execution.
func (x *Execution) apply(journaled []snapshot.Answer, answers []Answer) error {
	for i := range journaled {
		if err := x.deliver(journaled[i].CallID, journaled[i].Outcome); err != nil {
			return err
		}
	}
	for i := range answers {
		if answers[i].Payload.Cancelled {
			return ErrCancelled
		}
		if err := x.deliver(answers[i].CallID, answers[i].Payload.Outcome); err != nil {
			return err
		}
	}
	return nil
}

// deliver answers one outstanding call: a synchronous call keeps its
// outcome for the guest to take, an asynchronous call's promise is settled
// (its reactions run when the guest runs next).
func (x *Execution) deliver(id uint64, o snapshot.Outcome) error {
	c, ok := x.take(id)
	if !ok {
		return divergence(fmt.Sprintf("call %d is not outstanding", id))
	}
	if c.Sync {
		x.syncAnswered, x.syncOutcome = true, o
		return nil
	}
	x.async--
	var v goja.Value = goja.Undefined()
	rejected := false
	if o.Error != nil || !isConsoleCapability(c.Capability) {
		v, rejected = x.settlement(o)
	}
	if err := x.realm.rt.MustardSettle(c.promise, v, rejected); err != nil {
		return x.failure(err)
	}
	return nil
}

// take removes an outstanding call.
func (x *Execution) take(id uint64) (hostCall, bool) {
	for i, c := range x.outstanding {
		if c.ID == id {
			n := len(x.outstanding) - 1
			copy(x.outstanding[i:], x.outstanding[i+1:])
			x.outstanding[n] = hostCall{} // the promise and arguments are garbage now
			x.outstanding = x.outstanding[:n]
			return c, true
		}
	}
	return hostCall{}, false
}

// attach begins a segment that stop (or its wall-time limit, from the
// policy in force, not a journal's) can end.
func (x *Execution) attach(stop *Stopper, l policy.Limits) {
	if stop == nil && l.WallTimeMS != 0 {
		stop = NewStopper()
	}
	x.stop = stop
	if stop != nil {
		stop.attach(x.realm.rt, wallTime(l.WallTimeMS))
	}
}

// detach ends the segment's exposure to its Stopper and reports whether it
// was stopped.
func (x *Execution) detach() *Error {
	if x.stop == nil {
		return nil
	}
	return x.stop.detach()
}

// segmentLimits returns the limits the journaled segment k (the one that
// ended at suspension k) ran under; a fresh start, or a journal that does
// not record them, runs under the given ones.
func (x *Execution) segmentLimits(k int) policy.Limits {
	if j := x.replay; j != nil && k < len(j.Suspensions) {
		if l := j.Suspensions[k].Limits; l != nil {
			return recordedLimits(l)
		}
	}
	return x.cfg.Limits
}

// setLimits switches the running segment's limits, as a hot resume does.
func (x *Execution) setLimits(l policy.Limits) {
	x.limits = l
	x.scheduleLook()
	x.heap.trigger.Store(x.heap.base + l.HeapLimitBytes)
	x.realm.rt.SetMaxCallStackSize(x.maxCallStack(l))
}

// settleEncoded is settlement's value for an answer that arrives as its
// binary form (a resume's, from value.TranscodeJSON, or a journaled one
// snapshot.Load left encoded): counted and imported straight from its
// bytes, never held as a Value.
func (x *Execution) settleEncoded(enc []byte, owned bool) goja.Value {
	r := x.realm
	n, err := encodedBytes(value.NewEncodedView(enc))
	if err != nil {
		return x.fail(errUnreadableAnswer)
	}
	if !r.admit(int(min(n, math.MaxInt))) {
		return goja.Undefined()
	}
	v, err := r.importEncoded(value.NewEncoded(enc, owned))
	if err != nil {
		return x.fail(errUnreadableAnswer)
	}
	return v
}

// errUnreadableAnswer fails an execution whose answer is not the checked
// binary form snapshot.Load or value.TranscodeJSON gives: only a change to
// the value package's rules between the two could cause it.
var errUnreadableAnswer = &Error{Kind: KindSerialization, Message: "snapshot replay diverged: a journaled answer cannot be read"}

// answer returns a host outcome to a synchronous call: a value, or a
// thrown Error.
func (x *Execution) answer(o snapshot.Outcome) goja.Value {
	v, rejected := x.settlement(o)
	if rejected {
		panic(v)
	}
	return v
}

// settlement is what a host outcome gives the guest: the value, or (rejected)
// an Error carrying the host's name, message, code and details.
func (x *Execution) settlement(o snapshot.Outcome) (goja.Value, bool) {
	r := x.realm
	if o.Error == nil {
		if enc, owned := o.Encoded(); enc != nil {
			return x.settleEncoded(enc, owned), false
		}
		// The answer is memory the guest is given: as a built-in's
		// allocation, one larger than the heap limit fails the execution
		// before it is made (the guest never sees it).
		if !r.admit(int(min(importBytes(o.Value), math.MaxInt))) {
			return goja.Undefined(), false
		}
		return r.importValue(o.Value), false
	}
	e := o.Error
	obj, err := r.rt.New(r.rt.MustardErrorConstructor(), r.importString(e.Message))
	if err != nil {
		panic(err)
	}
	name := e.Name
	if name == "" {
		name = "Error"
	}
	_ = obj.DefineDataProperty("name", r.importString(name), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	if e.Code != nil {
		_ = obj.DefineDataProperty("code", r.importString(*e.Code), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
	}
	if e.Details != nil {
		_ = obj.DefineDataProperty("details", r.importValue(*e.Details), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
	}
	return obj, true
}

// failure turns a goja error into a guest-side Error.
func (x *Execution) failure(err error) error {
	// A type switch, not errors.As: a goja Exception's Unwrap runs an
	// instanceof check that would call guest proxy traps.
	switch e := err.(type) {
	case *Error:
		return e // the engine's own, such as a checkpoint that cannot be read
	case *goja.InterruptedError:
		if le, ok := e.Value().(*Error); ok {
			return le
		}
		if e.Value() == goja.ErrNativeDepth {
			return ErrCallDepth
		}
		return ErrCancelled
	case *goja.StackOverflowError:
		return ErrCallDepth
	case *goja.Exception:
		return x.renderThrown(e.Value(), e.Stack())
	}
	return &Error{Kind: KindRuntime, Message: "execution failed"}
}

// errorStack returns the stack an Error object captured when it was made.
// goja keeps it only inside the object; throwing the object again exposes
// it on the resulting exception.
func (x *Execution) errorStack(v goja.Value) []goja.StackFrame {
	o, ok := v.(*goja.Object)
	if !ok || o.ExportType() == proxyType || o.ClassName() != "Error" {
		return nil
	}
	_, err := x.realm.rethrow(goja.Undefined(), v)
	if ex, ok := err.(*goja.Exception); ok {
		return ex.Stack()
	}
	return nil
}

// renderThrown formats an uncaught guest exception as
// "Runtime: <Name>: <message>" plus traceback lines into the guest source.
func (x *Execution) renderThrown(v goja.Value, stack []goja.StackFrame) error {
	name, msg := "Error", ""
	if o, ok := v.(*goja.Object); ok && o.ExportType() != proxyType && x.isError(o) {
		name = x.safeString(o, "name", "Error")
		msg = x.safeString(o, "message", "")
	} else if v != nil {
		msg = x.safeDisplay(v)
	}
	var b strings.Builder
	b.WriteString(name)
	b.WriteString(": ")
	b.WriteString(msg)
	for _, f := range stack {
		// Only the guest program's own frames (the lockdown's and native
		// ones are the sidecar's).
		if f.SrcName() != "" {
			continue
		}
		pos := f.Position()
		if pos.Line == 0 {
			continue
		}
		fn, line, col := x.frame(f.FuncName(), pos.Line, pos.Column)
		fmt.Fprintf(&b, "\n  at %s (%d:%d)", fn, line, col)
	}
	return &Error{Kind: KindRuntime, Message: b.String()}
}

// frame is a guest frame as tracebacks show it: the function's name
// (<anonymous>, or <script> outside any function) and the position in the
// guest's own text.
func (x *Execution) frame(fn string, line, col int) (string, int, int) {
	line, col = x.cfg.Program.lines.original(line, col)
	if fn == "" || fn == "<anonymous>" {
		fn = "<anonymous>"
		if !x.cfg.Program.lines.inFunction(line, col) {
			fn = "<script>"
		}
	}
	line, col = x.cfg.Program.lines.guest(line, col)
	return fn, line, col
}

func (x *Execution) isError(o *goja.Object) bool {
	for p := o; p != nil; p = p.Prototype() {
		if p.ExportType() == proxyType {
			return false
		}
		if p.ClassName() == "Error" {
			return true
		}
	}
	return false
}

// safeString reads a string-valued data property from an object or its
// prototype chain without running guest code.
func (x *Execution) safeString(o *goja.Object, key, fallback string) string {
	e := exporter{r: x.realm, seen: map[*goja.Object]bool{}}
	for p := o; p != nil; p = p.Prototype() {
		if p.ExportType() == proxyType {
			return fallback
		}
		v, present, err := e.ownData(p, x.realm.rt.ToValue(key))
		if err != nil {
			return fallback
		}
		if present {
			if s, ok := v.(goja.String); ok {
				return guestString(s)
			}
			return fallback
		}
	}
	return fallback
}

// safeDisplay renders a thrown non-Error value without running guest code.
func (x *Execution) safeDisplay(v goja.Value) string {
	switch v.(type) {
	case *goja.Object:
		return "uncaught " + strings.ToLower(objectKind(v.(*goja.Object)))
	case *goja.Symbol:
		return "uncaught symbol"
	}
	if s, ok := v.(goja.String); ok {
		return guestString(s)
	}
	return v.String()
}

func objectKind(o *goja.Object) string {
	if o.ExportType() == proxyType {
		return "proxy"
	}
	return o.ClassName()
}

// Focus is the parked execution's focus call: the one a one-at-a-time
// resume answers.
func (x *Execution) Focus() uint64 { return x.focus().ID }

// Program is the program the execution runs.
func (x *Execution) Program() *Program { return x.cfg.Program }
