package engine

import (
	"errors"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// FuzzBoundary builds a guest value from the fuzz input with a small
// grammar (nested arrays and objects of primitives, plus the weird ones:
// getters, symbols, -0, NaN, holes, lone surrogates, shared references,
// cycles, deep nesting, a poisoned Object.prototype) and computes, in Go, the structured value it must
// become or that it must be refused. The value then crosses the boundary
// three ways:
//
//   - as the program's result: it completes with exactly the expected
//     value, or fails with the boundary's Runtime error ("result ...");
//   - as a capability argument: the call suspends with exactly the expected
//     value, and the host's echo of it comes back equal (import, then
//     export), or the guest catches a TypeError at the call site;
//   - as an input of a fresh program that returns it: equal again.
//
// In no case may guest code run during a conversion (getters and proxy
// traps call the probe capability, which must never be called), the engine
// panic, or an error text leak host internals.
//
// MUSTARD_FUZZ_SKIP_KNOWN=1 leaves out the productions that hit defects
// already reported by the guest suite, so an exploratory run can look past
// them; plain `go test` and plain fuzzing always include them.
func FuzzBoundary(f *testing.F) {
	for _, seed := range [][]byte{
		{0, 0, 1},
		{0, 3, 3, 0, 5, 1, 1, 1, 2},
		{1, 4, 3, 4, 0, 1, 4, 4, 2, 6, 3, 6, 0},
		{0, 5, 0},
		{0, 7, 3, 0, 3},
		{0, 7, 8, 0, 3},
	} {
		f.Add(seed)
	}
	skipKnown := os.Getenv("MUSTARD_FUZZ_SKIP_KNOWN") != ""
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &valueGen{data: data, skipKnown: skipKnown}
		prelude, expr, want, ok := g.program()
		checkBoundary(t, prelude, expr, want, ok)
	})
}

func checkBoundary(t *testing.T, prelude, expr string, want value.Value, ok bool) {
	t.Helper()
	clean := func(r guestRun) {
		t.Helper()
		if r.problem != "" {
			t.Fatalf("%s\nsource: %s%s", r.problem, prelude, expr)
		}
		if r.err != nil {
			if why := uncleanReason(r.err.Error()); why != "" {
				t.Fatalf("unclean error (%s): %q", why, r.err.Error())
			}
		}
	}

	// As the result.
	res := runGuest(guestCase{src: prelude + "(" + expr + ")", caps: []string{"probe"}})
	clean(res)
	if ok {
		if res.err != nil {
			t.Fatalf("result: want %s, got error %q\nsource: %s(%s)", fmtValue(want), res.err, prelude, expr)
		}
		if err := res.step.Value.Validate(); err != nil {
			t.Fatalf("result is not a valid structured value: %v", err)
		}
		if !value.Equal(want, res.step.Value) {
			t.Fatalf("result: want %s\n got %s\nsource: %s(%s)", fmtValue(want), fmtValue(res.step.Value), prelude, expr)
		}
	} else {
		var e *Error
		if res.err == nil || !errors.As(res.err, &e) || e.Kind != KindRuntime || !strings.HasPrefix(e.Message, "result ") {
			t.Fatalf("result: want the boundary's Runtime error, got %v (%s)\nsource: %s(%s)", res.err, fmtValue(res.step.Value), prelude, expr)
		}
	}

	// As a capability argument, echoed back by the host.
	arg := runGuest(guestCase{
		src:  prelude + "let out; try { out = cap(" + expr + ") } catch (e) { out = e instanceof TypeError ? 'TypeError: ' + e.message : 'other: ' + String(e) } out",
		caps: []string{"cap", "probe"},
		each: func(c string, args []value.Value) Payload {
			if c != "cap" {
				return cancelled
			}
			return gsEcho(c, args)
		},
	})
	clean(arg)
	if arg.err != nil {
		t.Fatalf("argument program failed: %q\nsource: %s%s", arg.err, prelude, expr)
	}
	if ok {
		if len(arg.calls) != 1 || arg.calls[0].capability != "cap" || len(arg.calls[0].args) != 1 || !value.Equal(want, arg.calls[0].args[0]) {
			t.Fatalf("argument: want one call cap(%s), got %s\nsource: %s%s", fmtValue(want), fmtCalls(arg.calls), prelude, expr)
		}
		if err := arg.calls[0].args[0].Validate(); err != nil {
			t.Fatalf("argument is not a valid structured value: %v", err)
		}
		if !value.Equal(want, arg.step.Value) {
			t.Fatalf("resume round trip: want %s\n got %s", fmtValue(want), fmtValue(arg.step.Value))
		}
	} else {
		if len(arg.calls) != 0 {
			t.Fatalf("argument: a refused value still suspended: %s\nsource: %s%s", fmtCalls(arg.calls), prelude, expr)
		}
		got := arg.step.Value
		if got.Kind != value.KindString || !strings.HasPrefix(got.Str, "TypeError: ") || !strings.Contains(got.Str, "structured host boundary") {
			t.Fatalf("argument: want a caught boundary TypeError, got %s\nsource: %s%s", fmtValue(got), prelude, expr)
		}
	}

	// As an input of a fresh program.
	if ok {
		in := runGuest(guestCase{src: "v", inputs: []value.Member{kv("v", want)}})
		clean(in)
		if in.err != nil || !value.Equal(want, in.step.Value) {
			t.Fatalf("input round trip: want %s, got %s (%v)", fmtValue(want), fmtValue(in.step.Value), in.err)
		}
	}
}

// valueGen turns fuzz bytes into a guest expression and its expected
// structured value. Missing bytes read as zero, so every input is a
// program.
type valueGen struct {
	data      []byte
	pos       int
	skipKnown bool
	shared    *genNode // the prelude's `s0`, if any
}

type genNode struct {
	js     string
	want   value.Value
	ok     bool
	depth  int // nesting of arrays and objects
	shared int // references to s0 in the value
}

func (g *valueGen) next() int {
	if g.pos >= len(g.data) {
		g.pos++
		return 0
	}
	b := g.data[g.pos]
	g.pos++
	return int(b)
}

// poisonDescriptors gives Object.prototype a getter named get, as a
// property descriptor has. A conversion reads own properties natively: it
// must give the same value as without it, and never run the getter.
const poisonDescriptors = "Object.defineProperty(Object.prototype, 'get', { get() { probe('descriptor') }, configurable: true });\n"

func (g *valueGen) program() (prelude, expr string, want value.Value, ok bool) {
	first := g.next()
	if first&2 != 0 && !g.skipKnown {
		prelude = poisonDescriptors
	}
	if first%2 == 1 {
		n := g.node(1)
		if n.depth == 0 {
			n = genNode{js: "[" + n.js + "]", want: jsA(n.want), ok: n.ok, depth: 1}
		}
		g.shared = &n
		prelude += "const s0 = " + n.js + ";\n"
	}
	n := g.node(0)
	ok = n.ok && n.depth <= value.MaxDepth && n.shared <= 1
	return prelude, n.js, n.want, ok
}

const maxGenDepth = 6

var (
	genNumbers = []struct {
		js string
		f  float64
	}{
		{"0", 0}, {"-0", math.Copysign(0, -1)}, {"1.5", 1.5}, {"NaN", math.NaN()}, {"Infinity", math.Inf(1)},
		{"-Infinity", math.Inf(-1)}, {"1e308", 1e308}, {"5e-324", 5e-324}, {"-42", -42}, {"2 ** 53", 1 << 53},
		{"0.1 + 0.2", 0.30000000000000004}, {"-1 / Infinity", math.Copysign(0, -1)},
	}
	genStrings = []struct{ js, s string }{
		{`''`, ""}, {`'a'`, "a"}, {`'\ud800'`, wtf8(0xD800)}, {`'\udc00'`, wtf8(0xDC00)}, {`'\ud83d\ude00'`, "😀"},
		{`'é'`, "é"}, {`'\0'`, "\x00"}, {`'__proto__'`, "__proto__"}, {`'line\nbreak'`, "line\nbreak"},
		{`'\u2028'`, "\u2028"}, {`'\ude00\ud83d'`, wtf8(0xDE00, 0xD83D)}, {`'x\ud800y'`, "x" + wtf8(0xD800) + "y"},
	}
	genKeys = []struct {
		js, key string
		known   bool // hits a reported defect
	}{
		{`'a'`, "a", false}, {`'b'`, "b", false}, {`'1'`, "1", false}, {`'01'`, "01", false},
		{`'__proto__'`, "__proto__", false}, {`''`, "", false}, {`'😀'`, "😀", false}, {`'-1'`, "-1", false},
		{`'4294967295'`, "4294967295", false}, {`'4294967294'`, "4294967294", false}, {`'0'`, "0", false},
		{`'\ud800'`, wtf8(0xD800), true}, {`'k\udc00'`, "k" + wtf8(0xDC00), true}, {`'constructor'`, "constructor", false},
	}
	genDeep = []int{1, 2, 50, 126, 127, 128}
)

type weird struct {
	js    string
	want  value.Value
	ok    bool
	known bool // hits a reported defect
}

var genWeird = []weird{
	{js: `({ get a() { probe('getter'); return 1 } })`, known: true},
	{js: `Object.defineProperty([1], 0, { get() { probe('index getter') }, enumerable: true })`, known: true},
	{js: `Symbol('s')`},
	{js: `10n`},
	{js: `new Map([[1, 2]])`},
	{js: `new Set()`},
	{js: `new Date(0)`},
	{js: `/x/g`},
	{js: `new Error('e')`},
	{js: `new String('s')`},
	{js: `Object(1)`},
	{js: `new Proxy({a: 1}, { ownKeys() { probe('trap'); return [] }, get() { probe('trap') }, getOwnPropertyDescriptor() { probe('trap') } })`},
	{js: `() => 1`},
	{js: `async () => 1`},
	// An array's other own properties stay behind, as in the reference.
	{js: `Object.assign([1], {x: 1})`, want: jsA(jsN(1)), ok: true},
	{js: `Object.assign([1, , 3], {x: 1})`, want: jsA(jsN(1), jsHole, jsN(3)), ok: true},
	{js: `(() => { const a = [1]; a[Symbol('s')] = 2; a.f = () => 3; Object.defineProperty(a, 'g', { get() { probe('non-index getter') }, enumerable: true }); return a })()`, want: jsA(jsN(1)), ok: true},
	{js: `'  MiXeD Example  '.match('Example')`, want: jsA(jsS("Example")), ok: true},
	{js: `({[Symbol('k')]: 1})`},
	{js: `new (class P { constructor() { this.a = 1 } })()`},
	{js: `Object.create({})`},
	{js: `[Promise.resolve(1)]`},
	{js: `new Uint8Array(2)`},
	{js: `(() => { const o = {k: 1}; o.self = o; return o })()`},
	{js: `(() => { const s = [1]; return [s, {s}] })()`},
	{js: `Object.create(null)`, want: jsO(), ok: true},
	{js: `Object.freeze([1])`, want: jsA(jsN(1)), ok: true},
	{js: `({__proto__: null, a: 1})`, want: jsO(kv("a", jsN(1))), ok: true},
	{js: `(() => { const a = [1]; a[3] = 2; return a })()`, want: jsA(jsN(1), jsHole, jsHole, jsN(2)), ok: true},
	{js: `new Array(2)`, want: jsA(jsHole, jsHole), ok: true},
	{js: `(() => { const a = [1, 2, 3]; delete a[0]; return a })()`, want: jsA(jsHole, jsN(2), jsN(3)), ok: true},
	{js: `JSON.parse('{"__proto__": [1]}')`, want: jsO(kv("__proto__", jsA(jsN(1)))), ok: true},
	{js: `({...{a: [1]}})`, want: jsO(kv("a", jsA(jsN(1)))), ok: true},
}

func (g *valueGen) node(depth int) genNode {
	b := g.next()
	if depth >= maxGenDepth {
		b %= 3
	}
	switch b % 8 {
	case 0:
		n := genNumbers[g.next()%len(genNumbers)]
		return genNode{js: n.js, want: jsN(n.f), ok: true}
	case 1:
		s := genStrings[g.next()%len(genStrings)]
		return genNode{js: s.js, want: jsS(s.s), ok: true}
	case 2:
		switch g.next() % 4 {
		case 0:
			return genNode{js: "true", want: jsT, ok: true}
		case 1:
			return genNode{js: "false", want: jsF, ok: true}
		case 2:
			return genNode{js: "null", want: jsNull, ok: true}
		default:
			return genNode{js: "undefined", want: jsU, ok: true}
		}
	case 3:
		return g.array(depth)
	case 4:
		return g.object(depth)
	case 5:
		w := genWeird[g.next()%len(genWeird)]
		if w.known && g.skipKnown {
			return genNode{js: "null", want: jsNull, ok: true}
		}
		d := 0
		if w.ok {
			d = nesting(w.want)
		}
		return genNode{js: w.js, want: w.want, ok: w.ok, depth: d}
	case 6:
		if g.shared == nil {
			return genNode{js: "-0", want: jsNegZ, ok: true}
		}
		return genNode{js: "s0", want: g.shared.want, ok: g.shared.ok, depth: g.shared.depth, shared: 1}
	default:
		k := g.next()
		if k%8 == 0 {
			return genNode{js: `(() => { const o = {k: [1]}; o.k.push(o); return o })()`}
		}
		times := genDeep[k%len(genDeep)]
		inner := g.node(depth + 1)
		want := inner.want
		for i := 0; i < times; i++ {
			want = jsA(want)
		}
		js := "(() => { let v = " + inner.js + "; for (let i = 0; i < " + strconv.Itoa(times) + "; i++) v = [v]; return v })()"
		return genNode{js: js, want: want, ok: inner.ok, depth: inner.depth + times, shared: inner.shared}
	}
}

func (g *valueGen) array(depth int) genNode {
	n := g.next() % 5
	var sb strings.Builder
	sb.WriteString("[")
	elems := make([]value.Value, 0, n)
	ok, d, shared := true, 0, 0
	for i := 0; i < n; i++ {
		if g.next()%4 == 0 {
			sb.WriteString(",")
			elems = append(elems, jsHole)
			continue
		}
		e := g.node(depth + 1)
		sb.WriteString(e.js)
		sb.WriteString(",")
		elems = append(elems, e.want)
		ok = ok && e.ok
		d = max(d, e.depth)
		shared += e.shared
	}
	sb.WriteString("]")
	return genNode{js: sb.String(), want: jsA(elems...), ok: ok, depth: d + 1, shared: shared}
}

func (g *valueGen) object(depth int) genNode {
	n := g.next() % 5
	var sb strings.Builder
	sb.WriteString("({")
	// A repeated key keeps its first position and its last value.
	var keys []string
	vals := map[string]genNode{}
	for i := 0; i < n; i++ {
		k := genKeys[g.next()%len(genKeys)]
		if k.known && g.skipKnown {
			k = genKeys[0]
		}
		e := g.node(depth + 1)
		sb.WriteString("[" + k.js + "]: " + e.js + ", ")
		if _, dup := vals[k.key]; !dup {
			keys = append(keys, k.key)
		}
		vals[k.key] = e
	}
	sb.WriteString("})")
	// Own property order: array indices ascending, then the other string
	// keys in insertion order.
	sort.SliceStable(keys, func(i, j int) bool {
		ai, aok := arrayIndex(keys[i])
		bi, bok := arrayIndex(keys[j])
		if aok && bok {
			return ai < bi
		}
		return aok && !bok
	})
	members := make([]value.Member, len(keys))
	ok, d, shared := true, 0, 0
	for i, k := range keys {
		e := vals[k]
		members[i] = kv(k, e.want)
		ok = ok && e.ok
		d = max(d, e.depth)
		shared += e.shared
	}
	return genNode{js: sb.String(), want: jsO(members...), ok: ok, depth: d + 1, shared: shared}
}

// arrayIndex reports whether k is a canonical array index (0 .. 2^32-2).
func arrayIndex(k string) (uint64, bool) {
	n, err := strconv.ParseUint(k, 10, 64)
	if err != nil || n > math.MaxUint32-1 || strconv.FormatUint(n, 10) != k {
		return 0, false
	}
	return n, true
}

// nesting is the number of nested arrays and objects in v.
func nesting(v value.Value) int {
	d := 0
	switch v.Kind {
	case value.KindArray:
		for _, e := range v.Elems {
			d = max(d, nesting(e))
		}
		return d + 1
	case value.KindObject:
		for _, m := range v.Members {
			d = max(d, nesting(m.Value))
		}
		return d + 1
	}
	return 0
}

// TestBoundaryGeneratorModel checks the generator's expectations on a few
// hand-picked inputs, independent of the engine.
func TestBoundaryGeneratorModel(t *testing.T) {
	cases := []struct {
		data []byte
		js   string
		ok   bool
	}{
		{[]byte{0, 0, 1}, "-0", true},
		{[]byte{0, 3, 2, 1, 0, 1}, "[-0,,]", true},
		{[]byte{0, 5, 2}, "Symbol('s')", false},
		{[]byte{1, 3, 1, 1, 0, 0, 6}, "s0", true},
		{[]byte{1, 3, 1, 1, 0, 0, 3, 2, 1, 6, 1, 6}, "[s0,s0,]", false},
	}
	for _, c := range cases {
		g := &valueGen{data: c.data}
		_, js, _, ok := g.program()
		if js != c.js || ok != c.ok {
			t.Errorf("%v: got %s (ok=%v), want %s (ok=%v)", c.data, js, ok, c.js, c.ok)
		}
	}
	g := &valueGen{data: []byte{0, 4, 3, 1, 4, 4, 0, 9, 4, 0, 2, 3, 0, 1, 0}}
	_, js, want, _ := g.program()
	t.Logf("%s => %s", js, fmtValue(want))
}
