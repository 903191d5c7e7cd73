package engine

import (
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// BigInt operations are charged by operand size before they run and
// bounded as V8 bounds them, under default limits.
func TestBigIntUnderDefaultLimits(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`BigInt.asIntN(2**31, 5n) === 5n`, "true"},
		{`String(5n >> 2n**64n) + ' ' + String(-5n >> 2n**64n)`, "0 -1"},
		{`String(1n << (2n**64n + 5n))`, "Runtime: RangeError: Maximum BigInt size exceeded"},
		{`1n << (2n**31n)`, "Runtime: RangeError: Maximum BigInt size exceeded"},
		{`BigInt('1'.repeat(2e6)) > 0n`, "Limit: instruction budget exhausted"},
		{`3n ** BigInt(1e8)`, "Limit: "},
		{`let x = 1n << 2000000n; for (let i = 0; i < 100; i++) x * x; 1`, "Limit: instruction budget exhausted"},
		{`function f() { return 7n ** 7n ** 9n } 1`, "1"},
		{`if (false) { 1n << (2n ** 31n) } 1`, "1"},
		{`String(2n ** 64n * 3n + 1n)`, "55340232221128654849"},
	} {
		t.Run(c.src, func(t *testing.T) {
			began := time.Now()
			step := runLimits(t, c.src, policy.DefaultLimits())
			if step.Err != nil {
				assert.True(t, strings.HasPrefix(step.Err.Error(), c.want), "%s: %v", c.src, step.Err)
			} else {
				require.True(t, step.Done)
				got := step.Value
				switch got.Kind {
				case value.KindString:
					assert.Equal(t, c.want, got.Str)
				case value.KindBool:
					assert.Equal(t, c.want == "true", got.Bool)
				case value.KindNumber:
					assert.Equal(t, c.want, strconv.FormatFloat(got.Num, 'g', -1, 64))
				default:
					t.Fatalf("unexpected result %v", got)
				}
			}
			if !raceEnabled {
				assert.Less(t, time.Since(began), 10*time.Second)
			}
		})
	}
}

// A lone surrogate survives string methods that change nothing around it.
func TestLoneSurrogatesSurviveNoOpMethods(t *testing.T) {
	step := runLimits(t, `const s = 'a\ud800b'; [s.normalize(), s.toUpperCase().toLowerCase(), (' ' + s + ' ').trim()].map(x => JSON.stringify(x)).join(' ')`, policy.DefaultLimits())
	require.NoError(t, step.Err)
	assert.Equal(t, `"a\ud800b" "a\ud800b" "a\ud800b"`, step.Value.Str)
}

// Sorting 100,000 numbers or short strings without a comparator fits the
// default budget; a loop body or a switch of tens of thousands of
// statements is charged for what it executes, not once per iteration.
func TestLargeSortsFitLongBodiesStop(t *testing.T) {
	// The default run sorts a fifth as many under a fifth of the budget
	// (fewer comparisons an element: it fits with more room).
	n := longtest.Pick(20000, 100000)
	var nums, strs []value.Value
	var keys []string
	for i := 0; i < n; i++ {
		nums = append(nums, value.Number(float64((i*7919)%100003)))
		strs = append(strs, value.String("k"+strconv.Itoa((i*7919)%100003)))
		keys = append(keys, strconv.Itoa((i*7919)%100003))
	}
	sort.Strings(keys) // string order, as sort() without a comparator
	first, _ := strconv.Atoi(keys[0])
	last, _ := strconv.Atoi(keys[n-1])
	last1 := strconv.Itoa(n - 1)
	inputs := snapshot.SortedInputs(value.Object(value.M("nums", value.Array(nums...)), value.M("strs", value.Array(strs...))).Members)
	limits := budgetLimits()
	limits.HeapLimitBytes = 64 << 20
	body := "let x = 0; for (let i = 0; i < 1000; i++) { " + strings.Repeat("x++;", 50000) + " } x"
	var sw strings.Builder
	sw.WriteString("let x = 0; for (let v = 39990; v < 100000; v++) switch (v) {")
	for i := 0; i < 40000; i++ {
		sw.WriteString("case " + strconv.Itoa(i) + ": x++; break;")
	}
	sw.WriteString("} x")
	for i, c := range []struct{ src, want string }{
		{"nums.sort(); nums[0] + nums[" + last1 + "]", strconv.Itoa(first + last)}, // string order: 0 first, 99999 last of 100,000
		{"strs.sort(); strs[0] + strs[" + last1 + "]", "k" + keys[0] + "k" + keys[n-1]},
		{body, "Limit: instruction budget exhausted"},
		{sw.String(), "Limit: instruction budget exhausted"},
		{"let n = 0; for (let i = 0; i < 3; i++) n += (i); n", "3"},
	} {
		if !longtest.Sampled(i) {
			continue
		}
		t.Run(c.src[:min(len(c.src), 40)], func(t *testing.T) {
			p, err := Compile(c.src)
			require.NoError(t, err)
			h := snapshot.Header{Program: p.Bytes, Seed: 1, ClockMillis: 1, Inputs: inputs}
			began := time.Now()
			_, step := testRuntime.Start(Config{Program: p, Header: h, Limits: limits})
			if step.Err != nil {
				assert.Equal(t, c.want, step.Err.Error())
			} else {
				got := step.Value.Str
				if step.Value.Kind == value.KindNumber {
					got = strconv.FormatFloat(step.Value.Num, 'g', -1, 64)
				}
				assert.Equal(t, c.want, got)
			}
			if !raceEnabled {
				assert.Less(t, time.Since(began), 10*time.Second)
			}
		})
	}
}

// Flat chains that programs write parse and run; the nesting bound is on
// what the parser and compiler recurse through, where a chain link counts
// a twentieth of a level.
func TestFlatChainsParse(t *testing.T) {
	sum := "0" + strings.Repeat(" + 1", 2000)
	or := "false" + strings.Repeat(" || false", 1499) + " || 7"
	calls := "const o = { f() { return o } }; o" + strings.Repeat(".f()", 3000) + " === o"
	for src, want := range map[string]string{sum: "2000", or: "7", calls: "true"} {
		step := runLimits(t, src, policy.DefaultLimits())
		require.NoError(t, step.Err, src[:40])
		got := strconv.FormatFloat(step.Value.Num, 'g', -1, 64)
		if step.Value.Kind == value.KindBool {
			got = strconv.FormatBool(step.Value.Bool)
		}
		assert.Equal(t, want, got)
	}
	for _, src := range []string{
		"0" + strings.Repeat("+1", 20001),
		strings.Repeat("(", 1001) + "1" + strings.Repeat(")", 1001),
		strings.Repeat("[", 501) + strings.Repeat("1+", 10000) + "1" + strings.Repeat("]", 501),
	} {
		_, err := Compile(src)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "Parse: source nesting exceeds 1000 levels")
	}
}

// Sorting a sparse array takes memory for the elements present, not for
// its length (Node: 1000001).
func TestSparseSortFitsTheHeap(t *testing.T) {
	step := runLimits(t, `const a = []; a[1e6] = 1; a[5] = 2; a.sort(); [a.length, a[0], a[1], 2 in a].join()`, policy.DefaultLimits())
	require.NoError(t, step.Err)
	assert.Equal(t, "1000001,1,2,false", step.Value.Str)
}

// A lookup at the end of a long prototype chain, or through nested
// proxies, is charged for every link it walks: the reads end with the
// instruction limit instead of running for many seconds.
func TestLongChainsAreCharged(t *testing.T) {
	// The default run: chains a fifth as long under a fifth of the budget.
	chain, proxies := longtest.Pick("6000", "30000"), longtest.Pick("2000", "10000")
	for _, src := range []string{
		"let o = {}; for (let i = 0; i < " + chain + "; i++) o = Object.create(o); let n = 0; for (let i = 0; i < 100000; i++) if (o.zz) n++; n",
		"let o = {}; for (let i = 0; i < " + chain + "; i++) o = Object.create(o); let n = 0; for (let i = 0; i < 100000; i++) if ('zz' in o) n++; n",
		"let p = {}; for (let i = 0; i < " + proxies + "; i++) p = new Proxy(p, {}); let n = 0; for (let i = 0; i < 100000; i++) if (p.zz) n++; n",
	} {
		began := time.Now()
		step := runLimits(t, src, budgetLimits())
		require.Error(t, step.Err)
		assert.Equal(t, "Limit: instruction budget exhausted", step.Err.Error())
		if !raceEnabled {
			assert.Less(t, time.Since(began), 10*time.Second)
		}
	}
}

// Comparing and hashing long strings is charged by their length.
func TestLongStringWorkIsCharged(t *testing.T) {
	// The default run: strings a fifth as long under a fifth of the budget.
	long := longtest.Pick("6e5", "3e6")
	for _, src := range []string{
		"const a = 'x'.repeat(" + long + ") + 'a', b = 'x'.repeat(" + long + ") + 'b'; let n = 0; for (let i = 0; i < 100000; i++) if (a === b) n++; n",
		"const a = 'x'.repeat(" + long + ") + 'a', b = 'x'.repeat(" + long + ") + 'b'; let n = 0; for (let i = 0; i < 100000; i++) if (a < b) n++; n",
		"const a = 'x'.repeat(" + long + ") + 'a', b = 'x'.repeat(" + long + ") + 'b'; let n = 0; for (let i = 0; i < 100000; i++) switch (a) { case b: n++ } n",
		"const k = 'x'.repeat(" + long + "), m = new Map([[k, 1]]); let n = 0; for (let i = 0; i < 100000; i++) n += m.get(k); n",
	} {
		limits := budgetLimits()
		limits.HeapLimitBytes = 64 << 20
		began := time.Now()
		step := runLimits(t, src, limits)
		require.Error(t, step.Err, src)
		assert.Equal(t, "Limit: instruction budget exhausted", step.Err.Error())
		if !raceEnabled {
			assert.Less(t, time.Since(began), 10*time.Second)
		}
	}
}

// A generic reverse over a huge sparse length pays for every index it
// visits (each a has through the prototype chain), and ends with the limit
// at once.
func TestHugeSparseReverseEndsQuickly(t *testing.T) {
	began := time.Now()
	step := runLimits(t, "const a = [1, 2]; a.length = 4e9; a.reverse(); a.length", budgetLimits())
	require.Error(t, step.Err)
	assert.Equal(t, "Limit: instruction budget exhausted", step.Err.Error())
	if !raceEnabled {
		assert.Less(t, time.Since(began), 10*time.Second)
	}
	t.Logf("ended after %v", time.Since(began))
}

// The last steps whose work grew with an operand without a charge: under
// default limits a loop repeating one ends with the instruction limit,
// within the hang bound (each ran for minutes before).
func TestOperandWorkUnderDefaultLimits(t *testing.T) {
	const chain = `let o = {}; for (let i = 0; i < 30000; i++) o = Object.create(o); `
	for i, src := range []string{
		`const s = '1'.repeat(4e6); let n = 0; for (;;) n += +s`,
		`const s = '1'.repeat(4e6); let n = 0; for (;;) n += Number(s)`,
		`const s = '1'.repeat(4e6); let n = 0; for (;;) n += s * 1`,
		`const s = '1'.repeat(4e6); let n = 0; for (;;) n += parseFloat(s)`,
		`const s = '1'.repeat(4e6); let n = 0; for (;;) n += parseInt(s)`,
		`let n = 0; for (let k = 1; ; k++) n += (5e-324 * k).toString(2).length`,
		`let n = 0; for (let k = 1; ; k++) n += (k / 3).toPrecision(100).length`,
		`const x = 7n ** 300000n; let n = 0; for (;;) n += ('' + x).length`,
		"const x = 7n ** 300000n; let n = 0; for (;;) n += `${x}`.length",
		`const x = 7n ** 300000n; let n = 0; for (;;) n += String(x).length`,
		`const x = 7n ** 300000n, o = {}; for (;;) o[x] = 1`,
		`const x = 7n ** 300000n, s = String(x); let n = 0; for (;;) if (x == s) n++`,
		`const x = 7n ** 300000n; let n = 0; for (;;) if (x % 7n) n++`,
		`function f() { ` + strings.Repeat("f; ", 100000) + ` } let n = 0; for (;;) n += String(f).length`,
		chain + `const p = {}; let n = 0; for (;;) if (p.isPrototypeOf(o)) n++`,
		chain + `const x = {}; for (;;) { Object.setPrototypeOf(x, o); Object.setPrototypeOf(x, null) }`,
	} {
		if !longtest.Sampled(i) {
			continue
		}
		t.Run(src[:min(len(src), 60)], func(t *testing.T) {
			began := time.Now()
			step := runLimits(t, src, budgetLimits())
			require.Error(t, step.Err)
			assert.Equal(t, "Limit: instruction budget exhausted", step.Err.Error())
			if !raceEnabled {
				assert.Less(t, time.Since(began), 10*time.Second)
			}
			t.Logf("ended after %v", time.Since(began))
		})
	}
}

// Ordinary uses of the steps charged above give V8's values (node -e,
// Node 20, the same expressions).
func TestOperandWorkKeepsValues(t *testing.T) {
	for src, want := range map[string]string{
		`+("1".repeat(400)) === 1.1111111111111111e399`:       "true",
		`Number("9".repeat(300) + ".5")`:                      "1e+300",
		`("1".repeat(300)) * 1`:                               "1.1111111111111112e+299",
		`parseFloat("3.14abc")`:                               "3.14",
		`parseFloat(".5e-3x")`:                                "0.0005",
		`parseFloat("-Infinityx")`:                            "-Infinity",
		`parseFloat("e5")`:                                    "NaN",
		`parseFloat("1e")`:                                    "1",
		`(5e-324).toString(2).length`:                         "1076",
		`(0.1).toString(3)`:                                   "0.0022002200220022002200220022002201",
		`(255.5).toString(16)`:                                "ff.8",
		`(1/3).toFixed(30)`:                                   "0.333333333333333314829616256247",
		`(2/3).toPrecision(40)`:                               "0.6666666666666666296592325124947819858789",
		`(1e-7).toExponential(25)`:                            "9.9999999999999995474811183e-8",
		`String(function f(a, b) { return a + b }).length`:    "33",
		`Array.prototype.isPrototypeOf([])`:                   "true",
		`Object.prototype.isPrototypeOf(Object.create(null))`: "false",
		`(() => { const a = {}, b = Object.create(a); try { Object.setPrototypeOf(a, b) } catch (e) { return e.name } })()`: "TypeError",
		`String(2n ** 100n)`:                           "1267650600228229401496703205376",
		`("" + 7n ** 500n).length`:                     "423",
		"`${-(3n ** 1000n)}`.slice(0, 12)":             "-13220708194",
		`10n ** 400n == "1" + "0".repeat(400)`:         "true",
		`10n ** 400n < "1" + "0".repeat(401)`:          "true",
		`({[2n ** 70n]: 1})["1180591620717411303424"]`: "1",
		`[3n ** 700n, 1n].sort()[1] === 3n ** 700n`:    "true",
		`(3n ** 700n) % 1000n`:                         "1",
		`-(3n ** 700n) % 1000n`:                        "-1",
		`~(2n ** 1100n) + 1n === -(2n ** 1100n)`:       "true",
	} {
		step := runLimits(t, "String("+src+")", policy.DefaultLimits())
		require.NoError(t, step.Err, src)
		assert.Equal(t, want, step.Value.Str, src)
	}
}

// Backtracking regular expressions (a backreference or a lookaround keeps
// them off the linear engine) are charged by the steps regexp2 takes, not
// by the characters they scan: a loop of searches that each take tens of
// milliseconds, charged about 20 instructions each by their span, ran for
// hours under the default budget; it now ends with the budget within a
// few searches. The charge is the same on every run.
func TestBacktrackingRegexpLoopsUnderDefaultLimits(t *testing.T) {
	for i, src := range []string{
		`let n = 0; for (;;) if (/^(a+)+(?=b)/.test('a'.repeat(19) + '!')) n++`,
		`let n = 0; for (;;) if (/(x+x+)+y\1/.test('x'.repeat(26))) n++`,
		`let n = 0; for (;;) n += 'a'.repeat(18).replace(/(?=(a*)*b)/g, '').length`,
		`let n = 0; for (;;) if (/(?<=(a|aa)+)b|^(a|aa)+$(?!x)/u.test('a'.repeat(30) + '!')) n++`,
	} {
		if !longtest.Sampled(i) {
			continue
		}
		t.Run(src[:min(len(src), 60)], func(t *testing.T) {
			began := time.Now()
			step := runLimits(t, src, budgetLimits())
			require.Error(t, step.Err)
			assert.Equal(t, "Limit: instruction budget exhausted", step.Err.Error())
			if !raceEnabled {
				assert.Less(t, time.Since(began), 10*time.Second)
			}
			t.Logf("ended after %v", time.Since(began))
		})
	}

	// A search that completes is charged the same twice, and far more than
	// its span.
	const src = `let n = 0; for (let i = 0; i < 3; i++) if (/^(a+)+(?=b)/.test('a'.repeat(14) + '!')) n++; n`
	first := runLimits(t, src, policy.DefaultLimits())
	require.NoError(t, first.Err)
	again := runLimits(t, src, policy.DefaultLimits())
	require.NoError(t, again.Err)
	assert.Equal(t, first.Meter.Instructions, again.Meter.Instructions)
	assert.Greater(t, first.Meter.Instructions, uint64(3*(1<<14)/16), "2^14 ways to split the a's, each tried, 3 times")
	t.Logf("%d instructions", first.Meter.Instructions)
}
