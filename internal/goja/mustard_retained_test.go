package goja

import (
	"runtime"
	"testing"
)

func retainedAfter(t *testing.T, src string) uint64 {
	t.Helper()
	r := New()
	if _, err := r.RunString(src); err != nil {
		t.Fatal(err)
	}
	return r.MustardRetainedBytes()
}

func TestRetainedBytesCountsWhatStaysReachable(t *testing.T) {
	base := retainedAfter(t, "1")
	if base > 4096 {
		t.Fatalf("an empty realm retains %d bytes", base)
	}
	const big = 100_000
	for _, c := range []struct{ name, src string }{
		{"global array", "var keep = []; for (let i = 0; i < 6000; i++) keep.push(i * 1.5)"},
		{"lexical string", "const s = 'x'.repeat(1e5)"},
		{"closure scope", "const f = (() => { const big = 'x'.repeat(1e5); return () => big.length })()"},
		{"map entries", "const m = new Map(); for (let i = 0; i < 400; i++) m.set(i, {i})"},
		{"Promise.all element", "let res; const p = new Promise(r => res = r); Promise.all([Promise.resolve('y'.repeat(1e5)), p])"},
		{"suspended async function", "let hold; async function g() { const big = 'z'.repeat(1e5); await new Promise(r => hold = r); return big.length } g()"},
		{"pending then", "let hold; new Promise(r => hold = r).then(((s) => () => s.length)('w'.repeat(1e5)))"},
		{"bound argument", "const f = Math.max.bind(null, 'v'.repeat(1e5))"},
		{"generator frame", "function* g() { const big = 'u'.repeat(1e5); yield 1; return big } const it = g(); it.next()"},
		{"property of a built-in", "Math.keep = 'k'.repeat(1e5)"},
		{"weak map value of a live key", "const k = {}; const wm = new WeakMap([[k, 'q'.repeat(1e5)]])"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := retainedAfter(t, c.src)
			if got < big/2 || got > 4*big {
				t.Fatalf("%d bytes retained, want about %d", got, big)
			}
			if again := retainedAfter(t, c.src); again != got {
				t.Fatalf("%d bytes, then %d: not deterministic", got, again)
			}
		})
	}
}

func TestRetainedBytesIgnoresGarbage(t *testing.T) {
	for _, src := range []string{
		"for (let i = 0; i < 100; i++) { const t = 'x'.repeat(1e5) + i }",
		"let a = []; for (let i = 0; i < 1e4; i++) a.push({i}); a = null",
		"void Promise.all([Promise.resolve('y'.repeat(1e5))])",
		"const wm = new WeakMap([[{}, 'q'.repeat(1e5)]])",
	} {
		if got := retainedAfter(t, src); got > 8192 {
			t.Errorf("%s: %d bytes retained", src, got)
		}
	}
}

func TestRetainedBytesCountsASharedStringOnce(t *testing.T) {
	got := retainedAfter(t, "const s = 'x'.repeat(1e5); const a = Array(100).fill(s)")
	if got > 150_000 {
		t.Fatalf("%d bytes: the one string was counted more than once", got)
	}
}

// The walk's figure is of the order of the Go heap the guest's values take.
func TestRetainedBytesIsCalibrated(t *testing.T) {
	for _, src := range []string{
		"var k = []; for (let i = 0; i < 20000; i++) k.push({i})",
		"var k = []; for (let i = 0; i < 20000; i++) k.push({a: i, b: i, c: i, d: i})",
		"var k = []; for (let i = 0; i < 20000; i++) k.push(i * 1.5)",
		"var k = []; for (let i = 0; i < 20000; i++) k.push(i * 1000)",
		"var k = []; for (let i = 0; i < 20000; i++) k.push('s' + i)",
		"var k = []; for (let i = 0; i < 20000; i++) k.push([i, i])",
		"var k = []; for (let i = 0; i < 20000; i++) { const c = i; k.push(() => c) }",
		"var m = new Map(); for (let i = 0; i < 20000; i++) m.set(i, i)",
		"var k = []; for (let i = 0; i < 2000; i++) k.push('x'.repeat(1000) + i)",
		"var k = JSON.parse(JSON.stringify(Array.from({length: 5000}, (_, i) => ({id: i, name: 'n' + i, tags: ['a', 'b']}))))",
	} {
		// An earlier test's call that an interrupt abandoned (a string
		// of hundreds of MB being built) may still be running, and the
		// memory it frees on returning must not count here: a reading once
		// went 207 MB negative. Other goroutines can still free or
		// allocate during a reading: the best of three.
		MustardWaitAbandoned()
		var got uint64
		var live int64
		ratio := 0.0
		for try := 0; try < 3; try++ {
			r := New()
			r.RunString("1")
			var a, b runtime.MemStats
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&a)
			if _, err := r.RunString(src); err != nil {
				t.Fatal(err)
			}
			r.vm.result = nil
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&b)
			got = r.MustardRetainedBytes()
			live = int64(b.HeapAlloc) - int64(a.HeapAlloc)
			ratio = float64(live) / float64(got)
			runtime.KeepAlive(r)
			if ratio >= 0.4 && ratio <= 3 {
				break
			}
		}
		t.Logf("%-60.60s live %8d walk %8d ratio %.2f", src, live, got, ratio)
		if ratio < 0.4 || ratio > 3 {
			t.Errorf("%s: the walk says %d bytes for %d live", src, got, live)
		}
	}
}

func BenchmarkRetainedBytes(b *testing.B) {
	r := New()
	if _, err := r.RunString("var k = JSON.parse(JSON.stringify(Array.from({length: 5000}, (_, i) => ({id: i, name: 'n' + i, tags: ['a', 'b']}))))"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		r.MustardRetainedBytes()
	}
}

func BenchmarkRetainedBytesSmall(b *testing.B) {
	r := New()
	if _, err := r.RunString("const items = [{id: 1, q: 2}, {id: 2, q: 3}]; let total = 0"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		r.MustardRetainedBytes()
	}
}
