package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
		{"deep stringify", "let a=[]; for(let i=0;i<200000;i++) a=[a]; JSON.stringify(a)", "Limit: call depth limit exceeded", &roomy},
		{"deep String", "let a=[]; for(let i=0;i<200000;i++) a=[a]; String(a)", "Limit: call depth limit exceeded", &roomy},
		{"deep join", "let a=[]; for(let i=0;i<200000;i++) a=[a]; a.join()", "Limit: call depth limit exceeded", &roomy},
		{"deep template", "let a=[]; for(let i=0;i<200000;i++) a=[a]; `${a}`", "Limit: call depth limit exceeded", &roomy},
		{"stringify in one call", "const a = Array(2e5).fill('x'.repeat(64)); JSON.stringify(a)", "Limit: heap limit exceeded", nil},
		{"join in one call", "const a = Array(4e5).fill('x'.repeat(64)); a.join('')", "Limit: heap limit exceeded", nil},
		{"Array.from length", "Array.from({length: 6e6})", "Limit: heap limit exceeded", nil},
		{"spread of keys", "[...Array(4e6).keys()]", "Limit: heap limit exceeded", nil},
		{"Object.keys of a string", "Object.keys('x'.repeat(4e6))", "Limit: heap limit exceeded", nil},
		{"deep built at default limits", "let a=[]; for(let i=0;i<200000;i++) a=[a]; JSON.stringify(a)", "Limit:", nil},
		{"deep parse", "JSON.parse('['.repeat(200000) + ']'.repeat(200000))", "Limit: call depth limit exceeded", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			limits := policy.DefaultLimits()
			if c.limits != nil {
				limits = *c.limits
			}
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
	assert.NoError(t, runLimits(t, "1 + 1", l).Err, "straight-line code has no metered step")
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
