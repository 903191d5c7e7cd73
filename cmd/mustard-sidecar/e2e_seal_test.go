package main

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

var (
	sealKeyB64   = base64.StdEncoding.EncodeToString([]byte("seal key: thirty-two bytes long!"))
	otherSealB64 = base64.StdEncoding.EncodeToString([]byte("another seal key, 32 bytes long."))
)

// sealProgram reads an input, passes it to a capability and keeps what the
// answers say; every string a host would call private is marked SECRET.
const sealProgram = `async function main() {
  const seen = [];
  for (let i = 0; i < 4; i++) {
    try { seen.push(await fetch_data({ q: query, i })); }
    catch (e) { seen.push(e.message + "/" + e.code); }
  }
  return seen.map(s => s.length + ":" + s.slice(0, 24));
}
main();`

var sealAnswers = []map[string]any{
	valuePayload(str("SECRET-ANSWER-ONE")),
	{"type": "error", "error": map[string]any{"name": "ToolError", "message": "SECRET-ERROR-MESSAGE", "code": "SECRET-CODE"}},
	valuePayload(str(strings.Repeat("SECRET-LARGE-ANSWER ", 100))), // journaled compressed
	valuePayload(str("SECRET-ANSWER-FOUR")),
}

// sealedRun runs sealProgram with delta delivery, sealed under key when it
// is not empty, and returns each step as the host saw it (without snapshot
// fields), the full snapshot at each suspension, and its ids.
func sealedRun(t *testing.T, h *host, key string) (steps []string, snaps [][]byte, ids, policies []string) {
	t.Helper()
	programID, _ := h.compile(sealProgram)
	opts := options(fetchCaps, map[string]any{"query": str("SECRET-INPUT-QUERY")})
	if key != "" {
		opts["seal_key_base64"] = key
	}
	d := deliveredOf(t, h.do(h.req("start", "program_id", programID, "options", opts, "snapshot_delivery", "delta"), nil, ""))
	var whole []byte
	for i := 0; ; i++ {
		if d.Type == "completed" {
			return append(steps, d.Value), snaps, ids, policies
		}
		args, _ := exactStep(t, hosttest.Response{Raw: d.Raw})
		steps = append(steps, d.Capability+" "+args)
		whole = append(append([]byte(nil), whole...), d.Bytes...)
		require.Equal(t, sha256Hex(whole), d.SnapshotID, "base + delta at step %d", i)
		snaps, ids, policies = append(snaps, whole), append(ids, d.SnapshotID), append(policies, d.PolicyID)
		auth := hosttest.Auth(hostKey, d.SnapshotID)
		if key != "" {
			auth["seal_key_base64"] = key
		}
		d = deliveredOf(t, h.do(h.req("resume", "snapshot_id", d.SnapshotID, "policy_id", d.PolicyID, "auth", auth,
			"payload", sealAnswers[i], "snapshot_delivery", "delta"), nil, ""))
	}
}

// Sealed snapshots: the same steps as without sealing, bytes that hold no
// input, answer or program text, a cold resume of every snapshot (with its
// key) to the hot run's value, and a clear refusal for a missing, wrong or
// unexpected key, after which the session serves on.
func TestE2ESealedSnapshots(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, tr)
			plainSteps, plainSnaps, _, _ := sealedRun(t, h, "")
			steps, snaps, ids, policies := sealedRun(t, h, sealKeyB64)
			require.Equal(t, plainSteps, steps, "sealing changes no step")
			require.Len(t, snaps, 4)
			require.Contains(t, string(plainSnaps[3]), "SECRET-INPUT-QUERY", "the plain journal holds the input (the grep is not blind)")
			for _, s := range snaps {
				for _, secret := range []string{"SECRET", "fetch_data", "query", "ToolError", "mustard-snapshot"} {
					require.NotContains(t, string(s), secret)
				}
			}

			fresh := newHost(t, tr)
			rawPolicy := func(k int, key string) map[string]any {
				pol := hosttest.Policy(hostKey, ids[k], fetchCaps, map[string]any{})
				if key != "" {
					pol["seal_key_base64"] = key
				}
				return pol
			}
			for k := range snaps {
				d := deliveredOf(t, fresh.do(fresh.req("resume", "policy", rawPolicy(k, sealKeyB64), "payload", sealAnswers[k], "snapshot_delivery", "delta"), snaps[k], "snapshot_base64"))
				for i := k + 1; d.Type == "suspended"; i++ {
					require.Equal(t, ids[i-1], d.Base)
					require.Equal(t, snaps[i], append(bytes.Clone(snaps[i-1]), d.Bytes...), "cold resume of %d, step %d", k, i)
					auth := hosttest.Auth(hostKey, d.SnapshotID)
					auth["seal_key_base64"] = sealKeyB64
					d = deliveredOf(t, fresh.do(fresh.req("resume", "snapshot_id", d.SnapshotID, "policy_id", d.PolicyID, "auth", auth, "payload", sealAnswers[i], "snapshot_delivery", "delta"), nil, ""))
				}
				require.Equal(t, steps[len(steps)-1], d.Value, "cold resume of step %d", k)
			}

			cached := func(k int, key string) hosttest.Response {
				auth := hosttest.Auth(hostKey, ids[k])
				if key != "" {
					auth["seal_key_base64"] = key
				}
				return h.do(h.req("resume", "snapshot_id", ids[k], "policy_id", policies[k], "auth", auth, "payload", sealAnswers[k]), nil, "")
			}
			plainID := sha256Hex(plainSnaps[0])
			for _, c := range []struct {
				name string
				resp hosttest.Response
				want string
			}{
				{"cached without key", cached(3, ""), "snapshot is sealed and no seal key was given"},
				{"cached with another key", cached(3, otherSealB64), "snapshot was sealed under another seal key"},
				{"raw without key", fresh.do(fresh.req("resume", "policy", rawPolicy(1, ""), "payload", sealAnswers[1]), snaps[1], "snapshot_base64"), "snapshot is sealed and no seal key was given"},
				{"raw with another key", fresh.do(fresh.req("resume", "policy", rawPolicy(1, otherSealB64), "payload", sealAnswers[1]), snaps[1], "snapshot_base64"), "snapshot was sealed under another seal key"},
				{"key for a plain snapshot", fresh.do(fresh.req("resume", "policy", func() map[string]any {
					p := hosttest.Policy(hostKey, plainID, fetchCaps, map[string]any{})
					p["seal_key_base64"] = sealKeyB64
					return p
				}(), "payload", sealAnswers[0]), plainSnaps[0], "snapshot_base64"), "snapshot is not sealed but a seal key was given"},
				{"start with a short key", h.do(h.req("start", "source", "1", "options", map[string]any{"seal_key_base64": base64.StdEncoding.EncodeToString(make([]byte, 31))}), nil, ""), "options.seal_key_base64 must decode to at least 32 bytes"},
				{"start with bad base64", h.do(h.req("start", "options", map[string]any{"seal_key_base64": "not base64!"}), nil, ""), "options.seal_key_base64 is not valid base64"},
				{"resume with bad base64", h.do(h.req("resume", "snapshot_id", ids[0], "policy_id", policies[0], "auth", func() map[string]any {
					a := hosttest.Auth(hostKey, ids[0])
					a["seal_key_base64"] = "%%"
					return a
				}(), "payload", sealAnswers[0]), nil, ""), "auth.seal_key_base64 is not valid base64"},
			} {
				require.False(t, c.resp.OK(), c.name)
				require.Equal(t, c.want, c.resp.Error(), c.name)
				requireCleanError(t, c.resp.Error())
			}
			// A refused resume leaves the parked execution in place: with
			// the key it still resumes, to the same value.
			d := deliveredOf(t, cached(3, sealKeyB64))
			require.Equal(t, steps[len(steps)-1], d.Value)
			h.ping()
			fresh.ping()
		})
	}
}

// Flipping any byte of a sealed snapshot is rejected: with the token the
// host held for the original bytes (the token check), and with a token a
// host computed over the flipped bytes (the seal's own check).
func TestE2ESealedSnapshotFlipsAreRejected(t *testing.T) {
	t.Parallel()
	h := newHost(t, transports[0])
	_, snaps, _, _ := sealedRun(t, h, sealKeyB64)
	snap := snaps[1]
	fresh := newHost(t, transports[0])
	for i := range snap {
		flipped := bytes.Clone(snap)
		flipped[i] ^= 0x20
		for _, signedID := range []string{sha256Hex(snap), sha256Hex(flipped)} {
			pol := hosttest.Policy(hostKey, signedID, fetchCaps, map[string]any{})
			pol["seal_key_base64"] = sealKeyB64
			resp := fresh.do(fresh.req("resume", "policy", pol, "payload", sealAnswers[1]), flipped, "snapshot_base64")
			require.False(t, resp.OK(), "byte %d flipped was accepted", i)
			requireCleanError(t, resp.Error())
		}
	}
	fresh.ping()
}
