package engine

import (
	"errors"
	"fmt"
	"iter"
	"reflect"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/dop251/goja"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Config describes one run of a program: a fresh start, or a replay of a
// snapshot's journal followed by the answer to its pending call.
type Config struct {
	Program *Program
	Header  snapshot.Header // Program bytes in it are not re-read: Program is used
	Limits  policy.Limits

	// Stop, if not nil, lets another goroutine end this segment (the
	// start, or the replay and what follows it). A wall-time limit needs
	// none: the segment then makes its own.
	Stop *Stopper

	// Replay, for a resume from snapshot bytes.
	Replay  []snapshot.Call
	Pending *snapshot.Pending
	Answer  Payload
}

// Payload is how the host answers a suspended capability call.
type Payload struct {
	Cancelled bool
	Outcome   snapshot.Outcome
}

// Step is what an execution did: suspended on a call, completed, or failed.
type Step struct {
	Err error // non-nil: the execution failed and is over

	Done  bool
	Value value.Value // the completion value when Done

	// Suspension.
	Capability string
	Args       []value.Value
	ArgsDigest [32]byte
	Meter      snapshot.Meter
	Limits     policy.Limits // what the segment that made the call ran under
}

// Suspended reports whether the step is a suspension.
func (s Step) Suspended() bool { return s.Err == nil && !s.Done }

// Stats count an execution's work; Replayed is the number of journal calls
// answered from a snapshot rather than by the host.
type Stats struct {
	Replayed int
}

// message is what a resume hands the parked execution.
type message struct {
	payload Payload
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
	calls  int // capability calls made so far, including replayed ones
	stats  Stats
	over   bool
	stop   *Stopper // the running segment's, if it has one

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
}

// errAbandoned ends an evicted execution's goroutine.
var errAbandoned = errors.New("execution abandoned")

func start(rt *Runtime, cfg Config) (*Execution, Step) {
	x := &Execution{
		rt:     rt,
		cfg:    cfg,
		limits: cfg.Limits,
	}
	if cfg.Pending != nil {
		if err := overBudget(cfg.Pending.Meter, cfg.Limits); err != nil {
			return nil, Step{Err: err}
		}
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

// Resume answers the pending call under limits and runs to the next step.
// The Execution must not be used again unless the step is a suspension
// (then Resume returns x itself).
func (x *Execution) Resume(p Payload, limits policy.Limits) (*Execution, Step) {
	return x.ResumeWith(nil, p, limits)
}

// ResumeWith is Resume with a Stopper that can end the resumed segment
// (nil: none). A resume refused before it runs (over a stricter budget)
// leaves the execution parked; one that a Stopper ended is over.
func (x *Execution) ResumeWith(stop *Stopper, p Payload, limits policy.Limits) (*Execution, Step) {
	if err := overBudget(x.meter, limits); err != nil {
		return x, Step{Err: err}
	}
	x.inbox = message{payload: p, limits: limits, stop: stop}
	return x.next()
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
		}
		if err := x.detach(); err != nil {
			// Stopped: that decides the outcome, whatever the segment
			// did after the interrupt was sent.
			final = Step{Err: err, Meter: final.Meter}
		}
		if x.rt.leaveSegment(x) && final.Err == nil {
			final = Step{Err: ErrHeapLimit, Meter: final.Meter}
		}
		if final.Err == ErrHeapLimit {
			// Give back what the failed execution allocated before the next
			// one starts, so its garbage neither counts against nor piles
			// up under the next execution's limit.
			x.realm = nil
			debug.FreeOSMemory()
		}
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
	r.activate(x, h.Seed, h.ClockMillis)
	rt := r.rt
	// A replay runs the journaled past under the limits it ran under.
	x.limits = x.segmentLimits(0)
	x.rt.enterSegment(x)
	x.attach(x.cfg.Stop, x.cfg.Limits)
	rt.SetMaxCallStackSize(maxCallStack(x.limits))
	global := rt.GlobalObject()
	for _, name := range h.Capabilities {
		if err := checkGlobalName(global, name); err != nil {
			return Step{Err: err}
		}
		fn := r.newFunction(name, 0, x.capability(name))
		_ = global.DefineDataProperty(name, fn, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
	}
	for _, in := range h.Inputs {
		if err := checkGlobalName(global, in.Key); err != nil {
			return Step{Err: err}
		}
		_ = global.DefineDataProperty(in.Key, r.importValue(in.Value), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
	}

	result, err := rt.RunProgram(x.cfg.Program.compiled)
	if err != nil {
		return Step{Err: x.failure(err)}
	}
	if p, ok := asPromise(result); ok {
		switch p.State() {
		case goja.PromiseStateFulfilled:
			result = p.Result()
		case goja.PromiseStateRejected:
			return Step{Err: x.renderThrown(p.Result(), x.errorStack(p.Result()))}
		default:
			return Step{Err: &Error{Kind: KindRuntime, Message: "the program's result is a promise that never settled"}}
		}
	}
	if x.cfg.Pending != nil {
		return Step{Err: divergence("the program completed before reaching the suspended call")}
	}
	v, err := r.export(result)
	if err == errTooLarge {
		return Step{Err: ErrHeapLimit}
	}
	if err != nil {
		return Step{Err: &Error{Kind: KindSerialization, Message: "result " + err.Error()}}
	}
	return Step{Done: true, Value: v}
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

// maxCallStack converts the call-depth limit to goja's stack size: one more
// than the limit, for the metering call every function makes on entry (a
// hook call pushes no frame, but goja checks the depth as if it did).
func maxCallStack(l policy.Limits) int {
	return int(min(l.CallDepthLimit, 1<<30)) + 1
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

// tick is the meter: one instruction per function entry and loop iteration.
func (r *realm) tick(goja.FunctionCall) goja.Value {
	r.x.spend(1)
	return goja.Undefined()
}

// JobWeight is what scheduling one promise job (an await, a then) costs
// in instructions.
const JobWeight = 16

func (r *realm) tickJob(goja.FunctionCall) goja.Value {
	r.x.spend(JobWeight)
	return goja.Undefined()
}

// allocate counts one allocation at an instrumented site and returns the
// allocated value.
func (r *realm) allocate(c goja.FunctionCall) goja.Value {
	x := r.x
	x.meter.Allocations++
	if x.meter.Allocations > x.limits.AllocationBudget {
		x.fail(ErrAllocationBudget)
		return c.Argument(0)
	}
	if x.heap.due.Load() == 0 {
		x.checkHeap()
	}
	return c.Argument(0)
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

// capability returns the guest function for one granted capability. A call
// suspends the whole execution until the host answers; replayed calls are
// answered from the journal after checking they are the same call.
func (x *Execution) capability(name string) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		rt := x.realm.rt
		args := make([]value.Value, len(call.Arguments))
		e := x.realm.exporter() // all the arguments share one limit
		for i, a := range call.Arguments {
			clear(e.seen) // each argument is its own value: o may be passed twice
			v, err := e.value(a, 0)
			if err == errTooLarge {
				rt.Interrupt(ErrHeapLimit)
				return goja.Undefined()
			}
			if err != nil {
				panic(rt.NewTypeError(fmt.Sprintf("argument %d of %s: %s", i+1, name, err.Error())))
			}
			args[i] = v
		}
		if x.limits.MaxOutstandingHostCalls == 0 {
			rt.Interrupt(ErrOutstandingCalls)
			return goja.Undefined()
		}
		digest := snapshot.ArgsDigest(args)
		k := x.calls
		x.calls++
		if k < len(x.cfg.Replay) {
			rec := &x.cfg.Replay[k]
			if rec.Capability != name || rec.ArgsDigest != digest || rec.Meter != x.meter {
				rt.Interrupt(divergence(fmt.Sprintf("host call %d does not match the journal", k+1)))
				return goja.Undefined()
			}
			x.stats.Replayed++
			x.setLimits(x.segmentLimits(k + 1))
			return x.answer(rec.Outcome)
		}
		if p := x.cfg.Pending; p != nil {
			x.cfg.Pending = nil
			if p.Capability != name || snapshot.ArgsDigest(p.Args) != digest || p.Meter != x.meter {
				rt.Interrupt(divergence(fmt.Sprintf("host call %d does not match the suspended call", k+1)))
				return goja.Undefined()
			}
			// From here on the execution runs under the resume's policy.
			x.setLimits(x.cfg.Limits)
			return x.deliver(x.cfg.Answer)
		}
		if err := x.detach(); err != nil {
			// Stopped just before suspending: the execution ends here
			// rather than parking with an interrupt pending.
			rt.Interrupt(err)
			return goja.Undefined()
		}
		if x.rt.suspendSegment(x) {
			rt.Interrupt(ErrHeapLimit)
			return goja.Undefined()
		}
		if !x.yield(Step{Capability: name, Args: args, ArgsDigest: digest, Meter: x.meter, Limits: x.limits}) {
			rt.Interrupt(errAbandoned) // halted
			return goja.Undefined()
		}
		m := x.inbox
		x.inbox = message{}
		x.limits = m.limits
		x.rt.enterSegment(x)
		x.attach(m.stop, m.limits)
		rt.SetMaxCallStackSize(maxCallStack(m.limits))
		return x.deliver(m.payload)
	}
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

// segmentLimits returns the limits the journaled segment ending in call k
// (the pending call when k is past the journal) ran under; a fresh start,
// or a journal that does not record them, runs under the given ones.
func (x *Execution) segmentLimits(k int) policy.Limits {
	var l *policy.Limits
	if k < len(x.cfg.Replay) {
		l = x.cfg.Replay[k].Limits
	} else if x.cfg.Pending != nil {
		l = x.cfg.Pending.Limits
	}
	if l == nil {
		return x.cfg.Limits
	}
	return *l
}

// setLimits switches the running segment's limits, as a hot resume does.
func (x *Execution) setLimits(l policy.Limits) {
	x.limits = l
	x.scheduleLook()
	x.heap.trigger.Store(x.heap.base + l.HeapLimitBytes)
	x.realm.rt.SetMaxCallStackSize(maxCallStack(l))
}

func (x *Execution) deliver(p Payload) goja.Value {
	if p.Cancelled {
		x.realm.rt.Interrupt(ErrCancelled)
		return goja.Undefined()
	}
	return x.answer(p.Outcome)
}

// answer returns a host outcome to the guest: a value, or a thrown Error
// carrying the host's name, message, code and details.
func (x *Execution) answer(o snapshot.Outcome) goja.Value {
	r := x.realm
	if o.Error == nil {
		return r.importValue(o.Value)
	}
	e := o.Error
	obj, err := r.rt.New(r.errorCtor, r.importString(e.Message))
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
	panic(obj)
}

// failure turns a goja error into a guest-side Error.
func (x *Execution) failure(err error) error {
	// A type switch, not errors.As: a goja Exception's Unwrap runs an
	// instanceof check that would call guest proxy traps.
	switch e := err.(type) {
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
		line, col := x.cfg.Program.lines.original(pos.Line, pos.Column)
		fn := f.FuncName()
		if fn == "" || fn == "<anonymous>" {
			fn = "<anonymous>"
			if !x.cfg.Program.lines.inFunction(line, col) {
				fn = "<script>"
			}
		}
		fmt.Fprintf(&b, "\n  at %s (%d:%d)", fn, line, col)
	}
	return &Error{Kind: KindRuntime, Message: b.String()}
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

// sortedMembers returns inputs in the canonical (sorted) order snapshots use.
func SortedMembers(m []value.Member) []value.Member {
	out := append([]value.Member(nil), m...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
