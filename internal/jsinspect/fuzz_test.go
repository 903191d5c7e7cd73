package jsinspect

import (
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
)

// fuzzPool is the values a fuzz input combines into arguments.
const fuzzPool = `(() => {
  const traps = { get() { throw new Error('trap'); }, ownKeys() { throw new Error('trap'); } };
  const circ = { a: 1 }; circ.self = circ;
  const sparse = [1]; sparse[50] = 2; sparse.x = 'y';
  const err = new TypeError('fuzz'); err.code = 'E';
  const errNoStack = new Error('ns'); errNoStack.stack = 42;
  const revocable = Proxy.revocable({}, {}); revocable.revoke();
  class K { constructor() { this.k = 1; } get g() { throw new Error('getter'); } }
  const np = Object.create(null); np.z = 'q';
  const m = new Map([[circ, sparse], ['k', np]]);
  return [
    undefined, null, true, -0, NaN, 1e21, 12345678901234567890n, Symbol('s'), '', "it's \"q\" " + String.fromCharCode(96) + " $" + "{}",
    '\ud800\n\x00\x7f\u00e9\u65e5\ud83d\ude00', 'x'.repeat(10005), {}, [], circ, sparse, err, errNoStack,
    revocable.proxy, new Proxy({ p: 1 }, traps), new Proxy([1, 2], traps), new K(), np, m, new Set([1, m]),
    new Uint8Array([1, 2, 3]), new Float64Array(120), new ArrayBuffer(5), new DataView(new ArrayBuffer(3)),
    new Date(0), new Date(NaN), /re\/x/gimsuy, new Number(-0), new String('bx'), Object(1n), Object(Symbol()),
    Promise.resolve(circ), new Promise(() => {}), function named() {}, async () => {}, class X extends K {},
    function* g() {}, { toString() { throw new Error('toString'); } }, { toString() { return 'ts'; } },
    { valueOf() { return 7; } }, { toJSON() { throw new Error('toJSON'); } }, m.entries(), new Set([1, 2]).values(),
    Array.from({ length: 30 }, (_, i) => i * i), Array.from({ length: 130 }, (_, i) => 's' + i),
    (function () { return arguments; })(1, 2), new WeakMap(), Math, Object.create(Object.create(null)),
    { get a() { throw new Error('a'); }, set b(v) {}, [Symbol('k')]: 1, 'q-k': 2, __proto__: { inherited: 1 } },
  ];
})()`

func FuzzFormat(f *testing.F) {
	f.Add("%s %d %i %f %j %o %O %c %%", []byte{0, 1, 2, 3, 4, 5, 6, 7, 8}, uint16(0))
	f.Add("", []byte{60, 61, 62, 63}, uint16(40))
	f.Add("%o", []byte{57, 58, 59}, uint16(0))
	f.Add("x%", []byte{1, 255, 128, 129, 130}, uint16(3))
	f.Fuzz(func(t *testing.T, format string, recipe []byte, maxBytes uint16) {
		if len(recipe) > 16 {
			recipe = recipe[:16]
		}
		rt := goja.New()
		v, err := rt.RunString(fuzzPool)
		if err != nil {
			t.Fatal(err)
		}
		pool := v.(*goja.Object)
		n := pool.Get("length").ToInteger()
		var args []goja.Value
		if len(recipe) > 0 && recipe[0]&1 == 1 {
			args = append(args, rt.ToValue(format))
		}
		var last goja.Value = goja.Undefined()
		for _, b := range recipe {
			switch b % 4 {
			case 0, 1:
				last = pool.Get(itoa(int64(b/2) % n))
				args = append(args, last)
			case 2:
				a := rt.NewArray(last, last)
				last = a
				args = append(args, a)
			case 3:
				o := rt.NewObject()
				_ = o.Set("v", last)
				_ = o.Set("self", o)
				last = o
				args = append(args, o)
			}
		}
		res, err := Format(rt, args, Options{MaxBytes: int(maxBytes)})
		if err != nil {
			var ex *goja.Exception
			if !errors.As(err, &ex) {
				t.Fatalf("error %v (%T)", err, err)
			}
			return
		}
		if maxBytes > 0 && len(res.Text) > int(maxBytes) {
			t.Fatalf("%d bytes past a cap of %d", len(res.Text), maxBytes)
		}
		if maxBytes == 0 && res.Truncated {
			t.Fatal("truncated without a cap")
		}
		if !utf8.ValidString(res.Text) {
			t.Fatalf("invalid UTF-8: %q", res.Text)
		}
		if res.Work < len(res.Text) {
			t.Fatalf("work %d below the %d bytes produced", res.Work, len(res.Text))
		}
	})
}
