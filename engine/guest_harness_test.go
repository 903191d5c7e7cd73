package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The table-driven guest tests (guest suite, escape attempts, error
// hygiene) share this driver. A case is one guest program, the host's
// answers to its capability calls, and the expected outcome.

const (
	suiteSeed  uint64 = 7
	suiteClock int64  = 1_700_000_000_000 // 2023-11-14T22:13:20.000Z
)

// gsCall is one suspension: the capability and its arguments.
type gsCall struct {
	capability string
	args       []value.Value
}

// gsReply answers a suspension.
type gsReply func(capability string, args []value.Value) Payload

type guestCase struct {
	name   string
	src    string
	inputs []value.Member
	caps   []string

	// script answers the suspensions in call order; each element is a
	// value.Value (the call returns it), a Payload or a gsReply. Calls after
	// the script has run out are answered by each; with each nil, such a
	// call is a test failure.
	script []any
	each   gsReply

	// Expected outcome: a completion equal to want (or accepted by check),
	// or, with errKind set, an error of that kind whose text contains errHas
	// and, when errIs is set, is exactly errIs.
	want    value.Value
	check   func(t *testing.T, v value.Value)
	errKind ErrorKind
	errHas  string
	errIs   string
	// errOneOf, when set, accepts an error of any of these kinds instead
	// (errKind, errHas and errIs are then ignored).
	errOneOf []ErrorKind

	// calls, when non-nil, are exactly the suspensions expected, in order.
	calls []gsCall

	limits *policy.Limits
	seed   *uint64
	clock  *int64

	// cold resumes every suspension from its snapshot bytes in a fresh
	// run, as a resume from raw bytes does, instead of the parked one.
	cold bool

	// legacy compiles the program as format version 1, which runs as
	// sloppy-mode code (programs compiled before guest code was strict).
	legacy bool
	// version, if not 0, is the format version to compile the program as.
	version uint64

	// isolated runs the case in a child test process, for programs that
	// may bring down the whole process instead of failing cleanly.
	isolated bool
	// heavy cases take tens of seconds under the race detector and are
	// skipped there; plain `go test` runs them.
	heavy bool
}

// guestRun is what one run of a case produced.
type guestRun struct {
	err     error // compile error or the final step's error
	step    Step
	calls   []gsCall
	problem string // the harness had to stop the execution
}

// maxSuspensions bounds a runaway program's suspensions in the harness.
const maxSuspensions = 10_000

func runGuest(c guestCase) (r guestRun) {
	var p *Program
	err := func() (err error) {
		defer func() {
			if e := recover(); e != nil {
				r.problem = fmt.Sprintf("Compile panicked: %v", e)
			}
		}()
		version := uint64(programVersion)
		switch {
		case c.version != 0:
			version = c.version
		case c.legacy:
			version = programVersionSloppy
		}
		p, err = compileVersion(c.src, version)
		return err
	}()
	if r.problem != "" {
		return r
	}
	if err != nil {
		r.err = err
		return r
	}
	limits := policy.DefaultLimits()
	if c.limits != nil {
		limits = *c.limits
	}
	pol, err := policy.New(c.caps, limits)
	if err != nil {
		r.problem = "policy: " + err.Error()
		return r
	}
	seed, clock := suiteSeed, suiteClock
	if c.seed != nil {
		seed = *c.seed
	}
	if c.clock != nil {
		clock = *c.clock
	}
	h := snapshot.Header{Program: p.Bytes, Inputs: snapshot.SortedInputs(c.inputs), Capabilities: pol.Capabilities, Seed: seed, ClockMillis: clock}
	x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: pol.Limits})
	for i := 0; step.Suspended(); i++ {
		r.calls = append(r.calls, gsCall{step.Capability, step.Args})
		var pay Payload
		switch {
		case i >= maxSuspensions:
			r.problem = "too many suspensions"
		case i < len(c.script):
			switch a := c.script[i].(type) {
			case value.Value:
				pay = ret(a)
			case Payload:
				pay = a
			case gsReply:
				pay = a(step.Capability, step.Args)
			default:
				r.problem = "bad script entry"
			}
		case c.each != nil:
			pay = c.each(step.Capability, step.Args)
		default:
			r.problem = "unexpected suspension on " + step.Capability
		}
		if r.problem != "" {
			x.Abandon()
			return r
		}
		if c.cold {
			if x, step, r.problem = resumeCold(p, step, pay, pol.Limits, x); r.problem != "" {
				return r
			}
			continue
		}
		x, step = x.Resume(pay, pol.Limits)
	}
	r.step = step
	r.err = step.Err
	return r
}

// resumeCold ends the parked execution and resumes the snapshot of its
// step from its bytes with pay. It returns what went wrong with the
// snapshot.
func resumeCold(p *Program, step Step, pay Payload, limits policy.Limits, parked *Execution) (*Execution, Step, string) {
	raw := step.Snapshot
	parked.Abandon()
	snap, err := snapshot.Load(raw, nil)
	if err != nil {
		return nil, Step{}, "snapshot: " + err.Error()
	}
	answers := []Answer{{CallID: snap.Last().Focus, Payload: pay}}
	x, next := testRuntime.Start(Config{Program: p, Header: snap.Header, Limits: limits, Journal: snap, Raw: raw, Answers: answers})
	return x, next, ""
}

func (c guestCase) verify(t *testing.T, r guestRun) {
	t.Helper()
	require.Empty(t, r.problem, "calls so far: %s", fmtCalls(r.calls))
	if c.calls != nil {
		assert.Equal(t, fmtCalls(c.calls), fmtCalls(r.calls), "suspensions")
	}
	if len(c.errOneOf) > 0 {
		require.Error(t, r.err, "expected one of %v; completed with %s", c.errOneOf, fmtValue(r.step.Value))
		var e *Error
		require.True(t, errors.As(r.err, &e), "error %q is not an engine error", r.err.Error())
		assert.Contains(t, c.errOneOf, e.Kind, "error: %q", r.err.Error())
		return
	}
	if c.errKind != "" {
		require.Error(t, r.err, "expected a %s error; completed with %s", c.errKind, fmtValue(r.step.Value))
		msg := r.err.Error()
		var e *Error
		if assert.True(t, errors.As(r.err, &e), "error %q is not an engine error", msg) {
			assert.Equal(t, c.errKind, e.Kind, "error: %q", msg)
		}
		assert.True(t, strings.HasPrefix(msg, string(c.errKind)+": "), "error: %q", msg)
		if c.errHas != "" {
			assert.Contains(t, msg, c.errHas)
		}
		if c.errIs != "" {
			assert.Equal(t, c.errIs, msg)
		}
		return
	}
	require.NoError(t, r.err)
	require.True(t, r.step.Done)
	require.NoError(t, r.step.Value.Validate(), "a completion must be a valid structured value")
	if c.check != nil {
		c.check(t, r.step.Value)
		return
	}
	assert.True(t, value.Equal(c.want, r.step.Value), "want %s\n got %s", fmtValue(c.want), fmtValue(r.step.Value))
}

func runCases(t *testing.T, cases []guestCase) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range cases {
		require.False(t, seen[c.name], "duplicate case name %q", c.name)
		seen[c.name] = true
		// Sequential: the heap limit watchdog measures the process heap, so
		// executions running side by side would be charged for each other.
		t.Run(c.name, func(t *testing.T) {
			if c.heavy && raceEnabled {
				t.Skip("too slow under the race detector")
			}
			if c.isolated {
				runIsolated(t, c.name)
				return
			}
			c.verify(t, cachedRun(c))
		})
	}
}

// Runs are deterministic, so the tables and the error hygiene test share
// one run of each case.
var runCache sync.Map // case name -> *cachedGuestRun

type cachedGuestRun struct {
	once sync.Once
	run  guestRun
}

func cachedRun(c guestCase) guestRun {
	v, _ := runCache.LoadOrStore(c.name, &cachedGuestRun{})
	e := v.(*cachedGuestRun)
	e.once.Do(func() { e.run = runGuest(c) })
	return e.run
}

// isolatedCaseEnv names the case a child test process runs.
const isolatedCaseEnv = "MUSTARD_GUEST_CASE"

// runIsolated runs one case in a child test process and reports its
// failure, including a crash of the whole process.
func runIsolated(t *testing.T, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestIsolatedGuestCase$", "-test.count=1")
	cmd.Env = append(os.Environ(), isolatedCaseEnv+"="+name, "GOTRACEBACK=none")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("case failed in a child process (%v):\n%s", err, firstLines(string(out), 12))
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}

// TestIsolatedGuestCase is the child side of runIsolated.
func TestIsolatedGuestCase(t *testing.T) {
	name := os.Getenv(isolatedCaseEnv)
	if name == "" {
		t.Skip("runs only as a child of an isolated case")
	}
	for _, c := range allGuestCases() {
		if c.name == name {
			c.verify(t, runGuest(c))
			return
		}
	}
	t.Fatalf("no case named %q", name)
}

// allGuestCases is every table-driven guest case.
func allGuestCases() []guestCase {
	return append(append(suiteCases(), escapeCases()...), legacyEscapeCases()...)
}

// fmtValue renders a value as its wire JSON, shortened for messages.
func fmtValue(v value.Value) string {
	b, err := v.MarshalJSON()
	if err != nil {
		return "<" + err.Error() + ">"
	}
	if len(b) > 400 {
		return string(b[:400]) + "..."
	}
	return string(b)
}

func fmtCalls(calls []gsCall) string {
	var sb strings.Builder
	sb.WriteString("[")
	for i, c := range calls {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(c.capability)
		sb.WriteString(fmtValue(value.Array(c.args...)))
	}
	sb.WriteString("]")
	return sb.String()
}

// Structured value shorthands.
var (
	jsU    = value.Undefined()
	jsNull = value.Null()
	jsHole = value.Hole()
	jsNaN  = value.Number(math.NaN())
	jsInf  = value.Number(math.Inf(1))
	jsNInf = value.Number(math.Inf(-1))
	jsNegZ = value.Number(math.Copysign(0, -1))
	jsT    = value.Bool(true)
	jsF    = value.Bool(false)
)

func jsN(f float64) value.Value               { return value.Number(f) }
func jsS(s string) value.Value                { return value.String(s) }
func jsA(elems ...value.Value) value.Value    { return value.Array(elems...) }
func jsO(ms ...value.Member) value.Value      { return value.Object(ms...) }
func kv(k string, v value.Value) value.Member { return value.M(k, v) }
func jsStrs(ss ...string) value.Value {
	out := make([]value.Value, len(ss))
	for i, s := range ss {
		out[i] = jsS(s)
	}
	return jsA(out...)
}

// wtf8 encodes UTF-16 code units (lone surrogates allowed) the way
// structured strings carry them.
func wtf8(units ...uint16) string { return value.FromUTF16(units) }

func cl(capability string, args ...value.Value) gsCall { return gsCall{capability, args} }

// noCalls expects a program that never suspends.
var noCalls = []gsCall{}

func ret(v value.Value) Payload { return Payload{Outcome: snapshot.Outcome{Value: v}} }

func hostErr(name, msg string) Payload {
	return Payload{Outcome: snapshot.Outcome{Error: &snapshot.HostError{Name: name, Message: msg}}}
}

func hostErrFull(name, msg, code string, details value.Value) Payload {
	return Payload{Outcome: snapshot.Outcome{Error: &snapshot.HostError{Name: name, Message: msg, Code: &code, Details: &details}}}
}

var cancelled = Payload{Cancelled: true}

// gsEcho answers a call with its first argument (undefined without one).
func gsEcho(_ string, args []value.Value) Payload {
	if len(args) == 0 {
		return ret(jsU)
	}
	return ret(args[0])
}

// bigLimits let a program build a million-element array.
func bigLimits() *policy.Limits {
	l := policy.DefaultLimits()
	l.HeapLimitBytes = 1 << 30
	l.AllocationBudget = 10_000_000
	l.InstructionBudget = 10_000_000
	return &l
}

// smallBudget makes runaway loops end quickly.
func smallBudget() *policy.Limits {
	l := policy.DefaultLimits()
	l.InstructionBudget = 5_000
	return &l
}

func i64(v int64) *int64 { return &v }
