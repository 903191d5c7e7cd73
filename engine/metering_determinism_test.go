package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Metering must depend only on the program and the host's answers: a hot
// run, a cold replay from any of its snapshots and a run in another process
// charge exactly the same instructions and allocations at every step.

// mdPrograms call fetch(n) (answered 2n+1) and fail(s) (answered with a
// host error) from every kind of code that is charged.
var mdPrograms = []struct{ name, src string }{
	{"loops", `let s = 0;
for (let i = 0; i < 100; i++) { for (let j = 0; j < i; j++) s += j }
s += fetch(s % 7);
for (const k in { a: 1, b: 2, c: 3 }) s += k.length;
let n = 0; while (n < 50) n++; do { n-- } while (n > 10);
s + n + fetch(n)`},
	{"recursion", `function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) }
function ack(m, n) { return m === 0 ? n + 1 : n === 0 ? ack(m - 1, 1) : ack(m - 1, ack(m, n - 1)) }
fib(fetch(6)) + ack(2, 3) + fetch(fib(10))`},
	{"closures", `const fs = [];
for (let i = 0; i < 30; i++) fs.push(() => i * fetch(i % 3));
function counter() { let c = 0; return { inc: () => ++c, get: () => c } }
const c = counter(); for (let i = 0; i < 20; i++) c.inc();
fs.reduce((a, f) => a + f(), 0) + c.get()`},
	{"async/await", `async function one(i) { const v = await fetch(i); return v + 1 }
async function main() { let t = 0; for (let i = 0; i < 5; i++) t += await one(i); return t }
main()`},
	{"Promise.all", `Promise.all([1, 2, 3, 4].map(async (n) => await fetch(n) + await fetch(n * 10))).then((v) => v.reduce((a, b) => a + b, 0))`},
	{"sort", `const a = []; for (let i = 0; i < 500; i++) a.push((i * 7919) % 1000);
a.sort((x, y) => x - y); const b = a.slice(); b.sort();
fetch(a[10]) + a[499] + b.join(',').length`},
	{"join/repeat/pad", `const s = 'ab'.repeat(1000) + 'x'.padStart(300, 'y') + 'z'.padEnd(700, '-');
const parts = []; for (let i = 0; i < 200; i++) parts.push(i);
s.length + parts.join('-').length + fetch(parts.toString().length) + [[1, [2]], 3].toLocaleString().length`},
	{"JSON", `const o = { a: [1, 2, { b: 'c' }], d: 'x'.repeat(500), n: null, t: true };
const s = JSON.stringify(o); const back = JSON.parse(s);
const list = []; for (let i = 0; i < 100; i++) list.push({ i, s: 'v' + i });
fetch(s.length) + back.a.length + JSON.parse(JSON.stringify(list, null, 2)).length + JSON.stringify(o, ['a', 'b']).length`},
	{"regex", `const text = 'aaa bbb ccc '.repeat(100);
const m = text.match(/b+/g); fetch(m.length);
text.split(' ').length + text.replace(/o/g, '0').length + text.replaceAll('a', 'A').length +
  text.search(/c/) + [...text.matchAll(/c+/g)].length + (/a(?=b)/.test('ab'.repeat(50)) ? 1 : 0) + /(\w)\1/.exec('xyzzy').index`},
	{"generators", `function* g(n) { for (let i = 0; i < n; i++) yield i * i }
let t = 0; for (const v of g(100)) t += v;
function* inner() { yield fetch(1); yield fetch(2) } function* outer() { yield* inner(); yield 3 }
t + [...g(10)].length + [...outer()].reduce((a, b) => a + b, 0)`},
	{"classes", `class A { static #n = 0; #x; constructor(x) { this.#x = x; A.#n++ } get dbl() { return this.#x * 2 } m() { return this.#x + 1 } static count() { return A.#n } static { this.tag = 'A' } }
class B extends A { m() { return super.m() * 2 } }
const bs = []; for (let i = 0; i < 10; i++) bs.push(new B(fetch(i)));
bs.reduce((a, b) => a + b.m() + b.dbl, 0) + A.count() + A.tag.length`},
	{"host errors", `const r = [];
for (const k of ['a', 'b', 'c']) { try { r.push(fail(k)) } catch (e) { r.push(e.name + ':' + e.message) } finally { r.push(fetch(r.length)) } }
r.join('|')`},
	// goja has no async generators or for await: an async iterator by hand.
	{"async iteration", `function source(n) { let i = 0; return { next: async () => i < n ? { value: await fetch(i++), done: false } : { done: true } } }
(async () => { const it = source(4); let t = 0, r; while (!(r = await it.next()).done) t += r.value; return t })()`},
	{"top-level await", `const a = await fetch(1); let t = a;
for (let i = 0; i < 6; i++) t += await fetch(i);
t`},
	{"then chains", `const first = fetch(1);
Promise.resolve(first).then((x) => x + 1).then(async (x) => x * await fetch(3)).catch(() => 0).finally(() => fetch(4)).then((x) => x + 1)`},
	{"random and clock", `let t = 0; for (let i = 0; i < 20; i++) t += Math.floor(Math.random() * 10);
fetch(t) + (Date.now() % 1000) + new Date(0).getUTCFullYear()`},
	{"collections", `const m = new Map(); for (let i = 0; i < 50; i++) m.set(i, { v: i });
const s = new Set([...m.keys()].filter((k) => k % 2));
const { a, ...rest } = { a: fetch(1), b: 2, c: 3 }; const [x, , ...ys] = [1, 2, 3, 4, 5];
s.size + a + Object.keys(rest).length + x + ys.length + [...new Set('abcabc')].length`},
	{"array callbacks", `const a = Array.from({ length: 200 }, (_, i) => i);
a.map((x) => x * 2).filter((x) => x % 3).reduce((p, c) => p + c, fetch(0)) + a.findIndex((x) => x > 150) + (a.some((x) => x > 198) ? 1 : 0) + a.flatMap((x) => [x, x]).length`},
	{"settled and races", `Promise.allSettled([fetch(1), Promise.reject(new Error('x')), (async () => fetch(2))()]).then(async (r) => {
  const w = await Promise.race([Promise.resolve(fetch(3)), new Promise(() => {})]);
  const y = await Promise.any([Promise.reject(1), Promise.resolve(fetch(5))]);
  return r.map((x) => x.status).join() + w + y })`},
	{"accessors, labels, switch, templates", `const o = { _v: 0, get v() { return this._v }, set v(x) { this._v = x } };
outer: for (let i = 0; i < 10; i++) { for (let j = 0; j < 10; j++) { if (j > i) continue outer; o.v += j } }
switch (o.v % 3) { case 0: o.v += fetch(1); break; default: o.v += fetch(2) }
const tag = (s, ...v) => s.raw.join('#') + v.length;
tag` + "`a${o.v}b${fetch(3)}c`" + ` + ` + "`${o.v}`"},
	// Objects and arrays crossing the boundary both ways: what converting
	// them charges is part of every journal's meter readings.
	{"boundary objects", `const rec = { id: 1, tags: ['a', 'b'], nested: { k: 'v', n: [1, { z: 2 }] } };
let t = 0; for (let i = 0; i < 3; i++) t += fetch(i, rec, [rec.nested, { i }], { a: 1, b: 2, c: 3, d: 4 });
({ t, rec, list: [1, 2, { three: 3 }] })`},
}

// mdAnswer is the host: fetch(n) returns 2n+1; fail(s) throws.
func mdAnswer(capability string, args []value.Value) snapshot.Outcome {
	if capability == "fail" {
		msg := "no"
		if len(args) > 0 {
			msg = "no " + args[0].Str
		}
		return snapshot.Outcome{Error: &snapshot.HostError{Name: "HostError", Message: msg}}
	}
	n := 0.0
	if len(args) > 0 {
		n = args[0].Num
	}
	return snapshot.Outcome{Value: value.Number(2*n + 1)}
}

var mdCaps = []string{"fail", "fetch"}

// mdStep is what one step of an execution shows: its meter and, for a
// suspension, the call; for the end, the value or error.
type mdStep struct {
	Instructions uint64
	Allocations  uint64
	Capability   string `json:",omitempty"`
	Args         string `json:",omitempty"`
	End          string `json:",omitempty"`
}

func mdOf(s Step) mdStep {
	m := mdStep{Instructions: s.Meter.Instructions, Allocations: s.Meter.Allocations}
	switch {
	case s.Err != nil:
		m.End = "error: " + s.Err.Error()
	case s.Done:
		m.End = "value: " + string(s.Value.AppendJSON(nil))
	default:
		m.Capability = s.Capability
		m.Args = string(value.Array(s.Args...).AppendJSON(nil))
	}
	return m
}

type mdRun struct {
	program *Program
	header  snapshot.Header
	limits  policy.Limits
	steps   []Step // every suspension, then the end
}

func mdStart(t testing.TB, src string) *mdRun {
	t.Helper()
	p, err := Compile(src)
	require.NoError(t, err)
	pol, err := policy.New(mdCaps, policy.DefaultLimits())
	require.NoError(t, err)
	return &mdRun{
		program: p,
		header:  snapshot.Header{Program: p.Bytes, Capabilities: pol.Capabilities, Seed: 11, ClockMillis: 1_700_000_000_123},
		limits:  pol.Limits,
	}
}

// hot runs the program answering every call in this process.
func (r *mdRun) hot(t testing.TB) []mdStep {
	t.Helper()
	x, step := testRuntime.Start(Config{Program: r.program, Header: r.header, Limits: r.limits})
	step.Calls = slices.Clone(step.Calls) // the execution reuses its slice
	r.steps = []Step{step}
	for step.Suspended() {
		x, step = x.Resume(Payload{Outcome: mdAnswer(step.Capability, step.Args)}, r.limits)
		step.Calls = slices.Clone(step.Calls)
		r.steps = append(r.steps, step)
		require.Less(t, len(r.steps), 1000, "runaway execution")
	}
	out := make([]mdStep, len(r.steps))
	for i, s := range r.steps {
		out[i] = mdOf(s)
	}
	return out
}

// cold resumes the snapshot of suspension k in a fresh realm, which
// replays the k earlier calls from the journal, and runs to the end.
func (r *mdRun) cold(t testing.TB, k int) []mdStep {
	t.Helper()
	raw := r.journal(t, k)
	snap, err := snapshot.Load(raw, nil)
	require.NoError(t, err)
	require.Len(t, snap.Suspensions, k+1)
	s := r.steps[k]
	x, step := testRuntime.Start(Config{
		Program: r.program, Header: snap.Header, Limits: r.limits, Journal: snap, Raw: raw,
		Answers: []Answer{{CallID: s.Focus, Payload: Payload{Outcome: mdAnswer(s.Capability, s.Args)}}},
	})
	if x != nil {
		require.Equal(t, len(snap.Calls), x.Stats().Replayed, "a cold resume replays the journal")
	}
	out := []mdStep{mdOf(step)}
	for step.Suspended() {
		x, step = x.Resume(Payload{Outcome: mdAnswer(step.Capability, step.Args)}, r.limits)
		out = append(out, mdOf(step))
	}
	return out
}

// mdChildEnv makes the test binary, run again, print its hot runs.
const mdChildEnv = "MUSTARD_METERING_CHILD_OUT"

func mdHotAll(t testing.TB) map[string][]mdStep {
	out := map[string][]mdStep{}
	for _, p := range mdPrograms {
		out[p.name] = mdStart(t, p.src).hot(t)
	}
	return out
}

func TestMeteringDeterminism(t *testing.T) {
	if path := os.Getenv(mdChildEnv); path != "" {
		b, err := json.Marshal(mdHotAll(t))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, b, 0o600))
		return
	}
	hot := map[string][]mdStep{}
	for _, p := range mdPrograms {
		t.Run(p.name, func(t *testing.T) {
			r := mdStart(t, p.src)
			steps := r.hot(t)
			hot[p.name] = steps
			end := steps[len(steps)-1].End
			require.True(t, strings.HasPrefix(end, "value: "), "%s: %s", p.name, end)
			require.Greater(t, len(steps), 1, "the program suspends")
			last := steps[len(steps)-1]
			t.Logf("%d suspensions; %d instructions, %d allocations", len(steps)-1, last.Instructions, last.Allocations)
			assert.Equal(t, steps, r.hot(t), "a second hot run")
			for k := 0; k < len(steps)-1; k++ {
				assert.Equal(t, steps[k+1:], r.cold(t, k), "cold resume of suspension %d", k+1)
			}
		})
	}

	// A second process: map order, realm pool and heap differ.
	path := filepath.Join(t.TempDir(), "meters.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestMeteringDeterminism$", "-test.count=1")
	cmd.Env = append(os.Environ(), mdChildEnv+"="+path)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var other map[string][]mdStep
	require.NoError(t, json.Unmarshal(b, &other))
	assert.Equal(t, hot, other, "a second process")
}

// Over the binary, profile.instructions is the same at every step of a hot
// run, of a cold resume of each of its snapshots and of a run in another
// process.
func TestMeteringDeterminismOverBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and drives the binary")
	}
	hotA := mdBinaryHot(t)
	hotB := mdBinaryHot(t)
	for _, p := range mdPrograms {
		assert.Equal(t, hotA[p.name].counts, hotB[p.name].counts, "%s: second process", p.name)
	}

	// One process for every cold resume. Resuming a snapshot parks the
	// next one, which would make its later resume hot, so each program's
	// snapshots are resumed last first.
	sc := mdSidecar(t)
	for _, p := range mdPrograms {
		run := hotA[p.name]
		for k := len(run.steps) - 1; k >= 0; k-- {
			s := run.steps[k]
			pol := hosttest.Policy(mdKey, s.snapID, mdCaps, map[string]any{})
			resp := sc.call(t, map[string]any{"method": "resume", "policy": pol, "payload": mdPayload(t, s), "profile": true}, s.snap)
			require.True(t, resp.OK(), "%s: %s", p.name, resp.Raw)
			assert.Equal(t, run.counts[k+1], mdCount(t, resp), "%s: cold resume of suspension %d", p.name, k+1)
		}
	}
}

var mdKey = []byte("0123456789abcdef0123456789abcdef")

type mdSide struct {
	sc *hosttest.Sidecar
	id int
}

func mdSidecar(t *testing.T) *mdSide {
	t.Helper()
	sc, err := hosttest.Start()
	require.NoError(t, err)
	t.Cleanup(sc.Kill)
	return &mdSide{sc: sc}
}

func (m *mdSide) call(t *testing.T, hdr map[string]any, raw []byte) hosttest.Response {
	t.Helper()
	m.id++
	hdr["protocol_version"], hdr["id"] = 2, m.id
	resp, err := m.sc.Call(hdr, raw, "snapshot_base64")
	require.NoError(t, err)
	return resp
}

type mdBinStep struct {
	capability string
	args       []value.Value
	snapID     string
	policyID   string
	snap       []byte
}

type mdBinRun struct {
	counts []uint64 // profile.instructions at every suspension, then the end
	steps  []mdBinStep
}

func mdCount(t *testing.T, resp hosttest.Response) uint64 {
	t.Helper()
	n, ok := resp.Profile()["instructions"].(json.Number)
	require.True(t, ok, "profile in %s", resp.Raw)
	v, err := strconv.ParseUint(string(n), 10, 64)
	require.NoError(t, err)
	return v
}

func mdPayload(t *testing.T, s mdBinStep) map[string]any {
	t.Helper()
	o := mdAnswer(s.capability, s.args)
	if o.Error != nil {
		return map[string]any{"type": "error", "error": map[string]any{"name": o.Error.Name, "message": o.Error.Message}}
	}
	return map[string]any{"type": "value", "value": json.RawMessage(o.Value.AppendJSON(nil))}
}

// mdBinaryHot runs every program in one new process, answering by cached
// ids.
func mdBinaryHot(t *testing.T) map[string]*mdBinRun {
	t.Helper()
	sc := mdSidecar(t)
	out := map[string]*mdBinRun{}
	for _, p := range mdPrograms {
		resp := sc.call(t, map[string]any{"method": "compile", "source": p.src}, nil)
		require.True(t, resp.OK(), "%s: %s", p.name, resp.Raw)
		id, _ := resp.Result()["program_id"].(string)
		resp = sc.call(t, map[string]any{"method": "start", "program_id": id, "profile": true,
			"options": map[string]any{"capabilities": mdCaps, "inputs": map[string]any{}, "limits": map[string]any{}}}, nil)
		run := &mdBinRun{}
		for {
			require.True(t, resp.OK(), "%s: %s", p.name, resp.Raw)
			run.counts = append(run.counts, mdCount(t, resp))
			st := resp.Step()
			if st["type"] != "suspended" {
				break
			}
			var raw struct {
				Result struct {
					Step struct {
						Args json.RawMessage `json:"args"`
					} `json:"step"`
				} `json:"result"`
			}
			require.NoError(t, json.Unmarshal(resp.Raw, &raw))
			args, err := value.ParseJSON([]byte(`{"Array":` + string(raw.Result.Step.Args) + `}`))
			require.NoError(t, err)
			s := mdBinStep{capability: fmt.Sprint(st["capability"]), args: args.Elems,
				snapID: resp.SnapshotID(), policyID: resp.PolicyID(), snap: resp.Payload}
			run.steps = append(run.steps, s)
			resp = sc.call(t, map[string]any{"method": "resume", "snapshot_id": s.snapID, "policy_id": s.policyID,
				"auth": hosttest.Auth(mdKey, s.snapID), "payload": mdPayload(t, s), "profile": true}, nil)
		}
		out[p.name] = run
	}
	return out
}

// Every instruction executed is charged, whatever the syntactic form of
// the code (v3: current programs), and allocations are counted at each
// literal and new expression. Programs of format version 2 are charged as
// they always were: one instruction per function entry and loop iteration
// (v2). The figures are pinned: a change to what the interpreter executes
// for these forms must be deliberate.
func TestMeteringLoopBodyForms(t *testing.T) {
	cases := []struct {
		src         string
		v3, v2      uint64 // instructions
		allocations uint64
	}{
		{"for (let i = 0; i < 3; i++) { ({}) } 1", 44, 3, 3},
		{"for (let i = 0; i < 6; i++) { ({}) } 1", 77, 6, 6},
		{"for (let i = 0; i < 3; i++) ({}); 1", 44, 3, 3},
		{"for (let i = 0; i < 3; i++) (0); 1", 38, 3, 0},
		{"let n = 0; while (n < 3) (n++); n", 36, 3, 0},
		{"let n = 0; do (n++); while (n < 3); n", 29, 3, 0},
		{"for (const k of [1, 2]) (k); 1", 28, 2, 1},
		{"for (const k in { a: 1, b: 2 }) (k); 1", 28, 2, 1},
		{"for (let i = 0; i < 3; i++) (function () {})(); 1", 59, 6, 0},
		{"for (let i = 0; i < 3; i++) [1].map((x) => x); 1", 68, 6, 3},
		{"let n = 0; while (n < 3) n++; n", 36, 3, 0},
		{"function f() {} f(); f(); 1", 16, 2, 0},
		{"new Object(); [1, [2]]; 1", 13, 0, 3},
		{"1 + 1", 2, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			for _, version := range []uint64{programVersion, programVersionStrict} {
				p, err := compileVersion(c.src, version)
				require.NoError(t, err)
				h := snapshot.Header{Program: p.Bytes, Seed: 1, ClockMillis: 1}
				_, step := testRuntime.Start(Config{Program: p, Header: h, Limits: policy.DefaultLimits()})
				require.NoError(t, step.Err)
				want := c.v3
				if version == programVersionStrict {
					want = c.v2
				}
				assert.Equal(t, want, step.Meter.Instructions, "instructions, format version %d", version)
				assert.Equal(t, c.allocations, step.Meter.Allocations, "allocations, format version %d", version)
			}
		})
	}
}

// Built-in work is charged as docs/limits.md says: one instruction per 64
// units, and 16 per promise job (when the job runs in current programs,
// when it is scheduled in version 2 ones). Each built-in case is measured
// against the same program doing none of the work.
func TestMeteringBuiltinCharges(t *testing.T) {
	meter := func(src string, version uint64) uint64 {
		p, err := compileVersion(src, version)
		require.NoError(t, err)
		h := snapshot.Header{Program: p.Bytes, Seed: 1, ClockMillis: 1}
		_, step := testRuntime.Start(Config{Program: p, Header: h, Limits: policy.DefaultLimits()})
		require.NoError(t, step.Err)
		return step.Meter.Instructions
	}
	for _, c := range []struct {
		name, src, none string
		v3, v2          uint64
	}{
		// A unit a character, and the 6,400 bytes copied into the result at
		// 16 bytes a unit (a result of 256 bytes or more): 400 units, 6
		// instructions and a remainder (format version 2 keeps 128 bytes a
		// unit).
		{"repeat, per character produced", "'x'.repeat(6400); 1", "'x'.repeat(0); 1", 106, 100},
		{"padEnd, per character produced", "'x'.padEnd(6400); 1", "'x'.padEnd(0); 1", 106, 100},
		// Each hole is read through two prototype links (Array.prototype,
		// Object.prototype), a quarter of an instruction each, charged per
		// 1,024 links: 12,288 of the 12,800; and the 6,399 bytes of the
		// result, four copies' work at 16 bytes a unit (1,599 units: 24
		// instructions).
		{"join, per element", "Array(6400).join(); 1", "Array(0).join(); 1", 100 + 12288/4 + 24, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.v3, meter(c.src, programVersion)-meter(c.none, programVersion), "current programs")
			assert.Equal(t, c.v2, meter(c.src, programVersionStrict)-meter(c.none, programVersionStrict), "format version 2")
		})
	}
	for _, c := range []struct {
		name, src string
		v3, v2    uint64
	}{
		// A job costs 16: the then callback's job, the await's continuation,
		// each for await iteration's, the async generator's resumption.
		{"then", "Promise.resolve(1).then(() => 2); 1", 29, 16 + 1},
		{"await", "(async () => { await 1 })(); 1", 28, 1 + 16},
		{"for await, per iteration", "(async () => { for await (const x of [1, 2]) (x) })(); 1", 139, 1 + 2*16},
		{"async generator yield", "(async function* () { yield 1 })().next(); 1", 29, 1 + 16},
		// A backtracking search: current programs pay its steps as well as
		// its span; format version 2 its span alone, as its journals
		// recorded (these are the readings release 0.2.0 gave them).
		{"backtracking search, lookahead", "const s = 'ab'.repeat(3200); let n = 0; const re = /a(?=b)/g; while (re.exec(s)) n++; n", 39313, 4250},
		{"backtracking search, backreference", "const s = 'ab'.repeat(3200); s.replace(/(a)\\1?b/g, 'x').length", 10419, 7400},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.v3, meter(c.src, programVersion), "current programs")
			assert.Equal(t, c.v2, meter(c.src, programVersionStrict), "format version 2")
		})
	}
}

// Only a backtracking regular expression is bounded by wall-clock time
// (docs/limits.md): a long scan with a string pattern is charged by size
// like any built-in, however long it takes on this machine.
func TestMeteringStringScanIsNotTimed(t *testing.T) {
	if raceEnabled {
		t.Skip("seconds of string work under the race detector")
	}
	limits := policy.DefaultLimits()
	limits.HeapLimitBytes = 1 << 30
	// Far more than the scans are charged: only a timeout can fail them.
	limits.InstructionBudget = 1 << 40
	for _, src := range []string{
		"'x'.repeat(4e6).split('').length",
		"'xy'.repeat(2e6).split('y').length",
	} {
		t.Run(src, func(t *testing.T) {
			step := runLimits(t, src, limits)
			require.NoError(t, step.Err)
			assert.True(t, step.Done)
		})
	}
}
