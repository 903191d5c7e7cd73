package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/policy"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// The limits of docs/limits.md, checked on the real binary. These tests are
// not parallel: they time requests and read peak RSS, so they run before the
// parallel tests of the package start.

const (
	limInstructions = "Limit: instruction budget exhausted"
	limHeap         = "Limit: heap limit exceeded"
	limAllocations  = "Limit: allocation budget exhausted"
	limDepth        = "Limit: call depth limit exceeded"
	limHostCalls    = "Limit: outstanding host-call limit exhausted"

	// limDeadline catches a hostile program that is not stopped: 10x the
	// documented 2 s a quiet machine needs (observed: under 0.5 s). The
	// measured times are logged; bench/ and docs/limits.md report them.
	limDeadline = 20 * time.Second
	// limRSS is the documented bound on the sidecar's peak RSS while a
	// memory bomb runs at default limits.
	limRSS = int64(256 << 20)
)

// limRace: a race-instrumented binary is several times slower and larger,
// so wall-clock and RSS bounds hold only without it.
var limRace = hosttest.RaceEnabled

// limNormal is the program every session must still complete after a
// failure.
const (
	limNormal     = "let s = 0; for (let i = 0; i < 1000; i++) s += i; s"
	limNormalWant = `{"Number":{"Finite":499500.0}}`
)

// limStart compiles src and starts it under limits (nil: defaults),
// returning the start's response and its wall-clock time.
func (h *host) limStart(src string, caps []string, limits map[string]any) (hosttest.Response, time.Duration) {
	h.t.Helper()
	id := h.limCompile(src)
	opts := options(caps, nil)
	if limits != nil {
		opts["limits"] = limits
	}
	began := time.Now()
	resp := h.do(h.req("start", "program_id", id, "options", opts, "profile", true), nil, "")
	return resp, time.Since(began)
}

func (h *host) limCompile(src string) string {
	h.t.Helper()
	resp := h.mustOK(h.do(h.req("compile", "source", src), nil, ""))
	id, _ := resp.Result()["program_id"].(string)
	require.NotEmpty(h.t, id)
	return id
}

// limServesNormal proves the session still runs programs to completion.
func (h *host) limServesNormal() {
	h.t.Helper()
	resp, _ := h.limStart(limNormal, nil, nil)
	require.Equal(h.t, limNormalWant, stepOf(h.t, resp).Value)
}

// limFails asserts a start/resume failed with exactly want.
func limFails(t *testing.T, resp hosttest.Response, want string) {
	t.Helper()
	require.False(t, resp.OK(), "expected %q, got %s", want, limTrunc(resp.Raw))
	require.Equal(t, want, resp.Error())
}

// limFailsOneOf asserts a failure with one of wants and returns it.
func limFailsOneOf(t *testing.T, resp hosttest.Response, wants ...string) string {
	t.Helper()
	require.False(t, resp.OK(), "expected one of %q, got %s", wants, limTrunc(resp.Raw))
	require.Contains(t, wants, resp.Error())
	return resp.Error()
}

func limTrunc(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// limInTime checks a hostile request ended before the hang bound. A
// race-instrumented sidecar runs guest work up to ~20x slower (the long
// regular-expression scan: 0.2 s plain, 4.2 s with -race on a quiet
// machine), so there the bound is 3x wider; .ci/run also runs these tests
// without -race, where limDeadline holds as documented.
// workLimits are the limits of a program that must end with the
// instruction budget (one of wants, and not the heap limit): the defaults
// (nil) in the long suites; in the default run a fifth of the default
// budget, so that it ends the same way five times sooner. Programs that may
// end with the heap limit keep the defaults: their peak RSS is checked at
// the default limits.
func workLimits(wants ...string) map[string]any {
	if longtest.Enabled() || !slices.Contains(wants, limInstructions) || slices.Contains(wants, limHeap) {
		return nil
	}
	return map[string]any{"instruction_budget": policy.DefaultInstructionBudget / 5}
}

func limInTime(t *testing.T, d time.Duration) {
	t.Helper()
	bound := limDeadline
	if hosttest.RaceEnabled {
		bound *= 3
	}
	assert.Less(t, d, bound, "wall clock around the request")
}

func limInstructionCount(t *testing.T, resp hosttest.Response) uint64 {
	t.Helper()
	n, ok := resp.Profile()["instructions"].(json.Number)
	require.True(t, ok, "profile.instructions in %s", limTrunc(resp.Raw))
	v, err := n.Int64()
	require.NoError(t, err)
	return uint64(v)
}

// Every kind of endless program ends with its Limit error (within 2 s on a
// quiet machine; the test only catches a hang) at
// default limits, and the same session then completes a normal program.
func TestE2ELimitsHostilePrograms(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
	}{
		{"while(true)", "while(true){}", []string{limInstructions}},
		{"for(;;)", "for(;;){}", []string{limInstructions}},
		{"do-while(1)", "do{}while(1)", []string{limInstructions}},
		{"recursion", "function f(){ return f() } f()", []string{limDepth}},
		{"async recursion", "async function f(){ return f() } f()", []string{limDepth}},
		// Each level keeps a pending promise and a suspended frame alive,
		// so the heap limit may come before the instruction budget.
		{"async recursion through await", "async function f(){ await null; return f() } f()", []string{limInstructions, limHeap}},
		{"promise job loop", "function loop(){ Promise.resolve().then(loop) } loop()", []string{limInstructions}},
		{"await loop", "(async () => { for(;;) await null })()", []string{limInstructions}},
		{"top-level await loop", "for(;;) await null", []string{limInstructions}},
		{"infinite generator", "function* g(){ let i = 0; while(true) yield i++ } for (const v of g()) {}", []string{limInstructions}},
		{"generator driven by hand", "function* g(){ for(;;) yield 1 } const it = g(); for(;;) it.next()", []string{limInstructions}},
	}
	h := newHost(t, transports[0])
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h.t = t
			resp, d := h.limStart(c.src, nil, nil)
			got := limFailsOneOf(t, resp, c.want...)
			t.Logf("%s in %v", got, d.Round(time.Millisecond))
			limInTime(t, d)
			h.limServesNormal()
		})
	}
}

type limBomb struct {
	name, src string
	want      []string
}

// limBombs are the memory bombs of docs/limits.md plus single native calls
// whose one result is far larger than the limit.
var limBombs = []limBomb{
	{"string doubling", "let s = 'x'; for(;;) s += s", []string{limHeap}},
	{"array push loop", "const a = []; for(;;) a.push(a.length)", []string{limHeap, limInstructions}},
	{"array of objects push loop", "const a = []; for(;;) a.push({ x: a.length })", []string{limHeap, limInstructions, limAllocations}},
	{"Array(1e9).fill(0)", "Array(1e9).fill(0)", []string{limHeap}},
	{"repeat 2**30", "'x'.repeat(2**30)", []string{limHeap}},
	{"nested object graph", "let o = {}; for(;;) o = { o, a: [1, 2, 3] }", []string{limHeap, limAllocations}},
	{"JSON.stringify accumulated", "const a = []; for (let i = 0; i < 20000; i++) a.push('xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' + i); let s = ''; for(;;) s += JSON.stringify(a)", []string{limHeap}},
	// One call: 20 references to a 4M-character string (within the limit)
	// serialize to 80 MB.
	{"JSON.stringify one call", "const s = 'x'.repeat(4e6); JSON.stringify(Array(20).fill(s)).length", []string{limHeap}},
	{"join one call", "const s = 'x'.repeat(4e6); Array(20).fill(s).join('').length", []string{limHeap}},
	// The last native call of the execution allocates 80 MB and the
	// program completes right after it.
	{"concat as the last call", "const s = 'x'.repeat(4e6); s.concat(s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s).length", []string{limHeap}},
	// Built-ins that build a large result in one call, with no pre-check.
	{"Array.from one call", "Array.from({ length: 6e6 }).length", []string{limHeap}},
	{"spread one call", "[...Array(4e6).keys()].length", []string{limHeap}},
	{"Map growth", "const m = new Map(); for (let i = 0;; i++) m.set(i, 'v' + i)", []string{limHeap, limInstructions}},
	{"closures in a loop", "const fs = []; for (let i = 0;; i++) fs.push(() => i)", []string{limHeap, limAllocations}},
	{"regex catastrophic backtracking", "/^(a+)+(?=b)/.test('a'.repeat(40) + '!')", []string{limInstructions}},
	{"Float64Array(1e9)", "new Float64Array(1e9)", []string{limHeap}},
	{"ArrayBuffer(2**31)", "new ArrayBuffer(2**31)", []string{limHeap}},
}

// Each memory bomb, in a fresh process so that peak RSS is its own, ends
// with a Limit error while the sidecar's peak RSS stays under 256 MiB, and
// the next request in that process succeeds.
func TestE2ELimitsMemoryBombs(t *testing.T) {
	for i, b := range limBombs {
		if !longtest.Sampled(i) {
			continue
		}
		t.Run(b.name, func(t *testing.T) { limInFreshProcess(t, b.src, nil, b.want...) })
	}
}

// limInFreshProcess starts src in a sidecar of its own, so that its peak
// RSS is this program's, and checks that it ends with one of wants in time,
// under the peak-RSS bound, and that the process then serves a normal
// program.
func limInFreshProcess(t *testing.T, src string, caps []string, wants ...string) {
	t.Helper()
	h := newHost(t, transports[0])
	resp, d := h.limStart(src, caps, workLimits(wants...))
	// Read after the response and before exit.
	hwm := vmHWM(t, h.sc.Pid())
	t.Logf("%s in %v, VmHWM %.1f MiB", resp.Error(), d.Round(time.Millisecond), float64(hwm)/(1<<20))
	limFailsOneOf(t, resp, wants...)
	if !limRace {
		assert.Less(t, hwm, limRSS, "peak RSS")
	}
	limInTime(t, d)
	h.limServesNormal()
}

// Inputs that would make Go itself fail (stack overflow in the parser, in a
// recursive built-in, or an allocation too large to satisfy) end with a
// clean error; the process lives on and serves the next request.
func TestE2ELimitsGoFatalTriggers(t *testing.T) {
	// 200,000 levels in the long suites; 20,000 in the default run, still
	// twenty times engine.MaxNativeDepth.
	levels := longtest.Pick(20_000, 200_000)
	deep := fmt.Sprintf("let a = []; for (let i = 0; i < %d; i++) a = [a]; ", levels)
	deepObject := fmt.Sprintf("let o = {}; for (let i = 0; i < %d; i++) o = { o }; ", levels)
	// With a large heap limit the levels are built and the recursive
	// built-ins themselves are reached.
	bigHeap := map[string]any{"heap_limit_bytes": 1 << 30, "instruction_budget": 10_000_000}
	cases := []struct {
		name, src string
		limits    map[string]any
		want      []string
	}{
		{"repeat 2**40", "'x'.repeat(2**40)", nil, []string{limHeap}},
		{"padEnd 2**40", "'ab'.padEnd(2**40)", nil, []string{limHeap}},
		{"padStart 2**40", "'ab'.padStart(2**40)", nil, []string{limHeap}},
		{"backtracking regex", "/^(a+)+(?=b)/.test('a'.repeat(40) + '!')", nil, []string{limInstructions}},
		{"deep JSON.parse", fmt.Sprintf("JSON.parse('['.repeat(%d) + ']'.repeat(%[1]d))", levels), nil, []string{limDepth}},
		{"deep JSON.stringify", deep + "JSON.stringify(a)", nil, []string{limDepth, limHeap}},
		{"deep String()", deep + "String(a)", nil, []string{limDepth, limHeap}},
		{"deep join", deep + "a.join()", nil, []string{limDepth, limHeap}},
		{"deep template literal", deep + "`${a}`", nil, []string{limDepth, limHeap}},
		{"deep JSON.stringify, big heap", deep + "JSON.stringify(a)", bigHeap, []string{limDepth}},
		{"deep object JSON.stringify, big heap", deepObject + "JSON.stringify(o)", bigHeap, []string{limDepth}},
		{"deep String(), big heap", deep + "String(a)", bigHeap, []string{limDepth}},
		{"deep join, big heap", deep + "a.join()", bigHeap, []string{limDepth}},
		{"deep toLocaleString, big heap", deep + "a.toLocaleString()", bigHeap, []string{limDepth}},
		{"deep template literal, big heap", deep + "`${a}`", bigHeap, []string{limDepth}},
		{"deep concatenation, big heap", deep + "a + ''", bigHeap, []string{limDepth}},
	}
	h := newHost(t, transports[0])
	for _, src := range []string{
		"(" + strings.Repeat("[", 200000) + strings.Repeat("]", 200000) + ")",
		"(" + strings.Repeat("{a:", 200000) + "1" + strings.Repeat("}", 200000) + ")",
	} {
		began := time.Now()
		resp := h.do(h.req("compile", "source", src), nil, "")
		d := time.Since(began)
		require.False(t, resp.OK())
		assert.True(t, strings.HasPrefix(resp.Error(), "Parse: "), resp.Error())
		t.Logf("deep literal in source: %s in %v", resp.Error(), d.Round(time.Millisecond))
		limInTime(t, d)
	}
	h.limServesNormal()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h.t = t
			limits := c.limits
			if limits == nil {
				limits = workLimits(c.want...)
			}
			resp, d := h.limStart(c.src, nil, limits)
			got := limFailsOneOf(t, resp, c.want...)
			t.Logf("%s in %v", got, d.Round(time.Millisecond))
			if c.limits == nil {
				limInTime(t, d)
			}
			h.limServesNormal()
		})
	}
}

// No Limit error can be caught or suppressed by guest code.
func TestE2ELimitsCannotBeCaught(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"try/catch", "try { while(true){} } catch (e) { 'caught' }", limInstructions},
		{"catch in the loop", "for(;;){ try { while(true){} } catch (e) {} }", limInstructions},
		{"finally return", "function f(){ try { while(true){} } finally { return 1 } } f()", limInstructions},
		{"finally loops", "function f(){ try { while(true){} } finally { for(;;){} } } f()", limInstructions},
		{"finally continue", "for(;;){ try { while(true){} } finally { continue } }", limInstructions},
		{"catch call depth", "function f(){ try { return f() } catch (e) { return 'caught' } } f()", limDepth},
		{"finally return on call depth", "function f(){ try { return f() } finally { return 1 } } f()", limDepth},
		{"catch heap", "try { let s = 'x'; for(;;) s += s } catch (e) { 'caught' }", limHeap},
		{"catch heap pre-check", "try { 'x'.repeat(2**30) } catch (e) { 'caught' }", limHeap},
		{"catch allocation", "try { for(;;) { [{}, {}, {}, {}, {}, {}, {}, {}, {}] } } catch (e) { 'caught' }", limAllocations},
		{"catch native depth", "try { JSON.parse('['.repeat(5000) + ']'.repeat(5000)) } catch (e) { 'caught' }", limDepth},
		{"catch regex timeout", "try { /^(a+)+(?=b)/.test('a'.repeat(40) + '!') } catch (e) { 'caught' }", limInstructions},
		{"promise catch", "async function f(){ while(true){} } f().catch(e => 'caught')", limInstructions},
		{"promise catch, executor", "new Promise(() => { for(;;){} }).catch(e => 'caught')", limInstructions},
		{"promise catch, await loop", "(async () => { for(;;) await null })().catch(e => 'caught')", limInstructions},
		{"promise finally", "(async () => { for(;;) await null })().finally(() => 'finally')", limInstructions},
		{"Promise.allSettled", "Promise.allSettled([(async () => { for(;;) await null })()]).then(r => 'settled')", limInstructions},
		{"Promise.allSettled, call depth", "async function f(){ return f() } Promise.allSettled([f()]).then(r => 'settled')", limDepth},
		{"async try/catch", "(async () => { try { for(;;) await null } catch (e) { return 'caught' } })()", limInstructions},
		{"async finally return", "(async () => { try { for(;;) await null } finally { return 'finally' } })()", limInstructions},
		// The leading await makes this a top-level-await program: without it
		// `await (...)` parses as a call of a global named await.
		{"top-level await catch", "await null; try { await (async () => { for(;;) await null })() } catch (e) { 'caught' }", limInstructions},
	}
	h := newHost(t, transports[0])
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h.t = t
			var limits map[string]any
			if c.want == limInstructions && !longtest.Enabled() {
				// The default run: a tenth of the default budget, spent
				// as surely (the long suites spend the default).
				limits = map[string]any{"instruction_budget": 100_000}
			}
			resp, d := h.limStart(c.src, nil, limits)
			limFails(t, resp, c.want)
			limInTime(t, d)
		})
	}
	h.t = t
	h.limServesNormal()
}

// limSegments makes tick(k) calls with the same work before each: budgets
// that were per segment would never run out.
const (
	limInstructionSegments = "let total = 0; for (let k = 0; k < 10; k++) { for (let i = 0; i < 30000; i++) {} total += tick(k) } total"
	limAllocationSegments  = "let total = 0; for (let k = 0; k < 10; k++) { for (let i = 0; i < 10000; i++) { [{}, {}, {}, {}, {}, {}, {}, {}, {}] } total += tick(k) } total"
)

var limTickCaps = []string{"tick"}

// limResumeWith resumes by cached snapshot id under an explicit policy.
func (h *host) limResumeWith(snapID string, limits map[string]any, payload map[string]any) hosttest.Response {
	h.t.Helper()
	pol := hosttest.Policy(hostKey, snapID, limTickCaps, limits)
	return h.do(h.req("resume", "snapshot_id", snapID, "policy", pol, "payload", payload, "profile", true), nil, "")
}

// limResumeRaw resumes snapshot bytes under an explicit policy.
func (h *host) limResumeRaw(snap []byte, limits map[string]any, payload map[string]any) hosttest.Response {
	h.t.Helper()
	pol := hosttest.Policy(hostKey, sha256Hex(snap), limTickCaps, limits)
	return h.do(h.req("resume", "policy", pol, "payload", payload, "profile", true), snap, "snapshot_base64")
}

// Budgets are cumulative over start and every resume, hot or cold: the
// fourth segment of 30,000 loop iterations (270,000 instructions) runs out
// of the 1,000,000 instructions, the third of 100,000 allocations out of
// 250,000.
func TestE2ELimitsBudgetsCumulative(t *testing.T) {
	cases := []struct {
		name, src string
		failAt    int // the resume that fails
		want      string
	}{
		{"instructions", limInstructionSegments, 3, limInstructions},
		{"allocations", limAllocationSegments, 2, limAllocations},
	}
	for _, c := range cases {
		t.Run(c.name+"/hot", func(t *testing.T) {
			h := newHost(t, transports[0])
			resp, _ := h.limStart(c.src, limTickCaps, nil)
			var last uint64
			for i := 0; ; i++ {
				st := stepOf(t, resp)
				require.Equal(t, "suspended", st.Type)
				n := limInstructionCount(t, resp)
				require.Greater(t, n, last, "profile.instructions is cumulative")
				last = n
				resp = h.do(h.req("resume", "snapshot_id", st.SnapshotID, "policy_id", st.PolicyID,
					"auth", hosttest.Auth(hostKey, st.SnapshotID), "payload", valuePayload(num(1)), "profile", true), nil, "")
				if i+1 == c.failAt {
					limFails(t, resp, c.want)
					return
				}
			}
		})
		t.Run(c.name+"/cold", func(t *testing.T) {
			h := newHost(t, transports[0])
			resp, _ := h.limStart(c.src, limTickCaps, nil)
			for i := 0; ; i++ {
				st := stepOf(t, resp)
				require.Equal(t, "suspended", st.Type)
				// A new process every time: each resume replays the journal.
				h = newHost(t, transports[0])
				resp = h.limResumeRaw(st.Snapshot, map[string]any{}, valuePayload(num(1)))
				if i+1 == c.failAt {
					limFails(t, resp, c.want)
					return
				}
			}
		})
	}
}

// A resume under a policy that allows less than the execution already used
// fails at once with the Limit error, and the snapshot stays resumable
// under the original policy, hot and cold.
func TestE2ELimitsStricterResume(t *testing.T) {
	cases := []struct {
		name, src string
		strict    map[string]any
		want      string
	}{
		// The first segment used 270,000 instructions / 100,000
		// allocations.
		{"instructions", limInstructionSegments, map[string]any{"instruction_budget": 200000}, limInstructions},
		{"allocations", limAllocationSegments, map[string]any{"allocation_budget": 50000}, limAllocations},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHost(t, transports[0])
			resp, _ := h.limStart(c.src, limTickCaps, nil)
			first := stepOf(t, resp)
			used := limInstructionCount(t, resp)

			// Hot: the execution is parked in this process.
			began := time.Now()
			limFails(t, h.limResumeWith(first.SnapshotID, c.strict, valuePayload(num(1))), c.want)
			t.Logf("hot refusal in %v", time.Since(began).Round(time.Millisecond))
			resp = h.resumeCachedLim(first, 1)
			second := stepOf(t, resp)
			require.Equal(t, "suspended", second.Type)
			hotCount := limInstructionCount(t, resp)
			assert.Greater(t, hotCount, used)

			// Cold: a fresh process refuses before replaying, then resumes
			// the same bytes under the original limits to the same place.
			cold := newHost(t, transports[0])
			began = time.Now()
			limFails(t, cold.limResumeRaw(first.Snapshot, c.strict, valuePayload(num(1))), c.want)
			t.Logf("cold refusal in %v", time.Since(began).Round(time.Millisecond))
			resp = cold.limResumeRaw(first.Snapshot, map[string]any{}, valuePayload(num(1)))
			again := stepOf(t, resp)
			assert.Equal(t, second.SnapshotID, again.SnapshotID)
			assert.Equal(t, hotCount, limInstructionCount(t, resp))
		})
	}
	// The boundary: a budget equal to what the execution uses is enough,
	// one less is not: less than the first segment used is refused before
	// anything runs (the execution stays parked), less than the whole
	// execution uses runs out on the way.
	t.Run("equal to used", func(t *testing.T) {
		h := newHost(t, transports[0])
		resp, _ := h.limStart("for (let i = 0; i < 10; i++) {} tick(1); 7", limTickCaps, nil)
		st := stepOf(t, resp)
		used := limInstructionCount(t, resp)
		require.Greater(t, used, uint64(10))
		limFails(t, h.limResumeWith(st.SnapshotID, map[string]any{"instruction_budget": used - 1}, valuePayload(num(1))), limInstructions)
		resp = h.limResumeWith(st.SnapshotID, map[string]any{"instruction_budget": used + 100}, valuePayload(num(1)))
		done := stepOf(t, resp)
		assert.Equal(t, `{"Number":{"Finite":7.0}}`, done.Value)
		total := limInstructionCount(t, resp)
		require.Greater(t, total, used)
		limFails(t, h.limResumeWith(st.SnapshotID, map[string]any{"instruction_budget": total - 1}, valuePayload(num(1))), limInstructions)
		done = stepOf(t, h.limResumeWith(st.SnapshotID, map[string]any{"instruction_budget": total}, valuePayload(num(1))))
		assert.Equal(t, `{"Number":{"Finite":7.0}}`, done.Value)
	})
}

func (h *host) resumeCachedLim(s step, v float64) hosttest.Response {
	h.t.Helper()
	return h.do(h.req("resume", "snapshot_id", s.SnapshotID, "policy_id", s.PolicyID,
		"auth", hosttest.Auth(hostKey, s.SnapshotID), "payload", valuePayload(num(v)), "profile", true), nil, "")
}

// Zero is legal for every limit and means none allowed.
func TestE2ELimitsZero(t *testing.T) {
	cases := []struct {
		name, field, src string
		caps             []string
		want             string // "" means the program completes
	}{
		{"instructions: straight-line code", "instruction_budget", "1 + 1", nil, limInstructions},
		{"instructions: first call", "instruction_budget", "function f(){} f()", nil, limInstructions},
		{"instructions: first loop iteration", "instruction_budget", "for (let i = 0; i < 1; i++) {}", nil, limInstructions},
		{"instructions: first await", "instruction_budget", "await 1", nil, limInstructions},
		{"allocations: straight-line code", "allocation_budget", "1 + 1", nil, ""},
		{"allocations: first object literal", "allocation_budget", "({})", nil, limAllocations},
		{"allocations: first array literal", "allocation_budget", "[]", nil, limAllocations},
		{"allocations: first new", "allocation_budget", "new Object()", nil, limAllocations},
		{"call depth: straight-line code", "call_depth_limit", "1 + 1", nil, ""},
		{"call depth: first call", "call_depth_limit", "function f(){} f()", nil, limDepth},
		{"heap: straight-line code", "heap_limit_bytes", "1 + 1", nil, ""},
		{"heap: small repeat", "heap_limit_bytes", "'x'.repeat(10)", nil, limHeap},
		{"host calls: none made", "max_outstanding_host_calls", "1 + 1", []string{"cap"}, ""},
		{"host calls: first async call", "max_outstanding_host_calls", "(async () => cap())()", []string{"cap"}, limHostCalls},
		{"host calls: caught", "max_outstanding_host_calls", "(async () => { try { await cap() } catch (e) { return 'caught' } })()", []string{"cap"}, limHostCalls},
		{"host calls: synchronous calls are not counted", "max_outstanding_host_calls", "cap()", []string{"cap"}, "suspended"},
	}
	h := newHost(t, transports[0])
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h.t = t
			resp, _ := h.limStart(c.src, c.caps, map[string]any{c.field: 0})
			switch c.want {
			case "", "suspended":
				require.Equal(t, cmp.Or(c.want, "completed"), stepOf(t, resp).Type)
				return
			}
			limFails(t, resp, c.want)
		})
	}
	h.t = t
	h.limServesNormal()
}

// A call depth limit of N allows exactly N nested guest calls
// (docs/limits.md).
func TestE2ELimitsCallDepthExact(t *testing.T) {
	h := newHost(t, transports[0])
	const prog = "function d(n){ return n > 1 ? d(n - 1) : 0 } d(N)"
	for _, n := range []int{1, 2, 10, 256} {
		limits := map[string]any{"call_depth_limit": n}
		resp, _ := h.limStart(strings.Replace(prog, "N", itoa(n), 1), nil, limits)
		require.True(t, resp.OK(), "%d nested calls under a limit of %d: %s", n, n, resp.Error())
		resp, _ = h.limStart(strings.Replace(prog, "N", itoa(n+1), 1), nil, limits)
		limFails(t, resp, limDepth)
	}
}

// TestE2ELimitsRepeatedBombsDoNotAccumulate runs the same memory bomb again
// and again in one process: the garbage each failed execution leaves must
// not carry over into (and escape) the next one's heap limit.
func TestE2ELimitsRepeatedBombsDoNotAccumulate(t *testing.T) {
	h := newHost(t, transports[0])
	id := h.limCompile("let s = 'x'; for (let i = 0; i < 40; i++) s = s + s; s.length")
	for i := 0; i < 10; i++ {
		resp := h.do(h.req("start", "program_id", id, "options", options(nil, nil)), nil, "")
		limFails(t, resp, limHeap)
	}
	hwm := vmHWM(t, h.sc.Pid())
	t.Logf("VmHWM after 10 bombs: %.1f MiB", float64(hwm)/(1<<20))
	assert.Less(t, hwm, int64(256<<20))
	h.limServesNormal()
}
