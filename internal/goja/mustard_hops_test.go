package goja

import "testing"

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
	const src = `const a = 'x'.repeat(1e6) + 'a', b = 'x'.repeat(1e6) + 'b', m = new Map([[a, 1]]);
		let n = 0;
		for (let i = 0; i < 10; i++) { if (a === b) n++; if (a < b) n++; if (m.get(a)) n++; if ('x' === 'y') n++ }
		n`
	work := func(on bool) int {
		r, m := newStrMetered()
		r.MustardMeterOperands(on)
		if v, err := r.RunString(src); err != nil || v.ToInteger() != 20 {
			t.Fatal(v, err)
		}
		return m.work
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
