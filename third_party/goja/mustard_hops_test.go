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
