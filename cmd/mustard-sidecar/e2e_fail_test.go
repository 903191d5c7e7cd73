package main

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

// suspended is a real suspension of fetchProgram in a host's process, the
// target of the failure cases.
type suspended struct {
	programID string
	program   []byte
	step
	// otherPolicyID is a cached policy that does not grant fetch_data.
	otherPolicyID string
}

func suspendFetch(t *testing.T, h *host) suspended {
	t.Helper()
	var s suspended
	s.programID, s.program = h.compile(fetchProgram)
	s.step = stepOf(t, h.start(s.programID, []string{"fetch_data"}, nil))
	otherID, _ := h.compile("other_cap();")
	s.otherPolicyID = stepOf(t, h.start(otherID, []string{"other_cap"}, nil)).PolicyID
	return s
}

// failCase is one request that must fail with an exact phrase.
type failCase struct {
	name   string
	binary bool // only over the binary transport
	jsonl  bool // only over JSONL
	// build returns the method, fields added to (or, when nil, removed
	// from) a version-2 request, and raw bytes with their JSONL field name.
	build func(s suspended) (method string, fields map[string]any, raw []byte, rawField string)
	want  string // the exact error
	// prefix, when set, replaces want: the error must start with it.
	prefix string
}

func rawPolicy(s suspended) map[string]any {
	return hosttest.Policy(hostKey, s.SnapshotID, []string{"fetch_data"}, map[string]any{})
}

// rawResume is a valid raw resume with the policy edited by edit.
func rawResume(edit func(p map[string]any)) func(s suspended) (string, map[string]any, []byte, string) {
	return func(s suspended) (string, map[string]any, []byte, string) {
		p := rawPolicy(s)
		edit(p)
		return "resume", map[string]any{"policy": p, "payload": valuePayload(num(5))}, s.Snapshot, "snapshot_base64"
	}
}

// cachedResume is a valid cached resume with its fields edited by edit.
func cachedResume(edit func(s suspended, f map[string]any)) func(s suspended) (string, map[string]any, []byte, string) {
	return func(s suspended) (string, map[string]any, []byte, string) {
		f := map[string]any{
			"snapshot_id": s.SnapshotID, "policy_id": s.PolicyID,
			"auth": hosttest.Auth(hostKey, s.SnapshotID), "payload": valuePayload(num(5)),
		}
		edit(s, f)
		return "resume", f, nil, ""
	}
}

var (
	zeros64    = strings.Repeat("0", 64)
	otherKey   = []byte("another host key, not the real 1")
	fetchCaps  = []string{"fetch_data"}
	fiveAnswer = valuePayload(num(5))
)

func flipHex(s string) string {
	b := []byte(s)
	if b[0] == '0' {
		b[0] = '1'
	} else {
		b[0] = '0'
	}
	return string(b)
}

var failCases = []failCase{
	// Envelope.
	{name: "version missing", build: func(s suspended) (string, map[string]any, []byte, string) {
		return "compile", map[string]any{"source": "1;", "protocol_version": nil}, nil, ""
	}, want: "unsupported sidecar protocol version missing; expected 2"},
	{name: "version 1", build: func(s suspended) (string, map[string]any, []byte, string) {
		return "compile", map[string]any{"source": "1;", "protocol_version": 1}, nil, ""
	}, want: "unsupported sidecar protocol version 1; expected 2"},
	{name: "version string", build: func(s suspended) (string, map[string]any, []byte, string) {
		return "compile", map[string]any{"source": "1;", "protocol_version": "2"}, nil, ""
	}, want: `unsupported sidecar protocol version "2"; expected 2`},
	{name: "version 3", build: func(s suspended) (string, map[string]any, []byte, string) {
		return "start", map[string]any{"program_id": s.programID, "options": map[string]any{}, "protocol_version": 3}, nil, ""
	}, want: "unsupported sidecar protocol version 3; expected 2"},
	{name: "unknown method", build: func(s suspended) (string, map[string]any, []byte, string) {
		return "run", map[string]any{}, nil, ""
	}, want: `unknown method "run"`},

	// compile.
	{name: "compile with binary payload", binary: true, build: func(s suspended) (string, map[string]any, []byte, string) {
		return "compile", map[string]any{"source": "1;"}, []byte("x"), ""
	}, want: "compile requests must not include a binary payload"},
	{name: "compile without source", build: func(s suspended) (string, map[string]any, []byte, string) {
		return "compile", map[string]any{}, nil, ""
	}, want: "compile requires source"},
	{name: "compile syntax error", build: func(s suspended) (string, map[string]any, []byte, string) {
		return "compile", map[string]any{"source": "let = ;"}, nil, ""
	}, prefix: "Parse: "},

	// start.
	{name: "unknown program_id", build: func(s suspended) (string, map[string]any, []byte, string) {
		return "start", map[string]any{"program_id": zeros64, "options": options(fetchCaps, nil)}, nil, ""
	}, want: "unknown program_id `" + zeros64 + "`"},
	{name: "program_id mismatch", build: func(s suspended) (string, map[string]any, []byte, string) {
		return "start", map[string]any{"program_id": zeros64, "options": options(fetchCaps, nil)}, s.program, "program_base64"
	}, want: "program_id did not match program bytes"},
	{name: "program neither", build: func(s suspended) (string, map[string]any, []byte, string) {
		return "start", map[string]any{"options": options(fetchCaps, nil)}, nil, ""
	}, want: "start requires program bytes or program_id"},
	{name: "missing options", build: func(s suspended) (string, map[string]any, []byte, string) {
		return "start", map[string]any{"program_id": s.programID}, nil, ""
	}, want: "start requires options"},
	{name: "program bytes not a program", build: func(s suspended) (string, map[string]any, []byte, string) {
		return "start", map[string]any{"options": options(fetchCaps, nil)}, []byte("not a program"), "program_base64"
	}, prefix: "Serialization: "},
	{name: "program bytes are a snapshot", build: func(s suspended) (string, map[string]any, []byte, string) {
		return "start", map[string]any{"options": options(fetchCaps, nil)}, s.Snapshot, "program_base64"
	}, prefix: "Serialization: "},
	{name: "program_base64 over binary", binary: true, build: func(s suspended) (string, map[string]any, []byte, string) {
		return "start", map[string]any{"options": options(fetchCaps, nil), "program_base64": base64.StdEncoding.EncodeToString(s.program)}, nil, ""
	}, prefix: "program_base64 is not used by the binary transport"},
	{name: "bad program_base64", jsonl: true, build: func(s suspended) (string, map[string]any, []byte, string) {
		return "start", map[string]any{"options": options(fetchCaps, nil), "program_base64": "*not base64*"}, nil, ""
	}, want: "program_base64 is not valid base64"},

	// resume, 1: snapshot.
	{name: "snapshot_id mismatch", build: func(s suspended) (string, map[string]any, []byte, string) {
		return "resume", map[string]any{"snapshot_id": zeros64, "policy": rawPolicy(s), "payload": fiveAnswer}, s.Snapshot, "snapshot_base64"
	}, want: "snapshot_id did not match snapshot bytes"},
	{name: "unknown snapshot_id", build: cachedResume(func(s suspended, f map[string]any) {
		f["snapshot_id"] = zeros64
	}), want: "unknown snapshot_id `" + zeros64 + "`"},
	{name: "snapshot neither", build: cachedResume(func(s suspended, f map[string]any) {
		delete(f, "snapshot_id")
	}), want: "resume requires snapshot bytes or snapshot_id"},
	{name: "unknown snapshot_id before policy checks", build: func(s suspended) (string, map[string]any, []byte, string) {
		return "resume", map[string]any{"snapshot_id": zeros64, "payload": fiveAnswer}, nil, ""
	}, want: "unknown snapshot_id `" + zeros64 + "`"},
	{name: "bad snapshot_base64", jsonl: true, build: func(s suspended) (string, map[string]any, []byte, string) {
		return "resume", map[string]any{"snapshot_base64": "%%%", "policy": rawPolicy(s), "payload": fiveAnswer}, nil, ""
	}, want: "snapshot_base64 is not valid base64"},
	{name: "snapshot_base64 over binary", binary: true, build: func(s suspended) (string, map[string]any, []byte, string) {
		return "resume", map[string]any{"snapshot_base64": base64.StdEncoding.EncodeToString(s.Snapshot), "policy": rawPolicy(s), "payload": fiveAnswer}, nil, ""
	}, prefix: "snapshot_base64 is not used by the binary transport"},

	// resume, 2: policy.
	{name: "raw without limits", build: rawResume(func(p map[string]any) { delete(p, "limits") }), want: "raw snapshot restore requires explicit limits"},
	{name: "policy_id did not match policy", build: func(s suspended) (string, map[string]any, []byte, string) {
		return "resume", map[string]any{"policy": rawPolicy(s), "policy_id": s.otherPolicyID, "payload": fiveAnswer}, s.Snapshot, "snapshot_base64"
	}, want: "policy_id did not match policy"},
	{name: "unknown policy_id", build: cachedResume(func(s suspended, f map[string]any) {
		f["policy_id"] = zeros64
	}), want: "unknown policy_id `" + zeros64 + "`"},
	{name: "policy_id without auth", build: cachedResume(func(s suspended, f map[string]any) {
		delete(f, "auth")
	}), want: "resume with policy_id requires auth metadata"},
	{name: "neither policy nor policy_id", build: cachedResume(func(s suspended, f map[string]any) {
		delete(f, "policy_id")
		delete(f, "auth")
	}), want: "resume requires policy or policy_id"},
	{name: "raw bytes without policy", build: func(s suspended) (string, map[string]any, []byte, string) {
		return "resume", map[string]any{"payload": fiveAnswer}, s.Snapshot, "snapshot_base64"
	}, want: "resume requires policy or policy_id"},

	// resume, 3: authentication, raw form.
	{name: "raw requires snapshot_id", build: rawResume(func(p map[string]any) { delete(p, "snapshot_id") }), want: "raw snapshot restore requires snapshot_id"},
	{name: "raw requires snapshot_key_base64", build: rawResume(func(p map[string]any) { delete(p, "snapshot_key_base64") }), want: "raw snapshot restore requires snapshot_key_base64"},
	{name: "raw requires snapshot_token", build: rawResume(func(p map[string]any) { delete(p, "snapshot_token") }), want: "raw snapshot restore requires snapshot_token"},
	{name: "raw requires snapshot_key_digest", build: rawResume(func(p map[string]any) { delete(p, "snapshot_key_digest") }), want: "raw snapshot restore requires snapshot_key_digest"},
	{name: "policy snapshot_id mismatch", build: rawResume(func(p map[string]any) { p["snapshot_id"] = zeros64 }), want: "raw snapshot restore rejected a tampered or unauthenticated snapshot"},
	{name: "bad snapshot_key_base64", build: rawResume(func(p map[string]any) { p["snapshot_key_base64"] = "!" }), want: "snapshot_key_base64 is not valid base64"},
	{name: "mismatched key digest", build: rawResume(func(p map[string]any) { p["snapshot_key_digest"] = sha256Hex(otherKey) }), want: "raw snapshot restore rejected a mismatched snapshot key digest"},
	{name: "digest checked before token", build: rawResume(func(p map[string]any) {
		p["snapshot_key_digest"] = zeros64
		p["snapshot_token"] = zeros64
	}), want: "raw snapshot restore rejected a mismatched snapshot key digest"},
	{name: "tampered token", build: rawResume(func(p map[string]any) {
		p["snapshot_token"] = flipHex(p["snapshot_token"].(string))
	}), want: "raw snapshot restore rejected a tampered or unauthenticated snapshot"},
	{name: "forged token", build: rawResume(func(p map[string]any) {
		p["snapshot_token"] = hmacHex(otherKey, p["snapshot_id"].(string))
	}), want: "raw snapshot restore rejected a tampered or unauthenticated snapshot"},
	{name: "token of another snapshot", build: rawResume(func(p map[string]any) {
		p["snapshot_token"] = hmacHex(hostKey, zeros64)
	}), want: "raw snapshot restore rejected a tampered or unauthenticated snapshot"},
	{name: "other key with its digest", build: rawResume(func(p map[string]any) {
		p["snapshot_key_base64"] = base64.StdEncoding.EncodeToString(otherKey)
		p["snapshot_key_digest"] = sha256Hex(otherKey)
	}), want: "raw snapshot restore rejected a tampered or unauthenticated snapshot"},
	{name: "uppercase token", build: rawResume(func(p map[string]any) {
		p["snapshot_token"] = strings.ToUpper(p["snapshot_token"].(string))
	}), want: "raw snapshot restore rejected a tampered or unauthenticated snapshot"},
	{name: "truncated token", build: rawResume(func(p map[string]any) {
		p["snapshot_token"] = p["snapshot_token"].(string)[:63]
	}), want: "raw snapshot restore rejected a tampered or unauthenticated snapshot"},
	{name: "empty token", build: rawResume(func(p map[string]any) { p["snapshot_token"] = "" }), want: "raw snapshot restore rejected a tampered or unauthenticated snapshot"},
	{name: "token checked before capability", build: rawResume(func(p map[string]any) {
		p["snapshot_token"] = zeros64
		p["capabilities"] = []string{}
	}), want: "raw snapshot restore rejected a tampered or unauthenticated snapshot"},

	// resume, 3: authentication, cached form.
	{name: "cached requires snapshot_key_base64", build: cachedResume(func(s suspended, f map[string]any) {
		delete(f["auth"].(map[string]any), "snapshot_key_base64")
	}), want: "raw snapshot restore requires snapshot_key_base64"},
	{name: "cached requires snapshot_token", build: cachedResume(func(s suspended, f map[string]any) {
		delete(f["auth"].(map[string]any), "snapshot_token")
	}), want: "raw snapshot restore requires snapshot_token"},
	{name: "cached requires snapshot_key_digest", build: cachedResume(func(s suspended, f map[string]any) {
		delete(f["auth"].(map[string]any), "snapshot_key_digest")
	}), want: "raw snapshot restore requires snapshot_key_digest"},
	{name: "cached mismatched key digest", build: cachedResume(func(s suspended, f map[string]any) {
		f["auth"].(map[string]any)["snapshot_key_digest"] = sha256Hex(otherKey)
	}), want: "raw snapshot restore rejected a mismatched snapshot key digest"},
	{name: "cached forged token", build: cachedResume(func(s suspended, f map[string]any) {
		f["auth"].(map[string]any)["snapshot_token"] = hmacHex(otherKey, s.SnapshotID)
	}), want: "raw snapshot restore rejected a tampered or unauthenticated snapshot"},
	{name: "cached tampered token", build: cachedResume(func(s suspended, f map[string]any) {
		f["auth"] = hosttest.Auth(hostKey, zeros64)
	}), want: "raw snapshot restore rejected a tampered or unauthenticated snapshot"},

	// resume, 4: policy reassertion.
	{name: "raw policy without the pending capability", build: rawResume(func(p map[string]any) {
		p["capabilities"] = []string{"other_cap"}
	}), want: "snapshot policy rejected unauthorized capability `fetch_data`"},
	{name: "raw policy with no capabilities", build: rawResume(func(p map[string]any) {
		p["capabilities"] = []string{}
	}), want: "snapshot policy rejected unauthorized capability `fetch_data`"},
	{name: "cached policy without the pending capability", build: cachedResume(func(s suspended, f map[string]any) {
		f["policy_id"] = s.otherPolicyID
	}), want: "snapshot policy rejected unauthorized capability `fetch_data`"},

	// resume, 5: decoding, only once authenticated.
	{name: "authenticated garbage", build: func(s suspended) (string, map[string]any, []byte, string) {
		junk := []byte("definitely not a snapshot")
		p := hosttest.Policy(hostKey, sha256Hex(junk), fetchCaps, map[string]any{})
		return "resume", map[string]any{"policy": p, "payload": fiveAnswer}, junk, "snapshot_base64"
	}, prefix: "Serialization: "},
	{name: "authenticated truncated snapshot", build: func(s suspended) (string, map[string]any, []byte, string) {
		cut := s.Snapshot[:len(s.Snapshot)-3]
		p := hosttest.Policy(hostKey, sha256Hex(cut), fetchCaps, map[string]any{})
		return "resume", map[string]any{"policy": p, "payload": fiveAnswer}, cut, "snapshot_base64"
	}, prefix: "Serialization: "},

	// Payload.
	{name: "resume without payload", build: cachedResume(func(s suspended, f map[string]any) {
		delete(f, "payload")
	}), want: "resume requires payload"},
	{name: "resume with unknown payload type", build: cachedResume(func(s suspended, f map[string]any) {
		f["payload"] = map[string]any{"type": "maybe"}
	}), want: `payload.type must be "value", "error" or "cancelled"`},
	{name: "resume with invalid value", build: cachedResume(func(s suspended, f map[string]any) {
		f["payload"] = valuePayload(map[string]any{"Date": 1})
	}), prefix: "invalid payload.value: "},
}

// Every documented per-request failure gives its exact phrase with the
// request's id and protocol_version 2, and the session goes on serving:
// the suspended execution the failures aimed at still resumes afterwards.
func TestE2ERequestFailures(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, tr)
			s := suspendFetch(t, h)
			for _, tc := range failCases {
				if (tc.binary && tr.jsonl) || (tc.jsonl && !tr.jsonl) {
					continue
				}
				t.Run(tc.name, func(t *testing.T) {
					h.t = t
					method, fields, raw, field := tc.build(s)
					req := h.req(method)
					for k, v := range fields {
						if v == nil {
							delete(req, k)
						} else {
							req[k] = v
						}
					}
					resp := h.do(req, raw, field)
					require.False(t, resp.OK(), "request succeeded: %s", resp.Raw)
					require.NotContains(t, resp.Header, "result")
					if tc.prefix != "" {
						require.True(t, strings.HasPrefix(resp.Error(), tc.prefix), "error %q, want prefix %q", resp.Error(), tc.prefix)
					} else {
						require.Equal(t, tc.want, resp.Error())
					}
					requireCleanError(t, resp.Error())
					h.ping()
				})
			}
			h.t = t
			done := h.mustOK(h.resumeCached(s.SnapshotID, s.PolicyID, fiveAnswer))
			assert.Equal(t, `{"Number":{"Finite":6.0}}`, hosttest.JSON(done.Step()["value"]))
		})
	}
}

// Every single-byte change to a real snapshot is rejected before anything
// in it is decoded: the token authenticates the id, and the id is the hash
// of the bytes. An attacker who recomputes the id still lacks the token.
func TestE2ETamperedSnapshotEveryByte(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, tr)
			s := suspendFetch(t, h)
			token := hmacHex(hostKey, s.SnapshotID)
			bad := make([]byte, len(s.Snapshot))
			for i := range s.Snapshot {
				copy(bad, s.Snapshot)
				bad[i] ^= 0xff
				forgedID := sha256Hex(bad)
				pol := hosttest.Policy(hostKey, forgedID, fetchCaps, map[string]any{})
				pol["snapshot_token"] = token
				resp := h.do(h.req("resume", "policy", pol, "payload", fiveAnswer), bad, "snapshot_base64")
				require.Equal(t, "raw snapshot restore rejected a tampered or unauthenticated snapshot", resp.Error(), "byte %d", i)

				// Presenting the genuine id with the changed bytes fails too.
				pol = hosttest.Policy(hostKey, s.SnapshotID, fetchCaps, map[string]any{})
				resp = h.do(h.req("resume", "policy", pol, "payload", fiveAnswer), bad, "snapshot_base64")
				require.Equal(t, "raw snapshot restore rejected a tampered or unauthenticated snapshot", resp.Error(), "byte %d", i)
			}
			// Truncations and extensions too.
			for _, b := range [][]byte{s.Snapshot[:len(s.Snapshot)-1], s.Snapshot[1:], append(append([]byte(nil), s.Snapshot...), 0)} {
				pol := hosttest.Policy(hostKey, sha256Hex(b), fetchCaps, map[string]any{})
				pol["snapshot_token"] = token
				resp := h.do(h.req("resume", "policy", pol, "payload", fiveAnswer), b, "snapshot_base64")
				require.Equal(t, "raw snapshot restore rejected a tampered or unauthenticated snapshot", resp.Error())
			}
			done := h.mustOK(h.resumeRaw(s.Snapshot, fetchCaps, fiveAnswer))
			assert.Equal(t, `{"Number":{"Finite":6.0}}`, hosttest.JSON(done.Step()["value"]))
		})
	}
}
