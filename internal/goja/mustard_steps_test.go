package goja

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/ast"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/parser"
)

type testStepMeter struct {
	r           *Runtime
	steps       uint64
	due         atomic.Uint64
	budget      uint64
	every       uint64 // StepsDue every this many steps (0: only at the budget)
	dues        int
	allocations int
	jobs        int
}

var errBudget = errors.New("budget")

func (m *testStepMeter) StepsDue() {
	m.dues++
	if m.steps > m.budget {
		m.r.Interrupt(errBudget)
		return
	}
	next := m.budget
	if m.every > 0 {
		next = min(next, m.steps+m.every)
	}
	m.due.Store(next)
}
func (m *testStepMeter) Allocation() { m.allocations++ }
func (m *testStepMeter) Job()        { m.jobs++ }

func newCounted(budget uint64) (*Runtime, *testStepMeter) {
	r := New()
	m := &testStepMeter{r: r, budget: budget}
	m.due.Store(budget)
	r.SetStepMeter(m, &m.steps, &m.due)
	return r, m
}

func compileMetered(t *testing.T, src string, o MustardCompileOptions) *Program {
	t.Helper()
	prg, err := parser.ParseFile(nil, "", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := MustardCompile(prg, true, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStepsCountInstructionsExecuted(t *testing.T) {
	loop := func(n string) uint64 {
		r, m := newCounted(1 << 40)
		p := compileMetered(t, `let s = 0; for (let i = 0; i < `+n+`; i++) { s += i } s`, MustardCompileOptions{})
		if _, err := r.RunProgram(p); err != nil {
			t.Fatal(err)
		}
		return m.steps
	}
	a, b, c := loop("10"), loop("20"), loop("20")
	if b != c {
		t.Fatalf("the same program counted %d and %d", b, c)
	}
	// Ten more iterations cost the same each time: the count is linear in
	// the work done.
	if d := loop("30"); d-b != b-a || b <= a {
		t.Fatalf("counts %d, %d, %d are not linear in the iterations", a, b, d)
	}
	// A long straight-line body costs in proportion to its length.
	body := func(k int) uint64 {
		src := "let x = 0; for (let i = 0; i < 10; i++) {"
		for j := 0; j < k; j++ {
			src += "x++;"
		}
		r, m := newCounted(1 << 40)
		if _, err := r.RunProgram(compileMetered(t, src+"} x", MustardCompileOptions{})); err != nil {
			t.Fatal(err)
		}
		return m.steps
	}
	if s1, s100 := body(1), body(100); s100 < s1+10*99 {
		t.Fatalf("a body 100 times longer counted %d against %d", s100, s1)
	}
}

func TestStepsDueInterruptsBeforeTheInstruction(t *testing.T) {
	r, m := newCounted(1 << 40)
	p := compileMetered(t, `let s = 0; for (let i = 0; i < 1000; i++) { s += i } s`, MustardCompileOptions{})
	if _, err := r.RunProgram(p); err != nil {
		t.Fatal(err)
	}
	total := m.steps
	for _, budget := range []uint64{0, 1, 7, total / 2, total - 1} {
		r, m := newCounted(budget)
		_, err := r.RunProgram(p)
		var ie *InterruptedError
		if !errors.As(err, &ie) || ie.Value() != errBudget {
			t.Fatalf("budget %d: %v", budget, err)
		}
		if m.steps != budget+1 {
			t.Fatalf("budget %d: stopped at step %d", budget, m.steps)
		}
	}
	r, m = newCounted(total)
	m.every = 100
	m.due.Store(100)
	if v, err := r.RunProgram(p); err != nil || v.ToInteger() != 499500 {
		t.Fatalf("%v %v", v, err)
	}
	// A look at step d+1 sets the next due point 100 steps on.
	if m.dues != int((total-1)/101) {
		t.Fatalf("%d looks in %d steps", m.dues, total)
	}
}

func TestStepsCountCallbacksOfBuiltins(t *testing.T) {
	count := func(src string) uint64 {
		r, m := newCounted(1 << 40)
		if _, err := r.RunProgram(compileMetered(t, src, MustardCompileOptions{})); err != nil {
			t.Fatal(err)
		}
		return m.steps
	}
	small := count(`[1, 2].map(x => { let y = x; y++; y++; return y })`)
	large := count(`[1, 2].map(x => { let y = x; y++; y++; y++; y++; y++; y++; return y })`)
	if large < small+2*4 {
		t.Fatalf("callbacks of a built-in are not counted: %d against %d", large, small)
	}
}

func TestMeteredCodeReportsAllocations(t *testing.T) {
	src := `class C {}; const a = [{}, [], new C()]; function f() { return {x: [1]} } f(); f(); a.length`
	for _, metered := range []bool{false, true} {
		r, m := newCounted(1 << 40)
		v, err := r.RunProgram(compileMetered(t, src, MustardCompileOptions{Metered: metered}))
		if err != nil || v.ToInteger() != 3 {
			t.Fatal(v, err)
		}
		want := 0
		if metered {
			want = 4 + 2*2
		}
		if m.allocations != want {
			t.Fatalf("metered %v: %d allocations", metered, m.allocations)
		}
	}
	// The report is not an instruction: it costs nothing.
	counts := [2]uint64{}
	for i, metered := range []bool{false, true} {
		r, m := newCounted(1 << 40)
		if _, err := r.RunProgram(compileMetered(t, src, MustardCompileOptions{Metered: metered})); err != nil {
			t.Fatal(err)
		}
		counts[i] = m.steps
	}
	if counts[0] != counts[1] {
		t.Fatalf("allocation reports were counted: %v", counts)
	}
}

func TestJobsAreReported(t *testing.T) {
	r, m := newCounted(1 << 40)
	_, err := r.RunProgram(compileMetered(t, `Promise.resolve(1).then(x => x).then(x => x); (async () => { await 1; await 2 })()`, MustardCompileOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if m.jobs != 4 {
		t.Fatalf("%d jobs", m.jobs)
	}
}

func TestJobInterruptedBeforeItRuns(t *testing.T) {
	r := New()
	m := &jobStopper{r: r}
	m.due.Store(1 << 40)
	r.SetStepMeter(m, &m.steps, &m.due)
	_, err := r.RunProgram(compileMetered(t, `globalThis.ran = 0; Promise.resolve().then(() => { ran++ })`, MustardCompileOptions{}))
	var ie *InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("%v", err)
	}
	if r.Get("ran").ToInteger() != 0 {
		t.Fatal("the job ran")
	}
}

type jobStopper struct {
	testStepMeter
	r *Runtime
}

func (m *jobStopper) Job() { m.r.Interrupt("stop") }

func TestCompletionBody(t *testing.T) {
	src := `(async () => {
	const f = async x => x * 2;
	let v = await f(21);
	if (v > 0) { v + 1 } else { 'no' }
	function g(a, b = 1) {}
	var s = String(g);
})()`
	prg, err := parser.ParseFile(nil, "", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	arrow := prg.Body[0].(*ast.ExpressionStatement).Expression.(*ast.CallExpression).Callee.(*ast.ArrowFunctionLiteral)
	p, err := MustardCompile(prg, true, MustardCompileOptions{Completion: arrow})
	if err != nil {
		t.Fatal(err)
	}
	r := New()
	v, err := r.RunProgram(p)
	if err != nil {
		t.Fatal(err)
	}
	pr := v.Export().(*Promise)
	if pr.State() != PromiseStateFulfilled || pr.Result().ToInteger() != 43 {
		t.Fatalf("%v %v", pr.State(), pr.Result())
	}
	// Other functions return undefined as usual, and keep their text.
	v, err = r.RunProgram(compileMetered(t, `(async () => { 1 })().then(v => String(v))`, MustardCompileOptions{Metered: true}))
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Export().(*Promise).Result().String(); got != "undefined" {
		t.Fatal(got)
	}
	v, err = r.RunProgram(compileMetered(t, `function f(a, b = 1) { return [a] } String(f) + String(() => 1)`, MustardCompileOptions{Metered: true}))
	if err != nil || v.String() != "function f(a, b = 1) { return [a] }() => 1" {
		t.Fatal(v, err)
	}
}

func TestNoStepMeterRunsAsUpstream(t *testing.T) {
	r, m := newCounted(1 << 40)
	r.SetStepMeter(nil, nil, nil)
	if _, err := r.RunProgram(compileMetered(t, `[{}].map(x => x); Promise.resolve().then(() => 1)`, MustardCompileOptions{Metered: true})); err != nil {
		t.Fatal(err)
	}
	if m.steps != 0 || m.allocations != 0 || m.jobs != 0 {
		t.Fatalf("%+v", m)
	}
}
