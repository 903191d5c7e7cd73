package goja

import (
	"errors"
	"math"
	"math/rand"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/regexp2"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// strMeter records what built-ins report; it interrupts the runtime when a
// single Alloc passes maxAlloc, all of them maxTotal, or the total work
// passes maxWork (0: never).
type strMeter struct {
	r                           *Runtime
	work, alloc                 int
	maxAlloc, maxTotal, maxWork int
	biggestAlloc                int
}

func (m *strMeter) Work(n int) {
	if n < 0 {
		panic("negative work")
	}
	m.work += n
	if m.maxWork > 0 && m.work > m.maxWork {
		m.r.Interrupt("work budget")
	}
}

func (m *strMeter) Alloc(n int) {
	if n < 0 {
		panic("negative alloc")
	}
	m.alloc += n
	m.biggestAlloc = max(m.biggestAlloc, n)
	if m.maxAlloc > 0 && n > m.maxAlloc || m.maxTotal > 0 && m.alloc > m.maxTotal {
		m.r.Interrupt("heap limit")
	}
}

// Make counts as memory here, as in recMeter.
func (m *strMeter) Make(n int) { m.Alloc(n) }

func (m *strMeter) reset() { m.work, m.alloc, m.biggestAlloc = 0, 0, 0 }

func newStrMetered() (*Runtime, *strMeter) {
	r := New()
	m := &strMeter{r: r}
	r.SetMeter(m)
	return r, m
}

// Each built-in reports about the work and memory its input calls for.
func TestMustardStringsReport(t *testing.T) {
	// Strings of 100,000 characters in the long suites, 25,000 in the
	// default run; the bounds scale with n.
	n := longtest.Pick(25000, 100000)
	setup := `
		var n = ` + strconv.Itoa(n) + `;
		var s = 'x'.repeat(n);              // ASCII
		var u = 'é'.repeat(n);              // UTF-16
		var csv = 'ab,'.repeat(n / 3);
		var padded = 'xy' + ' '.repeat(n);
		var uri = '/ é?'.repeat(n / 4);
		var arr = []; for (var i = 0; i < n / 10; i++) arr.push(i);
		var codes = []; for (var i = 0; i < n / 10; i++) codes.push(65);
		var json = JSON.stringify(arr);
	`
	cases := []struct {
		name, expr         string
		minWork, maxWork   int // 0: not checked
		minAlloc, maxAlloc int
	}{
		{"repeat", `s.repeat(10)`, 10, 0, 10 * n, 2 * 10 * n},
		{"repeat unicode", `u.repeat(10)`, 10, 0, 2 * 10 * n, 3 * 10 * n},
		{"padStart", `'a'.padStart(n)`, n / 2, 0, n, 2 * n},
		{"padEnd unicode", `'é'.padEnd(n, 'ü')`, n / 2, 0, 2 * n, 3 * n},
		{"concat", `s.concat(s, u)`, 1, 0, 2 * 3 * n, 4 * 3 * n},
		{"indexOf miss", `s.indexOf('y')`, n, 2 * n, 0, 0},
		{"indexOf hit", `s.indexOf('x', 10)`, 1, 10, 0, 0},
		{"lastIndexOf miss", `s.lastIndexOf('y')`, n, 2 * n, 0, 0},
		{"includes", `u.includes('x')`, n, 2 * n, 0, 0},
		{"startsWith", `s.startsWith(s)`, n, 2 * n, 0, 0},
		{"endsWith", `u.endsWith(u)`, n, 2 * n, 0, 0},
		{"localeCompare", `s.localeCompare(u)`, (collateASCII + collateUnits) * n, (collateASCII+collateUnits)*n + n, 0, 0},
		{"search", `s.search(/y/)`, n * regexpScanUnits, 2 * n * regexpScanUnits, 0, 0},
		{"toUpperCase", `s.toUpperCase()`, n, 2 * n, n, 2 * n},
		{"toLowerCase unicode", `u.toLowerCase()`, caseMapUnits * n, (caseMapUnits + 1) * n, 2 * n, 4 * n},
		{"toLocaleUpperCase", `u.toLocaleUpperCase()`, caseMapUnits * n, (caseMapUnits + 1) * n, 2 * n, 4 * n},
		{"normalize", `u.normalize('NFD')`, normalizeUnits * n, (normalizeUnits + 1) * n, 4 * n, 5 * n},
		{"trim unicode", `u.trim()`, n, 2 * n, 2 * n, 3 * n},
		{"trim ascii", `s.trim()`, n, 2 * n, 0, 0},
		{"slice unicode", `u.slice(1)`, 1, 0, 2 * n, 3 * n},
		{"substring unicode", `u.substring(0, n/2)`, 1, 0, n, 2 * n},
		{"substr unicode", `u.substr(1, n/2)`, 1, 0, n, 2 * n},
		{"slice ascii", `s.slice(1)`, 1, 0, n - 1, n - 1},
		{"slice ascii whole", `s.slice(0)`, 0, 0, 0, 0},
		{"trim ascii piece", `padded.trimEnd()`, n, 2 * n, 2, 2},
		{"split", `csv.split(',')`, 9 * n / 10, 2 * n, n / 3 * valueBytes, n / 3 * 4 * valueBytes},
		{"split chars", `u.split('')`, n, 2 * n, n * valueBytes, n * 4 * valueBytes},
		{"split regexp", `csv.split(/,/)`, 9 * n / 10 * regexpScanUnits, 3 * n * regexpScanUnits, n / 3 * valueBytes, 0},
		{"replace", `s.replace('y', 'z')`, n, 2 * n, 0, 0},
		{"replaceAll", `csv.replaceAll(',', ';;')`, n, 2 * n, 4 * n / 3, 0},
		{"replace regexp", `csv.replace(/,/g, ';;')`, n * regexpScanUnits, 3 * n * regexpScanUnits, 4 * n / 3, 0},
		{"replace $\u0060", "'ab'.repeat(100).replace(/b/g, '$`')", 200, 0, 100 * 100, 0},
		{"match global", `csv.match(/a/g)`, 9 * n / 10 * regexpScanUnits, 2 * n * regexpScanUnits, n / 3 * valueBytes, 0},
		{"matchAll", `[...csv.matchAll(/,/g)].length`, n * regexpScanUnits, 3 * n * regexpScanUnits, n / 3 * valueBytes, 0},
		{"exec unicode capture", `/(é+)/.exec(u)[1].length`, n, 0, 2 * n, 0},
		{"test regexp2", `/x(?=y)/.test(s)`, n * regexpScanUnits, n * (3*regexpScanUnits + 16*regexpStepUnits), 4 * n, 0}, // the span and about 12 steps a character
		{"new RegExp", `new RegExp(s)`, n, 0, n, 0},
		{"fromCharCode", `String.fromCharCode(...codes)`, n / 10, 0, n / 10, 0},
		{"fromCodePoint", `String.fromCodePoint(...codes)`, n / 10, 0, n / 10, 0},
		{"raw", `String.raw({raw: codes}, 'x')`, 1, 0, n / 10 * 2, 0},
		{"JSON.parse", `JSON.parse(json)`, len("[0,") * n / 10, 0, n / 10 * valueBytes, 0},
		{"JSON.parse object", `JSON.parse('{' + arr.map(i => '"k' + i + '":1').join(',') + '}')`, n / 10, 0, n / 10 * propertyBytes, 0},
		{"JSON.stringify", `JSON.stringify(arr, null, 2)`, n / 10, 0, n / 10 * 4, 0},
		{"JSON.stringify string", `JSON.stringify(u)`, n, 0, n, 0},
		{"encodeURIComponent", `encodeURIComponent(uri)`, n, 0, 3 * n, 0},
		{"encodeURI", `encodeURI(uri)`, n, 0, n, 0},
		{"decodeURIComponent", `decodeURIComponent(encodeURIComponent(uri))`, 3 * n, 0, 3 * n, 0},
		{"escape", `escape(u)`, n, 0, 3 * n, 0},
		{"unescape", `unescape(escape(uri))`, n, 0, n, 0},
		{"parseInt", `parseInt('1'.repeat(n))`, n, 0, 0, 0},
		{"parseFloat", `parseFloat('1'.repeat(n))`, n, 0, 0, 0},
		{"Date.parse", `Date.parse(s)`, n, 2 * n, 0, 0},
		{"String keys", `Object.getOwnPropertyNames(new String(s)).length`, 9 * n / 10, 0, n * valueBytes, 0},
	}
	for i, c := range cases {
		if !longtest.Sampled(i) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			r, m := newStrMetered()
			if _, err := r.RunString(setup); err != nil {
				t.Fatal(err)
			}
			m.reset()
			if _, err := r.RunString(c.expr); err != nil {
				t.Fatal(err)
			}
			if m.work < c.minWork || c.maxWork > 0 && m.work > c.maxWork {
				t.Errorf("work %d, want [%d, %d]", m.work, c.minWork, c.maxWork)
			}
			if m.alloc < c.minAlloc || c.maxAlloc > 0 && m.alloc > c.maxAlloc {
				t.Errorf("alloc %d, want [%d, %d]", m.alloc, c.minAlloc, c.maxAlloc)
			}
		})
	}
}

// A huge result is reported before it is allocated, so a Meter can refuse
// it: the call ends with the interrupt and memory stays put. Results built
// piecemeal report as they grow, so a Meter adding them up stops them.
func TestMustardStringsRefuseHuge(t *testing.T) {
	for _, c := range []struct {
		expr      string
		piecemeal bool
	}{
		{`'x'.repeat(1e6)`, false},
		{`'x'.repeat(2**40)`, false},
		{`'xy'.repeat(2**52)`, false},
		{`'é'.repeat(2**40)`, false},
		{`'x'.padEnd(2**40)`, false},
		{`'x'.padStart(2**53 - 1, 'é')`, false},
		{`'x'.repeat(1e5).split('')`, false},
		{`'é'.repeat(3e4).split('')`, false},
		{`JSON.stringify({}, Object.assign([], {length: 2**32 - 1}))`, false},
		{`escape('é'.repeat(3e5))`, true},
		{`JSON.stringify({a: 'x'.repeat(5e5), b: 'y'.repeat(6e5)})`, true},
		{`JSON.stringify(new Array(1e6))`, true},
		{`String.raw({raw: {length: 2**53 - 1}})`, true},
		{`'ab'.repeat(1000).replace(/b/g, '$\u0060')`, true},
		{`'a'.repeat(3e5).replace(/(?=a)/g, '-')`, true},
		{`'a'.repeat(3e5).replaceAll('', '-')`, true},
	} {
		expr := c.expr
		t.Run(expr, func(t *testing.T) {
			r, m := newStrMetered()
			if c.piecemeal {
				m.maxTotal = 1e6
			} else {
				m.maxAlloc = 1e5
			}
			// The allocation count is the process's: an earlier test's
			// call that an interrupt abandoned (a localeCompare of long
			// strings) may still be running, and must not count here.
			MustardWaitAbandoned()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := r.RunString(expr)
			runtime.ReadMemStats(&after)
			var ie *InterruptedError
			if !errors.As(err, &ie) || ie.Value() != "heap limit" {
				t.Fatalf("err = %v, want the Meter's interrupt", err)
			}
			if grown := after.TotalAlloc - before.TotalAlloc; grown > 64<<20 {
				t.Errorf("allocated %d bytes", grown)
			}
			if !c.piecemeal && strings.Contains(expr, "2**") && m.biggestAlloc < 1<<30 {
				t.Errorf("biggest Alloc %d, want it reported huge", m.biggestAlloc)
			}
		})
	}
}

// A global search through a string costs O(length) in all, not
// O(length x matches): a regular expression's scan rate plus under 10 units
// a character (and, on regexp2, its steps: under 15 a character here), and
// doubling the string about doubles the work (a quadratic cost would
// quadruple it).
func TestMustardStringsGlobalLinear(t *testing.T) {
	for i, c := range []struct {
		expr    string
		regexp2 bool // searches from lastIndex and lookaheads run on regexp2 (no linear mode here)
	}{
		{`'a'.repeat(N).replace(/a/g, 'b')`, false},
		{`'a'.repeat(N).replaceAll('a', 'b')`, false},
		{`'a'.repeat(N).replace(/a(?=a|$)/g, 'b')`, true},
		{`'a'.repeat(N).split(/a/).length`, false},
		{`'a'.repeat(N).split(/(?=a)/).length`, true},
		{`'a'.repeat(N).match(/a/g).length`, false},
		{`'é'.repeat(N).match(/é/gu).length`, false},
		{`'é'.repeat(N).replace(/(?=é)é/gu, 'e')`, true},
		{`[...'a'.repeat(N).matchAll(/a/g)].length`, true},
		{`var s = 'a'.repeat(N), re = /a/g, k = 0; while (re.exec(s)) k++; k`, true},
		{`var re = /a(?!b)/g, k = 0; var s = 'a'.repeat(N); while (re.test(s)) k++; k`, true},
		{`('x'.repeat(5) + '\r\n').repeat(N / 7).replace(/\r\n/g, '\n')`, false},
	} {
		if !longtest.Sampled(i) {
			continue
		}
		expr := c.expr
		n := longtest.Pick(5000, 20000) // then twice that
		t.Run(expr, func(t *testing.T) {
			work := func(n int) int {
				r, m := newStrMetered()
				if _, err := r.RunString(strings.ReplaceAll(expr, "N", strconv.Itoa(n))); err != nil {
					t.Fatal(err)
				}
				return m.work
			}
			w1, w2 := work(n), work(2*n)
			t.Logf("work %d, then %d for twice the length", w1, w2)
			if w2 > 3*w1 {
				t.Errorf("work %d for %d, %d for %d: not linear", w1, n, w2, 2*n)
			}
			bound := (regexpScanUnits + 10) * n
			if c.regexp2 {
				bound += 15 * regexpStepUnits * n
			}
			if w1 > bound {
				t.Errorf("work %d, want < %d", w1, bound)
			}
		})
	}
	// Normalising newlines in a 100 KB string stays cheap.
	r, m := newStrMetered()
	if _, err := r.RunString(`var s = ('x'.repeat(48) + '\r\n').repeat(2000); s.replace(/\r\n/g, '\n')`); err != nil {
		t.Fatal(err)
	}
	if m.work > 10*100000 {
		t.Errorf("work %d for 100 KB", m.work)
	}
}

// With a Meter and operand metering a regexp2 search is charged
// regexpStepUnits a step and has no match timeout: a catastrophic search
// runs until the Meter stops it (never "no match" because the machine was
// slow), at the same charge on every run. With a Meter alone (programs of
// format version 1 or 2) it is charged its span, and a match past the
// timeout costs more than any budget, as those programs' journals
// recorded; without one goja answers "no match" at the timeout, as
// upstream does.
func TestMustardRegexp2Steps(t *testing.T) {
	saved := regexp2.DefaultMatchTimeout
	regexp2.DefaultMatchTimeout = 50 * time.Millisecond
	defer func() { regexp2.DefaultMatchTimeout = saved }()

	// 2^16 ways to split the run of a's, each tried: charged by the step.
	const small = `/^(a+)+(?=b)/.test('a'.repeat(16) + '!')`
	var works []int
	for range 2 {
		r, m := newStrMetered()
		r.MustardMeterOperands(true)
		v, err := r.RunString(small)
		if err != nil || v != valueFalse {
			t.Fatalf("%v, %v", v, err)
		}
		works = append(works, m.work)
	}
	if works[0] != works[1] || works[0] < regexpStepUnits<<16 {
		t.Errorf("work %v, want the same twice and >= %d", works, regexpStepUnits<<16)
	}

	const expr = `/^(a+)+(?=b)/.test('a'.repeat(40) + '!')`
	var ie *InterruptedError
	for _, expr := range []string{
		`try { ` + expr + ` } catch (e) { 'caught' }`,
		`'a'.repeat(40).replace(/^(a+)+(?=b)/g, 'x')`,
		`'a'.repeat(40).split(/^(a+)+(?=b)/)`,
		`/^(é+)+(?=b)/u.exec('é'.repeat(40))`,
		`/(x+x+)+y\1/.exec('x'.repeat(40))`,
	} {
		r, m := newStrMetered()
		r.MustardMeterOperands(true)
		// About 0.25 s of steps in the long suites; a tenth of it in the
		// default run, where the race detector makes each step ten times
		// slower. Either is a sliver of the 2^40 ways to split the run.
		m.maxWork = longtest.Pick(10_000_000, 100_000_000)
		if _, err := r.RunString(expr); !errors.As(err, &ie) || ie.Value() != "work budget" {
			t.Errorf("%s: err = %v, want the Meter's interrupt", expr, err)
		}
		if m.work > m.maxWork+regexpStepUnits*(regexp2.DefaultStepEvery+100) {
			t.Errorf("%s: work %d, the search went on after the budget", expr, m.work)
		}
	}

	// Span-only charges: the small search costs what 0.2.0 charged it
	// (under a timeout no busy machine reaches), and the long one runs to
	// the timeout, which exhausts any budget.
	regexp2.DefaultMatchTimeout = time.Minute
	r, m := newStrMetered()
	if _, err := r.RunString(small); err != nil || m.work >= regexpStepUnits<<16 {
		t.Errorf("without operand metering: %v, work %d, want the span's charge alone", err, m.work)
	}
	regexp2.DefaultMatchTimeout = 50 * time.Millisecond
	r, m = newStrMetered()
	m.maxWork = 1e8
	if _, err := r.RunString(expr); !errors.As(err, &ie) || ie.Value() != "work budget" || m.work < regexpTimeoutWork {
		t.Errorf("without operand metering: %v, work %d, want the timeout's charge", err, m.work)
	}

	v, err := New().RunString(expr)
	if err != nil || v != valueFalse {
		t.Errorf("no Meter: %v, %v; want false as upstream", v, err)
	}
}

// SetMaxNativeDepth bounds JSON's recursion with ErrNativeDepth.
func TestMustardNativeDepth(t *testing.T) {
	for _, expr := range []string{
		`JSON.parse('['.repeat(1e5) + ']'.repeat(1e5))`,
		`JSON.parse('{"a":'.repeat(2000) + '1' + '}'.repeat(2000))`,
		`var a = []; for (var i = 0; i < 1e5; i++) a = [a]; JSON.stringify(a)`,
		`var o = {}; for (var i = 0; i < 1e5; i++) o = {o}; try { JSON.stringify(o) } catch (e) { 'caught' }`,
		`var deep = []; for (var i = 0; i < 1e5; i++) deep = [deep];
		 JSON.parse('[1,2]', function (k, v) { if (k === '0') this[1] = deep; return v })`,
	} {
		t.Run(expr, func(t *testing.T) {
			r := New()
			r.SetMaxNativeDepth(1000)
			_, err := r.RunString(expr)
			var ie *InterruptedError
			if !errors.As(err, &ie) || !errors.Is(err, ErrNativeDepth) {
				t.Fatalf("err = %v, want ErrNativeDepth", err)
			}
			if r.native.depth != 0 {
				t.Errorf("depth %d left after the failure", r.native.depth)
			}
			// The runtime stays usable, and nesting within the bound works.
			v, err := r.RunString(`JSON.stringify(JSON.parse('['.repeat(999) + ']'.repeat(999))).length`)
			if err != nil || v.ToInteger() != 2*999 {
				t.Errorf("after: %v, %v", v, err)
			}
		})
	}
	// 0 is unbounded, as upstream.
	r := New()
	v, err := r.RunString(`var a = []; for (var i = 0; i < 5000; i++) a = [a]; JSON.stringify(a).length`)
	if err != nil || v.ToInteger() != 2*5001 {
		t.Errorf("unbounded: %v, %v", v, err)
	}
}

// enterNative/leaveNative, for other recursive built-ins.
func TestMustardEnterNative(t *testing.T) {
	r := New()
	r.SetMaxNativeDepth(3)
	var depth func(int)
	depth = func(n int) {
		r.enterNative()
		defer r.leaveNative()
		if n > 0 {
			depth(n - 1)
		}
	}
	depth(2) // three levels
	if r.native.depth != 0 {
		t.Fatal(r.native.depth)
	}
	func() {
		defer func() {
			if e, ok := recover().(*InterruptedError); !ok || e.Value() != ErrNativeDepth {
				t.Errorf("recovered %v", e)
			}
		}()
		depth(3)
	}()
	if r.native.depth != 0 {
		t.Fatal(r.native.depth)
	}
}

// An Interrupt from another goroutine stops long native loops promptly.
func TestMustardStringsInterruptLoops(t *testing.T) {
	for _, expr := range []string{
		`JSON.stringify(new Array(1e9))`,
		`String.raw({raw: {length: 2**53 - 1}})`,
		`JSON.stringify({}, Object.assign([], {length: 1e7}))`,
		`JSON.parse('[' + '1,'.repeat(1e7) + '1]')`,
	} {
		t.Run(expr, func(t *testing.T) {
			for _, metered := range []bool{false, true} {
				r := New()
				if metered {
					r.SetMeter(&strMeter{r: r})
				}
				var start time.Time
				timer := time.AfterFunc(100*time.Millisecond, func() {
					start = time.Now()
					r.Interrupt("stop")
				})
				_, err := r.RunString(expr)
				timer.Stop()
				var ie *InterruptedError
				if !errors.As(err, &ie) {
					t.Fatalf("metered %v: err = %v", metered, err)
				}
				// A quiet machine stops within milliseconds; a loop that
				// took no interrupt would run on for tens of seconds.
				if d := time.Since(start); d > hangBound(2*time.Second) {
					t.Errorf("metered %v: stopped %v after the Interrupt", metered, d)
				}
			}
		})
	}
}

// With or without a Meter, built-ins return the same values.
func TestMustardStringsSameResults(t *testing.T) {
	exprs := []string{
		`'abc'.repeat(3)`, `'é'.repeat(2)`, `'ab'.padStart(7, 'xy')`, `'é'.padEnd(4, 'ü')`,
		`'a'.concat('b', 1, 'é')`, `'abcabc'.indexOf('c', 3)`, `'abcabc'.lastIndexOf('b')`,
		`'éabc'.lastIndexOf('a', 2)`, `'abc'.includes('d')`, `'abc'.startsWith('ab')`, `'abc'.endsWith('bc', 3)`,
		`'a'.localeCompare('b')`, `'ABC'.toLowerCase()`, `'straße'.toUpperCase()`, `'Ǆ'.toLocaleLowerCase()`,
		`'e\u0301'.normalize()`, `'\ufdfa'.normalize('NFKD')`, `'  é  '.trim()`, `' a '.trimStart()`, `' a '.trimEnd()`,
		`'éabc'.slice(1, 3)`, `'éabc'.substring(3, 1)`, `'éabc'.substr(-2)`, `'a,b,,c'.split(',')`, `'a,b,c'.split(',', 2)`,
		`'é,b'.split(',')`, `'éb'.split('')`, `'aXbXc'.split(/x/i)`, `'a1b2c3'.split(/(\d)/)`, `'abc'.split(/(?=b)/)`,
		`'aaa'.replace('a', 'b')`, `'aaa'.replaceAll('a', '$&$&')`, `'abc'.replace(/b/, '[$\u0060|$&|$\']')`,
		`'abc'.replace(/(?<x>b)/g, '<$<x>>')`, `'abc'.replace(/b/g, (m, i) => m + i)`, `'aéa'.replace(/a/g, 'ü')`,
		`'abcabc'.match(/b/g)`, `JSON.stringify('abcb'.match(/(b)/))`, `JSON.stringify([...'a1b2'.matchAll(/\d/g)])`,
		`'abc'.search(/c/)`, `/a(?=b)/.test('ab')`, `JSON.stringify(/(é)(x)?/u.exec('aé'))`, `/^(a+)+$/.exec('aaa')[1]`,
		`String(new RegExp('a/b', 'g'))`, `new RegExp('\n').source`, `String.fromCharCode(97, 233)`,
		`String.fromCodePoint(97, 0x1F600)`, `String.raw({raw: ['a', 'b', 'c']}, 1, 2)`,
		`JSON.stringify(JSON.parse('{"a":[1,"é",{"b":null}],"c":true}'))`,
		`JSON.stringify({a: [1, {b: 'é\n'}], c: undefined}, null, '\t')`, `JSON.stringify({a: 1, b: 2}, ['b'])`,
		`JSON.parse('[1,[2]]', (k, v) => typeof v === 'number' ? v * 2 : v)`, `JSON.rawJSON('1e3').rawJSON`,
		`encodeURIComponent('a b/é')`, `encodeURI('a b/é')`, `decodeURIComponent('%C3%A9%20')`, `decodeURI('%2F%20')`,
		`escape('a é\u1234')`, `unescape('%u1234%E9a')`, `parseInt(' 12px')`, `parseFloat('1.5e3x')`,
		`Date.parse('2020-01-02T03:04:05Z')`, `new Date('2020-01-02').getTime()`, `Object.keys(new String('abc'))`,
	}
	plain := New()
	metered, _ := newStrMetered()
	for _, expr := range exprs {
		want, err1 := plain.RunString(expr)
		got, err2 := metered.RunString(expr)
		if err1 != nil || err2 != nil {
			t.Errorf("%s: %v / %v", expr, err1, err2)
			continue
		}
		if !reflect.DeepEqual(want.Export(), got.Export()) {
			t.Errorf("%s: %v without a Meter, %v with", expr, want.Export(), got.Export())
		}
	}
}

// Byte counts clamp instead of overflowing.
func TestMustardBytesClamp(t *testing.T) {
	if got := mulBytes(math.MaxInt64, 2); got != maxReportBytes {
		t.Error(got)
	}
	if got := unitBytes(math.MaxInt64, false); got != maxReportBytes {
		t.Error(got)
	}
	if got := addBytes(maxReportBytes, maxReportBytes); got != maxReportBytes {
		t.Error(got)
	}
	if got := unitBytes(10, false); got != 22 {
		t.Error(got)
	}
	if got := mulBytes(-1, 2); got != 0 {
		t.Error(got)
	}
}

// parseFloatPrefix finds what upstream's regexp found, on 200,000 random
// strings in the long suites and the first 50,000 of them by default.
func TestParseFloatPrefixIsTheRegexps(t *testing.T) {
	rnd := rand.New(rand.NewSource(3))
	const alphabet = "+-.eE0123456789Infity x"
	for i := 0; i < longtest.Pick(50_000, 200_000); i++ {
		b := make([]byte, rnd.Intn(12))
		for j := range b {
			b[j] = alphabet[rnd.Intn(len(alphabet))]
		}
		s := string(b)
		if rnd.Intn(4) == 0 {
			s = s[:len(s)/2] + "Infinity" + s[len(s)/2:]
		}
		want := parseFloatRegexp.FindStringSubmatch(s)
		if got := parseFloatPrefix(s); len(want) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("%q: %q, want %q", s, got, want)
		}
	}
}
