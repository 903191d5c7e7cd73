package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

// writeKeyFile writes key to a fresh file and returns its path.
func writeKeyFile(t *testing.T, key []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "snapshot.key")
	require.NoError(t, os.WriteFile(path, key, 0o600))
	return path
}

// authWith builds auth fields: the key sent (nil: left out), the digest
// and the token, each from its own key, so every mix can be tried.
func authWith(sent, digestOf, tokenKey []byte, snapshotID string) map[string]any {
	a := map[string]any{"snapshot_key_digest": sha256Hex(digestOf), "snapshot_token": hmacHex(tokenKey, snapshotID)}
	if sent != nil {
		a["snapshot_key_base64"] = hosttest.Auth(sent, snapshotID)["snapshot_key_base64"]
	}
	return a
}

// With --snapshot-key-file the file's bytes are the only key a resume may
// use: the right key with or without snapshot_key_base64 resumes, cached
// and raw; any other key is rejected with the contract's phrase, whatever
// else the request gets right.
func TestE2EPinnedSnapshotKey(t *testing.T) {
	t.Parallel()
	pinned := []byte("pinned snapshot key: 0123456789abcdef")
	other := []byte("another key, long enough 0123456789")
	path := writeKeyFile(t, pinned)
	const mismatch = "raw snapshot restore rejected a mismatched snapshot key digest"
	const tampered = "raw snapshot restore rejected a tampered or unauthenticated snapshot"
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			sc, err := hosttest.Start(append(tr.args(), "--snapshot-key-file", path)...)
			require.NoError(t, err)
			t.Cleanup(sc.Kill)
			h := &host{t: t, tr: tr, sc: sc}
			programID, _ := h.compile(`let n = 0; for (let i = 0; i < 3; i++) n += fetch_data(i); n`)
			s := stepOf(t, h.start(programID, fetchCaps, nil))
			cached := func(a map[string]any) hosttest.Response {
				return h.do(h.req("resume", "snapshot_id", s.SnapshotID, "policy_id", s.PolicyID, "auth", a, "payload", valuePayload(num(1))), nil, "")
			}
			raw := func(a map[string]any) hosttest.Response {
				pol := map[string]any{"capabilities": fetchCaps, "limits": map[string]any{}, "snapshot_id": s.SnapshotID}
				for k, v := range a {
					pol[k] = v
				}
				return h.do(h.req("resume", "policy", pol, "payload", valuePayload(num(1))), s.Snapshot, "snapshot_base64")
			}
			for _, c := range []struct {
				name                     string
				sent, digestOf, tokenKey []byte
				want                     string // "" = resumes
			}{
				{"the pinned key, sent", pinned, pinned, pinned, ""},
				{"the pinned key, left out", nil, pinned, pinned, ""},
				{"another key, consistent", other, other, other, mismatch},
				{"another key, left out", nil, other, other, mismatch},
				{"another key sent with the pinned digest", other, pinned, other, mismatch},
				{"the pinned key sent with another digest", pinned, other, pinned, mismatch},
				{"the pinned digest, a token under another key", nil, pinned, other, tampered},
				{"the pinned key, a token under another key", pinned, pinned, other, tampered},
			} {
				for form, resume := range map[string]func(map[string]any) hosttest.Response{"cached": cached, "raw": raw} {
					resp := resume(authWith(c.sent, c.digestOf, c.tokenKey, s.SnapshotID))
					if c.want == "" {
						require.True(t, resp.OK(), "%s, %s: %s", c.name, form, resp.Raw)
						require.Equal(t, "fetch_data", stepOf(t, resp).Capability)
					} else {
						require.False(t, resp.OK(), "%s, %s: %s", c.name, form, resp.Raw)
						require.Equal(t, c.want, resp.Error(), "%s, %s", c.name, form)
					}
				}
			}
			// The other checks are as without a pinned key.
			resp := cached(map[string]any{"snapshot_key_digest": sha256Hex(pinned)})
			require.Equal(t, "raw snapshot restore requires snapshot_token", resp.Error())
			resp = cached(map[string]any{"snapshot_token": hmacHex(pinned, s.SnapshotID)})
			require.Equal(t, "raw snapshot restore requires snapshot_key_digest", resp.Error())
			h.ping()
		})
	}
}

// Without --snapshot-key-file the key must still be sent.
func TestE2EUnpinnedKeyIsRequired(t *testing.T) {
	t.Parallel()
	h := newHost(t, transports[1])
	programID, _ := h.compile(fetchProgram)
	s := stepOf(t, h.start(programID, fetchCaps, nil))
	resp := h.do(h.req("resume", "snapshot_id", s.SnapshotID, "policy_id", s.PolicyID,
		"auth", authWith(nil, hostKey, hostKey, s.SnapshotID), "payload", valuePayload(num(1))), nil, "")
	require.Equal(t, "raw snapshot restore requires snapshot_key_base64", resp.Error())
}

// A key file that cannot be the key is a start-up error: exit status 2, a
// message on stderr that names the flag but not the path, nothing on
// stdout.
func TestE2EKeyFileStartupErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	unreadable := filepath.Join(dir, "unreadable.key")
	require.NoError(t, os.WriteFile(unreadable, make([]byte, 64), 0o000))
	cases := []struct {
		name, path, want string
	}{
		{"empty", writeKeyFile(t, nil), "the key must be at least 32 bytes; the file has 0"},
		{"31 bytes", writeKeyFile(t, make([]byte, 31)), "the key must be at least 32 bytes; the file has 31"},
		{"missing", filepath.Join(dir, "missing.key"), "the key file does not exist"},
		{"a directory", dir, "the key file cannot be read"},
		{"too large", writeKeyFile(t, make([]byte, 64<<10+1)), "the key file is larger than 65536 bytes"},
	}
	if os.Geteuid() != 0 { // root reads anything
		cases = append(cases, struct{ name, path, want string }{"unreadable", unreadable, "the key file cannot be read: permission denied"})
	}
	for _, c := range cases {
		for _, args := range [][]string{{"--snapshot-key-file", c.path}, {"--jsonl", "--snapshot-key-file=" + c.path}} {
			stdout, stderr, code, err := hosttest.Run(args...)
			require.NoError(t, err)
			assert.Equal(t, 2, code, "%s: %s", c.name, stderr)
			assert.Empty(t, stdout, c.name)
			assert.Equal(t, "mustard-sidecar: --snapshot-key-file: "+c.want+"\n", stderr, c.name)
			assert.NotContains(t, stderr, dir, "the message names no path")
			requireCleanError(t, strings.TrimPrefix(stderr, "mustard-sidecar: "))
		}
	}
	stdout, stderr, code, err := hosttest.Run("--snapshot-key-file")
	require.NoError(t, err)
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "--snapshot-key-file needs a value")

	// Exactly 32 bytes is a key.
	_, stderr, code, err = hosttest.Run("--snapshot-key-file", writeKeyFile(t, make([]byte, 32)))
	require.NoError(t, err)
	assert.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)
}
