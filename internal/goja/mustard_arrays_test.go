package goja

import (
	"errors"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// Tests of the Meter hooks of the Array, Object, TypedArray, Map/Set,
// Function, Reflect and Promise built-ins (mustard_arrays.go).

// recMeter records what built-ins report; it interrupts the runtime when a
// single Alloc passes allocCap or the total work passes workCap (0: never).
type recMeter struct {
	r        *Runtime
	work     int64
	alloc    int64
	maxAlloc int
	allocCap int
	workCap  int64
}

func (m *recMeter) Work(n int) {
	m.work += int64(n)
	if m.workCap > 0 && m.work > m.workCap {
		m.r.Interrupt("work cap")
	}
}

func (m *recMeter) Alloc(n int) {
	m.alloc += int64(n)
	m.maxAlloc = max(m.maxAlloc, n)
	if m.allocCap > 0 && n > m.allocCap {
		m.r.Interrupt("alloc cap")
	}
}

// Make counts as memory here; the tests of what built-ins report check
// their visiting work, and the work of making values is the embedder's.
func (m *recMeter) Make(n int) { m.Alloc(n) }

func (m *recMeter) reset() { m.work, m.alloc, m.maxAlloc = 0, 0, 0 }

func newMetered() (*Runtime, *recMeter) {
	r := New()
	m := &recMeter{r: r}
	r.SetMeter(m)
	return r, m
}

// TestMustardArraysReports checks that each metered built-in reports about
// the work and the memory expected of it (within a factor).
func TestMustardArraysReports(t *testing.T) {
	// 20,000 elements in the long suites; a quarter of that in the default
	// run, where the bounds scale with n all the same.
	n := int64(longtest.Pick(5000, 20000))
	setup := `
		var n = ` + strconv.FormatInt(n, 10) + `;
		var a = Array.from({length: n}, function (_, i) { return i; });
		var s = a.map(function (i) { return "s" + i; });
		var str = "x".repeat(n);
		var obj = {}; for (var i = 0; i < n; i++) obj["k" + i] = i;
		var pairs = a.map(function (i) { return [i, i]; });
		var set = new Set(a);
		var map = new Map(pairs);
		var u8 = new Uint8Array(n);
		var f64 = new Float64Array(n);
		var nested = a.map(function (i) { return [i]; });
		function f() { return arguments.length; }
		var like = {length: n};
		var seed = 1, shuffled = a.map(function () { seed = (seed * 1103515245 + 12345) % 2147483648; return seed; });
	`
	// joined is the length of a.join(): the digits of 0 to n-1 and the
	// commas between them; sJoined that of s.join('--').
	var digits int64
	for i := range n {
		digits += int64(len(strconv.FormatInt(i, 10)))
	}
	joined, sJoined := digits+n-1, digits+n+2*(n-1)
	type rng struct{ lo, hi int64 }
	anything := rng{0, 1 << 62}
	none := rng{0, 0}
	// about: x, plus what reporting in chunks of workEvery adds.
	about := func(x int64) rng { return rng{x, x + 2*workEvery} }
	// loop: one unit per iteration, counted by iterate's tick (which
	// reports full chunks only).
	loop := func(x int64) rng { return rng{x - workEvery, x + 2*workEvery} }
	// chunked: x bytes reported per chunk of workEvery items.
	chunked := func(x, per int64) rng { return rng{x, x + workEvery*per} }
	// grown: an Array grown one element at a time reports each new storage,
	// about 10 times the final size in all (goja reallocates twice a step).
	grown := func(x int64) rng { return rng{x, 12 * x} }
	tests := []struct {
		expr        string
		work, alloc rng
	}{
		{"a.indexOf(-1)", about(n), none},
		{"a.lastIndexOf(-1)", about(n), none},
		{"a.includes(-1)", about(n), none},
		{"Array.prototype.indexOf.call(like, 1)", about(2 * n), none}, // read through the property lookup: 2 units an element
		{"Array.prototype.lastIndexOf.call(like, 1)", about(2 * n), none},
		{"Array.prototype.includes.call(like, 1)", about(2 * n), none},
		{"a.find(function () { return false; })", about(n), none},
		{"a.findIndex(function () { return false; })", about(n), none},
		{"a.findLast(function () { return false; })", about(n), none},
		{"a.findLastIndex(function () { return false; })", about(n), none},
		{"a.every(function () { return true; })", about(n), none},
		{"a.some(function () { return false; })", about(n), none},
		{"a.forEach(function () {})", about(n), none},
		{"a.reduce(function (x, y) { return y; })", about(n), none},
		{"a.reduceRight(function (x, y) { return y; })", about(n), none},
		{"a.map(function (x) { return x; })", about(n), grown(16 * n)},
		{"a.filter(function () { return true; })", about(n), grown(16 * n)},
		{"a.join()", about(n), rng{joined, 6 * joined / 5}},
		{"s.join('--')", about(n), rng{sJoined, 6 * sJoined / 5}},
		{"a.toLocaleString()", about(n), rng{joined, 6 * joined / 5}},
		{"[a, a, a].join()", rng{n, 4 * n}, rng{2 * 3 * joined, 2 * 3 * 6 * joined / 5}},
		{"a.reverse()", about(n / 2), none},
		{"a.slice()", about(n), grown(16 * n)},
		{"a.toReversed()", about(n), rng{16 * n, 16 * n}},
		{"a.with(0, 1)", about(n), rng{16 * n, 16 * n}},
		{"a.toSpliced(0, 1)", rng{16 * (n - 1) / copyBytesPerWork, 16 * n / copyBytesPerWork}, rng{16 * (n - 1), 16 * n}},
		{"a.splice(0, n / 2)", rng{n / 2, 2 * n}, grown(8 * n)},
		{"a.concat(a, a)", about(3 * n), grown(3 * 16 * n)},
		{"nested.flat()", about(2 * n), grown(16 * n)},
		{"Array(n).fill(0)", about(n), grown(16 * n)},
		{"a.fill(0)", about(n), none},
		{"Array.prototype.fill.call({length: n}, 0)", about(n), chunked(64*n, 64)},
		{"a.copyWithin(0, 1)", rng{0, n}, none},
		{"a.sort()", rng{n * defaultCompareUnits, 40 * n * defaultCompareUnits}, none},
		{"shuffled.sort()", rng{10 * n * defaultCompareUnits, 40 * n * (defaultCompareUnits + 1)}, none},
		{"shuffled.sort(function (x, y) { return x - y; })", rng{10 * n, 40 * n}, none},
		{"shuffled.toSorted()", rng{10 * n * defaultCompareUnits, 40 * n * (defaultCompareUnits + 1)}, rng{16 * n, 16 * n}},
		{"Array.prototype.sort.call(like)", rng{n, 3 * n}, rng{0, 0}}, // no element present: nothing copied
		{"Array.from(like)", about(n), grown(16 * n)},
		{"Array.from(a)", rng{0, n}, rng{16 * n, 16 * n}},
		{"Array.from(a.values())", loop(n), grown(16 * n)},
		{"Array.from(a.entries())", loop(n), rng{pairBytes * n, pairBytes*(n+workEvery) + 12*16*n}},
		{"Array.of.apply(null, a)", rng{n, 2*n + 2048}, rng{32 * n, 32 * n}},
		{"Object.keys(a)", rng{n, n}, rng{keyBytes * n, keyBytes * n}},
		{"Object.keys(str)", loop(n), rng{keyBytes * n, 2 * keyBytes * n}}, // string.go reports these keys
		{"Object.getOwnPropertyNames(obj)", rng{n, n}, rng{16 * n, 16 * n}},
		{"Object.getOwnPropertyNames(a)", rng{n, n + 1}, rng{keyBytes * n, keyBytes*n + 16}},
		{"Object.getOwnPropertyNames(u8)", rng{n, n}, rng{keyBytes * n, keyBytes * n}},
		{"Reflect.ownKeys(obj)", rng{n, n}, rng{16 * n, 16 * n}},
		{"Object.values(obj)", rng{n, n}, rng{16 * n, 16 * n}},
		{"Object.entries(obj)", rng{n, n}, rng{(16 + pairBytes) * n, (16 + pairBytes) * n}},
		{"Object.assign({}, obj)", rng{n, n}, rng{64 * n, 64 * n}},
		{"Object.assign({}, str)", rng{n, n}, rng{64 * n, 64 * (n + 1)}},
		{"Object.assign([], a)", rng{n, n}, grown(16 * n)},
		{"Object.fromEntries(pairs)", loop(n), chunked(64*n, 64)},
		{"Object.getOwnPropertyDescriptors(obj)", rng{n, n}, rng{(objectBytes + 5*propertyBytes) * n, (objectBytes + 5*propertyBytes) * n}},
		{"Object.freeze(obj)", rng{n, n}, rng{descBytes * n, descBytes * n}},
		{"Object.isFrozen(Object.freeze(obj))", rng{2 * n, 2 * n}, anything},
		{"Object.defineProperties({}, Object.getOwnPropertyDescriptors(obj))", rng{3 * n, 3*n + 2048}, anything},
		{"new Set(a)", about(n), chunked(mapEntryBytes*n, mapEntryBytes)},
		{"new Map(pairs)", loop(n), chunked(mapEntryBytes*n, mapEntryBytes)},
		{"set.union(set)", rng{n, 2*n + 4096}, chunked(mapEntryBytes*n, mapEntryBytes)},
		{"set.isSubsetOf(set)", about(n), none},
		{"map.forEach(function () {})", rng{n, n}, none},
		{"set.forEach(function () {})", rng{n, n}, none},
		{"[...map.entries()]", loop(n), rng{pairBytes * n, pairBytes*(n+workEvery) + 16*(n+workEvery)}},
		{"new Uint8Array(n)", none, rng{n, n}},
		{"new Float64Array(n)", none, rng{8 * n, 8 * n}},
		{"new ArrayBuffer(n)", none, rng{n, n}},
		{"new Float64Array(u8)", about(n), rng{8 * n, 8 * n}},
		{"Float64Array.from(like)", about(n), rng{8 * n, 8 * n}},
		{"u8.subarray(1)", none, none},
		{"f64.slice()", rng{8 * n / copyBytesPerWork, 8 * n / copyBytesPerWork}, rng{8 * n, 8 * n}},
		{"u8.buffer.slice(0)", rng{n / copyBytesPerWork, n / copyBytesPerWork}, rng{n, n}},
		{"u8.indexOf(1)", about(n), none},
		{"u8.lastIndexOf(1)", about(n), none},
		{"u8.includes(1)", about(n), none},
		{"u8.fill(1)", about(n), none},
		{"u8.join()", about(n), rng{2*n - 1, 2*n - 1}},
		{"u8.toLocaleString()", about(n), rng{2*n - 1, 2*n - 1}},
		{"u8.sort()", rng{n, 40 * n}, none},
		{"f64.set(u8)", about(n), none},
		{"u8.map(function (x) { return x; })", about(n), rng{n, n}},
		{"u8.filter(function (x) { return true; })", about(n), rng{n, n}},
		{"u8.toHex()", rng{n, n}, rng{2 * n, 2 * n}},
		{"f.apply(null, a)", rng{n, n}, rng{16 * n, 16 * n}},
		{"f.apply(null, like)", about(n), rng{16 * n, 16 * n}},
		{"Reflect.apply(f, null, a)", rng{n, n}, rng{16 * n, 16 * n}},
		{"Reflect.construct(f, a)", rng{n, n}, rng{16 * n, 17 * n}},
		{"f.bind.apply(f, a)", rng{n, n}, rng{48*n - 32, 48 * n}},
		// each bind copies the name, "bound bound ... f": 6k+1 bytes at level k
		{"var g = f; for (var i = 0; i < 2000; i++) g = g.bind(null);", rng{12008000/copyBytesPerWork - 2000, 12008000 / copyBytesPerWork}, rng{12008000, 12008000}},
		{"Promise.all(a)", loop(n), chunked((16+promiseElementBytes)*n, 16+promiseElementBytes)},
		{"Promise.allSettled(a)", loop(n), chunked((16+promiseElementBytes)*n, 16+promiseElementBytes)},
		{"Promise.race(a)", loop(n), chunked(promiseElementBytes*n, promiseElementBytes)},
	}
	// Each case builds the setup afresh (seconds under -race at 20,000
	// elements): the default run takes every eighth case, the long suites all.
	for i, tc := range tests {
		if !longtest.SampledOneIn(i, 8) {
			continue
		}
		t.Run(tc.expr, func(t *testing.T) {
			r, m := newMetered()
			if _, err := r.RunString(setup); err != nil {
				t.Fatal(err)
			}
			m.reset()
			if _, err := r.RunString(tc.expr); err != nil {
				t.Fatal(err)
			}
			if m.work < tc.work.lo || m.work > tc.work.hi {
				t.Errorf("work %d, want [%d, %d]", m.work, tc.work.lo, tc.work.hi)
			}
			if m.alloc < tc.alloc.lo || m.alloc > tc.alloc.hi {
				t.Errorf("alloc %d, want [%d, %d]", m.alloc, tc.alloc.lo, tc.alloc.hi)
			}
		})
	}
}

// TestMustardArraysRefuseHuge checks that a single huge request is reported
// before it is allocated, so a Meter refusing any Alloc over 8 MiB stops it
// with the process heap barely touched. Results built piecemeal grow to the
// cap first: the default run refuses over 2 MiB, and makes big a third of
// its size, so they stop four times sooner.
func TestMustardArraysRefuseHuge(t *testing.T) {
	allocCap := longtest.Pick(2<<20, 8<<20)
	bigLen := longtest.Pick("1e5", "3e5")
	for i, src := range []string{
		"new ArrayBuffer(2**31)",
		"new ArrayBuffer(2**40)",
		"new Float64Array(1e9)",
		"new (Uint8Array.prototype.constructor)(2**28)",
		"new BigInt64Array(2**50)",
		"Uint8Array.from({length: 2**30})",
		"new Uint8Array(1e6).filter(function () { return true; }).constructor.of.apply(Uint8Array, Array(1e7))",
		"Array(1e9).fill(0)",
		"Array(2**32-1).fill(0)",
		"Array(1e9).map(function (x) { return x; })",
		"Array.from({length: 6e6})",
		"Function.prototype.apply.call(function () {}, null, {length: 2**40})",
		"Object.keys('x'.repeat(4e6))",
		"Object.getOwnPropertyNames(new Uint8Array(2e7))",
		"Object.assign({}, 'x'.repeat(4e6))",
		"[].concat(big, big, big, big, big, big, big, big, big, big)",
		"[big, big, big, big, big, big, big, big, big, big].flat()",
		"Array.prototype.concat.apply([], [big, big, big, big, big, big, big, big, big, big])",
		"big.concat(big, big, big, big, big, big, big, big, big).join()",
		"var a = []; for (var i = 0; i < 1e7; i++) a.push(i)",
		"var a = []; a[1e6] = 0; for (var i = 0; i < 1e7; i++) a[i] = i",
	} {
		if !longtest.Sampled(i) {
			continue
		}
		t.Run(src, func(t *testing.T) {
			r, m := newMetered()
			if strings.Contains(src, "big") {
				if _, err := r.RunString("var big = []; for (var i = 0; i < " + bigLen + "; i++) big.push(1);"); err != nil {
					t.Fatal(err)
				}
			}
			m.allocCap = allocCap
			MustardWaitAbandoned() // as in TestMustardStringsRefuseHuge
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := r.RunString(src)
			runtime.ReadMemStats(&after)
			var ie *InterruptedError
			if !errors.As(err, &ie) || ie.Value() != "alloc cap" {
				t.Fatalf("err = %v, want the alloc cap interrupt", err)
			}
			grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			took := after.TotalAlloc - before.TotalAlloc
			t.Logf("heap +%d MB, %d MB allocated in all", grew>>20, took>>20)
			if grew > 100<<20 || took > 200<<20 {
				t.Errorf("the heap grew by %d MB (%d MB allocated in all)", grew>>20, took>>20)
			}
		})
	}
}

// TestMustardArraysNativeCallbackWork: a native callback runs no guest
// code, so the built-in's own report is all a Meter sees of it.
func TestMustardArraysNativeCallbackWork(t *testing.T) {
	r, m := newMetered()
	if _, err := r.RunString(`var a = []; for (var i = 0; i < 1000; i++) a.push("s" + i);`); err != nil {
		t.Fatal(err)
	}
	m.reset()
	v, err := r.RunString(`a.map(Function.prototype.call, String.prototype.toUpperCase)`)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Export().([]interface{})[999]; got != "S999" {
		t.Fatalf("got %v", got)
	}
	if m.work < 1000 {
		t.Errorf("work %d, want >= 1000", m.work)
	}
}

// TestMustardArraysSameResults checks that a Meter changes no result, and
// no guest-visible step (here: how many times lengths and elements are
// read through getters).
func TestMustardArraysSameResults(t *testing.T) {
	scripts := []string{
		`var reads = 0;
		 function like() {
			return {get length() { reads++; return 3; }, 0: "c", 1: "a", 2: "b"};
		 }
		 var out = [];
		 out.push(Array.from(like()));
		 out.push(Array.prototype.fill.call(like(), 1)[2]);
		 var l = like(); Array.prototype.sort.call(l); out.push([l[0], l[1], l[2]]);
		 out.push(Object.assign({}, like()));
		 out.push(Array.prototype.join.call(like(), "-"));
		 out.push(Array.prototype.map.call(like(), function (x) { return x + x; }));
		 out.push(Array.prototype.indexOf.call(like(), "b"));
		 out.push(Array.prototype.slice.call(like(), 1));
		 out.push(Array.prototype.concat.call([], like()));
		 out.push(new Uint8Array(like()).length);
		 out.push(Function.prototype.apply.call(function () { return arguments.length; }, null, like()));
		 out.push(reads);
		 out`,
		`var gets = 0;
		 var o = {};
		 for (var i = 0; i < 10; i++) Object.defineProperty(o, "k" + i, {get: function () { gets++; return gets; }, enumerable: true});
		 [Object.keys(o), Object.values(o), Object.entries(o), Object.assign({}, o), gets]`,
		`var a = [5, 1, 4, 2, 3, , 7];
		 [a.join(), a.toString(), a.toLocaleString(), a.slice(1, 4), a.concat([8], 9), a.flat(), a.flatMap(function (x) { return [x, x]; }),
		  a.map(function (x) { return x * 2; }), a.filter(function (x) { return x & 1; }), a.reduce(function (x, y) { return x + y; }),
		  a.indexOf(4), a.lastIndexOf(4), a.includes(undefined), a.toSorted(), a.toReversed(), a.with(0, 0), a.toSpliced(1, 2, "x"),
		  a.slice().sort(function (x, y) { return y - x; }), a.slice().reverse(), a.slice().fill(0, 2, 4), a.slice().copyWithin(0, 3),
		  a.slice().splice(1, 2, "y", "z"), Array.from(a.entries()), Array.of(1, 2, 3), [[1, [2, [3, [4]]]]].flat(Infinity)]`,
		`var u = new Uint8Array([5, 1, 4, 2, 3]);
		 var f = Float64Array.from(u, function (x) { return x / 2; });
		 [Array.from(u.slice(1)), Array.from(u.subarray(2)), u.join("+"), u.toLocaleString(), Array.from(u.toSorted()), Array.from(u.map(function (x) { return x + 1; })),
		  Array.from(u.filter(function (x) { return x > 2; })), u.indexOf(4), u.lastIndexOf(4), u.includes(3), Array.from(f), Array.from(new Int16Array(u)),
		  Array.from(u.fill(9, 1, 2)), Array.from(u.copyWithin(0, 3)), Array.from(u.reverse()), Array.from(u.with(0, 7)), u.toHex(), u.toBase64(),
		  Array.from(Uint8Array.fromHex("0a0b")), Array.from(Uint8Array.fromBase64("AAEC"))]`,
		`var m = new Map([[1, "a"], [2, "b"]]); var s = new Set([1, 2, 3, 2]);
		 var seen = []; m.forEach(function (v, k) { seen.push(k + v); }); s.forEach(function (v) { seen.push(v); });
		 [Array.from(m), Array.from(s), seen, Array.from(s.union(new Set([4]))), Array.from(s.intersection(new Set([2, 9]))),
		  Array.from(s.difference(new Set([1]))), Array.from(s.symmetricDifference(new Set([3, 5]))), s.isSubsetOf(new Set([1, 2, 3, 4])),
		  Object.fromEntries(m), Object.getOwnPropertyNames({x: 1, 2: 3}), Reflect.ownKeys([1, 2]),
		  Math.max.apply(null, [1, 5, 2]), Reflect.apply(Math.min, null, [4, 2]), (function (a, b, c) { return a + b + c; }).bind(null, 1, 2)(3),
		  Object.isFrozen(Object.freeze({a: 1})), Object.isSealed(Object.seal([1]))]`,
		`var log = [];
		 Promise.all([1, Promise.resolve(2)]).then(function (v) { log.push(v); });
		 Promise.allSettled([1, Promise.reject(2)]).then(function (v) { log.push(v); });
		 Promise.any([Promise.reject(1), 3]).then(function (v) { log.push(v); });
		 Promise.race([4, 5]).then(function (v) { log.push(v); });
		 log`,
	}
	for i, src := range scripts {
		plain := New()
		metered, _ := newMetered()
		want, err1 := plain.RunString(src)
		got, err2 := metered.RunString(src)
		if err1 != nil || err2 != nil {
			t.Fatalf("script %d: %v / %v", i, err1, err2)
		}
		if !reflect.DeepEqual(want.Export(), got.Export()) {
			t.Errorf("script %d: with a Meter %v, without %v", i, got.Export(), want.Export())
		}
	}
	// Promise jobs run after the script: compare the log then.
	src := scripts[len(scripts)-1]
	var logs [2]interface{}
	for i, r := range []*Runtime{New(), func() *Runtime { r, _ := newMetered(); return r }()} {
		if _, err := r.RunString(src); err != nil {
			t.Fatal(err)
		}
		logs[i] = r.Get("log").Export()
	}
	if !reflect.DeepEqual(logs[0], logs[1]) {
		t.Errorf("promise results: without a Meter %v, with %v", logs[0], logs[1])
	}
}

// TestMustardArraysInterrupt: an Interrupt from another goroutine stops a
// long native loop within a few milliseconds, with or without a Meter.
func TestMustardArraysInterrupt(t *testing.T) {
	for _, src := range []string{
		"var a = Array(5e6).fill(1); for (;;) a.indexOf(2)",
		"Array(2**32-1).lastIndexOf(2)",
		"Array(2**32-1).indexOf(2)",
		"Array.prototype.includes.call({length: 2**53-1}, 2)",
		"Array(2**32-1).join('')",
		"Array(2**32-1).reverse()",
		"new Uint8Array(1e8).indexOf(1)",
		"Array.from({length: 1e6}, function (_, i) { return -i; }).sort()",
	} {
		for _, withMeter := range []bool{false, true} {
			r := New()
			if withMeter {
				r.SetMeter(&recMeter{r: r})
			}
			var start time.Time
			timer := time.AfterFunc(20*time.Millisecond, func() {
				start = time.Now()
				r.Interrupt("stop")
			})
			_, err := r.RunString(src)
			timer.Stop()
			var ie *InterruptedError
			if !errors.As(err, &ie) {
				t.Errorf("%s: err = %v, want an interrupt", src, err)
				continue
			}
			took := time.Since(start)
			t.Logf("%s (meter %v): stopped %v after the interrupt", src, withMeter, took)
			if took > 2*time.Second {
				t.Errorf("%s: took %v to stop", src, took)
			}
		}
	}
}

// TestMustardArraysNativeDepth: join, toString, toLocaleString and flat
// recurse in Go through nested arrays, and are bounded by the native depth.
func TestMustardArraysNativeDepth(t *testing.T) {
	for i, src := range []string{
		"String(deep)",
		"deep.join()",
		"deep.toLocaleString()",
		"deep.flat(Infinity)",
	} {
		if !longtest.Sampled(i) {
			continue
		}
		r := New()
		r.SetMaxNativeDepth(1000)
		if _, err := r.RunString(`var deep = []; for (var i = 0; i < 200000; i++) deep = [deep];`); err != nil {
			t.Fatal(err)
		}
		_, err := r.RunString(src)
		var ie *InterruptedError
		if !errors.As(err, &ie) || ie.Value() != ErrNativeDepth {
			t.Errorf("%s: err = %v, want ErrNativeDepth", src, err)
		}
	}
	// A shallow nesting is unaffected.
	r := New()
	r.SetMaxNativeDepth(1000)
	v, err := r.RunString(`var d = [1]; for (var i = 0; i < 100; i++) d = [d, 2]; [String(d).length, d.flat(Infinity).length]`)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Export().([]interface{}); got[0] != int64(201) || got[1] != int64(101) {
		t.Errorf("got %v", got)
	}
}

func TestMustardArraysHelpers(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		size int
		want int
	}{
		{0, 16, 0},
		{-5, 16, 0},
		{10, 16, 160},
		{1 << 62, 16, int(^uint(0) >> 1)},
		{1<<63 - 1, 8, int(^uint(0) >> 1)},
	} {
		if got := bytesFor(tc.n, tc.size); got != tc.want {
			t.Errorf("bytesFor(%d, %d) = %d, want %d", tc.n, tc.size, got, tc.want)
		}
	}
	// allocStep reports every item once, before it, and a small result as
	// small.
	r, m := newMetered()
	for _, n := range []int64{1, 7, 8, 9, 100, 1000, 1024, 1025, 5000, 70000} {
		m.reset()
		for i := int64(0); i < n; i++ {
			r.allocStep(i, 1)
			if m.alloc <= i {
				t.Fatalf("n %d: item %d made before it was reported (%d)", n, i, m.alloc)
			}
		}
		if m.alloc > max(8, 2*n) {
			t.Errorf("n %d: %d reported", n, m.alloc)
		}
	}
	// A small Map, a small Promise.all, a small entries iteration: small reports.
	for _, src := range []string{"new Map([[1, 2]])", "Promise.all([1, 2])", "Array.from([1, 2].entries())", "Object.fromEntries([[1, 2]])"} {
		m.reset()
		if _, err := r.RunString(src); err != nil {
			t.Fatal(err)
		}
		if m.alloc > 16<<10 {
			t.Errorf("%s: %d bytes reported", src, m.alloc)
		}
	}
}

// Sorting a sparse object takes time and memory for the elements present,
// not for its length.
func TestMustardSortSparseByItsKeys(t *testing.T) {
	r, m := newMetered()
	m.allocCap = 1 << 20
	v, err := r.RunString(`var o = {length: 2**40, 7: 'b', 3: 'a', 2e9: 'c'};
		Array.prototype.sort.call(o);
		var a = []; a[1e6] = 1; a[5] = 2; a.sort();
		[o[0], o[1], o[2], 3 in o, 7 in o, 2e9 in o, a.length, a[0], a[1], 5 in a].join()`)
	if err != nil || v.String() != "a,b,c,false,false,false,1000001,1,2,false" {
		t.Fatal(v, err)
	}
	if m.maxAlloc > 1<<16 {
		t.Fatalf("largest allocation reported: %d bytes", m.maxAlloc)
	}
}

// A hole reaches a native callback as undefined, not as Go's nil.
func TestHoleToNativeCallback(t *testing.T) {
	for _, src := range []string{
		`[,1].find(Number)`, `[,1].findIndex(Number)`, `[1,,].findLast(Number)`,
		`[1,,].findLastIndex(Number)`, `Array.from({length: 2}, Number).join()`,
	} {
		if _, err := New().RunString(src); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
	}
}
