package goja

import (
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Async generators and for await (mustard_asyncgen.go, mustard_forawait.go)
// against V8: each program in testdata/mustard_asyncgen prints a log of
// events, most with a ticker that shows on which promise job each happens,
// and the log must be V8's (Node 20). Re-record with
//
//	node -e "globalThis.print = console.log; $(cat testdata/mustard_asyncgen/NAME.js)"
var mustardAsyncGenV8 = []struct{ name, want string }{
	{"values", "made | start | {\"value\":1,\"done\":false} | got b | {\"value\":2,\"done\":false} | {\"value\":3,\"done\":false} | fin | {\"value\":4,\"done\":true} | {\"done\":true} | start | v 1 | got undefined | v 2 | v 3 | fin | w 10 | w 11 | w 12 | then called | {\"value\":\"TH\",\"done\":false} | rj caught yr | {\"value\":\"after\",\"done\":false} | {\"done\":true} | retAwait caught retrej | {\"value\":\"ra\",\"done\":false} | {\"done\":true} | ar 2 | ar 7 | ar 8"},
	{"queue", "t0 g0 sync end t1 gx b u1 x u2 {\"done\":true} t2 n1 {\"value\":1,\"done\":false} s1 {\"value\":5,\"done\":true} s2 {\"done\":true} u3 rr t3 n2 {\"value\":2,\"done\":false} gfin t4 gfin2 t5 r3 {\"value\":9,\"done\":true} n4 {\"done\":true} t5 rej e t6 r6 {\"value\":7,\"done\":true} t7 t8 t9 t10 t11"},
	{"yieldstar", "t0 o0 t1 t2 t3 {\"value\":\"i1\",\"done\":false} inner got y t4 t5 t6 {\"value\":\"i2\",\"done\":false} t7 inner fin t8 outer r iret t9 t10 t11 {\"value\":\"s1\",\"done\":false} t12 t13 t14 {\"value\":\"s2\",\"done\":false} t15 t16 s undefined t17 t18 {\"value\":\"o-last\",\"done\":false} t19 {\"done\":true} t20 {\"done\":true} o0 t21 t22 t23 t24 t25 inner fin t26 t27 {\"value\":\"R\",\"done\":true} o0 t28 t29 t30 inner fin t31 t32 it3 boom t33 t34 t35 t36 t37 o2 fin t38 {\"value\":\"RR\",\"done\":true} t39 t40 t41 t42 o2 fin t43 it5 T c next undefined t44 t45 {\"value\":0,\"done\":false} c next B t46 t47 {\"value\":1,\"done\":false} t48 c return Q t49 t50 {\"value\":\"cr\",\"done\":false} c throw W t51 o3 r ct t52 t53 {\"value\":\"o3done\",\"done\":true} t54 {\"done\":true} t55 t56 t57 d return P t58 o4 fin t59 o4 value is a promise: true t60 t61 t62 t63 o5 fin t64 {\"value\":\"P5\",\"done\":true} t65 t66 closed t67 o6 TypeError t68 {\"done\":true} t69 t70 t71 t72 t73 t74 t75 t76 t77 t78 t79 t80 t81 t82 t83 t84 t85 t86 t87 t88 t89"},
	{"forawait", "t0 a next t1 a 1 a next t2 a 2 a return undefined t3 after a b next t4 b 1 b return undefined t5 caught bx c next t6 c return undefined caught cx d next t7 d return undefined caught retthrow e next t8 e return undefined t9 caught TypeError f next t10 f return undefined t11 caught fx g next t12 g return undefined t13 caught retreject h next t14 h return undefined t15 caught hx i next t16 after i j next t17 j return undefined t18 t19 j jr1 k next t20 l next t21 xy 11 l next t22 l return undefined t23 k next t24 l next t25 xy 21 l next t26 l return undefined t27 k next t28 l next t29 l return undefined t30 k return undefined t31 m next t32 m return undefined t33 caught TypeError t34 caught TypeError t35 caught nr caught TypeError t36 t37 s a t38 t39 s b t40 t41 t42 t43 set 4 t44 t45 set 5 t46 t47 t48 t49 x 1 t50 t51 x 2 t52 t53 t54 t55 o 7 t56 t57 t58 t59 caught rj t60 t61 caught cr t62 t63 t64 t65 var 3 t66 t67 t68 t69 async 7 t70 t71 t72 t73 t74 t75 t76 t77 t78 t79 t80 t81 t82 t83 t84 t85 t86 t87 t88 t89"},
	{"closing", "t0 src yield 1 t1 t2 gen got 1 t3 t4 main 10 gen r undefined src yield 2 t5 t6 gen got 2 t7 t8 main 20 t9 t10 src fin t11 src fin2 t12 gen fin t13 -- src yield 1 t14 t15 gen got 1 t16 t17 {\"value\":10,\"done\":false} t18 t19 src fin t20 src fin2 t21 gen fin t22 {\"value\":\"X\",\"done\":true} t23 {\"done\":true} -- src yield 1 t24 t25 gen got 1 t26 t27 t28 src fin t29 src fin2 t30 gen caught TT gen fin t31 {\"done\":true} t32 {\"done\":true} -- t33 t34 t35 t36 t37 badfin finrej t38 t39 t40 inner fin t41 catcher caught from fin t42 t43 {\"value\":\"after catch\",\"done\":false} outer fin t44 {\"done\":true} t45 t46 t47 t48 t49 {\"value\":\"in fin\",\"done\":false} finYield x nx t50 {\"value\":\"fr\",\"done\":true} t51 {\"done\":true} t52 t53 t54 t55 t56 {\"value\":\"in fin\",\"done\":false} t57 fy2 thr t58 {\"done\":true} t59 t60 t61 t62 t63 syncIt closed t64 t65 t66 {\"value\":\"os\",\"done\":true} t67 t68 t69 t70 {\"value\":\"nc\",\"done\":false} t71 null return t72 t73 nullClose TypeError t74 t75 t76 t77 t78 t79 t80 t81 t82 t83 t84 t85 t86 t87 t88 t89"},
	{"builtins", "[object AsyncGeneratorFunction]\n[object AsyncGenerator]\nAsyncGeneratorFunction AsyncGenerator\ntrue\nAsyncGeneratorFunction 1\ntrue\ntrue\n[Symbol.asyncIterator] function\ntrue\ntrue\ntrue\n{\"value\":{},\"writable\":true,\"enumerable\":false,\"configurable\":false}\nfalse 2 g\nconstructor,next,return,throw\nprototype,constructor\nnext1,return1,throw1\nsymbol Symbol(Symbol.asyncIterator) Symbol.asyncIterator\n{\"writable\":false,\"enumerable\":false,\"configurable\":false}\nTypeError\nm [Symbol.asyncIterator] str\ntrue\ntrue\nnamed\nasync function* g(a, b) {}\nasync *m() { yield 1 }\nD base\nD derived\no 2\np p\ntrue\nTypeError\nTypeError\nsync param"},
}

func TestMustardAsyncGenMatchesV8(t *testing.T) {
	for _, c := range mustardAsyncGenV8 {
		t.Run(c.name, func(t *testing.T) {
			src, err := os.ReadFile("testdata/mustard_asyncgen/" + c.name + ".js")
			if err != nil {
				t.Fatal(err)
			}
			r := New()
			var out []string
			_ = r.Set("print", func(s string) { out = append(out, s) })
			if _, err := r.RunString(string(src)); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(out, "\n"); got != c.want {
				t.Fatalf("got\n%s\nwant (V8)\n%s", got, c.want)
			}
			vm := r.vm
			if len(vm.tryStack) != 0 || len(vm.iterStack) != 0 || len(vm.callStack) != 0 || len(vm.refStack) != 0 {
				t.Fatalf("stacks left behind: try %d, iter %d, call %d, ref %d", len(vm.tryStack), len(vm.iterStack), len(vm.callStack), len(vm.refStack))
			}
		})
	}
}

// An async generator's body, parameters included, is asynchronous code
// wherever its next is called from (a plain script included), as an async
// function's body is.
func TestMustardAsyncGenInAsync(t *testing.T) {
	r := New()
	var seen []string
	_ = r.Set("probe", func(call FunctionCall) Value {
		where := call.Argument(0).String()
		if r.MustardInAsync() {
			where += ":async"
		} else {
			where += ":sync"
		}
		seen = append(seen, where)
		return call.Argument(0)
	})
	_, err := r.RunString(`
		async function* g(p = probe('param')) { probe('body'); await null; probe('after-await'); yield 1; probe('after-yield') }
		const it = g();
		probe('top');
		it.next();
		probe('top-after-next');
		const o = { async *[Symbol.asyncIterator]() { probe('iterator-body'); yield 1 } };
		(async () => { for await (const v of o) probe('loop-body') })();
		it.return(1);
		probe('top-end');
	`)
	if err != nil {
		t.Fatal(err)
	}
	want := "param:async top:sync body:async top-after-next:sync iterator-body:async top-end:sync after-await:async loop-body:async"
	if got := strings.Join(seen, " "); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if r.MustardInAsync() {
		t.Fatal("still async after the script")
	}
}

// Interrupt stops a program spinning through async iteration, whichever
// loop it is in: the interpreter's, or the request queue a completed
// generator drains in Go.
func TestMustardAsyncGenInterrupt(t *testing.T) {
	for _, src := range []string{
		`(async () => { for await (const v of (async function* () { for (;;) yield 1 })()) {} })()`,
		`(async function* () { for (;;) yield* [1, 2, 3] })()[Symbol.asyncIterator]().next().then(function f(r) { return (async () => {})().then(f) })`,
		`async function* g() { for (;;) await null } const it = g(); it.next(); for (;;) { it.next() }`,
	} {
		r := New()
		timer := time.AfterFunc(100*time.Millisecond, func() { r.Interrupt("stop") })
		_, err := r.RunString(src)
		timer.Stop()
		if _, ok := err.(*InterruptedError); !ok {
			t.Fatalf("%s: got %v, want an interrupt", src, err)
		}
	}
}

// drainMeter interrupts after a number of work units.
type drainMeter struct {
	r     *Runtime
	work  atomic.Int64
	made  atomic.Int64
	limit int64
}

func (m *drainMeter) Work(n int) {
	if m.work.Add(int64(n)) > m.limit {
		m.r.Interrupt("work")
	}
}
func (m *drainMeter) Alloc(int)  {}
func (m *drainMeter) Make(n int) { m.made.Add(int64(n)) }

func TestMustardAsyncGenDrainIsMetered(t *testing.T) {
	r := New()
	m := &drainMeter{r: r, limit: 1 << 62}
	r.SetMeter(m)
	// A return request keeps the generator awaiting while 100,000 next
	// requests queue up; they are settled in one native loop once the
	// return's promise settles.
	_, err := r.RunString(`
		async function* g() {}
		const it = g();
		it.return(null);
		for (let i = 0; i < 100000; i++) it.next();
	`)
	if err != nil {
		t.Fatal(err)
	}
	if w := m.work.Load(); w < 90000 {
		t.Fatalf("the drain reported %d units of work", w)
	}
	r = New()
	m = &drainMeter{r: r, limit: 10000}
	r.SetMeter(m)
	_, err = r.RunString(`
		async function* g() {}
		const it = g();
		it.return(null);
		for (let i = 0; i < 100000; i++) it.next();
	`)
	if _, ok := err.(*InterruptedError); !ok {
		t.Fatalf("got %v, want an interrupt", err)
	}
}

func TestMustardForAwaitSyntax(t *testing.T) {
	for _, c := range []struct {
		src string
		ok  bool
	}{
		{`async function f() { for await (const x of []) {} }`, true},
		{`async () => { for await (x of []); }`, true},
		{`async function* f() { for await (const [a, b] of []) yield a }`, true},
		{`async function f() { let async; for await (async of []); }`, true},
		{`({ async *m() { yield* [] } })`, true},
		{`class C { static async *m() {} async *[Symbol.asyncIterator]() {} async *#p() {} }`, true},
		{`function f() { for await (const x of []) {} }`, false},
		{`for await (const x of []) {}`, false},
		{`async function f() { for await (const x in {}) {} }`, false},
		{`async function f() { for await (;;) {} }`, false},
		{`async function f() { for await (let i = 0; i < 1; i++) {} }`, false},
		{`class C { static { for await (const x of []) {} } }`, false},
		{`async function* g() { await: 1 }`, false},
		{`async function* g(x = yield) {}`, false},
		{`({ async *get x() {} })`, false},
		{`class C { async *constructor() {} }`, false},
	} {
		_, err := Compile("", c.src, false)
		if (err == nil) != c.ok {
			t.Errorf("%s: error %v", c.src, err)
		}
	}
}

// Every step through a yield* is reported as a promise's worth of memory
// (and so of work): a chain of n yield* takes n steps per value, with no
// guest code to meter.
func TestMustardAsyncGenYieldStarIsMetered(t *testing.T) {
	r := New()
	m := &drainMeter{r: r, limit: 1 << 62}
	r.SetMeter(m)
	_, err := r.RunString(`
		async function* g(n) { if (n > 0) yield* g(n - 1); yield n }
		(async () => { for await (const x of g(50)) {} })();
	`)
	if err != nil {
		t.Fatal(err)
	}
	// 51 values, value k passing through 50 - k delegations, and one
	// final step per level.
	if made, steps := m.made.Load(), int64(50*51/2+50); made < steps*promiseElementBytes {
		t.Fatalf("made %d bytes, want at least %d for %d steps", made, steps*promiseElementBytes, steps)
	}
}
