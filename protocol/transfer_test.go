package protocol_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

// sess drives a Session in process over either transport.
type sess struct {
	t     *testing.T
	s     *protocol.Session
	jsonl bool
	id    uint64
}

func newSess(t *testing.T, jsonl bool, opts protocol.Options) *sess {
	t.Helper()
	opts.Transport = protocol.Binary
	if jsonl {
		opts.Transport = protocol.JSONL
	}
	opts.Entropy = fixedEntropy
	s := protocol.NewSession(opts)
	t.Cleanup(s.Close)
	return &sess{t: t, s: s, jsonl: jsonl}
}

// reply is a decoded response: its header and its raw bytes (payload, or
// the base64 field of the transport).
type reply struct {
	hdr   map[string]any
	raw   string
	bytes []byte
}

func (r reply) ok() bool               { return r.hdr["ok"] == true }
func (r reply) err() string            { s, _ := r.hdr["error"].(string); return s }
func (r reply) result() map[string]any { m, _ := r.hdr["result"].(map[string]any); return m }
func (r reply) str(k string) string    { s, _ := r.result()[k].(string); return s }
func (r reply) step() map[string]any   { m, _ := r.result()["step"].(map[string]any); return m }
func (r reply) num(k string) int64 {
	n, _ := r.result()[k].(json.Number)
	v, _ := n.Int64()
	return v
}

// call sends a request with raw bytes in field (JSONL) or as the payload.
func (c *sess) call(method string, raw []byte, field string, kv ...any) reply {
	c.t.Helper()
	c.id++
	req := map[string]any{"protocol_version": 2, "id": c.id, "method": method}
	for i := 0; i < len(kv); i += 2 {
		req[kv[i].(string)] = kv[i+1]
	}
	var payload []byte
	if c.jsonl {
		if raw != nil {
			req[field] = base64.StdEncoding.EncodeToString(raw)
		}
	} else {
		payload = raw
	}
	hdr, err := json.Marshal(req)
	if err != nil {
		c.t.Fatal(err)
	}
	resp, err := c.s.Handle(hdr, payload)
	if err != nil {
		c.t.Fatalf("%s: fatal %v", hdr, err)
	}
	if len(resp.Header)+len(resp.Payload) >= 1<<20 && (method == "snapshot" || method == "stage") {
		c.t.Fatalf("%s response is %d bytes", method, len(resp.Header)+len(resp.Payload))
	}
	r := reply{raw: string(resp.Header)}
	d := json.NewDecoder(bytes.NewReader(resp.Header))
	d.UseNumber()
	if err := d.Decode(&r.hdr); err != nil {
		c.t.Fatalf("response %s: %v", resp.Header, err)
	}
	checkCode(c.t, r)
	r.bytes = resp.Payload
	if c.jsonl {
		for _, m := range []map[string]any{r.result(), r.step()} {
			if s, ok := m["snapshot_base64"].(string); ok {
				r.bytes, _ = base64.StdEncoding.DecodeString(s)
			}
		}
	}
	return r
}

// checkCode fails the test on a failure without a documented error_code,
// placed right after error, or a success with one.
func checkCode(t *testing.T, r reply) {
	t.Helper()
	code, has := r.hdr["error_code"].(string)
	if r.ok() {
		if _, there := r.hdr["error_code"]; there {
			t.Fatalf("successful response with an error_code: %s", r.raw)
		}
		return
	}
	if !has || !slices.Contains(protocol.ErrorCodes(), code) {
		t.Fatalf("failed response without a documented error_code: %s", r.raw)
	}
	if !strings.HasSuffix(r.raw, `,"error_code":"`+code+`"}`) {
		t.Fatalf("error_code is not the last member, right after error: %s", r.raw)
	}
}

func (c *sess) must(r reply) reply {
	c.t.Helper()
	if !r.ok() {
		c.t.Fatalf("request failed: %s", r.raw)
	}
	return r
}

func (c *sess) fail(r reply, want string) {
	c.t.Helper()
	if r.ok() || r.err() != want {
		c.t.Fatalf("want error %q, got %s", want, r.raw)
	}
}

func hexHMAC(key []byte, msg string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

func auth(id string) map[string]any {
	return map[string]any{
		"snapshot_key_base64": base64.StdEncoding.EncodeToString(testKey),
		"snapshot_key_digest": sha256Hex(testKey),
		"snapshot_token":      hexHMAC(testKey, id),
	}
}

func rawPolicy(id string, caps ...string) map[string]any {
	p := auth(id)
	p["snapshot_id"] = id
	p["capabilities"] = caps
	p["limits"] = map[string]any{}
	return p
}

func numPayload(n int) map[string]any {
	return map[string]any{"type": "value", "value": map[string]any{"Number": map[string]any{"Finite": n}}}
}

const threeCalls = `let t = 0; for (let i = 0; i < 3; i++) t += fetch_data(i); t;`

func (c *sess) startThree(delivery string) reply {
	c.t.Helper()
	prog := c.must(c.call("compile", nil, "", "source", threeCalls)).str("program_id")
	kv := []any{"program_id", prog, "options", map[string]any{"capabilities": []string{"fetch_data"}}}
	if delivery != "" {
		kv = append(kv, "snapshot_delivery", delivery)
	}
	return c.must(c.call("start", nil, "", kv...))
}

func forBoth(t *testing.T, f func(t *testing.T, jsonl bool)) {
	for _, jsonl := range []bool{false, true} {
		t.Run(map[bool]string{false: "binary", true: "jsonl"}[jsonl], func(t *testing.T) { f(t, jsonl) })
	}
}

// forBothLong is forBoth for tests that move tens of megabytes: the
// default run takes binary frames only (the same bytes in base64 lines
// take minutes under -race), the long suites both transports.
func forBothLong(t *testing.T, f func(t *testing.T, jsonl bool)) {
	if longtest.Enabled() {
		forBoth(t, f)
		return
	}
	t.Run("binary", func(t *testing.T) { f(t, false) })
}

// Delta delivery: a start comes in full; each resume, hot or replayed,
// carries only the appended bytes and the id they extend.
func TestSnapshotDeliveryDelta(t *testing.T) {
	forBoth(t, func(t *testing.T, jsonl bool) {
		c := newSess(t, jsonl, protocol.Options{})
		st := c.startThree("delta")
		if _, ok := st.result()["snapshot_base_id"]; ok || sha256Hex(st.bytes) != st.str("snapshot_id") {
			t.Fatalf("a start comes in full: %s", st.raw)
		}
		full, id, pol := st.bytes, st.str("snapshot_id"), st.str("policy_id")

		// Hot resume.
		r := c.must(c.call("resume", nil, "", "snapshot_id", id, "policy_id", pol, "auth", auth(id), "payload", numPayload(1), "snapshot_delivery", "delta"))
		if r.str("snapshot_base_id") != id {
			t.Fatalf("hot delta without base id: %s", r.raw)
		}
		next := append(append([]byte(nil), full...), r.bytes...)
		if sha256Hex(next) != r.str("snapshot_id") {
			t.Fatal("base + delta does not hash to snapshot_id")
		}
		// The same snapshot again: now a replay, with the same delta.
		again := c.must(c.call("resume", nil, "", "snapshot_id", id, "policy_id", pol, "auth", auth(id), "payload", numPayload(1), "snapshot_delivery", "delta"))
		if again.str("snapshot_id") != r.str("snapshot_id") || !bytes.Equal(again.bytes, r.bytes) || again.str("snapshot_base_id") != id {
			t.Fatalf("replayed delta differs: %s", again.raw)
		}
		// A raw resume in a fresh session: the delta extends the bytes sent.
		cold := newSess(t, jsonl, protocol.Options{})
		nid := r.str("snapshot_id")
		cr := cold.must(cold.call("resume", next, "snapshot_base64", "policy", rawPolicy(nid, "fetch_data"), "payload", numPayload(2), "snapshot_delivery", "delta"))
		if cr.str("snapshot_base_id") != nid || sha256Hex(append(append([]byte(nil), next...), cr.bytes...)) != cr.str("snapshot_id") {
			t.Fatalf("cold delta: %s", cr.raw)
		}
		// Full delivery is unchanged.
		fr := c.must(c.call("resume", nil, "", "snapshot_id", nid, "policy_id", pol, "auth", auth(nid), "payload", numPayload(2)))
		if _, ok := fr.result()["snapshot_base_id"]; ok || sha256Hex(fr.bytes) != fr.str("snapshot_id") || fr.str("snapshot_id") != cr.str("snapshot_id") {
			t.Fatalf("full delivery: %s", fr.raw)
		}
		// Completion carries no snapshot whatever the delivery.
		done := c.must(c.call("resume", nil, "", "snapshot_id", fr.str("snapshot_id"), "policy_id", pol, "auth", auth(fr.str("snapshot_id")), "payload", numPayload(3), "snapshot_delivery", "delta"))
		if done.step()["type"] != "completed" || len(done.bytes) != 0 {
			t.Fatalf("completed: %s", done.raw)
		}
	})
}

// None delivery: no bytes; the session keeps them for a fetch.
func TestSnapshotDeliveryNoneThenFetch(t *testing.T) {
	forBoth(t, func(t *testing.T, jsonl bool) {
		c := newSess(t, jsonl, protocol.Options{})
		st := c.startThree("none")
		if len(st.bytes) != 0 || strings.Contains(st.raw, "snapshot_base64") {
			t.Fatalf("none delivery carried bytes: %s", st.raw)
		}
		id := st.str("snapshot_id")
		var got []byte
		for off := 0; ; {
			f := c.must(c.call("snapshot", nil, "", "snapshot_id", id, "offset", off, "max_bytes", 7))
			if f.str("kind") != "snapshot" || f.str("snapshot_id") != id || f.num("offset") != int64(off) {
				t.Fatalf("fetch result: %s", f.raw)
			}
			got = append(got, f.bytes...)
			off += len(f.bytes)
			if int64(off) == f.num("total_bytes") {
				break
			}
			if len(f.bytes) != 7 {
				t.Fatalf("short chunk before the end: %s", f.raw)
			}
		}
		if sha256Hex(got) != id {
			t.Fatal("fetched bytes do not hash to snapshot_id")
		}
		// Defaults: offset 0, everything (small snapshot).
		all := c.must(c.call("snapshot", nil, "", "snapshot_id", id))
		if !bytes.Equal(all.bytes, got) || all.num("total_bytes") != int64(len(got)) {
			t.Fatal("default fetch differs")
		}
		// offset == total: an empty chunk.
		end := c.must(c.call("snapshot", nil, "", "snapshot_id", id, "offset", len(got)))
		if len(end.bytes) != 0 {
			t.Fatal("fetch at the end returned bytes")
		}
		zero := c.must(c.call("snapshot", nil, "", "snapshot_id", id, "offset", 3, "max_bytes", 0))
		if len(zero.bytes) != 0 {
			t.Fatal("max_bytes 0 returned bytes")
		}
	})
}

// Every failure of the new requests is a per-request error with a fixed
// phrase, and the session goes on.
func TestTransferFailures(t *testing.T) {
	forBoth(t, func(t *testing.T, jsonl bool) {
		c := newSess(t, jsonl, protocol.Options{MaxStageBytes: 1000})
		st := c.startThree("")
		id, pol, snap := st.str("snapshot_id"), st.str("policy_id"), st.bytes
		unknown := strings.Repeat("ab", 32)
		n := len(snap)
		cases := []struct {
			name   string
			method string
			raw    []byte
			field  string
			kv     []any
			want   string
		}{
			{"unknown delivery on start", "start", nil, "", []any{"program_id", "x", "options", map[string]any{}, "snapshot_delivery", "some"}, "unknown snapshot_delivery `some`"},
			{"unknown delivery on resume", "resume", nil, "", []any{"snapshot_id", id, "policy_id", pol, "auth", auth(id), "payload", numPayload(1), "snapshot_delivery", "Delta"}, "unknown snapshot_delivery `Delta`"},
			{"delivery not a string", "resume", nil, "", []any{"snapshot_id", id, "policy_id", pol, "auth", auth(id), "payload", numPayload(1), "snapshot_delivery", 1}, "snapshot_delivery must be a string"},
			{"fetch unknown id", "snapshot", nil, "", []any{"snapshot_id", unknown}, "unknown snapshot_id `" + unknown + "`"},
			{"fetch without id", "snapshot", nil, "", nil, "snapshot requires snapshot_id"},
			{"fetch past the end", "snapshot", nil, "", []any{"snapshot_id", id, "offset", n + 1}, fmt.Sprintf("offset %d is past the end of snapshot (%d bytes)", n+1, n)},
			{"fetch negative offset", "snapshot", nil, "", []any{"snapshot_id", id, "offset", -1}, "offset must be an unsigned integer"},
			{"fetch bad max_bytes", "snapshot", nil, "", []any{"snapshot_id", id, "max_bytes", "10"}, "max_bytes must be an unsigned integer"},
			{"stage without id", "stage", []byte("x"), "bytes_base64", []any{"offset", 0}, "stage requires stage_id"},
			{"stage empty id", "stage", []byte("x"), "bytes_base64", []any{"stage_id", "", "offset", 0}, "stage_id must be 1 to 64 characters of [A-Za-z0-9_-]"},
			{"stage long id", "stage", []byte("x"), "bytes_base64", []any{"stage_id", strings.Repeat("a", 65), "offset", 0}, "stage_id must be 1 to 64 characters of [A-Za-z0-9_-]"},
			{"stage id with a slash", "stage", []byte("x"), "bytes_base64", []any{"stage_id", "a/b", "offset", 0}, "stage_id must be 1 to 64 characters of [A-Za-z0-9_-]"},
			{"stage without offset", "stage", []byte("x"), "bytes_base64", []any{"stage_id", "s"}, "stage requires offset"},
			{"stage unknown at offset", "stage", []byte("x"), "bytes_base64", []any{"stage_id", "nope", "offset", 5}, "unknown stage_id `nope`"},
			{"stage over the bound", "stage", make([]byte, 1001), "bytes_base64", []any{"stage_id", "big", "offset", 0}, "stage exceeds 1000 bytes"},
			{"resume unknown stage", "resume", nil, "", []any{"stage_id", "nope", "policy", rawPolicy(id, "fetch_data"), "payload", numPayload(1)}, "unknown stage_id `nope`"},
			{"resume invalid stage id", "resume", nil, "", []any{"stage_id", "a b", "policy", rawPolicy(id, "fetch_data"), "payload", numPayload(1)}, "stage_id must be 1 to 64 characters of [A-Za-z0-9_-]"},
		}
		if jsonl {
			cases = append(cases, struct {
				name   string
				method string
				raw    []byte
				field  string
				kv     []any
				want   string
			}{"stage bad base64", "stage", nil, "", []any{"stage_id", "s", "offset", 0, "bytes_base64", "%%"}, "bytes_base64 is not valid base64"})
		} else {
			cases = append(cases, struct {
				name   string
				method string
				raw    []byte
				field  string
				kv     []any
				want   string
			}{"fetch with a payload", "snapshot", []byte("x"), "", []any{"snapshot_id", id}, "snapshot requests must not include a binary payload"})
		}
		for _, tc := range cases {
			c.fail(c.call(tc.method, tc.raw, tc.field, tc.kv...), tc.want)
			// The session still serves, and the snapshot still resumes.
			c.must(c.call("snapshot", nil, "", "snapshot_id", id, "max_bytes", 1))
		}
		c.must(c.call("resume", nil, "", "snapshot_id", id, "policy_id", pol, "auth", auth(id), "payload", numPayload(1)))
	})
}

// Stages: chunks in order, restart at 0, the bound, and the resume that
// names a stage drops it whatever its outcome.
func TestStage(t *testing.T) {
	forBoth(t, func(t *testing.T, jsonl bool) {
		c := newSess(t, jsonl, protocol.Options{MaxStageBytes: 4096})
		st := c.startThree("")
		id, snap := st.str("snapshot_id"), st.bytes
		if len(snap) > 2000 {
			t.Fatalf("snapshot of %d bytes is too big for this test", len(snap))
		}
		up := func(stage string, b []byte, chunk int) {
			for off := 0; off < len(b); off += chunk {
				end := min(off+chunk, len(b))
				r := c.must(c.call("stage", b[off:end], "bytes_base64", "stage_id", stage, "offset", off))
				if r.str("kind") != "staged" || r.str("stage_id") != stage || r.num("total_bytes") != int64(end) {
					t.Fatalf("stage result: %s", r.raw)
				}
			}
		}
		up("s-1", []byte("garbage that will be replaced"), 5)
		c.fail(c.call("stage", []byte("x"), "bytes_base64", "stage_id", "s-1", "offset", 3), "stage offset 3 does not match staged length 29")
		up("s-1", snap, 50) // restart at offset 0
		// Bound: all stages together. s-1 holds len(snap); the rest does not fit.
		c.fail(c.call("stage", make([]byte, 4097-len(snap)), "bytes_base64", "stage_id", "s-2", "offset", 0), "stage exceeds 4096 bytes")
		up("s-2", make([]byte, 4096-len(snap)), 4096)
		c.fail(c.call("stage", []byte("x"), "bytes_base64", "stage_id", "s-2", "offset", 4096-len(snap)), "stage exceeds 4096 bytes")
		// A failed chunk changes nothing: s-1 still resumes.
		r := c.must(c.call("resume", nil, "", "stage_id", "s-1", "policy", rawPolicy(id, "fetch_data"), "payload", numPayload(1), "snapshot_delivery", "delta"))
		if r.str("snapshot_base_id") != id || sha256Hex(append(append([]byte(nil), snap...), r.bytes...)) != r.str("snapshot_id") {
			t.Fatalf("staged resume: %s", r.raw)
		}
		c.fail(c.call("resume", nil, "", "stage_id", "s-1", "policy", rawPolicy(id, "fetch_data"), "payload", numPayload(1)), "unknown stage_id `s-1`")
		// A failed resume drops its stage too, and frees its bytes.
		c.fail(c.call("resume", nil, "", "stage_id", "s-2", "policy", rawPolicy(id, "fetch_data"), "payload", numPayload(1)), "raw snapshot restore rejected a tampered or unauthenticated snapshot")
		c.fail(c.call("stage", []byte("x"), "bytes_base64", "stage_id", "s-2", "offset", 1), "unknown stage_id `s-2`")
		up("s-3", make([]byte, 4096), 1000)
		c.must(c.call("stage", nil, "", "stage_id", "s-3", "offset", 0))
		// Bytes and a stage together.
		up("s-4", snap, 1000)
		c.fail(c.call("resume", snap, "snapshot_base64", "stage_id", "s-4", "policy", rawPolicy(id, "fetch_data"), "payload", numPayload(1)), "resume takes snapshot bytes or stage_id, not both")
		c.fail(c.call("resume", nil, "", "stage_id", "s-4", "policy", rawPolicy(id, "fetch_data"), "payload", numPayload(1)), "unknown stage_id `s-4`")
		// A staged snapshot is checked like sent bytes: a top-level id must match.
		up("s-5", snap, 1000)
		c.fail(c.call("resume", nil, "", "stage_id", "s-5", "snapshot_id", strings.Repeat("0", 64), "policy", rawPolicy(id, "fetch_data"), "payload", numPayload(1)), "snapshot_id did not match snapshot bytes")
	})
}

func TestStageCount(t *testing.T) {
	c := newSess(t, true, protocol.Options{})
	for i := 0; i < protocol.MaxStages; i++ {
		c.must(c.call("stage", nil, "", "stage_id", fmt.Sprint("s", i), "offset", 0))
	}
	c.fail(c.call("stage", nil, "", "stage_id", "one-more", "offset", 0), fmt.Sprintf("too many stages (at most %d); resume or restart one", protocol.MaxStages))
	c.must(c.call("stage", []byte("x"), "bytes_base64", "stage_id", "s0", "offset", 0))
}

// A snapshot evicted from the session's caches can no longer be fetched;
// the failure is the resume's phrase.
func TestFetchEvicted(t *testing.T) {
	forBoth(t, func(t *testing.T, jsonl bool) {
		c := newSess(t, jsonl, protocol.Options{MaxSnapshots: 2, MaxContinuations: 1})
		first := c.startThree("none").str("snapshot_id")
		c.must(c.call("snapshot", nil, "", "snapshot_id", first))
		for i := 0; i < 2; i++ {
			prog := c.must(c.call("compile", nil, "", "source", fmt.Sprintf("fetch_data(%d)", i))).str("program_id")
			c.must(c.call("start", nil, "", "program_id", prog, "options", map[string]any{"capabilities": []string{"fetch_data"}}, "snapshot_delivery", "none"))
		}
		c.fail(c.call("snapshot", nil, "", "snapshot_id", first), "unknown snapshot_id `"+first+"`")
	})
}

// A suspension whose snapshot would be larger than the stage bound (what
// any process could take back as a staged upload) ends the execution with
// a Limit error at once, hot or replayed; the session goes on.
func TestSnapshotSizeLimit(t *testing.T) {
	forBoth(t, func(t *testing.T, jsonl bool) {
		c := newSess(t, jsonl, protocol.Options{MaxStageBytes: 4096})
		const grow = `let t = 0; for (let i = 0; i < 5; i++) t += fetch_data('x'.repeat(1000)).length; t;`
		prog := c.must(c.call("compile", nil, "", "source", grow)).str("program_id")
		st := c.must(c.call("start", nil, "", "program_id", prog, "options", map[string]any{"capabilities": []string{"fetch_data"}}))
		for i := 0; ; i++ {
			id, pol := st.str("snapshot_id"), st.str("policy_id")
			answer := map[string]any{"type": "value", "value": map[string]any{"String": "ok"}}
			r := c.call("resume", nil, "", "snapshot_id", id, "policy_id", pol, "auth", auth(id), "payload", answer)
			if !r.ok() {
				if r.err() != "Limit: snapshot size limit exceeded" {
					t.Fatalf("resume %d: %s", i+1, r.raw)
				}
				// The same resume, replayed from the snapshot's bytes in a
				// fresh session, fails alike.
				fresh := newSess(t, jsonl, protocol.Options{MaxStageBytes: 4096})
				r = fresh.call("resume", st.bytes, "snapshot_base64", "policy", rawPolicy(id, "fetch_data"), "payload", answer)
				if r.err() != "Limit: snapshot size limit exceeded" {
					t.Fatalf("replayed: %s", r.raw)
				}
				break
			}
			if len(st.bytes) > 4096 || i > 5 {
				t.Fatalf("a %d-byte snapshot got through", len(st.bytes))
			}
			st = r
		}
		c.must(c.call("compile", nil, "", "source", "1 + 1"))
	})
}

// A snapshot that begins with a checkpoint (after a large answer the
// guest dropped) does not extend the one resumed: with delta delivery it
// comes whole, without snapshot_base_id, hot and cold; the next step,
// answered small, is a delta of it again.
func TestSnapshotDeliveryDeltaOfACheckpoint(t *testing.T) {
	forBoth(t, func(t *testing.T, jsonl bool) {
		c := newSess(t, jsonl, protocol.Options{})
		src := `let t = 0; for (let i = 0; i < 3; i++) t += fetch_data(i).length; t;`
		prog := c.must(c.call("compile", nil, "", "source", src)).str("program_id")
		st := c.must(c.call("start", nil, "", "program_id", prog, "options", map[string]any{"capabilities": []string{"fetch_data"}}, "snapshot_delivery", "delta"))
		id, pol := st.str("snapshot_id"), st.str("policy_id")
		page := map[string]any{"type": "value", "value": map[string]any{"String": strings.Repeat("a page of text; ", 2000)}}
		whole := func(r reply, what string) {
			t.Helper()
			if _, ok := r.result()["snapshot_base_id"]; ok || sha256Hex(r.bytes) != r.str("snapshot_id") || len(r.bytes) > 1024 {
				t.Fatalf("%s: not a whole checkpoint (%d bytes): %.300s", what, len(r.bytes), r.raw)
			}
		}
		hot := c.must(c.call("resume", nil, "", "snapshot_id", id, "policy_id", pol, "auth", auth(id), "payload", page, "snapshot_delivery", "delta"))
		whole(hot, "hot")
		cold := newSess(t, jsonl, protocol.Options{})
		cr := cold.must(cold.call("resume", st.bytes, "snapshot_base64", "policy", rawPolicy(id, "fetch_data"), "payload", page, "snapshot_delivery", "delta"))
		whole(cr, "cold")
		if cr.str("snapshot_id") != hot.str("snapshot_id") {
			t.Fatal("the cold resume's checkpoint differs from the hot one's")
		}
		hid := hot.str("snapshot_id")
		small := map[string]any{"type": "value", "value": map[string]any{"String": "short"}}
		next := c.must(c.call("resume", nil, "", "snapshot_id", hid, "policy_id", pol, "auth", auth(hid), "payload", small, "snapshot_delivery", "delta"))
		if next.str("snapshot_base_id") != hid || sha256Hex(append(bytes.Clone(hot.bytes), next.bytes...)) != next.str("snapshot_id") {
			t.Fatalf("the step after a checkpoint: %.300s", next.raw)
		}
	})
}
