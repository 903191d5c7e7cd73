package engine

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// budgetLimits are the default limits with, in the default run, a fifth of
// the instruction budget: a loop whose work is charged ends with the budget
// all the same, five times sooner. The long suites keep the default budget.
func budgetLimits() policy.Limits {
	l := policy.DefaultLimits()
	l.InstructionBudget = longtest.Pick(l.InstructionBudget/5, l.InstructionBudget)
	return l
}

// runLimits runs src under limits with no capabilities.
func runLimits(t *testing.T, src string, limits policy.Limits) Step {
	t.Helper()
	p, err := Compile(src)
	require.NoError(t, err)
	h := snapshot.Header{Program: p.Bytes, Seed: 1, ClockMillis: 1}
	x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: limits})
	require.Nil(t, x)
	return step
}

func TestHostileProgramsEndWithLimit(t *testing.T) {
	// Deep values take more than the default heap to build; with room to
	// build them, the nesting guard of the recursive built-ins must hold.
	roomy := policy.DefaultLimits()
	roomy.HeapLimitBytes = 1 << 30
	roomy.InstructionBudget = 10_000_000
	// Nesting far past MaxNativeDepth: 200,000 levels in the long suites,
	// 20,000 in the default run.
	deep := longtest.Pick("20000", "200000")
	cases := []struct {
		name, src, want string
		limits          *policy.Limits
	}{
		{"while", "while(true){}", "Limit: instruction budget exhausted", nil},
		{"for", "for(;;){}", "Limit: instruction budget exhausted", nil},
		{"do-while", "do{}while(1)", "Limit: instruction budget exhausted", nil},
		{"recursion", "function f(){ return f() } f()", "Limit: call depth limit exceeded", nil},
		{"async recursion", "async function f(){ await null; return f() } f()", "Limit:", nil},
		{"await loop", "(async () => { for(;;) await null })()", "Limit:", nil},
		{"promise job loop", "function loop(){ Promise.resolve().then(loop) } loop(); 1", "Limit: instruction budget exhausted", nil},
		{"infinite generator", "function* g(){ let i=0; while(true) yield i++ } for (const v of g()) {}", "Limit: instruction budget exhausted", nil},
		{"catch cannot swallow", "for(;;){ try { while(true){} } catch (e) {} finally { continue } }", "Limit: instruction budget exhausted", nil},
		{"string doubling", "let s='x'; for(;;) s += s;", "Limit: heap limit exceeded", nil},
		{"array push", "const a=[]; for(;;) a.push({x: a.length})", "Limit:", nil},
		{"Array(1e9).fill", "Array(1e9).fill(0)", "Limit: heap limit exceeded", nil},
		{"repeat 2**30", "'x'.repeat(2**30)", "Limit: heap limit exceeded", nil},
		{"repeat 2**40", "'x'.repeat(2**40)", "Limit: heap limit exceeded", nil},
		{"padEnd 2**40", "'ab'.padEnd(2**40)", "Limit: heap limit exceeded", nil},
		{"nested objects", "let o={}; for(;;) o={o, a:[1,2,3]}", "Limit:", nil},
		{"huge stringify", "const a=[]; for(let i=0;i<20000;i++) a.push('xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'+i); let s=''; for(;;) s += JSON.stringify(a)", "Limit:", nil},
		{"map growth", "const m=new Map(); for(let i=0;;i++) m.set(i, 'v'+i)", "Limit:", nil},
		{"closures", "const fs=[]; for(let i=0;;i++) fs.push(() => i)", "Limit:", nil},
		{"typed array", "new Float64Array(1e9)", "Limit: heap limit exceeded", nil},
		{"array buffer", "new ArrayBuffer(2**31)", "Limit: heap limit exceeded", nil},
		{"regex backtracking", "/^(a+)+(?=b)/.test('a'.repeat(40) + '!')", "Limit: instruction budget exhausted", nil},
		{"deep stringify", "let a=[]; for(let i=0;i<" + deep + ";i++) a=[a]; JSON.stringify(a)", "Limit: call depth limit exceeded", &roomy},
		{"deep String", "let a=[]; for(let i=0;i<" + deep + ";i++) a=[a]; String(a)", "Limit: call depth limit exceeded", &roomy},
		{"deep join", "let a=[]; for(let i=0;i<" + deep + ";i++) a=[a]; a.join()", "Limit: call depth limit exceeded", &roomy},
		{"deep template", "let a=[]; for(let i=0;i<" + deep + ";i++) a=[a]; `${a}`", "Limit: call depth limit exceeded", &roomy},
		{"stringify in one call", "const a = Array(2e5).fill('x'.repeat(64)); JSON.stringify(a)", "Limit: heap limit exceeded", nil},
		{"join in one call", "const a = Array(4e5).fill('x'.repeat(64)); a.join('')", "Limit: heap limit exceeded", nil},
		{"Array.from length", "Array.from({length: 6e6})", "Limit: heap limit exceeded", nil},
		{"spread of keys", "[...Array(4e6).keys()]", "Limit: heap limit exceeded", nil},
		{"Object.keys of a string", "Object.keys('x'.repeat(4e6))", "Limit: heap limit exceeded", nil},
		{"deep built at default limits", "let a=[]; for(let i=0;i<" + deep + ";i++) a=[a]; JSON.stringify(a)", "Limit:", nil},
		{"deep parse", "JSON.parse('['.repeat(" + deep + ") + ']'.repeat(" + deep + "))", "Limit: call depth limit exceeded", nil},
	}
	for i, c := range cases {
		if !longtest.Sampled(i) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			limits := policy.DefaultLimits()
			if c.limits != nil {
				limits = *c.limits
			}
			// Garbage earlier tests left in the process heap can delay a
			// heap-limit failure by up to one limit (heapwatch.go), past
			// the instruction budget for the programs that build fastest:
			// each case starts from a collected heap, so it measures the
			// limit, not the order the tests ran in.
			runtime.GC()
			start := time.Now()
			step := runLimits(t, c.src, limits)
			require.Error(t, step.Err)
			assert.True(t, strings.HasPrefix(step.Err.Error(), c.want), step.Err.Error())
			// The 2 s bound is checked on the real binary by the end-to-end
			// tests; here, on a shared machine, only a generous one.
			if !raceEnabled {
				assert.Less(t, time.Since(start), 10*time.Second)
			}
		})
	}
}

func TestDeepSourceIsParseError(t *testing.T) {
	for _, src := range []string{strings.Repeat("[", 200000) + strings.Repeat("]", 200000), strings.Repeat("{a:", 200000) + "1" + strings.Repeat("}", 200000)} {
		_, err := Compile("(" + src + ")")
		require.Error(t, err)
		assert.True(t, strings.HasPrefix(err.Error(), "Parse: "), err.Error())
	}
}

func TestZeroLimits(t *testing.T) {
	l := policy.DefaultLimits()
	l.InstructionBudget = 0
	assert.Equal(t, ErrInstructionBudget, runLimits(t, "function f(){} f()", l).Err)
	assert.Equal(t, ErrInstructionBudget, runLimits(t, "1 + 1", l).Err, "every instruction is metered")
	l.InstructionBudget = 1
	assert.Equal(t, ErrInstructionBudget, runLimits(t, "1 + 1", l).Err)
	l.InstructionBudget = 2
	assert.NoError(t, runLimits(t, "1 + 1", l).Err, "1 + 1 is two instructions: the folded constant and the end of the script")
	l = policy.DefaultLimits()
	l.AllocationBudget = 0
	assert.Equal(t, ErrAllocationBudget, runLimits(t, "({})", l).Err)
	l = policy.DefaultLimits()
	l.CallDepthLimit = 0
	assert.Equal(t, ErrCallDepth, runLimits(t, "function f(){} f()", l).Err)
	l = policy.DefaultLimits()
	l.HeapLimitBytes = 0
	assert.Equal(t, ErrHeapLimit, runLimits(t, "'x'.repeat(10)", l).Err)
}

// TestNegativeLengthChargesNothing: ToLength turns a negative length into 0,
// so an array-like with one must not be charged as a huge array.
func TestNegativeLengthChargesNothing(t *testing.T) {
	step := runLimits(t, "const o = {length: -1}; Array.prototype.fill.call(o, 0); Array.prototype.sort.call(o); [].join.call(o)", policy.DefaultLimits())
	require.NoError(t, step.Err)
	assert.Equal(t, "", step.Value.Str)
}

// TestLimitWhileCopyingOut: a budget that runs out while a value is copied
// out of the guest (the result, or a capability's argument) ends the
// execution with that limit's own error, as anywhere else, not with a
// boundary error. Listing an object's keys for the copy is metered as
// Object.keys is. The reference charges its boundary conversion too and
// reports the limit (mustardscript tests/node/limits.test.js, "capability
// results charge instruction budget during structured boundary
// conversion", the host-to-guest direction; its root result conversion,
// crates/mustard/src/runtime/conversions/boundary.rs value_to_structured,
// charges the same way).
func TestLimitWhileCopyingOut(t *testing.T) {
	build := map[string]string{
		"object with 20,000 keys": "const v = {}; for (let i = 0; i < 20000; i++) v['k' + i] = i;\n",
		"3,000 small objects":     "const v = []; for (let i = 0; i < 3000; i++) v[i] = {i};\n",
	}
	for name, src := range build {
		t.Run(name, func(t *testing.T) {
			// What building the value costs, with room to spare: the
			// budget then runs out exactly when the copy begins.
			built := runLimits(t, src+"0", roomyBudget())
			require.NoError(t, built.Err)
			copied := runLimits(t, src+"v", roomyBudget())
			require.NoError(t, copied.Err)
			require.Greater(t, copied.Meter.Instructions, built.Meter.Instructions, "copying the value out is metered")

			l := roomyBudget()
			l.InstructionBudget = built.Meter.Instructions
			assert.NoError(t, runLimits(t, src+"0", l).Err, "the budget suffices to build the value")
			assert.Equal(t, ErrInstructionBudget, runLimits(t, src+"v", l).Err, "the result")

			// A capability argument: the guest cannot catch it either.
			p, err := Compile(src + "try { cap(v) } catch (e) { 'caught' }")
			require.NoError(t, err)
			h := snapshot.Header{Program: p.Bytes, Capabilities: []string{"cap"}, Seed: 1, ClockMillis: 1}
			x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: l})
			require.Nil(t, x)
			assert.Equal(t, ErrInstructionBudget, step.Err, "a capability argument")
		})
	}
}

func roomyBudget() policy.Limits {
	l := policy.DefaultLimits()
	l.InstructionBudget = 10_000_000
	l.HeapLimitBytes = 1 << 30
	return l
}
