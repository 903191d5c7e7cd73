package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
	"github.com/mustard-sidecar/mustard-sidecar/internal/sampletext"
)

// maxFrame is the request and response size every message here stays under.
const maxFrame = 1 << 20

// delivered is a suspension as delta or none delivery gives it.
type delivered struct {
	Type, Capability, Value    string
	SnapshotID, PolicyID, Base string
	Bytes                      []byte // the delta, the whole snapshot, or nothing
	Raw                        []byte
}

func deliveredOf(t *testing.T, resp hosttest.Response) delivered {
	t.Helper()
	require.True(t, resp.OK(), "step failed: %.300s", resp.Raw)
	st := resp.Step()
	d := delivered{Type: fmt.Sprint(st["type"]), Raw: resp.Raw, Bytes: resp.Payload}
	if d.Type == "completed" {
		_, d.Value = exactStep(t, resp)
		return d
	}
	d.Capability = fmt.Sprint(st["capability"])
	d.SnapshotID, d.PolicyID = resp.SnapshotID(), resp.PolicyID()
	d.Base, _ = resp.Result()["snapshot_base_id"].(string)
	return d
}

// resumeDelivery resumes a cached snapshot with the given delivery.
func (h *host) resumeDelivery(snapID, policyID, delivery string, payload map[string]any) delivered {
	h.t.Helper()
	return deliveredOf(h.t, h.do(h.req("resume", "snapshot_id", snapID, "policy_id", policyID,
		"auth", hosttest.Auth(hostKey, snapID), "payload", payload, "snapshot_delivery", delivery), nil, ""))
}

// wireSize is the size of a response on the wire: the JSONL line (which
// holds the bytes as base64), or the binary header plus payload.
func (h *host) wireSize(raw, payload []byte) int {
	if h.tr.jsonl {
		return len(raw)
	}
	return len(raw) + len(payload)
}

// fetchAll reads a snapshot the sidecar holds in chunks of at most chunk
// bytes, checking every response's offsets and size.
func (h *host) fetchAll(snapID string, chunk int) []byte {
	h.t.Helper()
	var out []byte
	for {
		resp := h.mustOK(h.do(h.req("snapshot", "snapshot_id", snapID, "offset", len(out), "max_bytes", chunk), nil, ""))
		require.Less(h.t, h.wireSize(resp.Raw, resp.Payload), maxFrame, "fetch response size")
		res := resp.Result()
		require.Equal(h.t, "snapshot", res["kind"])
		require.Equal(h.t, snapID, res["snapshot_id"])
		require.Equal(h.t, json.Number(fmt.Sprint(len(out))), res["offset"])
		total, err := res["total_bytes"].(json.Number).Int64()
		require.NoError(h.t, err)
		out = append(out, resp.Payload...)
		if int64(len(out)) == total {
			return out
		}
		require.NotEmpty(h.t, resp.Payload, "no progress before the end")
		require.Less(h.t, int64(len(out)), total)
	}
}

// stageAll uploads b as stage id in chunks of at most chunk bytes.
func (h *host) stageAll(id string, b []byte, chunk int) {
	h.t.Helper()
	for off := 0; off < len(b); off += chunk {
		end := min(off+chunk, len(b))
		hdr := h.req("stage", "stage_id", id, "offset", off)
		resp := h.mustOK(h.do(hdr, b[off:end], "bytes_base64"))
		require.Equal(h.t, "staged", resp.Result()["kind"])
		require.Equal(h.t, json.Number(fmt.Sprint(end)), resp.Result()["total_bytes"])
	}
}

// randomText is about size bytes of JSON holding base64 of random bytes:
// it compresses by a quarter at most.
func randomText(r *rand.Rand, size int) string {
	raw := make([]byte, (size-20)*3/4)
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	return `{"data":"` + base64.StdEncoding.EncodeToString(raw) + `","end":0}`
}

// A 40-call execution whose answers are about 50 KB each. With delta
// delivery every response carries only what the step added, whatever the
// step; answers are journaled compressed, so JSON-like text leaves a
// snapshot under half the answer bytes, while random text grows it past
// 1 MiB. The whole snapshot rebuilt from the deltas equals the one a
// none-delivery replay leaves for a chunked fetch, and a fresh process
// resumes it from a chunked stage to the value the hot run reaches.
func TestE2EDeltaDeliveryOfLargeSnapshot(t *testing.T) {
	t.Parallel()
	const calls = 40
	// The guest keeps its answers, so its snapshots are the journal of
	// them (a checkpoint's image would be larger).
	const src = `let total = 0; const kept = [];
for (let i = 0; i < 40; i++) { const r = fetch_data(i); kept.push(r); total += r.length + JSON.parse(r).end; }
total;`
	texts := map[string]func(*rand.Rand, int) string{"json-like": sampletext.JSONLike, "random": randomText}
	for _, tr := range transports {
		for kind, text := range texts {
			if !longtest.Enabled() && tr.jsonl == (kind == "random") {
				// The default run takes one pair of each: binary/random
				// and jsonl/json-like.
				continue
			}
			t.Run(tr.name+"/"+kind, func(t *testing.T) {
				t.Parallel()
				rng := rand.New(rand.NewPCG(7, 40))
				answers := make([]map[string]any, calls)
				total := 0
				for i := range answers {
					s := text(rng, 50_000)
					total += len(s)
					answers[i] = valuePayload(str(s))
				}
				var deltas []int
				h := newHost(t, tr)
				programID, _ := h.compile(src)
				first := deliveredOf(t, h.do(h.req("start", "program_id", programID, "options", options(fetchCaps, nil), "snapshot_delivery", "delta"), nil, ""))
				require.Equal(t, "suspended", first.Type)
				require.Empty(t, first.Base, "a start comes in full")
				require.Equal(t, sha256Hex(first.Bytes), first.SnapshotID)

				whole := first.Bytes
				cur, prev := first, first
				for i := 0; i < calls-1; i++ {
					next := h.resumeDelivery(cur.SnapshotID, cur.PolicyID, "delta", answers[i])
					require.Equal(t, "suspended", next.Type)
					require.Equal(t, cur.SnapshotID, next.Base, "step %d", i)
					require.Less(t, h.wireSize(next.Raw, next.Bytes), maxFrame)
					// Only what the step appended: its answer and the next call.
					deltas = append(deltas, len(next.Bytes))
					whole = append(whole, next.Bytes...)
					require.Equal(t, sha256Hex(whole), next.SnapshotID, "step %d", i)
					prev, cur = cur, next
				}
				// Each delta is one compressed answer: its size does not grow
				// with the step.
				slices.Sort(deltas)
				t.Logf("%s: deltas %d to %d bytes; final snapshot %d bytes for %d answer bytes", kind, deltas[0], deltas[len(deltas)-1], len(whole), total)
				require.Less(t, float64(deltas[len(deltas)-1]), 1.2*float64(deltas[0]), "delta sizes")
				if kind == "json-like" {
					require.LessOrEqual(t, len(whole), total/2, "the final snapshot is at most half the answer bytes")
					return
				}
				require.Greater(t, len(whole), maxFrame, "the final snapshot is larger than a frame")

				// Replaying the last step with none delivery reaches the same
				// snapshot and carries no bytes; the fetch gives them.
				again := h.resumeDelivery(prev.SnapshotID, prev.PolicyID, "none", answers[calls-2])
				require.Equal(t, cur.SnapshotID, again.SnapshotID)
				require.Empty(t, again.Bytes)
				require.NotContains(t, string(again.Raw), "snapshot_base64")
				require.NotContains(t, string(again.Raw), "snapshot_base_id")
				fetched := h.fetchAll(cur.SnapshotID, 300_000)
				require.True(t, bytes.Equal(whole, fetched), "fetched %d bytes, rebuilt %d", len(fetched), len(whole))
				// The largest chunk that keeps every response under 1 MiB: the
				// cap in binary frames, three quarters of it in JSONL (base64).
				largest := 983_040
				if tr.jsonl {
					largest = 737_280
				}
				require.True(t, bytes.Equal(whole, h.fetchAll(cur.SnapshotID, largest)))
				// Without max_bytes a fetch returns the contract's default, 960
				// KiB, in either transport (a JSONL line is then over 1 MiB).
				dflt := h.mustOK(h.do(h.req("snapshot", "snapshot_id", cur.SnapshotID), nil, ""))
				require.Equal(t, whole[:983_040], dflt.Payload)

				hot := h.resumeDelivery(cur.SnapshotID, cur.PolicyID, "delta", answers[calls-1])
				require.Equal(t, "completed", hot.Type)

				// A fresh process: upload in chunks under 1 MiB, resume cold.
				fresh := newHost(t, tr)
				fresh.stageAll("final", whole, 700_000)
				pol := hosttest.Policy(hostKey, cur.SnapshotID, fetchCaps, map[string]any{})
				cold := deliveredOf(t, fresh.do(fresh.req("resume", "stage_id", "final", "policy", pol, "payload", answers[calls-1]), nil, ""))
				require.Equal(t, "completed", cold.Type)
				require.Equal(t, hot.Value, cold.Value)
			})
		}
	}
}

// At every step of a 30-call execution, base + delta hash to snapshot_id;
// a none-delivery replay of the same step leaves the same bytes for a
// fetch; and each rebuilt snapshot resumes in a fresh process, with delta
// delivery extending the bytes sent, to the hot run's final value.
func TestE2EDeltaEveryStepRebuildsAndResumesCold(t *testing.T) {
	t.Parallel()
	const src = `async function main() {
  const seen = [];
  for (let i = 0; i < 30; i++) seen.push(await fetch_data({ i, r: Math.floor(Math.random() * 100) }));
  return { n: seen.length, sum: seen.reduce((a, b) => a + b.length, 0), last: seen[29], now: Date.now() };
}
main();`
	answer := func(i int) map[string]any { return valuePayload(str(strings.Repeat(fmt.Sprint(i%10), i*37+1))) }
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, tr)
			programID, _ := h.compile(src)
			cur := deliveredOf(t, h.do(h.req("start", "program_id", programID, "options", options(fetchCaps, nil), "snapshot_delivery", "delta"), nil, ""))
			snaps := [][]byte{cur.Bytes}
			ids := []string{cur.SnapshotID}
			whole := cur.Bytes
			var final string
			for i := 0; ; i++ {
				next := h.resumeDelivery(cur.SnapshotID, cur.PolicyID, "delta", answer(i))
				if next.Type == "completed" {
					require.Equal(t, 30, i+1)
					final = next.Value
					break
				}
				require.Equal(t, cur.SnapshotID, next.Base)
				whole = append(append([]byte(nil), whole...), next.Bytes...)
				require.Equal(t, sha256Hex(whole), next.SnapshotID, "step %d", i)
				again := h.resumeDelivery(cur.SnapshotID, cur.PolicyID, "none", answer(i))
				require.Equal(t, next.SnapshotID, again.SnapshotID)
				require.Empty(t, again.Bytes)
				require.Equal(t, whole, h.fetchAll(next.SnapshotID, 97))
				snaps, ids = append(snaps, whole), append(ids, next.SnapshotID)
				cur = next
			}

			// Every rebuilt snapshot, resumed from its bytes in one fresh
			// process (each a replay: the chains of earlier ones resumed
			// their continuations), runs to the same value.
			fresh := newHost(t, tr)
			for k, snap := range snaps {
				pol := hosttest.Policy(hostKey, ids[k], fetchCaps, map[string]any{})
				d := deliveredOf(t, fresh.do(fresh.req("resume", "policy", pol, "payload", answer(k), "snapshot_delivery", "delta"), snap, "snapshot_base64"))
				for i := k + 1; d.Type == "suspended"; i++ {
					require.Equal(t, ids[i-1], d.Base)
					require.Equal(t, ids[i], d.SnapshotID)
					require.Equal(t, snaps[i], append(append([]byte(nil), snaps[i-1]...), d.Bytes...))
					d = fresh.resumeDelivery(d.SnapshotID, d.PolicyID, "delta", answer(i))
				}
				require.Equal(t, final, d.Value, "cold resume of step %d", k)
			}
		})
	}
}

// Stages end to end: the --max-stage-bytes bound, a restart at offset 0,
// and the stage a resume drops.
func TestE2EStageBoundRestartAndDrop(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			sc, err := hosttest.Start(append(tr.args(), "--max-stage-bytes", "4000")...)
			require.NoError(t, err)
			t.Cleanup(sc.Kill)
			h := &host{t: t, tr: tr, sc: sc}
			s := suspendFetch(t, h)
			require.Less(t, len(s.Snapshot), 2000)

			h.stageAll("up", []byte(strings.Repeat("x", 1500)), 500)
			resp := h.do(h.req("stage", "stage_id", "other", "offset", 0), make([]byte, 2501), "bytes_base64")
			require.Equal(t, "stage exceeds 4000 bytes", resp.Error())
			resp = h.do(h.req("stage", "stage_id", "up", "offset", 1000), []byte("y"), "bytes_base64")
			require.Equal(t, "stage offset 1000 does not match staged length 1500", resp.Error())
			h.stageAll("up", s.Snapshot, 100) // restart at 0 replaces the garbage
			h.stageAll("other", make([]byte, 4000-len(s.Snapshot)), 4000)

			pol := rawPolicy(s)
			done := deliveredOf(t, h.do(h.req("resume", "stage_id", "up", "policy", pol, "payload", fiveAnswer), nil, ""))
			require.Equal(t, `{"Number":{"Finite":6.0}}`, done.Value)
			resp = h.do(h.req("resume", "stage_id", "up", "policy", pol, "payload", fiveAnswer), nil, "")
			require.Equal(t, "unknown stage_id `up`", resp.Error())
			// The dropped stage's bytes are free again.
			h.stageAll("third", make([]byte, len(s.Snapshot)), 4000)
			h.ping()
		})
	}
}

// Every failure the new requests can meet is a per-request error with its
// exact phrase, after which the session serves on and the snapshot still
// resumes.
func TestE2ETransferFailures(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, tr)
			s := suspendFetch(t, h)
			n := len(s.Snapshot)
			cached := func(kv ...any) map[string]any {
				m := map[string]any{"snapshot_id": s.SnapshotID, "policy_id": s.PolicyID, "auth": hosttest.Auth(hostKey, s.SnapshotID), "payload": fiveAnswer}
				for i := 0; i < len(kv); i += 2 {
					m[kv[i].(string)] = kv[i+1]
				}
				return m
			}
			h.stageAll("keep", s.Snapshot[:10], 10)
			cases := []struct {
				name, method string
				fields       map[string]any
				raw          []byte
				want         string
			}{
				{"unknown delivery on start", "start", map[string]any{"program_id": s.programID, "options": options(fetchCaps, nil), "snapshot_delivery": "deltas"}, nil, "unknown snapshot_delivery `deltas`"},
				{"unknown delivery on resume", "resume", cached("snapshot_delivery", "FULL"), nil, "unknown snapshot_delivery `FULL`"},
				{"delivery not a string", "resume", cached("snapshot_delivery", true), nil, "snapshot_delivery must be a string"},
				{"fetch unknown id", "snapshot", map[string]any{"snapshot_id": zeros64}, nil, "unknown snapshot_id `" + zeros64 + "`"},
				{"fetch without id", "snapshot", map[string]any{}, nil, "snapshot requires snapshot_id"},
				{"fetch past the end", "snapshot", map[string]any{"snapshot_id": s.SnapshotID, "offset": n + 1}, nil, fmt.Sprintf("offset %d is past the end of snapshot (%d bytes)", n+1, n)},
				{"fetch fractional offset", "snapshot", map[string]any{"snapshot_id": s.SnapshotID, "offset": 1.5}, nil, "offset must be an unsigned integer"},
				{"fetch negative max_bytes", "snapshot", map[string]any{"snapshot_id": s.SnapshotID, "max_bytes": -1}, nil, "max_bytes must be an unsigned integer"},
				{"stage without id", "stage", map[string]any{"offset": 0}, []byte("x"), "stage requires stage_id"},
				{"stage id too long", "stage", map[string]any{"stage_id": strings.Repeat("a", 65), "offset": 0}, []byte("x"), "stage_id must be 1 to 64 characters of [A-Za-z0-9_-]"},
				{"stage id with a dot", "stage", map[string]any{"stage_id": "a.b", "offset": 0}, []byte("x"), "stage_id must be 1 to 64 characters of [A-Za-z0-9_-]"},
				{"stage id not a string", "stage", map[string]any{"stage_id": 7, "offset": 0}, []byte("x"), "stage_id must be a string"},
				{"stage without offset", "stage", map[string]any{"stage_id": "keep"}, []byte("x"), "stage requires offset"},
				{"stage offset mismatch", "stage", map[string]any{"stage_id": "keep", "offset": 11}, []byte("x"), "stage offset 11 does not match staged length 10"},
				{"stage unknown past 0", "stage", map[string]any{"stage_id": "nope", "offset": 3}, []byte("x"), "unknown stage_id `nope`"},
				{"resume unknown stage", "resume", map[string]any{"stage_id": "nope", "policy": rawPolicy(s), "payload": fiveAnswer}, nil, "unknown stage_id `nope`"},
				{"resume invalid stage id", "resume", map[string]any{"stage_id": "", "policy": rawPolicy(s), "payload": fiveAnswer}, nil, "stage_id must be 1 to 64 characters of [A-Za-z0-9_-]"},
			}
			for _, c := range cases {
				resp := h.do(h.req(c.method, kvs(c.fields)...), c.raw, "bytes_base64")
				require.False(t, resp.OK(), "%s: %s", c.name, resp.Raw)
				require.Equal(t, c.want, resp.Error(), c.name)
				requireCleanError(t, resp.Error())
				h.ping()
			}
			// Bytes and a stage in one resume; the stage is dropped all the same.
			resp := h.do(h.req("resume", "stage_id", "keep", "policy", rawPolicy(s), "payload", fiveAnswer), s.Snapshot, "snapshot_base64")
			require.Equal(t, "resume takes snapshot bytes or stage_id, not both", resp.Error())
			resp = h.do(h.req("stage", "stage_id", "keep", "offset", 10), []byte("x"), "bytes_base64")
			require.Equal(t, "unknown stage_id `keep`", resp.Error())
			done := deliveredOf(t, h.do(h.req("resume", kvs(cached())...), nil, ""))
			require.Equal(t, `{"Number":{"Finite":6.0}}`, done.Value)
		})
	}
}

func kvs(m map[string]any) []any {
	var out []any
	for k, v := range m {
		out = append(out, k, v)
	}
	return out
}
