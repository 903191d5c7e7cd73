package corpus

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

// traceHost drives a sidecar recording with --trace, the way a host does:
// request maps, raw bytes as the payload (binary) or base64 fields (JSONL).
type traceHost struct {
	t      *testing.T
	sc     *hosttest.Sidecar
	id     uint64
	tokens []string // every token sent: none may reach the transcript
}

func (h *traceHost) req(method string, kv ...any) map[string]any {
	h.id++
	m := map[string]any{"protocol_version": 2, "id": h.id, "method": method}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func (h *traceHost) call(m map[string]any, raw []byte, field string) hosttest.Response {
	h.t.Helper()
	r, err := h.sc.Call(m, raw, field)
	if err != nil {
		h.t.Fatalf("%v: %v", m, err)
	}
	return r
}

func (h *traceHost) ok(r hosttest.Response) hosttest.Response {
	h.t.Helper()
	if !r.OK() {
		h.t.Fatalf("failed: %s", r.Raw)
	}
	return r
}

func (h *traceHost) fail(r hosttest.Response, phrase string) {
	h.t.Helper()
	if r.OK() || !strings.Contains(r.Error(), phrase) {
		h.t.Fatalf("want an error containing %q, got %s", phrase, r.Raw)
	}
}

func (h *traceHost) auth(key []byte, id string) map[string]any {
	a := hosttest.Auth(key, id)
	h.tokens = append(h.tokens, a["snapshot_token"].(string))
	return a
}

// traceSession is a session of every kind of exchange a host has: compile,
// starts that suspend and complete, cached and raw resumes, host errors,
// every authentication failure, snapshot delivery, fetch and stage, ping,
// a cancel of a running guest and of nothing, profile, closed-structure and
// other per-request failures. key is the host's key; with a pinned key the
// host leaves it out of every other resume.
func traceSession(h *traceHost, key []byte, pinned bool) {
	t := h.t
	other := []byte("a key the host never used: 0123456789")
	prog := h.ok(h.call(h.req("compile", "source", `let n = Math.random() < 2 ? 0 : 1; for (let i = 0; i < 3; i++) { try { n += fetch_data(i) } catch (e) { n += e.code.length } } n + Date.now() % 7`), nil, ""))
	programID := prog.Result()["program_id"].(string)
	caps := []string{"fetch_data"}
	opts := map[string]any{"capabilities": caps, "limits": map[string]any{}}
	s1 := h.ok(h.call(h.req("start", "program_id", programID, "options", opts), nil, ""))
	sid, pid := s1.SnapshotID(), s1.PolicyID()
	auth := func(id string) map[string]any {
		a := h.auth(key, id)
		if pinned && h.id%2 == 0 {
			delete(a, "snapshot_key_base64")
		}
		return a
	}
	value := map[string]any{"type": "value", "value": map[string]any{"Number": map[string]any{"Finite": 5}}}
	s2 := h.ok(h.call(h.req("resume", "snapshot_id", sid, "policy_id", pid, "auth", auth(sid), "payload", value, "profile", true), nil, ""))
	hostErr := map[string]any{"type": "error", "error": map[string]any{"name": "ToolError", "message": "down", "code": "E_DOWN"}}
	h.ok(h.call(h.req("resume", "snapshot_id", s2.SnapshotID(), "policy_id", pid, "auth", auth(s2.SnapshotID()), "payload", hostErr, "snapshot_delivery", "delta"), nil, ""))

	// Raw resumes: authenticated, and each way of failing authentication.
	pol := func(a map[string]any) map[string]any {
		p := map[string]any{"capabilities": caps, "limits": map[string]any{"instruction_budget": 500000}, "snapshot_id": sid}
		for k, v := range a {
			p[k] = v
		}
		return p
	}
	h.ok(h.call(h.req("resume", "policy", pol(auth(sid)), "payload", value), s1.Payload, "snapshot_base64"))
	bad := h.auth(key, sid)
	bad["snapshot_token"] = hosttest.Token(other, sid)
	h.tokens = append(h.tokens, bad["snapshot_token"].(string))
	h.fail(h.call(h.req("resume", "policy", pol(bad), "payload", value), s1.Payload, "snapshot_base64"), "tampered or unauthenticated")
	// A second key, consistent: authenticates unless the key is pinned.
	if r := h.call(h.req("resume", "policy", pol(h.auth(other, sid)), "payload", value), s1.Payload, "snapshot_base64"); pinned {
		h.fail(r, "mismatched snapshot key digest")
	} else {
		h.ok(r)
	}
	mixed := h.auth(other, sid)
	mixed["snapshot_key_digest"] = hosttest.Auth(key, sid)["snapshot_key_digest"]
	h.fail(h.call(h.req("resume", "policy", pol(mixed), "payload", value), s1.Payload, "snapshot_base64"), "mismatched snapshot key digest")
	wrongDigest := h.auth(key, sid)
	wrongDigest["snapshot_key_digest"] = strings.Repeat("ab", 32)
	h.fail(h.call(h.req("resume", "snapshot_id", sid, "policy_id", pid, "auth", wrongDigest, "payload", value), nil, ""), "mismatched snapshot key digest")
	notB64 := h.auth(key, sid)
	notB64["snapshot_key_base64"] = "***"
	h.fail(h.call(h.req("resume", "snapshot_id", sid, "policy_id", pid, "auth", notB64, "payload", value), nil, ""), "not valid base64")
	h.fail(h.call(h.req("resume", "snapshot_id", sid, "policy_id", pid, "auth", map[string]any{"snapshot_token": 7}, "payload", value), nil, ""), "must be a string")

	// Delivery none, fetch in chunks, stage and resume by stage_id.
	s3 := h.ok(h.call(h.req("resume", "snapshot_id", sid, "policy_id", pid, "auth", auth(sid), "payload", value, "snapshot_delivery", "none"), nil, ""))
	snap := h.ok(h.call(h.req("snapshot", "snapshot_id", s3.SnapshotID(), "max_bytes", 100), nil, ""))
	if len(snap.Payload) != 100 {
		t.Fatalf("fetched %d bytes", len(snap.Payload))
	}
	full := h.ok(h.call(h.req("snapshot", "snapshot_id", s3.SnapshotID()), nil, "")).Payload
	h.ok(h.call(h.req("stage", "stage_id", "run-1", "offset", 0), full[:50], "bytes_base64"))
	h.ok(h.call(h.req("stage", "stage_id", "run-1", "offset", 50), full[50:], "bytes_base64"))
	p3 := pol(auth(s3.SnapshotID()))
	p3["snapshot_id"] = s3.SnapshotID()
	h.ok(h.call(h.req("resume", "stage_id", "run-1", "policy", p3, "payload", value), nil, ""))

	// ping, a cancel of a running guest and of nothing.
	h.ok(h.call(h.req("ping"), nil, ""))
	loop := h.ok(h.call(h.req("compile", "source", `for(;;){}`), nil, ""))
	start := h.req("start", "program_id", loop.Result()["program_id"], "options", map[string]any{"limits": map[string]any{"instruction_budget": uint64(1e15)}})
	if err := h.sc.Send(start, nil, ""); err != nil {
		t.Fatal(err)
	}
	cancel := h.req("cancel", "target_id", start["id"])
	if err := h.sc.Send(cancel, nil, ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Limit: execution cancelled", `"was_running":true`} {
		r, err := h.sc.Recv()
		if err != nil || !strings.Contains(string(r.Raw), want) {
			t.Fatalf("want %s, got %s (%v)", want, r.Raw, err)
		}
	}
	h.ok(h.call(h.req("cancel", "target_id", 12345), nil, ""))

	// Per-request failures.
	h.fail(h.call(h.req("start", "program_id", programID, "options", map[string]any{"limts": map[string]any{}}), nil, ""), "unknown field `limts` in options")
	h.fail(h.call(h.req("nope"), nil, ""), "unknown method")
	h.ok(h.call(h.req("start", "options", opts), prog.Payload, "program_base64"))
}

// A session recorded with --trace, over binary frames and JSONL, with each
// start's own random seed and clock, replays byte for byte through the
// corpus replayer, and the transcript holds neither the snapshot key
// (base64 or hex) nor any token the host sent. The same with a pinned key,
// and with input that ends the session.
func TestTraceReplays(t *testing.T) {
	key := []byte("the host's snapshot key 0123456789abcdef")
	for _, c := range []struct {
		name   string
		args   []string
		pinned bool
		fatal  []byte
	}{
		{"binary", nil, false, nil},
		{"jsonl", []string{"--jsonl"}, false, nil},
		{"binary pinned key", nil, true, nil},
		{"binary fatal", nil, false, []byte{0, 0, 0x10, 0, 1, 0, 0, 0}},
		{"jsonl fatal", []string{"--jsonl"}, false, []byte("{\"protocol_version\":2,\"method\":\"ping\"}\n")},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "session.jsonl")
			args := append([]string{"--trace", path}, c.args...)
			if c.pinned {
				keyFile := filepath.Join(dir, "key")
				if err := os.WriteFile(keyFile, key, 0o600); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--snapshot-key-file="+keyFile)
			}
			// Random entropy, as in production: each start's seed and
			// clock go into the transcript.
			sc, err := hosttest.StartEnv([]string{EntropyEnv + "="}, args...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(sc.Kill)
			h := &traceHost{t: t, sc: sc}
			traceSession(h, key, c.pinned)
			wantCode := 0
			if c.fatal != nil {
				if err := sc.WriteBytes(c.fatal); err != nil {
					t.Fatal(err)
				}
				wantCode = 1
			}
			if err := sc.CloseStdin(); err != nil {
				t.Fatal(err)
			}
			code, stderr, exited := sc.WaitExit(processTimeout)
			if !exited || code != wantCode {
				t.Fatalf("exit %d (exited %t), stderr %q", code, exited, stderr)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range append([]string{base64.StdEncoding.EncodeToString(key), hex.EncodeToString(key), string(key)}, h.tokens...) {
				if bytes.Contains(data, []byte(secret)) {
					t.Fatalf("the transcript contains %q", secret)
				}
			}
			tr, err := Parse(data)
			if err != nil {
				t.Fatalf("the transcript does not parse: %v", err)
			}
			if tr.Name != "session" || len(tr.Processes) != 1 || tr.Processes[0].Exit.Code != wantCode {
				t.Fatalf("transcript %s: %d processes", tr.Name, len(tr.Processes))
			}
			starts := 0
			for _, s := range tr.Processes[0].Steps {
				if s.Entropy != "" {
					starts++
				}
			}
			if starts < 3 {
				t.Fatalf("%d starts recorded their entropy", starts)
			}
			began := time.Now()
			if err := Replay(tr); err != nil {
				t.Fatalf("replay: %v", err)
			}
			t.Logf("%d exchanges replayed in %v", len(tr.Processes[0].Steps), time.Since(began))

			// The comparison is real: one changed byte of a snapshot id
			// (which depends on the start's recorded seed and clock) fails
			// the replay.
			for i, st := range tr.Processes[0].Steps {
				if st.Entropy != "" {
					at := bytes.Index(st.Expect, []byte(`"snapshot_id":"`)) + len(`"snapshot_id":"`)
					changed := bytes.Clone(st.Expect)
					changed[at] ^= 1
					tr.Processes[0].Steps[i].Expect = changed
					break
				}
			}
			if err := Replay(tr); err == nil || !strings.Contains(err.Error(), "snapshot_id") {
				t.Fatalf("a changed snapshot id replayed: %v", err)
			}
		})
	}
}

// A session that sealed its snapshots is recorded with its seal key
// redacted too; the replayer then says why it cannot replay it byte for
// byte instead of reporting a difference.
func TestTraceSealedSession(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sealed.jsonl")
	sc, err := hosttest.StartEnv([]string{EntropyEnv + "="}, "--trace", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sc.Kill)
	h := &traceHost{t: t, sc: sc}
	key := []byte("the host's snapshot key 0123456789abcdef")
	seal := []byte("the host's seal key, kept apart 0123456789")
	prog := h.ok(h.call(h.req("compile", "source", `fetch_data(1) + fetch_data(2)`), nil, ""))
	opts := map[string]any{"capabilities": []string{"fetch_data"}, "seal_key_base64": base64.StdEncoding.EncodeToString(seal)}
	s := h.ok(h.call(h.req("start", "program_id", prog.Result()["program_id"], "options", opts), nil, ""))
	a := h.auth(key, s.SnapshotID())
	a["seal_key_base64"] = base64.StdEncoding.EncodeToString(seal)
	h.ok(h.call(h.req("resume", "snapshot_id", s.SnapshotID(), "policy_id", s.PolicyID(), "auth", a,
		"payload", map[string]any{"type": "value", "value": map[string]any{"Number": map[string]any{"Finite": 1}}}), nil, ""))
	if code, stderr := sc.Wait(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range [][]byte{seal, key, []byte(base64.StdEncoding.EncodeToString(seal)), []byte(hex.EncodeToString(seal))} {
		if bytes.Contains(data, secret) {
			t.Fatalf("the transcript contains %q", secret)
		}
	}
	tr, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := Replay(tr); err == nil || !strings.Contains(err.Error(), "sealed") {
		t.Fatalf("replay: %v", err)
	}
}
