package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Programs near the default limits, hostile and ordinary: one program per
// class and per variant named, each in a fresh sidecar at default limits.
// A case wants a Limit error (any of want) or, for an ordinary program, the
// value Node gives (value, as the step's JSON). Either way the request is
// answered before the hang bound, the process's peak RSS stays under
// 256 MiB, and it then serves a normal program. (Other attacks on the work
// one step does are in hostileClasses, e2e_hostile_test.go.)
type valueOrLimitCase struct {
	name, src string
	want      []string // Limit errors, one of which is expected
	value     string   // or the completion, as JSON
}

func nodeNumber(s string) string { return `{"Number":{"Finite":` + s + `}}` }
func nodeString(s string) string { return `{"String":"` + s + `"}` }

var valueOrLimitClasses = map[string][]valueOrLimitCase{
	// Class 1, the variants not in hostileClasses.
	"work per step": {
		{name: "< on two long strings", src: "const a = 'x'.repeat(3e6) + 'a', b = 'x'.repeat(3e6) + 'b'; let n = 0; for (let i = 0; i < 100000; i++) if (a < b) n++; n", want: []string{limInstructions, limHeap}},
		{name: "switch on a long string", src: "const a = 'x'.repeat(3e6) + 'a', b = 'x'.repeat(3e6) + 'b'; let n = 0; for (let i = 0; i < 100000; i++) switch (a) { case b: n--; break; default: n++ } n", want: []string{limInstructions, limHeap}},
		{name: "indexOf of a long string in another", src: "const a = 'x'.repeat(3e6), b = 'x'.repeat(1e6) + 'y'; let n = 0; for (let i = 0; i < 100000; i++) n += a.indexOf(b); n", want: []string{limInstructions, limHeap}},
		{name: "Set.add with a long key", src: "const k = 'x'.repeat(3e6), s = new Set(); for (let i = 0; i < 100000; i++) s.add(k); s.size", want: []string{limInstructions, limHeap}},
		{name: "a 40,000-case switch", src: "let x = 0; for (let i = 0; i < 1e6; i++) switch (i % 40000 + 40000) { " + manyCases(40000) + " } x", want: []string{limInstructions}},
		{name: "catastrophic regex on 18 a's, 3,000 times", src: "let n = 0; for (let i = 0; i < 3000; i++) if (/^(a+)+$/.test('a'.repeat(18) + '!')) n++; n", want: []string{limInstructions}, value: nodeNumber("0.0")},
		{name: "a counted class over 600,000 characters", src: "/[ab]{1,1000}c/.test('ab'.repeat(3e5))", want: []string{limInstructions}, value: `{"Bool":false}`},
		{name: "900 optional a's under a plus", src: "new RegExp('(?:x|' + 'a?'.repeat(900) + ')+b').test('a'.repeat(2e5))", want: []string{limInstructions}, value: `{"Bool":false}`},
		// Walks and copies that one step did.
		{name: "for-in over a 30,000-link chain", src: deepChain + "let n = 0; for (let j = 0; j < 100000; j++) { for (const k in o) n++ } n", want: []string{limInstructions}},
		{name: "new properties on a 30,000-link chain", src: deepChain + "for (let j = 0; j < 100000; j++) o['k' + j] = 1; 1", want: []string{limInstructions, limHeap}},
		{name: "includes of a long string", src: longStrings + "let n = 0; for (let i = 0; i < 100000; i++) if ([a].includes(b)) n++; n", want: []string{limInstructions}},
		{name: "Object.is of long strings", src: longStrings + "let n = 0; for (let i = 0; i < 100000; i++) if (Object.is(a, b)) n++; n", want: []string{limInstructions}},
		{name: "concatenating a long string", src: "const s = 'x'.repeat(1e6); let n = 0; for (let i = 0; i < 1e6; i++) n += (s + 'y').length; n", want: []string{limInstructions}},
		{name: "slicing long non-ASCII text", src: "const s = 'é'.repeat(1e6); let n = 0; for (let i = 0; i < 1e6; i++) n += s.slice(1).length; n", want: []string{limInstructions}},
		{name: "errors naming a long key", src: "const s = 'x'.repeat(1e6); let n = 0; for (let i = 0; i < 1e6; i++) { try { null[s] } catch (e) { n += e.message.length } } n", want: []string{limInstructions}},
		{name: "a symbol's long text", src: "const s = 'x'.repeat(1e6); let n = 0; for (let i = 0; i < 1e6; i++) n += Symbol(s).toString().length; n", want: []string{limInstructions}},
		{name: "indexOf through a string's indexes", src: "const s = 'x'.repeat(1e6); let n = 0; for (let i = 0; i < 1e6; i++) n += Array.prototype.indexOf.call(s, 'y'); n", want: []string{limInstructions}},
		// A backreference or a lookahead keeps a pattern on the backtracking
		// engine: each search takes tens of milliseconds, charged by its steps.
		{name: "backtracking regex with a backreference, in a loop", src: "let n = 0; for (;;) if (/(x+x+)+y\\1/.test('x'.repeat(26))) n++", want: []string{limInstructions}},
		{name: "backtracking regex with a lookahead, in a loop", src: "let n = 0; for (;;) if (/^(a+)+(?=b)/.test('a'.repeat(19) + '!')) n++", want: []string{limInstructions}},
	},
	// Class 2: BigInt.
	"BigInt": {
		{name: "asIntN of 2**31 bits", src: "BigInt.asIntN(2**31, 5n) === 5n", value: `{"Bool":true}`},
		{name: "asUintN of 2**31 bits", src: "BigInt.asUintN(2**31, 5n) === 5n", value: `{"Bool":true}`},
		{name: "a shift by 2**31", src: "1n << (2n ** 31n)", want: []string{"Runtime: RangeError: Maximum BigInt size exceeded\n  at <script> (1:1)"}},
		{name: "a shift by more than 2**64", src: "String(1n << (2n ** 64n + 5n))", want: []string{"Runtime: RangeError: Maximum BigInt size exceeded\n  at <script> (1:8)"}},
		{name: "a right shift by 2**64", src: "String(5n >> 2n ** 64n)", value: nodeString("0")},
		{name: "parsing 2 million digits", src: "BigInt('1'.repeat(2e6)) > 0n", want: []string{limInstructions}},
		{name: "3n ** 100 million", src: "3n ** BigInt(1e8)", want: []string{limInstructions, limHeap}},
		{name: "2-million-bit products", src: "let x = 1n << 2000000n; let y = 0n; for (let i = 0; i < 1000; i++) y = x * x; 1", want: []string{limInstructions}},
	},
	// Class 3: nothing is folded at compile time, so these compile at once
	// and give Node's values.
	"BigInt constants": {
		{name: "a power in a function never called", src: "function f() { return 7n ** 7n ** 9n } 1", value: nodeNumber("1.0")},
		{name: "a shift in dead code", src: "if (false) { 1n << (2n ** 31n) } 1", value: nodeNumber("1.0")},
		{name: "a power in dead code", src: "if (false) { 3n ** 100000000n } 2", value: nodeNumber("2.0")},
	},
	// Class 6: ordinary programs.
	"ordinary": {
		{name: "braceless loop body in parentheses", src: "let n = 0; for (let i = 0; i < 3; i++) n += (i); n", value: nodeNumber("3.0")},
		{name: "braceless if in a loop", src: "const items = [{price: 2, qty: 3}, {price: 5, qty: 1}]; let total = 0; for (const it of items) if (it.qty) total += (it.price * it.qty); total", value: nodeNumber("11.0")},
		{name: "return in parentheses in a loop", src: "function f(x) { for (;;) return (x) } f(4)", value: nodeNumber("4.0")},
		{name: "a sum of 2,000 terms", src: joinRange(2000, "+"), value: nodeNumber("1999000.0")},
		{name: "a 1,500-term || chain", src: strings.Repeat("0||", 1500) + "7", value: nodeNumber("7.0")},
		{name: "sorting a sparse array", src: "const a = []; a[1e6] = 1; a[5] = 2; a.sort(); a.length", value: nodeNumber("1000001.0")},
		// Built by built-ins, so that the budget goes to the sort.
		{name: "sorting 100,000 numbers", src: "const a = JSON.parse('[' + '5,3,9,1,13,'.repeat(20000) + '0]'); a.sort(); a[0] + ',' + a[50000] + ',' + a[100000]", value: nodeString("0,3,9")},
		{name: "JSON.parse of a number past float64's range", src: "String(JSON.parse('1e400')) + String(JSON.parse('-' + '1'.repeat(400)))", value: nodeString("Infinity-Infinity")},
		{name: "sorting 100,000 short strings", src: "const a = ('kq,ka,kz,kb,km,'.repeat(20000) + 'k').split(','); a.sort(); a[0] + ',' + a[50000] + ',' + a[100000]", value: nodeString("k,km,kz")},
	},
	// Class 7: lone surrogates survive methods that change nothing.
	"lone surrogates": {
		{name: "normalize", src: `JSON.stringify('a\ud800b'.normalize())`, value: nodeString(`\"a\\ud800b\"`)},
		{name: "toUpperCase", src: `JSON.stringify('a\ud800b'.toUpperCase())`, value: nodeString(`\"A\\ud800B\"`)},
		{name: "trim", src: `JSON.stringify(' \udc00 '.trim())`, value: nodeString(`\"\\udc00\"`)},
	},
}

// deepChain makes o an object with 30,000 prototypes; longStrings a and b
// two distinct 2 MB strings that differ at the end. Making b holds a, the
// repeat and b itself: 6 MB, well under the default 8 MiB heap limit. At
// 3 MB each that was 9 MB, and whether a look fell while all three were
// live decided which limit failed the program.
const (
	deepChain   = "let o = {}; for (let i = 0; i < 30000; i++) o = Object.create(o); "
	longStrings = "const a = 'x'.repeat(2e6) + 'a', b = 'x'.repeat(2e6) + 'b'; "
)

func manyCases(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString("case ")
		b.WriteString(itoa(n + i))
		b.WriteString(": x++; break; ")
	}
	return b.String()
}

func joinRange(n int, sep string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = itoa(i)
	}
	return strings.Join(parts, sep)
}

func TestE2EValueOrLimitClasses(t *testing.T) {
	if limRace {
		t.Skip("slow under the race detector, and its bounds are the plain binary's: .ci/run runs it without -race")
	}
	for class, cases := range valueOrLimitClasses {
		for _, c := range cases {
			t.Run(class+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				h := newHost(t, transports[0])
				resp, d := h.limStart(c.src, nil, nil)
				hwm := vmHWM(t, h.sc.Pid())
				t.Logf("%s in %v, VmHWM %.1f MiB", limTrunc(resp.Raw), d.Round(time.Millisecond), float64(hwm)/(1<<20))
				if resp.OK() && c.value != "" {
					assert.Equal(t, c.value, stepOf(t, resp).Value)
				} else {
					require.NotEmpty(t, c.want, "failed where Node gives %s: %s", c.value, limTrunc(resp.Raw))
					limFailsOneOf(t, resp, c.want...)
				}
				if !limRace {
					assert.Less(t, hwm, limRSS, "peak RSS")
				}
				limInTime(t, d)
				h.limServesNormal()
			})
		}
	}
}

// Class 8: resuming with any limit lowered ends the same way hot (the
// parked execution, by snapshot id) and cold (the snapshot's bytes in a
// fresh process). The example that showed the difference: 3,000 numbers
// kept, resumed under a 20,000-byte heap limit, which both refuse.
func TestE2ELoweredLimitsHotEqualsCold(t *testing.T) {
	if limRace {
		t.Skip("slow under the race detector, and its bounds are the plain binary's: .ci/run runs it without -race")
	}
	const src = "const keep = []; for (let i = 0; i < 3000; i++) keep.push(i * 1.5); tick(1); function d(n) { return n ? d(n - 1) + 1 : 0 } const a = []; for (let i = 0; i < 100; i++) a.push({i}); keep.length + d(10) + a.length"
	probe := newHost(t, transports[0])
	resp, _ := probe.limStart(src, limTickCaps, nil)
	used := limInstructionCount(t, resp)
	variants := []map[string]any{
		{"heap_limit_bytes": 20000},
		{"heap_limit_bytes": 4 << 20},
		{"instruction_budget": used - 1},
		{"instruction_budget": used + 100},
		{"instruction_budget": used + 100000},
		{"allocation_budget": 50},
		{"allocation_budget": 100000},
		{"call_depth_limit": 3},
		{"call_depth_limit": 30},
		{"max_outstanding_host_calls": 0},
	}
	for _, lim := range variants {
		hot := newHost(t, transports[0])
		resp, _ := hot.limStart(src, limTickCaps, nil)
		st := stepOf(t, resp)
		hotResp := hot.limResumeWith(st.SnapshotID, lim, valuePayload(num(1)))
		cold := newHost(t, transports[0])
		coldResp := cold.limResumeRaw(st.Snapshot, lim, valuePayload(num(1)))
		require.Equal(t, hotResp.OK(), coldResp.OK(), "%v: hot %s, cold %s", lim, limTrunc(hotResp.Raw), limTrunc(coldResp.Raw))
		if hotResp.OK() {
			assert.Equal(t, stepOf(t, hotResp).Value, stepOf(t, coldResp).Value, "%v", lim)
			assert.Equal(t, limInstructionCount(t, hotResp), limInstructionCount(t, coldResp), "%v", lim)
		} else {
			assert.Equal(t, hotResp.Error(), coldResp.Error(), "%v", lim)
		}
		t.Logf("%v: %s", lim, limTrunc(hotResp.Raw))
		if lim["heap_limit_bytes"] == 20000 {
			limFails(t, hotResp, limHeap)
		}
	}
}
