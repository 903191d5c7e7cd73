package goja

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/parser"
)

// hookRig is a Runtime with two hooks: h0 (no arguments) counts its calls
// and the call frames it sees; h1 (one argument) returns its argument.
type hookRig struct {
	r      *Runtime
	calls  int
	frames []int // len(CaptureCallStack) seen by each h0 call
	on     func(call int)
}

func newHookRig(t *testing.T, set bool) *hookRig {
	t.Helper()
	g := &hookRig{r: New()}
	h0 := func(FunctionCall) Value {
		g.calls++
		g.frames = append(g.frames, len(g.r.CaptureCallStack(0, nil)))
		if g.on != nil {
			g.on(g.calls)
		}
		return nil
	}
	h1 := func(c FunctionCall) Value { return c.Argument(0) }
	g.r.Set("mk0", h0)
	g.r.Set("mk1", h1)
	if _, err := g.r.RunString("const h0 = mk0, h1 = mk1;"); err != nil {
		t.Fatal(err)
	}
	if set {
		if err := g.r.SetHooks("h0", "h1"); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

var testHooks = []Hook{{Name: "h0", Args: 0}, {Name: "h1", Args: 1}}

func compileHooked(t *testing.T, src string) *Program {
	t.Helper()
	prg, err := Parse("", src, parser.WithDisableSourceMaps)
	if err != nil {
		t.Fatal(err)
	}
	p, err := CompileASTWithHooks(prg, false, testHooks...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// run returns the program's result (or error) as text, including every
// stack an Error captured, whose program counters show any change to the
// compiled code's layout.
func (g *hookRig) run(p *Program) string {
	v, err := g.r.RunProgram(p)
	if err != nil {
		return "error: " + err.Error()
	}
	return v.String()
}

// Sources that call the hooks from every kind of place: statements, values,
// arrow bodies, loops, generators, async functions, classes, closures,
// try/finally, arguments that throw or suspend.
var hookSources = []string{
	`h0(); h1(1) + h1(2)`,
	`function fib(n) { h0(); return n < 2 ? n : fib(n - 1) + fib(n - 2) } fib(12)`,
	`let s = 0; for (let i = 0; i < 50; i++) { h0(); s += h1([i])[0] } s`,
	`const f = (a, b) => (h0(), a - b); [5, 1, 4, 2, 3].sort(f).join()`,
	`function* g() { h0(); yield h1({ v: yield 1 }); } const it = g(); it.next(); JSON.stringify(it.next(7).value)`,
	`let out = []; (async () => { h0(); out.push(h1(await h1(Promise.resolve(3)))) })(); out.join()`,
	`class C { constructor() { h0(); this.x = h1([1, 2]) } m() { h0(); return this.x.length } } new C().m()`,
	`function outer() { let k = 1; return function inner() { h0(); return k + h1(2) } } outer()()`,
	`let r = ''; try { h0(); r += 'a'; throw h1(new Error('e')) } catch (e) { h0(); r += e.message } finally { h0(); r += 'f' } r`,
	`function f() { return h1(null.x) } f()`,
	`function f() { h0(); return new Error('where').stack } f()`,
	`function f() { h0(); return [h1(new Error('in arg').stack)] } f()[0]`,
	`h1(...[1, 2])`,
	`h0(1, 2)`,
	`h1()`,
	`h0?.(); h1?.(4)`,
	`label: for (const x of [1, 2]) { h0(); if (x) continue label } 'done'`,
	`do h0(); while (false); 'ok'`,
}

// A hook call gives what the ordinary call gives: the same value, the same
// error and the same stacks (program counters included), with or without
// the hooks set and compiled with or without them.
func TestHookCallsMatchOrdinaryCalls(t *testing.T) {
	for _, src := range hookSources {
		t.Run(src, func(t *testing.T) {
			plain, err := Compile("", src, false)
			if err != nil {
				t.Fatal(err)
			}
			hooked := compileHooked(t, src)
			want := newHookRig(t, false)
			wantOut := want.run(plain)
			for _, set := range []bool{false, true} {
				g := newHookRig(t, set)
				if got := g.run(hooked); got != wantOut {
					t.Errorf("hooks set %v: got %q, want %q", set, got, wantOut)
				}
				if g.calls != want.calls {
					t.Errorf("hooks set %v: %d calls of h0, want %d", set, g.calls, want.calls)
				}
			}
		})
	}
}

// A hook call runs the hook without a call frame of its own; a call the
// compiler must leave ordinary (wrong argument count, spread, optional
// call) keeps its frame. Without the hooks set every call has its frame.
func TestHookCallsHaveNoFrame(t *testing.T) {
	src := `function f() { h0() } f(); h0(); h0(1); h0(...[]); h0?.()`
	p := compileHooked(t, src)
	g := newHookRig(t, true)
	if out := g.run(p); strings.HasPrefix(out, "error") {
		t.Fatal(out)
	}
	// Frames seen: f and the script; the script; then the native frame too.
	want := []int{2, 1, 2, 2, 2}
	if fmt.Sprint(g.frames) != fmt.Sprint(want) {
		t.Fatalf("frames %v, want %v", g.frames, want)
	}
	g = newHookRig(t, false)
	g.run(p)
	if want := []int{3, 2, 2, 2, 2}; fmt.Sprint(g.frames) != fmt.Sprint(want) {
		t.Fatalf("without hooks: frames %v, want %v", g.frames, want)
	}
}

// A name any enclosing scope binds, or that a with statement or a sloppy
// direct eval (even one later in the text) can rebind, is not the hook: the
// call stays ordinary and calls what the name means there.
func TestHookCallsRespectScopes(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`function f(h0) { return h0() } f(() => 'param')`, "param"},
		{`function f() { const h1 = x => 'local ' + x; return h1(1) } f()`, "local 1"},
		{`{ let h0 = () => 'block'; h0() }`, "block"},
		{`function f() { function h0() { return 'declared' } return h0() } f()`, "declared"},
		{`(function h0(n) { return n ? h0(n - 1) : 'named' })(1)`, "named"},
		{`try { throw () => 'caught' } catch (h0) { h0() }`, "caught"},
		{`with ({ h0: () => 'with' }) h0()`, "with"},
		{`function f() { var a = h0(); eval("var h0 = () => 'eval'"); return String(a) + ' ' + h0() } f()`, "undefined eval"},
		{`function f() { return (() => { let r = h1(1); eval("var h1 = () => 'eval'"); return r + ' ' + h1(2) })() } f()`, "1 eval"},
		// The same call site before and after the eval that rebinds it.
		{`function f() { const r = []; for (let i = 0; i < 2; i++) { r.push(h1(i)); if (!i) eval("var h1 = () => 'eval'") } return r.join() } f()`, "0,eval"},
		{`function f() { const r = []; for (let i = 0; i < 2; i++) { r.push(String(h0())); if (!i) eval("var h0 = () => 'eval'") } return r.join() } f()`, "undefined,eval"},
	} {
		t.Run(c.src, func(t *testing.T) {
			g := newHookRig(t, true)
			if got := g.run(compileHooked(t, c.src)); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

// The call-depth limit counts a hook call as the frame it would push: a
// recursion fails at the same depth, with the same error.
func TestHookCallsKeepCallDepth(t *testing.T) {
	src := `let depth = 0; function f() { h0(); depth++; f() } try { f() } catch (e) { 'caught' }`
	var got [2]string
	var depth [2]int64
	for i, set := range []bool{false, true} {
		g := newHookRig(t, set)
		g.r.SetMaxCallStackSize(50)
		got[i] = g.run(compileHooked(t, src))
		depth[i] = g.r.Get("depth").ToInteger()
		var so *StackOverflowError
		if _, err := g.r.RunProgram(compileHooked(t, `f()`)); !errors.As(err, &so) {
			t.Fatalf("hooks set %v: %v, want a stack overflow", set, err)
		}
	}
	if got[0] != got[1] || depth[0] != depth[1] || depth[0] == 0 {
		t.Fatalf("without hooks %q at depth %d; with hooks %q at depth %d", got[0], depth[0], got[1], depth[1])
	}
}

// A hook that interrupts ends the script where the ordinary call would: the
// interrupted error's stack is the same, and no instruction after the call
// runs.
func TestHookCallsInterrupt(t *testing.T) {
	src := `var after = 0; function f() { for (;;) { h0(); after++ } } f()`
	var out [2]string
	var after [2]int64
	for i, set := range []bool{false, true} {
		g := newHookRig(t, set)
		g.on = func(n int) {
			if n == 3 {
				g.r.Interrupt("stop")
			}
		}
		_, err := g.r.RunProgram(compileHooked(t, src))
		var ie *InterruptedError
		if !errors.As(err, &ie) {
			t.Fatalf("hooks set %v: %v, want an interrupt", set, err)
		}
		var b bytes.Buffer
		for _, f := range ie.Stack() {
			f.Write(&b)
			b.WriteString("; ")
		}
		out[i] = fmt.Sprint(ie.Value(), " ", b.String())
		g.r.ClearInterrupt()
		after[i] = g.r.Get("after").ToInteger()
	}
	if out[0] != out[1] || after[0] != after[1] || after[0] != 2 {
		t.Fatalf("without hooks %s (after %d); with hooks %s (after %d)", out[0], after[0], out[1], after[1])
	}
}

func TestSetHooksChecksBindings(t *testing.T) {
	r := New()
	r.Set("gofn", func(FunctionCall) Value { return nil })
	if _, err := r.RunString(`const ok = gofn, js = function () {}; let notConst = gofn; var v = gofn; const num = 1;`); err != nil {
		t.Fatal(err)
	}
	if err := r.SetHooks("ok"); err != nil {
		t.Fatalf("ok: %v", err)
	}
	for _, name := range []string{"js", "notConst", "v", "num", "missing"} {
		if err := r.SetHooks("ok", name); err == nil {
			t.Errorf("%s accepted as a hook", name)
		}
	}
	// A refused set leaves the hooks as they were.
	if len(r.hooks) != 1 {
		t.Fatalf("%d hooks after a refused set, want 1", len(r.hooks))
	}
	if err := r.SetHooks(); err != nil || len(r.hooks) != 0 {
		t.Fatalf("clearing: %v, %d hooks", err, len(r.hooks))
	}
}
