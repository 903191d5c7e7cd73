package goja

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// Walking a prototype chain or nested proxies is charged per link with
// MustardMeterOperands on, and not at all without it.
func TestPrototypeLinksAreCharged(t *testing.T) {
	const src = `let o = {}; for (let i = 0; i < 3000; i++) o = Object.create(o);
		let n = 0; for (let i = 0; i < 100; i++) { if (o.zz) n++; if ('zz' in o) n++; if (o instanceof Object) n++ }
		let p = {}; for (let i = 0; i < 1000; i++) p = new Proxy(p, {});
		for (let i = 0; i < 10; i++) p.x;
		n`
	work := func(on bool) int {
		r, m := newStrMetered()
		r.MustardMeterOperands(on)
		if v, err := r.RunString(src); err != nil || v.ToInteger() != 100 {
			t.Fatal(v, err)
		}
		return m.work
	}
	off, on := work(false), work(true)
	// 3 walks of 3,000 links, 100 times, and 10 reads through 1,000
	// proxies: about 910,000 links at 16 units.
	if extra := on - off; extra < 900_000*hopUnits || extra > 1_000_000*hopUnits {
		t.Fatalf("charged %d units for the links (%d with, %d without)", extra, on, off)
	}
}

// Comparing or hashing long strings is charged by their length.
func TestLongStringComparisonsAreCharged(t *testing.T) {
	const setup = `var a = 'x'.repeat(1e6) + 'a', b = 'x'.repeat(1e6) + 'b', m = new Map([[a, 1]]);`
	const src = `let n = 0;
		for (let i = 0; i < 10; i++) { if (a === b) n++; if (a < b) n++; if (m.get(a)) n++; if ('x' === 'y') n++ }
		n`
	// The comparisons' work alone: the setup's copies cost more with the
	// option on (copyUnits).
	work := func(on bool) int {
		r, m := newStrMetered()
		r.MustardMeterOperands(on)
		if _, err := r.RunString(setup); err != nil {
			t.Fatal(err)
		}
		before := m.work
		if v, err := r.RunString(src); err != nil || v.ToInteger() != 20 {
			t.Fatal(v, err)
		}
		return m.work - before
	}
	// 10 × (1 MB for ===, 1 MB for <, 2 MB for the key) at 128 bytes a unit.
	if extra := work(true) - work(false); extra < 10*3_990_000/128 || extra > 10*4_100_000/128 {
		t.Fatalf("charged %d units for the comparisons", extra)
	}
}

// An Error's stack capture is charged per frame.
func TestErrorStackCaptureIsCharged(t *testing.T) {
	const src = `function deep(n) { return n === 0 ? new Error('x') : deep(n - 1) }
		let k = 0; for (let i = 0; i < 100; i++) if (deep(200).message === 'x') k++; k`
	work := func(on bool) int {
		r, m := newStrMetered()
		r.MustardMeterOperands(on)
		if v, err := r.RunString(src); err != nil || v.ToInteger() != 100 {
			t.Fatal(v, err)
		}
		return m.work
	}
	if extra := work(true) - work(false); extra < 100*200*hopUnits || extra > 100*210*hopUnits {
		t.Fatalf("charged %d units for the stacks", extra)
	}
}

// Steps whose work grows with an operand end a loop that repeats them when
// the Meter refuses the work: the last operations that were not charged
// (a long string's conversion to a number, radix and precision digits,
// a function's text, the prototype links isPrototypeOf and the cycle
// check of setPrototypeOf walk). Without the charge, the loop would run
// until the hang bound.
func TestOperandWorkEndsLoops(t *testing.T) {
	const chain = `let o = {}; for (let i = 0; i < 30000; i++) o = Object.create(o); `
	// a2 is a's text, made apart from it.
	const longPair = `const a = 'x'.repeat(1e6) + 'a', a2 = 'x'.repeat(1e6) + 'a', b = 'x'.repeat(1e6) + 'b'; `
	for i, src := range []string{
		`const s = '1'.repeat(4e6); for (;;) +s`,
		`const s = '1'.repeat(4e6); for (;;) s * 1`,
		`const s = '1'.repeat(4e6); for (;;) s | 0`,
		`const s = '1'.repeat(4e6); for (;;) -s`,
		`const s = '1'.repeat(4e6); for (;;) Number(s)`,
		`const s = '1'.repeat(4e6); for (;;) s < 5`,
		`const s = '1'.repeat(4e6); for (;;) s == 5`,
		`for (let k = 1; ; k++) (5e-324 * k).toString(2)`,
		`for (let k = 1; ; k++) (0.1 * k).toString(3)`,
		`for (let k = 1; ; k++) (5e-324 * k).toPrecision(100)`,
		`for (let k = 1; ; k++) (k / 3).toFixed(100)`,
		`for (let k = 1; ; k++) (k / 3).toExponential(100)`,
		`function f() { ` + strings.Repeat("f; ", 1000) + ` } for (;;) String(f)`,
		chain + `const p = {}; for (;;) p.isPrototypeOf(o)`,
		chain + `const x = {}; for (;;) { Object.setPrototypeOf(x, o); Object.setPrototypeOf(x, null) }`,
		chain + `const x = {}; for (;;) { x.__proto__ = o; x.__proto__ = Object.prototype }`,
		chain + `const x = {}; for (;;) { Reflect.setPrototypeOf(x, o); Reflect.setPrototypeOf(x, null) }`,
		// Links walked by for-in and by assignments that look for a setter.
		chain + `for (;;) for (const k in o);`,
		chain + `for (let j = 0; ; j++) o['k' + j] = 1`,
		chain + `for (let j = 0; ; j++) o[j] = 1`,
		chain + `for (;;) o[Symbol()] = 1`,
		chain + `const a = []; Object.setPrototypeOf(a, o); for (let j = 0; ; j++) a[j] = 1`,
		chain + `const a = []; a[1e6] = 0; Object.setPrototypeOf(a, o); for (let j = 0; ; j++) a[j] = 1`,
		// Keys for-in passes over because a nearer object has them.
		`let q = {}; for (let i = 0; i < 300; i++) { q = Object.create(q); for (let j = 0; j < 100; j++) q['k' + j] = 1 } for (;;) for (const k in q);`,
		// Equality of long strings inside built-ins.
		longPair + `for (;;) [a].includes(b)`,
		longPair + `for (;;) [a].indexOf(b)`,
		longPair + `for (;;) [a].lastIndexOf(b)`,
		longPair + `const s = []; s[5] = a; for (;;) Array.prototype.includes.call({length: 6, 5: a}, b)`,
		longPair + `for (;;) Object.is(a, b)`,
		longPair + `const t = {}; Object.defineProperty(t, 'x', {value: a}); for (;;) Object.defineProperty(t, 'x', {value: a2})`,
		longPair + `const t = {}; Object.defineProperty(t, 'x', {value: a}); const p = new Proxy(t, {get: () => a2}); for (;;) p.x`,
	} {
		if !longtest.Sampled(i) {
			continue
		}
		r, m := newStrMetered()
		r.MustardMeterOperands(true)
		m.maxWork = map[bool]int{false: 50_000_000, true: 5_000_000}[raceEnabled]
		hang := time.AfterFunc(hangBound(10*time.Second), func() { r.Interrupt("hang") })
		_, err := r.RunString(src)
		hang.Stop()
		var ie *InterruptedError
		if !errors.As(err, &ie) || ie.Value() != "work budget" {
			t.Errorf("%s: %v, want the work budget's interrupt", src, err)
		}
	}
}

// Strings made by copying a guest's long string cost the copy, with its
// allocation, at produceBytesPerUnit (and an engine-made text, such as an
// error message holding the string, three copies): these operations, on a
// 1 MB string, took 0.5 to 1.4 ms each for a few instructions.
func TestLongStringsMadeAreCharged(t *testing.T) {
	const mb = 1 << 20
	for i, c := range []struct {
		expr   string
		copies int
	}{
		{`s + 'y'`, 1},
		{"`${s}${1}`", 1},
		{`s.concat('')`, 1},
		{`s.padEnd(s.length + 1)`, 1},
		{`u.slice(1)`, 2}, // two bytes a unit
		{`u.substring(1)`, 2},
		{`Symbol(s).toString()`, 3},
		{`String(Symbol(s))`, 3},
		{`String(new Error(s))`, 3},
		{`new Error(s).stack`, 3},
		{`(() => { try { null[s] } catch (e) { return e.message } })()`, 3},
		{`(() => { try { s() } catch (e) { return e.message } })()`, 3},
	} {
		if !longtest.Sampled(i) {
			continue
		}
		work := func(n int) int {
			r, m := newStrMetered()
			r.MustardMeterOperands(true)
			if _, err := r.RunString(`var s = 'x'.repeat(` + strconv.Itoa(n) + `), u = 'é'.repeat(s.length)`); err != nil {
				t.Fatal(err)
			}
			before := m.work
			if _, err := r.RunString(c.expr); err != nil {
				t.Fatal(c.expr, err)
			}
			return m.work - before
		}
		extra := work(mb) - work(mb/2)
		if want := c.copies * (mb / 2) / 16; extra < want { // 16 bytes a unit
			t.Errorf("%s: %d units for half a MiB more, want at least %d", c.expr, extra, want)
		}
	}
}
