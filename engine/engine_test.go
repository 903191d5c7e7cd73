package engine

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func num(f float64) value.Value { return value.Number(f) }

// runAll starts src and answers every call with answer(capability, args),
// returning the final step and the suspensions seen.
func runAll(t *testing.T, src string, caps []string, inputs []value.Member, answer func(string, []value.Value) Payload) (Step, []Step) {
	t.Helper()
	p, err := Compile(src)
	require.NoError(t, err)
	pol, err := policy.New(caps, policy.DefaultLimits())
	require.NoError(t, err)
	h := snapshot.Header{Program: p.Bytes, Inputs: snapshot.SortedInputs(inputs), Capabilities: pol.Capabilities, Seed: 7, ClockMillis: 1_700_000_000_000}
	x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: pol.Limits})
	var seen []Step
	for step.Suspended() {
		seen = append(seen, step)
		x, step = x.Resume(answer(step.Capability, step.Args), pol.Limits)
	}
	return step, seen
}

func echo(_ string, args []value.Value) Payload {
	if len(args) == 0 {
		return Payload{}
	}
	return Payload{Outcome: snapshot.Outcome{Value: args[0]}}
}

func TestCompletionValues(t *testing.T) {
	cases := []struct {
		src  string
		want value.Value
	}{
		{"const v = 1; v + 1;", num(2)},
		{"'a' + 'b'", value.String("ab")},
		{"[1, , 3]", value.Array(num(1), value.Hole(), num(3))},
		{"({b: 1, a: [true, null, undefined]})", value.Object(value.M("b", num(1)), value.M("a", value.Array(value.Bool(true), value.Null(), value.Undefined())))},
		{"async function main() { return 5 } main();", num(5)},
		{"const x = await Promise.resolve(41); x + 1;", num(42)},
		{"-0", num(math.Copysign(0, -1))},
		{"let s = 0; for (let i = 0; i < 10; i++) { s += i } s", num(45)},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			step, _ := runAll(t, c.src, nil, nil, echo)
			require.NoError(t, step.Err)
			require.True(t, step.Done)
			assert.True(t, value.Equal(c.want, step.Value), "got %+v", step.Value)
		})
	}
}

func TestCapabilitySuspends(t *testing.T) {
	step, seen := runAll(t, "const value = fetch_data(5); value + 1;", []string{"fetch_data"}, nil, echo)
	require.NoError(t, step.Err)
	require.Len(t, seen, 1)
	assert.Equal(t, "fetch_data", seen[0].Capability)
	assert.True(t, value.Equal(value.Array(num(5)), value.Array(seen[0].Args...)))
	assert.True(t, value.Equal(num(6), step.Value))
}

func TestHostErrorIsCatchable(t *testing.T) {
	src := `let r; try { cap(1) } catch (e) { r = [e.name, e.message, e.code, e.details, e instanceof Error] } r`
	code := "E_X"
	details := value.Object(value.M("k", num(1)))
	step, _ := runAll(t, src, []string{"cap"}, nil, func(string, []value.Value) Payload {
		return Payload{Outcome: snapshot.Outcome{Error: &snapshot.HostError{Name: "ToolError", Message: "boom", Code: &code, Details: &details}}}
	})
	require.NoError(t, step.Err)
	want := value.Array(value.String("ToolError"), value.String("boom"), value.String("E_X"), details, value.Bool(true))
	assert.True(t, value.Equal(want, step.Value), "got %+v", step.Value)
}

func TestCancelledIsUncatchable(t *testing.T) {
	src := `try { cap() } catch (e) { "caught" } finally { "finally" }`
	step, _ := runAll(t, src, []string{"cap"}, nil, func(string, []value.Value) Payload { return Payload{Cancelled: true} })
	require.Error(t, step.Err)
	assert.Equal(t, "Limit: execution cancelled", step.Err.Error())
}

func TestUncaughtErrorHasTraceback(t *testing.T) {
	src := "function f() {\n  throw new TypeError('bad');\n}\nf();"
	step, _ := runAll(t, src, nil, nil, echo)
	require.Error(t, step.Err)
	msg := step.Err.Error()
	assert.Equal(t, "Runtime: TypeError: bad\n  at f (2:9)\n  at <script> (4:2)", msg)
}

func TestInfiniteLoopHitsBudget(t *testing.T) {
	step, _ := runAll(t, "while (true) {}", nil, nil, echo)
	require.Error(t, step.Err)
	assert.Equal(t, "Limit: instruction budget exhausted", step.Err.Error())
}

func TestRecursionHitsDepth(t *testing.T) {
	step, _ := runAll(t, "function f() { return f() } f()", nil, nil, echo)
	require.Error(t, step.Err)
	assert.Equal(t, "Limit: call depth limit exceeded", step.Err.Error())
}

// A guest recursing through callbacks under a host's high call-depth
// limit fails at the limit in time linear in the depth: the error used to
// unwind each nested native call by walking the whole stack again (the
// fork's "unwind" patch), 8.8 s of CPU for 20,000 levels that no budget
// counted.
func TestDeepCallbackRecursionFailsInLinearTime(t *testing.T) {
	p, err := Compile("function f(n) { return [n].map((x) => f(x + 1)); } f(0);")
	require.NoError(t, err)
	l := policy.DefaultLimits()
	l.CallDepthLimit = 50_000
	l.InstructionBudget = 1e9
	l.AllocationBudget = 1e9
	l.HeapLimitBytes = 256 << 20
	began := time.Now()
	_, step := testRuntime.Start(Config{Program: p, Header: snapshot.Header{Program: p.Bytes, Seed: 1, ClockMillis: 1}, Limits: l})
	require.Error(t, step.Err)
	assert.Equal(t, "Limit: call depth limit exceeded", step.Err.Error())
	// A hang bound only: about 0.5 s on a quiet machine, about 55 s before.
	assert.Less(t, time.Since(began), 40*time.Second)
}

// programArtifactBytes are the program bytes of src as a sidecar that did
// not validate it further would have written them.
func programArtifactBytes(t *testing.T, src string) []byte {
	b, err := artifactEnc.Marshal(programArtifact{Magic: programMagic, Version: programVersion, Source: src})
	require.NoError(t, err)
	return b
}

func TestDynamicCodeUnavailable(t *testing.T) {
	// A direct call of eval is refused when the program compiles, with
	// its position; a program compiled from bytes of an earlier sidecar
	// (which did not refuse it) still loads, and the call fails when it
	// runs, as every other route to dynamic code does.
	for src, at := range map[string]string{"eval('1')": "1:1", "const x = 1;\nif (x) { eval(`x`) }": "2:10", "await eval('1')": "1:7"} {
		_, err := Compile(src)
		require.Error(t, err, src)
		assert.Equal(t, "Validation: "+errDirectEval+" ("+at+")", err.Error())
	}
	legacy := programArtifactBytes(t, "eval('1')")
	p, err := LoadProgram(legacy)
	require.NoError(t, err, "program bytes compiled before the check load")
	h := snapshot.Header{Program: p.Bytes, Seed: 1, ClockMillis: 1}
	_, step := testRuntime.Start(Config{Program: p, Header: h, Limits: policy.DefaultLimits()})
	require.Error(t, step.Err)
	assert.Equal(t, "Runtime: ReferenceError: eval is not defined\n  at <script> (1:5)", step.Err.Error())
	for _, src := range []string{
		"globalThis.eval('1')",
		"(0, eval)('1')",
		"Function('return 1')()",
		"(function(){}).constructor('return 1')()",
		"(async function(){}).constructor('return 1')",
		"Object.getPrototypeOf(function*(){}).constructor('yield 1')",
	} {
		step, _ := runAll(t, src, nil, nil, echo)
		require.Error(t, step.Err, src)
		assert.Contains(t, step.Err.Error(), "Runtime:", src)
	}
}

func TestReservedPrefixRejectedInInstrumentedPrograms(t *testing.T) {
	for _, version := range []uint64{programVersionSloppy, programVersionStrict} {
		_, err := compileVersion("var __mustard_m = 1;", version)
		require.Error(t, err)
		assert.True(t, strings.HasPrefix(err.Error(), "Validation: "), err.Error())
	}
}

// The interpreter meters current programs: nothing is inserted into their
// text, so no name is reserved.
func TestCurrentProgramsMayUseAnyName(t *testing.T) {
	for _, src := range reservedNameSources {
		_, err := Compile(src)
		if strings.Contains(src, "with") {
			require.ErrorContains(t, err, "Parse: Strict mode code may not include a with statement", src)
			continue
		}
		require.NoError(t, err, src)
	}
	step := runLimits(t, `var __mustard_m = 1; let __mustard_cv = 2; function __mustard_a(x) { return x + __mustard_m + __mustard_cv } __mustard_a(3)`, policy.DefaultLimits())
	require.NoError(t, step.Err)
	assert.Equal(t, value.Number(6), step.Value)
	step = runLimits(t, `let __mustard_cv = 5; await null; __mustard_cv + 1`, policy.DefaultLimits())
	require.NoError(t, step.Err)
	assert.Equal(t, value.Number(6), step.Value)
}

func TestParseErrorHasPosition(t *testing.T) {
	_, err := Compile("let x = ;")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "Parse: "), err.Error())
	assert.Contains(t, err.Error(), "(1:")
}

func TestReplayMatchesHot(t *testing.T) {
	src := `async function main() {
	  let total = 0;
	  for (let i = 0; i < 3; i++) total += await cap(i);
	  const xs = await Promise.all([1, 2].map((x) => cap(x * 10)));
	  return total + xs[0] + xs[1] + Math.floor(Math.random() * 1000) + Date.now();
	}
	main();`
	p, err := Compile(src)
	require.NoError(t, err)
	pol, err := policy.New([]string{"cap"}, policy.DefaultLimits())
	require.NoError(t, err)
	h := snapshot.Header{Program: p.Bytes, Capabilities: pol.Capabilities, Seed: 99, ClockMillis: 5}
	x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: pol.Limits})
	var snaps [][]byte
	var answers []Payload
	for step.Suspended() {
		raw := step.Snapshot
		snaps = append(snaps, raw)
		ans := Payload{Outcome: snapshot.Outcome{Value: step.Args[0]}}
		answers = append(answers, ans)
		x, step = x.Resume(ans, pol.Limits)
	}
	require.NoError(t, step.Err)
	require.Len(t, snaps, 5)
	for i, raw := range snaps {
		s, err := snapshot.Load(raw, nil)
		require.NoError(t, err)
		cx, cstep := testRuntime.Start(Config{Program: p, Header: s.Header, Limits: pol.Limits, Journal: s, Raw: raw,
			Answers: []Answer{{CallID: s.Last().Focus, Payload: answers[i]}}})
		for j := i + 1; cstep.Suspended(); j++ {
			cx, cstep = cx.Resume(answers[j], pol.Limits)
		}
		require.NoError(t, cstep.Err)
		assert.True(t, value.Equal(step.Value, cstep.Value), "resume at %d", i)
	}
}

// Each argument of a capability call is its own value: one object may be
// passed as two arguments, while the arguments share one size bound.
func TestCapabilityArgumentsAreSeparateValues(t *testing.T) {
	var got []value.Value
	step, _ := runAll(t, "const o = {a: 1}; fetch(o, o); 'ok'", []string{"fetch"}, nil, func(_ string, args []value.Value) Payload {
		got = args
		return Payload{}
	})
	require.NoError(t, step.Err)
	require.Len(t, got, 2)
	assert.Equal(t, got[0], got[1])

	step, _ = runAll(t, "const s = 'x'.repeat(3e6); fetch(s, s, s); 'ok'", []string{"fetch"}, nil, echo)
	require.Equal(t, ErrHeapLimit, step.Err, "three 3 MB arguments pass an 8 MiB limit together")
}
