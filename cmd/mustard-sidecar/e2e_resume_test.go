package main

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// workflowProgram makes 24 capability calls mixing sequential awaits, loops,
// Promise.all fan-out (also inside a loop), a host error caught by guest
// try/catch, and Math.random/Date.now, which must survive cold resumes.
const workflowProgram = `
async function main() {
  const user = await get_user({ id: 1 });
  const prefs = await get_prefs(user.name);
  let total = 0;
  for (let i = 0; i < 4; i++) {
    total += await fetch_data(i);
  }
  total += fetch_data(Math.floor(Math.random() * 1000)) % 2;
  const items = await Promise.all([10, 20, 30, 40, 50, 60].map((n) => fetch_data(n)));
  const recovered = [];
  for (const k of ["a", "b", "c"]) {
    try {
      recovered.push(await lookup(k));
    } catch (e) {
      recovered.push([e instanceof Error, e.name, e.message, e.code, e.details.key].join("|"));
    }
  }
  const pages = [];
  for (let page = 0, more = true; more; page++) {
    const r = await list_page(page);
    pages.push(r.items.length);
    more = r.more;
  }
  const pairs = [];
  for (const g of [1, 2]) {
    pairs.push(await Promise.all([fetch_data(g * 100), fetch_data(g * 100 + 1)]));
  }
  return { user: user.name, prefs, total, items, recovered, pages, pairs, rnd: Math.random(), now: Date.now() };
}
main();
`

var workflowCaps = []string{"fetch_data", "get_prefs", "get_user", "list_page", "lookup"}

// workflowAnswer is the host: a fixed answer for each call.
func workflowAnswer(t *testing.T, s step) map[string]any {
	t.Helper()
	var args []any
	require.NoError(t, decodeJSON(s.Args, &args))
	switch s.Capability {
	case "get_user":
		return valuePayload(map[string]any{"Object": map[string]any{"name": str("ada")}})
	case "get_prefs":
		return valuePayload(map[string]any{"Object": map[string]any{"theme": str("dark"), "for": args[0]}})
	case "fetch_data":
		return valuePayload(num(2 * argNumber(t, args, 0)))
	case "lookup":
		key := args[0].(map[string]any)["String"].(string)
		if key == "b" {
			return map[string]any{"type": "error", "error": map[string]any{
				"name": "LookupError", "message": "no such key", "code": "E_MISSING",
				"details": map[string]any{"Object": map[string]any{"key": str(key)}},
			}}
		}
		return valuePayload(str("val-" + key))
	case "list_page":
		p := argNumber(t, args, 0)
		items := make([]any, int(p)+1)
		for i := range items {
			items[i] = num(float64(i))
		}
		return valuePayload(map[string]any{"Object": map[string]any{
			"items": map[string]any{"Array": items},
			"more":  map[string]any{"Bool": p < 2},
		}})
	}
	t.Fatalf("unexpected capability %q", s.Capability)
	return nil
}

// startWorkflow compiles and starts the workflow on h.
func startWorkflow(t *testing.T, h *host) step {
	programID, _ := h.compile(workflowProgram)
	return stepOf(t, h.start(programID, workflowCaps, nil))
}

// hotRun answers every suspension of one execution in the process that
// produced it, by cached id.
func hotRun(t *testing.T, h *host, first step) []step {
	steps := []step{first}
	for cur := first; cur.Type == "suspended"; {
		cur = stepOf(t, h.resumeCached(cur.SnapshotID, cur.PolicyID, workflowAnswer(t, cur)))
		steps = append(steps, cur)
		require.Less(t, len(steps), 100, "runaway execution")
	}
	return steps
}

// Cold resume at every step, each in a brand-new process from raw bytes and
// a full policy, reproduces the all-hot run exactly: capabilities, args,
// snapshot ids, snapshot bytes and the final value. The default run takes
// the binary transport (a process for each of 20 steps); the long suites
// JSONL too, which the default run resumes cold from base64 elsewhere
// (TestE2ETamperedSnapshotEveryByte, protocol's TestConsoleLogsOnTheWire).
func TestE2EColdResumeEveryStepMatchesHot(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		if tr.jsonl && !longtest.Enabled() {
			continue
		}
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, tr)
			first := startWorkflow(t, h)
			hot := hotRun(t, h, first)
			require.GreaterOrEqual(t, len(hot), 21, "at least 20 capability calls")
			final := hot[len(hot)-1]
			require.Equal(t, "completed", final.Type)
			assert.Contains(t, final.Value, `"recovered":{"Array":[{"String":"val-a"},{"String":"true|LookupError|no such key|E_MISSING|b"},{"String":"val-c"}]}`)
			assert.Contains(t, final.Value, `"pages":{"Array":[{"Number":{"Finite":1.0}},{"Number":{"Finite":2.0}},{"Number":{"Finite":3.0}}]}`)
			assert.Contains(t, final.Value, `"items":{"Array":[{"Number":{"Finite":20.0}},{"Number":{"Finite":40.0}},{"Number":{"Finite":60.0}},{"Number":{"Finite":80.0}},{"Number":{"Finite":100.0}},{"Number":{"Finite":120.0}}]}`)

			cold := []step{first}
			for cur := first; cur.Type == "suspended"; {
				fresh := newHost(t, tr)
				cur = stepOf(t, fresh.resumeRaw(cur.Snapshot, workflowCaps, workflowAnswer(t, cur)))
				fresh.sc.Kill()
				cold = append(cold, cur)
				require.LessOrEqual(t, len(cold), len(hot), "cold run is longer than the hot run")
			}
			require.Equal(t, len(hot), len(cold))
			for i := range hot {
				require.Equal(t, hot[i], cold[i], "step %d", i)
			}
		})
	}
}

// Each snapshot of an execution extends the previous one, so a host can
// store them incrementally.
func TestE2ESnapshotsArePrefixes(t *testing.T) {
	t.Parallel()
	h := newHost(t, transports[0])
	steps := hotRun(t, h, startWorkflow(t, h))
	for i := 1; i < len(steps)-1; i++ {
		prev, cur := steps[i-1].Snapshot, steps[i].Snapshot
		require.Greater(t, len(cur), len(prev))
		require.Equal(t, prev, cur[:len(prev)], "snapshot %d extends snapshot %d", i, i-1)
	}
}

// Resuming one snapshot again and again, by cached id, by raw bytes, in
// the same process and in a fresh one, behaves as if it were the first time
// and leaves other snapshots alone.
func TestE2EResumeSameSnapshotRepeatedly(t *testing.T) {
	t.Parallel()
	const src = `const a = fetch_data(1); const b = fetch_data(a * 10); [a, b, Math.random()];`
	caps := []string{"fetch_data"}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, tr)
			programID, _ := h.compile(src)
			s1 := stepOf(t, h.start(programID, caps, nil))
			seven := valuePayload(num(7))

			var next []step
			next = append(next, stepOf(t, h.resumeCached(s1.SnapshotID, s1.PolicyID, seven)))
			next = append(next, stepOf(t, h.resumeRaw(s1.Snapshot, caps, seven)))
			next = append(next, stepOf(t, h.resumeCached(s1.SnapshotID, s1.PolicyID, seven)))
			// A different answer gives a different next snapshot and must not
			// disturb the one already produced.
			other := stepOf(t, h.resumeCached(s1.SnapshotID, s1.PolicyID, valuePayload(num(8))))
			assert.Equal(t, `[{"Number":{"Finite":80.0}}]`, other.Args)
			assert.NotEqual(t, next[0].SnapshotID, other.SnapshotID)
			next = append(next, stepOf(t, h.resumeRaw(s1.Snapshot, caps, seven)))

			fresh := newHost(t, tr)
			next = append(next, stepOf(t, fresh.resumeRaw(s1.Snapshot, caps, seven)))
			// The fresh process cached the bytes it was given.
			next = append(next, stepOf(t, fresh.resumeCached(s1.SnapshotID, s1.PolicyID, seven)))
			next = append(next, stepOf(t, fresh.resumeRaw(s1.Snapshot, caps, seven)))

			assert.Equal(t, `[{"Number":{"Finite":70.0}}]`, next[0].Args)
			for i := range next {
				require.Equal(t, next[0], next[i], "resume %d of the same snapshot", i)
			}

			// The final step repeats too, from every copy of the snapshot.
			var done []string
			for i, hh := range []*host{h, h, fresh, fresh} {
				var resp hosttest.Response
				if i%2 == 0 {
					resp = hh.resumeCached(next[0].SnapshotID, next[0].PolicyID, valuePayload(num(3)))
				} else {
					resp = hh.resumeRaw(next[0].Snapshot, caps, valuePayload(num(3)))
				}
				done = append(done, stepOf(t, resp).Value)
			}
			for _, v := range done {
				require.Equal(t, done[0], v)
			}
			require.Contains(t, done[0], `[{"Number":{"Finite":7.0}},{"Number":{"Finite":3.0}},{"Number":{"Finite":`)

			// The other branch still completes with its own answer.
			v := stepOf(t, h.resumeCached(other.SnapshotID, other.PolicyID, valuePayload(num(4)))).Value
			require.Contains(t, v, `[{"Number":{"Finite":8.0}},{"Number":{"Finite":4.0}},`)
		})
	}
}

// A host error answer is a guest Error with name, message, code and
// details; an uncaught one fails with Runtime: <name>: <message>; a
// cancelled answer ends the execution and cannot be caught.
func TestE2EResumePayloadKinds(t *testing.T) {
	t.Parallel()
	const src = `
async function main() {
  let seen;
  try { await fetch_data(1); } catch (e) { seen = [e.name, e.message, e.code, e.details, Object.hasOwn(e, "code"), Object.hasOwn(e, "details")]; }
  try { await fetch_data(2); } catch (e) { return "caught " + e; }
  return seen;
}
main();`
	caps := []string{"fetch_data"}
	hostErr := func(e map[string]any) map[string]any { return map[string]any{"type": "error", "error": e} }
	cases := []struct {
		name    string
		answers []map[string]any
		value   string // completed value
		err     string // or failure prefix
	}{
		{
			name: "error with code and details",
			answers: []map[string]any{
				hostErr(map[string]any{"name": "HttpError", "message": "boom", "code": "E42", "details": num(3)}),
				valuePayload(str("ok")),
			},
			value: `{"Array":[{"String":"HttpError"},{"String":"boom"},{"String":"E42"},{"Number":{"Finite":3.0}},{"Bool":true},{"Bool":true}]}`,
		},
		{
			name:    "error defaults",
			answers: []map[string]any{hostErr(map[string]any{}), valuePayload(str("ok"))},
			value:   `{"Array":[{"String":"Error"},{"String":""},"Undefined","Undefined",{"Bool":false},{"Bool":false}]}`,
		},
		{
			name:    "cancelled is not catchable",
			answers: []map[string]any{{"type": "cancelled"}},
			err:     "Limit: execution cancelled",
		},
		{
			name:    "cancelled later",
			answers: []map[string]any{valuePayload(str("v")), {"type": "cancelled"}},
			err:     "Limit: execution cancelled",
		},
	}
	for _, tr := range transports {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/%s", tr.name, tc.name), func(t *testing.T) {
				t.Parallel()
				h := newHost(t, tr)
				programID, _ := h.compile(src)
				start := stepOf(t, h.start(programID, caps, nil))
				// Hot and cold answers must agree.
				for _, cold := range []bool{false, true} {
					cur := start
					var resp hosttest.Response
					for i, a := range tc.answers {
						require.Equal(t, "suspended", cur.Type, "answer %d", i)
						if cold {
							fresh := newHost(t, tr)
							resp = fresh.resumeRaw(cur.Snapshot, caps, a)
							fresh.sc.Kill()
						} else {
							resp = h.resumeCached(cur.SnapshotID, cur.PolicyID, a)
						}
						if resp.OK() {
							cur = stepOf(t, resp)
						}
					}
					if tc.err != "" {
						require.False(t, resp.OK(), "%s", resp.Raw)
						require.Equal(t, tc.err, resp.Error())
						continue
					}
					require.Equal(t, "completed", cur.Type)
					require.Equal(t, tc.value, cur.Value)
				}
			})
		}
	}
}

// The policy given at resume is the one in force: its limits govern the
// resumed execution and its id comes back with the next suspension. A
// resume refused by the new limits leaves the snapshot resumable.
func TestE2EResumePolicyInForce(t *testing.T) {
	t.Parallel()
	const src = `let n = 0; for (let i = 0; i < 100; i++) n += i; const a = fetch_data(n); fetch_data(a);`
	wide := []string{"fetch_data", "other_cap"}
	tight := map[string]any{"instruction_budget": 10}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, tr)
			programID, _ := h.compile(src)
			s1 := stepOf(t, h.start(programID, fetchCaps, nil))
			require.Equal(t, `[{"Number":{"Finite":4950.0}}]`, s1.Args)
			// Policy ids of the tight and the wide policy, from suspensions.
			quickID, _ := h.compile(`fetch_data(0);`)
			tightID := stepOf(t, h.do(h.req("start", "program_id", quickID, "options",
				map[string]any{"capabilities": fetchCaps, "limits": tight}), nil, "")).PolicyID
			wideID := stepOf(t, h.start(quickID, wide, nil)).PolicyID

			// The budget already spent exceeds the tight limits, in both forms.
			resp := h.do(h.req("resume", "snapshot_id", s1.SnapshotID, "policy",
				hosttest.Policy(hostKey, s1.SnapshotID, fetchCaps, tight), "payload", fiveAnswer), s1.Snapshot, "snapshot_base64")
			require.Equal(t, "Limit: instruction budget exhausted", resp.Error())
			resp = h.resumeCached(s1.SnapshotID, tightID, fiveAnswer)
			require.Equal(t, "Limit: instruction budget exhausted", resp.Error())

			// A wider policy is in force after the resume, hot or cold.
			hot := stepOf(t, h.resumeCached(s1.SnapshotID, wideID, fiveAnswer))
			require.Equal(t, wideID, hot.PolicyID)
			require.Equal(t, `[{"Number":{"Finite":5.0}}]`, hot.Args)
			cold := stepOf(t, h.resumeRaw(s1.Snapshot, wide, fiveAnswer))
			require.Equal(t, hot, cold)
		})
	}
}

// echoAnswer answers every call with its first argument, or with a host
// error when that argument is the string "fail".
func echoAnswer(t *testing.T, s step) map[string]any {
	var args []any
	require.NoError(t, decodeJSON(s.Args, &args))
	if len(args) == 0 {
		return valuePayload("Undefined")
	}
	if m, ok := args[0].(map[string]any); ok && m["String"] == "fail" {
		return map[string]any{"type": "error", "error": map[string]any{"name": "HostError", "message": "failed", "code": "E"}}
	}
	return valuePayload(args[0])
}

// Replay determinism across guest features: for each program, resuming
// every snapshot cold in a new process gives the hot run's steps exactly.
func TestE2EColdMatchesHotAcrossFeatures(t *testing.T) {
	t.Parallel()
	programs := []struct{ name, src string }{
		{"random and clock between calls", `
const a = cap(Math.random()); const d1 = Date.now(); const b = cap(Math.random());
[a, b, d1 === Date.now(), new Date().toISOString().length, Math.random()];`},
		{"rejection inside Promise.all", `
async function main() {
  try { await Promise.all([cap(1), cap("fail"), cap(3)]); } catch (e) { return [e.name, e.code, await cap(4)]; }
}
main();`},
		{"calls in a sort comparator", `[3, 1, 2].sort((x, y) => cap(x) - cap(y));`},
		{"generator driving calls", `
function* gen() { for (let i = 0; i < 3; i++) yield cap(i); }
const out = []; for (const v of gen()) out.push(v); out;`},
		{"promise chains and race", `
async function main() {
  const out = [];
  for (let i = 0; i < 3; i++) out.push(await Promise.resolve(i).then((v) => cap(v)).then((v) => cap(v + 10)));
  out.push(await Promise.race([cap("r1"), cap("r2")]));
  return out;
}
main();`},
		{"closure state and object key order", `
const o = {}; let k = 0;
const next = () => { o["k" + (k++)] = cap(k); return o; };
next(); next(); o.z = 1; next(); o;`},
		{"getter and toString calling out", `
const o = { get v() { return cap("g"); }, toString() { return String(cap("s")); } };
[o.v, "" + o, JSON.stringify({ a: o.v })];`},
		{"host error details round trip", `
let r; try { cap("fail"); } catch (e) { r = [e instanceof Error, e.message, Object.getPrototypeOf(e) === Error.prototype]; } [r, cap(2)];`},
		{"top-level await", `const x = await cap(1); const y = await cap(x + 1); x + y;`},
	}
	caps := []string{"cap"}
	for _, tr := range transports {
		for i, pg := range programs {
			if tr.jsonl && !longtest.Sampled(i) {
				continue // every program over binary frames, a sample over JSONL
			}
			t.Run(tr.name+"/"+pg.name, func(t *testing.T) {
				t.Parallel()
				h := newHost(t, tr)
				programID, _ := h.compile(pg.src)
				first := stepOf(t, h.start(programID, caps, nil))
				hot := []step{first}
				for cur := first; cur.Type == "suspended"; {
					cur = stepOf(t, h.resumeCached(cur.SnapshotID, cur.PolicyID, echoAnswer(t, cur)))
					hot = append(hot, cur)
					require.Less(t, len(hot), 50)
				}
				cold := []step{first}
				for cur := first; cur.Type == "suspended" && len(cold) <= len(hot); {
					fresh := newHost(t, tr)
					cur = stepOf(t, fresh.resumeRaw(cur.Snapshot, caps, echoAnswer(t, cur)))
					fresh.sc.Kill()
					cold = append(cold, cur)
				}
				require.Equal(t, hot, cold)
			})
		}
	}
}

// Budgets are cumulative over the whole execution, whether the resume is
// hot or cold: a budget that covers each segment alone but not both fails
// in the second one.
func TestE2ELimitsCumulativeAcrossResumes(t *testing.T) {
	t.Parallel()
	const src = `let n = 0; for (let i = 0; i < 100; i++) n += i; const a = cap(1); for (let i = 0; i < 100; i++) n += i; n + a;`
	caps := []string{"cap"}
	cases := []struct {
		budget int
		want   string // value JSON, or error
	}{
		{2000, "Limit: instruction budget exhausted"},
		{5000, `{"Number":{"Finite":9901.0}}`},
	}
	for _, tr := range transports {
		for _, tc := range cases {
			for _, cold := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/budget=%d/cold=%v", tr.name, tc.budget, cold), func(t *testing.T) {
					t.Parallel()
					limits := map[string]any{"instruction_budget": tc.budget}
					h := newHost(t, tr)
					programID, _ := h.compile(src)
					s := stepOf(t, h.do(h.req("start", "program_id", programID, "options",
						map[string]any{"capabilities": caps, "limits": limits}), nil, ""))
					var resp hosttest.Response
					if cold {
						fresh := newHost(t, tr)
						resp = fresh.do(fresh.req("resume", "policy", hosttest.Policy(hostKey, s.SnapshotID, caps, limits),
							"payload", valuePayload(num(1))), s.Snapshot, "snapshot_base64")
					} else {
						resp = h.resumeCached(s.SnapshotID, s.PolicyID, valuePayload(num(1)))
					}
					if resp.OK() {
						require.Equal(t, tc.want, stepOf(t, resp).Value)
					} else {
						require.Equal(t, tc.want, resp.Error())
					}
				})
			}
		}
	}
}

// Snapshots written before journals recorded each segment's limits still
// resume: their past replays under the resume's limits, as it did then.
func TestE2EJournalWithoutLimitsStillResumes(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/journal_without_limits.json")
	require.NoError(t, err)
	var fx struct{ Request, Response string }
	require.NoError(t, json.Unmarshal(raw, &fx))
	sc, err := hosttest.Start("--jsonl")
	require.NoError(t, err)
	t.Cleanup(sc.Kill)
	require.NoError(t, sc.WriteBytes([]byte(fx.Request+"\n")))
	resp, err := sc.Recv()
	require.NoError(t, err)
	require.Equal(t, fx.Response, string(resp.Raw))
}

// A program compiled before guest code was strict (program format version
// 1) and a snapshot of it, both written by that sidecar
// (engine/testdata/snapshots/sloppy-v1.*): the program no longer starts
// (its metering charges less than today's), before or after a replay has
// cached it, but the snapshot cold-resumes, as sloppy-mode code, to the
// result it would have had (this as the global object, arguments.callee).
// Compiling the source today gives a strict program, with another id, that
// fails where the old one relied on sloppy mode.
func TestE2EProgramFormatV1OnlyResumes(t *testing.T) {
	t.Parallel()
	prog, err := os.ReadFile("../../engine/testdata/snapshots/sloppy-v1.program")
	require.NoError(t, err)
	snap, err := os.ReadFile("../../engine/testdata/snapshots/sloppy-v1.snap")
	require.NoError(t, err)
	caps := []string{"get"}
	answer := func(s step) map[string]any {
		var args []any
		require.NoError(t, decodeJSON(s.Args, &args))
		n, ok := args[0].(map[string]any)["Object"].(map[string]any)["n"].(map[string]any)["Number"].(map[string]any)["Finite"].(json.Number)
		require.True(t, ok, "args %s", s.Args)
		f, err := n.Float64()
		require.NoError(t, err)
		return valuePayload(num(10 * f))
	}
	var artifact struct {
		_       struct{} `cbor:",toarray"`
		Magic   string
		Version uint64
		Source  string
	}
	require.NoError(t, cbor.Unmarshal(prog, &artifact))
	require.Equal(t, uint64(1), artifact.Version)
	for _, tr := range transports {
		h := newHost(t, tr)

		retired := func(resp hosttest.Response) {
			t.Helper()
			require.False(t, resp.OK(), "%s", resp.Raw)
			assert.Equal(t, "Serialization: program bytes of format version 1 or 2 run only to resume their snapshots; compile the source again", resp.Error())
			assert.Equal(t, "retired_program_format", resp.Header["error_code"])
		}
		retired(h.do(h.req("start", "options", options(caps, nil)), prog, "program_base64"))

		s := stepOf(t, h.resumeRaw(snap, caps, valuePayload(num(30))))
		require.Equal(t, "suspended", s.Type)
		assert.Equal(t, `[{"Object":{"n":{"Number":{"Finite":4.0}}}}]`, s.Args)
		s = stepOf(t, h.resumeRaw(s.Snapshot, caps, answer(s)))
		require.Equal(t, "completed", s.Type)
		assert.Equal(t, `{"Array":[{"Number":{"Finite":10.0}},{"Number":{"Finite":1.0}},{"Number":{"Finite":20.0}},{"Bool":true},{"Number":{"Finite":30.0}},{"Number":{"Finite":40.0}},{"Number":{"Finite":1.0}},{"String":"count"}]}`, s.Value)
		// The replay cached the program: by its id it does not start
		// either.
		retired(h.do(h.req("start", "program_id", sha256Hex(prog), "options", options(caps, nil)), nil, ""))

		id, strict := h.compile(artifact.Source)
		assert.NotEqual(t, sha256Hex(prog), id)
		assert.NotEqual(t, prog, strict)
		resp := h.start(id, caps, nil)
		require.False(t, resp.OK(), "%s", resp.Raw)
		assert.Equal(t, "Runtime: ReferenceError: tally is not defined\n  at <script> (2:1)", resp.Error())
	}
}
