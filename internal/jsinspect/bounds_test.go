package jsinspect

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

func run(t testing.TB, rt *goja.Runtime, src string) goja.Value {
	t.Helper()
	v, err := rt.RunString(src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return v
}

// A value far larger than the cap stops once the cap is passed: the work
// done is about the cap, not the value.
func TestMaxBytesStopsEarly(t *testing.T) {
	for _, tc := range []struct{ name, src, format string }{
		{"object-2e5-keys", `const o = {}; for (let i = 0; i < 2e5; i++) o['k' + i] = i; o`, ""},
		{"array-2e5", `Array.from({ length: 2e5 }, (_, i) => ({ i }))`, ""},
		{"nested-wide", `const o = {}; for (let i = 0; i < 1e5; i++) o['k' + i] = { a: [i, i], b: 'x' }; o`, ""},
		{"map-1e5", `const m = new Map(); for (let i = 0; i < 1e5; i++) m.set(i, 'v' + i); [m, m, m, m, m, m, m, m, m, m, m, m]`, ""},
		{"object-2e5-keys-o", `const o = {}; for (let i = 0; i < 2e5; i++) o['k' + i] = i; o`, "%o"},
		{"long-string", `'x'.repeat(2e5)`, ""},
		{"long-string-s", `'x'.repeat(2e5)`, "%s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := goja.New()
			src := tc.src
			if !longtest.Enabled() {
				// The default run: a quarter of the elements, still
				// several times what a walk that did not stop would
				// spend past the work bound below.
				src = strings.NewReplacer("2e5; i++", "5e4; i++", "length: 2e5", "length: 5e4", "1e5; i++", "25e3; i++").Replace(src)
			}
			v := run(t, rt, src)
			args := []goja.Value{v}
			if tc.format != "" {
				args = []goja.Value{rt.ToValue(tc.format), v}
			}
			res, err := Format(rt, args, Options{MaxBytes: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Truncated {
				t.Fatalf("not truncated: %d bytes", len(res.Text))
			}
			if len(res.Text) > 1000 || !utf8.ValidString(res.Text) {
				t.Fatalf("text of %d bytes (valid UTF-8 %v)", len(res.Text), utf8.ValidString(res.Text))
			}
			if res.Work > 20000 {
				t.Fatalf("work %d for a 1000-byte cap", res.Work)
			}
			t.Logf("work %d", res.Work)
		})
	}
}

// Without a cap the whole line comes back and Work grows with it.
func TestWorkGrows(t *testing.T) {
	rt := goja.New()
	small, err := Format(rt, []goja.Value{run(t, rt, `({ a: 1 })`)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	big, err := Format(rt, []goja.Value{run(t, rt, `const o = {}; for (let i = 0; i < 1000; i++) o['k' + i] = [i]; o`)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if small.Truncated || big.Truncated {
		t.Fatal("truncated without a cap")
	}
	if big.Work < len(big.Text) || big.Work < 1000 || small.Work >= big.Work {
		t.Fatalf("work %d for %d bytes, %d for %d bytes", big.Work, len(big.Text), small.Work, len(small.Text))
	}
}

func TestMaxWork(t *testing.T) {
	rt := goja.New()
	v := run(t, rt, `const o = {}; for (let i = 0; i < 1e5; i++) Object.defineProperty(o, 'h' + i, { value: i }); o`)
	res, err := Format(rt, []goja.Value{v}, Options{MaxWork: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || res.Work > 10000 {
		t.Fatalf("truncated %v, work %d", res.Truncated, res.Work)
	}
}

// A line exactly at the cap is whole; one byte more is truncated.
func TestMaxBytesEdge(t *testing.T) {
	rt := goja.New()
	v := run(t, rt, `({ a: 1 })`) // { a: 1 }
	res, err := Format(rt, []goja.Value{v}, Options{MaxBytes: 8})
	if err != nil || res.Truncated || res.Text != "{ a: 1 }" {
		t.Fatalf("%+v %v", res, err)
	}
	res, err = Format(rt, []goja.Value{v}, Options{MaxBytes: 7})
	if err != nil || !res.Truncated || len(res.Text) > 7 {
		t.Fatalf("%+v %v", res, err)
	}
	res, err = Format(rt, []goja.Value{rt.ToValue("héllo")}, Options{MaxBytes: 2})
	if err != nil || !res.Truncated || res.Text != "h" {
		t.Fatalf("%+v %v", res, err)
	}
}

// Getters, proxy traps and custom inspect functions never run.
func TestNoGuestCode(t *testing.T) {
	rt := goja.New()
	run(t, rt, `
var calls = 0;
const count = () => { calls++; throw new Error('guest code ran'); };
const traps = {};
for (const k of ['get', 'set', 'has', 'ownKeys', 'getOwnPropertyDescriptor', 'getPrototypeOf',
  'defineProperty', 'deleteProperty', 'isExtensible', 'preventExtensions', 'setPrototypeOf', 'apply', 'construct']) {
  traps[k] = count;
}
class WithGetters {
  get a() { return count(); }
  get [Symbol.toStringTag]() { return count(); }
}
var values = [
  { get x() { return count(); }, set x(v) { count(); } },
  new Proxy({ a: 1 }, traps),
  new Proxy([1, 2, 3], traps),
  new Proxy(function f() {}, traps),
  new Proxy(new Proxy({ deep: 1 }, traps), traps),
  { p: new Proxy({}, traps) },
  new WithGetters(),
  { [Symbol.for('nodejs.util.inspect.custom')]: count, inspect: count },
  Object.defineProperty(new Error('e'), 'name', { get: count }),
  Object.defineProperty(new Error('e'), 'stack', { get: count }),
  Object.defineProperty(new Error('e'), 'cause', { get: count, enumerable: false }),
  Object.defineProperty([1, 2], 5, { get: count, enumerable: true }),
  (() => { function F() {} Object.defineProperty(F, 'name', { get: count }); return new F(); })(),
  (() => { const o = {}; Object.defineProperty(o, 'constructor', { get: count }); return o; })(),
  new Map([[new Proxy({}, traps), new Proxy([], traps)]]),
  (() => { const p = Promise.reject(new Proxy({}, traps)); p.catch(() => {}); return p; })(),
];
calls = 0;
`)
	values := rt.Get("values").(*goja.Object)
	n := values.Get("length").ToInteger()
	for _, f := range []string{"", "%s", "%o", "%O"} {
		for i := int64(0); i < n; i++ {
			v := values.Get(itoa(i))
			args := []goja.Value{v}
			if f != "" {
				args = []goja.Value{rt.ToValue(f), v}
			}
			if o, ok := v.(*goja.Object); ok && f == "%s" && isFunction(o) {
				continue // Node's %s converts a function with String(), as this package does
			}
			res, err := Format(rt, args, Options{})
			if err != nil {
				t.Fatalf("%q value %d: %v", f, i, err)
			}
			if c := rt.Get("calls").ToInteger(); c != 0 {
				t.Fatalf("%q value %d: guest code ran (%d calls): %s", f, i, c, res.Text)
			}
		}
	}
}

// Conversions Node's rules run (%s on an object with its own toString,
// %d, %i, %f, %j) run guest code; what it throws comes back as is.
func TestGuestExceptions(t *testing.T) {
	rt := goja.New()
	for _, tc := range []struct{ format, src string }{
		{"%s", `({ toString() { throw new Error('from toString'); } })`},
		{"%d", `({ valueOf() { throw new Error('from valueOf'); } })`},
		{"%i", `({ toString() { throw new Error('from toString'); } })`},
		{"%f", `({ toString() { throw new Error('from toString'); } })`},
		{"%j", `({ toJSON() { throw new Error('from toJSON'); } })`},
		{"%j", `10n`},
	} {
		v := run(t, rt, tc.src)
		_, err := Format(rt, []goja.Value{rt.ToValue(tc.format), v}, Options{})
		var ex *goja.Exception
		if !errors.As(err, &ex) {
			t.Fatalf("%s %s: %v (%T)", tc.format, tc.src, err, err)
		}
	}
	// the realm stays usable
	if v := run(t, rt, `1 + 1`); v.ToInteger() != 2 {
		t.Fatal(v)
	}
}

// An interrupt raised while guest code runs for a conversion comes back
// as an *InterruptedError.
func TestInterrupt(t *testing.T) {
	rt := goja.New()
	rt.Set("stop", func() { rt.Interrupt("halt") })
	v := run(t, rt, `({ toString() { stop(); for (;;) {} } })`)
	_, err := Format(rt, []goja.Value{rt.ToValue("%s"), v}, Options{})
	var ie *goja.InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("%v (%T)", err, err)
	}
}

// A goja stack (tab-indented frames, a last newline) is shown as V8's is:
// frames indented by four spaces, no brackets.
func TestGojaStack(t *testing.T) {
	rt := goja.New()
	v := run(t, rt, `function thrower() { return new TypeError('boom'); } thrower()`)
	res, err := Format(rt, []goja.Value{v}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Text, "TypeError: boom\n    at thrower (") || strings.HasSuffix(res.Text, "\n") {
		t.Fatalf("%q", res.Text)
	}
}

// An interrupt from another goroutine (a wall-time limit) stops a long
// walk of a value with no cap.
func TestInterruptDuringWalk(t *testing.T) {
	rt := goja.New()
	v := run(t, rt, `const o = {}; for (let i = 0; i < 1e5; i++) o['k' + i] = i; o`)
	rt.Interrupt("deadline")
	_, err := Format(rt, []goja.Value{v}, Options{})
	var ie *goja.InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("%v (%T)", err, err)
	}
	rt.ClearInterrupt()
	if res, err := Format(rt, []goja.Value{v}, Options{MaxBytes: 100}); err != nil || !res.Truncated {
		t.Fatalf("%v %v", res.Truncated, err)
	}
}

// Long prototype chains are walked for every value; the walk is metered.
func TestLongPrototypeChains(t *testing.T) {
	rt := goja.New()
	v := run(t, rt, `let p = {}; for (let i = 0; i < 5000; i++) p = Object.create(p); Array.from({ length: 100 }, () => Object.create(p))`)
	res, err := Format(rt, []goja.Value{v}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Work < 100*5000 {
		t.Fatalf("work %d", res.Work)
	}
	res, err = Format(rt, []goja.Value{v}, Options{MaxWork: 100000})
	if err != nil || !res.Truncated {
		t.Fatalf("%v %v", res.Truncated, err)
	}
}

// The engine calls Format from a native console.log inside running guest
// code and rethrows what it returns: the guest catches its own exception
// and goes on.
func TestFromNativeFunction(t *testing.T) {
	rt := goja.New()
	var lines []string
	rt.Set("log", func(call goja.FunctionCall) goja.Value {
		res, err := Format(rt, call.Arguments, Options{MaxBytes: 64})
		if err != nil {
			panic(err)
		}
		if !res.Truncated {
			lines = append(lines, res.Text)
		}
		return goja.Undefined()
	})
	run(t, rt, `
log('%s and %o', { toString() { log('nested'); return 'x'; } }, [1]);
try {
  log('%s', { toString() { throw new Error('thrown'); } });
} catch (e) {
  log('caught', e.message);
}
log('y'.repeat(100));
log({ done: true });
`)
	want := []string{"nested", "x and [ 1, [length]: 1 ]", "caught thrown", "{ done: true }"}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Fatalf("%q", lines)
	}
}
