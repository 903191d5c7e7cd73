package protocol_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// codeCase drives one failure: do returns the failed reply; phrase is the
// error exactly, where "…" at its end or a <name> stands for any text.
type codeCase struct {
	code, phrase string
	jsonl        bool // JSONL only
	binary       bool // binary only
	do           func(c *sess, fx *fixture) reply
	opts         protocol.Options // the session's, when not the defaults
}

// fixture is what the failures start from: a compiled program and a
// suspended one-mode step, a suspended batch step, a sealed step.
type fixture struct {
	prog, progBytes  []byte
	progID           string
	id, pol          string
	snap             []byte
	batchID, batchPo string
	sealedID, sealPo string
}

var sealKey = base64.StdEncoding.EncodeToString([]byte("seal-key-0123456789abcdef0123456"))
var otherSeal = base64.StdEncoding.EncodeToString([]byte("other-key-0123456789abcdef012345"))

func newFixture(c *sess) *fixture {
	fx := &fixture{}
	r := c.must(c.call("compile", nil, "", "source", threeCalls))
	fx.progID, fx.progBytes = r.str("program_id"), r.bytes
	if c.jsonl {
		fx.progBytes, _ = base64.StdEncoding.DecodeString(r.str("program_base64"))
	}
	st := c.startThree("")
	fx.id, fx.pol, fx.snap = st.str("snapshot_id"), st.str("policy_id"), st.bytes
	b := c.must(c.call("start", nil, "", "program_id", fx.progID, "options", map[string]any{"capabilities": []string{"fetch_data"}, "host_calls": "batch"}))
	fx.batchID, fx.batchPo = b.str("snapshot_id"), b.str("policy_id")
	s := c.must(c.call("start", nil, "", "program_id", fx.progID, "options", map[string]any{"capabilities": []string{"fetch_data"}, "seal_key_base64": sealKey}))
	fx.sealedID, fx.sealPo = s.str("snapshot_id"), s.str("policy_id")
	return fx
}

// cached resumes the fixture's one-mode step from its id, with extra
// fields replacing or adding to the usual ones (nil removes one).
func (fx *fixture) cached(c *sess, extra ...any) reply {
	kv := map[string]any{"snapshot_id": fx.id, "policy_id": fx.pol, "auth": auth(fx.id), "payload": numPayload(1)}
	return c.call("resume", nil, "", merge(kv, extra)...)
}

// raw resumes it from its bytes under a full policy.
func (fx *fixture) raw(c *sess, pol map[string]any, extra ...any) reply {
	if pol == nil {
		pol = rawPolicy(fx.id, "fetch_data")
	}
	kv := map[string]any{"policy": pol, "payload": numPayload(1)}
	return c.call("resume", fx.snap, "snapshot_base64", merge(kv, extra)...)
}

func merge(kv map[string]any, extra []any) []any {
	for i := 0; i < len(extra); i += 2 {
		if extra[i+1] == nil {
			delete(kv, extra[i].(string))
		} else {
			kv[extra[i].(string)] = extra[i+1]
		}
	}
	var out []any
	for k, v := range kv {
		out = append(out, k, v)
	}
	return out
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

// run compiles and starts source under limits with fetch_data granted.
func run(c *sess, source string, opts map[string]any) reply {
	prog := c.must(c.call("compile", nil, "", "source", source)).str("program_id")
	opts = with(opts, "capabilities", []string{"fetch_data"})
	return c.call("start", nil, "", "program_id", prog, "options", opts)
}

func limits(kv ...any) map[string]any { return map[string]any{"limits": with(nil, kv...)} }

var unknownID = strings.Repeat("ab", 32)

func codeCases() []codeCase {
	both := func(code, phrase string, do func(c *sess, fx *fixture) reply) codeCase {
		return codeCase{code: code, phrase: phrase, do: do}
	}
	jsonl := func(code, phrase string, do func(c *sess, fx *fixture) reply) codeCase {
		return codeCase{code: code, phrase: phrase, jsonl: true, do: do}
	}
	hdr := func(h string) func(c *sess, fx *fixture) reply {
		return func(c *sess, fx *fixture) reply { return c.rawCall(h, nil) }
	}
	start := func(opts map[string]any, extra ...any) func(c *sess, fx *fixture) reply {
		return func(c *sess, fx *fixture) reply {
			return c.call("start", nil, "", append([]any{"program_id", fx.progID, "options", opts}, extra...)...)
		}
	}
	batch := func(answers ...any) func(c *sess, fx *fixture) reply {
		if answers == nil {
			answers = []any{}
		}
		return func(c *sess, fx *fixture) reply {
			return c.call("resume", nil, "", "snapshot_id", fx.batchID, "policy_id", fx.batchPo, "auth", auth(fx.batchID), "answers", answers)
		}
	}
	answer := func(id any) map[string]any { return map[string]any{"call_id": id, "payload": numPayload(1)} }
	binPayload := func(method string, kv ...any) func(c *sess, fx *fixture) reply {
		return func(c *sess, fx *fixture) reply { return c.call(method, []byte("x"), "", kv...) }
	}
	sealed := func(key any) func(c *sess, fx *fixture) reply {
		return func(c *sess, fx *fixture) reply {
			a := auth(fx.sealedID)
			if key != nil {
				a["seal_key_base64"] = key
			}
			return c.call("resume", nil, "", "snapshot_id", fx.sealedID, "policy_id", fx.sealPo, "auth", a, "payload", numPayload(1))
		}
	}
	errPayload := func(kv ...any) map[string]any {
		return map[string]any{"type": "error", "error": with(nil, kv...)}
	}
	return []codeCase{
		// The envelope and the fields.
		both("unsupported_protocol_version", "unsupported sidecar protocol version missing; expected 2", hdr(`{"id":1,"method":"ping"}`)),
		both("unsupported_protocol_version", `unsupported sidecar protocol version "2"; expected 2`, hdr(`{"protocol_version":"2","id":1,"method":"ping"}`)),
		both("unknown_method", `unknown method "nope"`, hdr(`{"protocol_version":2,"id":1,"method":"nope"}`)),
		both("invalid_field", "source must be a string", hdr(`{"protocol_version":2,"id":1,"method":"compile","source":1}`)),
		both("invalid_field", "options must be an object", start(nil, "options", 1)),
		both("invalid_field", "profile must be a boolean", start(map[string]any{}, "profile", "yes")),
		both("invalid_field", "options.capabilities must be an array of strings", start(map[string]any{"capabilities": "fetch_data"})),
		both("invalid_field", "policy.capabilities must be an array of strings", func(c *sess, fx *fixture) reply {
			return fx.raw(c, with(rawPolicy(fx.id), "capabilities", 1))
		}),
		both("invalid_field", "offset must be an unsigned integer", func(c *sess, fx *fixture) reply {
			return c.call("snapshot", nil, "", "snapshot_id", fx.id, "offset", -1)
		}),
		both("invalid_field", "limits must be a JSON object", start(map[string]any{"limits": []int{1}})),
		both("invalid_field", "limits.instruction_budget must be an unsigned integer", start(limits("instruction_budget", -1))),
		both("invalid_field", "limits.call_depth_limit appears more than once", func(c *sess, fx *fixture) reply {
			return c.rawCall(`{"protocol_version":2,"id":1,"method":"start","program_id":"`+fx.progID+`","options":{"limits":{"call_depth_limit":1,"call_depth_limit":2}}}`, nil)
		}),
		both("invalid_field", "stage_id must be 1 to 64 characters of [A-Za-z0-9_-]", binPayload("stage", "stage_id", "a/b", "offset", 0)),
		both("invalid_field", "answers must be a non-empty array", batch()),
		both("invalid_field", "answers[0] must be an object", batch(1)),
		both("invalid_field", "answers[0].call_id must be a positive integer", batch(answer(0))),
		both("invalid_field", "payload.type must be a string", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "payload", map[string]any{"type": 1})
		}),
		both("invalid_field", `payload.type must be "value", "error" or "cancelled"`, func(c *sess, fx *fixture) reply {
			return fx.cached(c, "payload", map[string]any{"type": "val"})
		}),
		both("invalid_field", "payload.error must be an object", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "payload", map[string]any{"type": "error", "error": "x"})
		}),
		both("invalid_field", "payload.error.name must be a string", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "payload", errPayload("name", 1))
		}),
		both("invalid_field", "payload.error.message must be a string", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "payload", errPayload("message", 1))
		}),
		both("invalid_field", "payload.error.code must be a string", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "payload", errPayload("code", 1))
		}),
		jsonl("invalid_base64", "program_base64 is not valid base64", func(c *sess, fx *fixture) reply {
			return c.call("start", nil, "", "program_base64", "%%", "options", map[string]any{})
		}),
		both("invalid_base64", "snapshot_key_base64 is not valid base64", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "auth", with(auth(fx.id), "snapshot_key_base64", "%%"))
		}),
		both("invalid_base64", "options.seal_key_base64 is not valid base64", start(map[string]any{"seal_key_base64": "%%"})),
		both("unknown_field", "unknown field `inputz` in options", start(map[string]any{"inputz": map[string]any{}})),
		both("unknown_field", "unknown field `instructions` in limits", start(limits("instructions", 5))),
		both("unknown_field", "unknown field `token` in auth", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "auth", with(auth(fx.id), "token", "x"))
		}),
		both("missing_field", "compile requires source", hdr(`{"protocol_version":2,"id":1,"method":"compile"}`)),
		both("missing_field", "start requires options", start(nil, "options", nil)),
		both("missing_field", "resume requires payload", func(c *sess, fx *fixture) reply { return fx.cached(c, "payload", nil) }),
		both("missing_field", "payload.value is required", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "payload", map[string]any{"type": "value"})
		}),
		both("missing_field", "stage requires stage_id", binPayload("stage", "offset", 0)),
		both("missing_field", "stage requires offset", binPayload("stage", "stage_id", "s")),
		both("missing_field", "snapshot requires snapshot_id", hdr(`{"protocol_version":2,"id":1,"method":"snapshot"}`)),
		both("missing_field", "cancel requires target_id", hdr(`{"protocol_version":2,"id":1,"method":"cancel"}`)),
		{binary: true, code: "unexpected_payload", phrase: "compile requests must not include a binary payload", do: binPayload("compile", "source", "1")},
		{binary: true, code: "unexpected_payload", phrase: "ping requests must not include a binary payload", do: binPayload("ping")},
		{binary: true, code: "unexpected_payload", phrase: "cancel requests must not include a binary payload", do: binPayload("cancel", "target_id", 9)},
		{binary: true, code: "unexpected_payload", phrase: "snapshot requests must not include a binary payload", do: func(c *sess, fx *fixture) reply {
			return c.call("snapshot", []byte("x"), "", "snapshot_id", fx.id)
		}},
		{binary: true, code: "base64_field_in_binary", phrase: "program_base64 is not used by the binary transport; send the bytes as the frame payload", do: func(c *sess, fx *fixture) reply {
			return c.call("start", nil, "", "program_base64", "AA==", "options", map[string]any{})
		}},
		both("invalid_value", `invalid input "x": …`, start(map[string]any{"inputs": map[string]any{"x": map[string]any{"Nope": 1}}})),
		both("invalid_value", "invalid payload.value: …", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "payload", map[string]any{"type": "value", "value": "Hole"})
		}),
		both("invalid_value", "invalid payload.error.details: …", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "payload", errPayload("details", 1))
		}),
		both("invalid_capability", `invalid capability name "1a": must not start with a digit`, start(map[string]any{"capabilities": []string{"1a"}})),
		both("unknown_host_calls", "unknown host_calls `many`", start(map[string]any{"host_calls": "many"})),
		both("unknown_snapshot_delivery", "unknown snapshot_delivery `some`", start(map[string]any{}, "snapshot_delivery", "some")),
		both("unknown_language", "unknown language `coffeescript`", hdr(`{"protocol_version":2,"id":1,"method":"compile","source":"1","language":"coffeescript"}`)),
		both("unknown_console", "unknown console `on`", start(map[string]any{"console": "on"})),
		both("unknown_entry", "unknown entry `main`", start(map[string]any{"entry": "main"})),
		both("invalid_capability", `invalid capability name "Math.max": Math is a built-in global`, start(map[string]any{"capabilities": []string{"Math.max"}})),
		both("invalid_capability", `invalid capability name "a.b": "a" is both a function and a namespace`, start(map[string]any{"capabilities": []string{"a", "a.b"}})),

		// start.
		both("missing_program", "start requires program bytes or program_id", func(c *sess, fx *fixture) reply {
			return c.call("start", nil, "", "options", map[string]any{})
		}),
		both("program_id_mismatch", "program_id did not match program bytes", func(c *sess, fx *fixture) reply {
			return c.call("start", fx.progBytes, "program_base64", "program_id", unknownID, "options", map[string]any{})
		}),
		both("unknown_program_id", "unknown program_id `"+unknownID+"`", func(c *sess, fx *fixture) reply {
			return c.call("start", nil, "", "program_id", unknownID, "options", map[string]any{})
		}),
		{code: "evicted_program_id", phrase: "unknown program_id `<id>`", opts: protocol.Options{MaxPrograms: 1}, do: func(c *sess, fx *fixture) reply {
			c.must(c.call("compile", nil, "", "source", "1"))
			return c.call("start", nil, "", "program_id", fx.progID, "options", map[string]any{})
		}},
		both("retired_program_format", retiredPhrase, func(c *sess, fx *fixture) reply {
			return c.call("start", retiredProgram(2, "1"), "program_base64", "options", map[string]any{})
		}),

		// resume.
		both("missing_snapshot", "resume requires snapshot bytes or snapshot_id", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "snapshot_id", nil)
		}),
		both("snapshot_bytes_and_stage_id", "resume takes snapshot bytes or stage_id, not both", func(c *sess, fx *fixture) reply {
			c.must(c.call("stage", fx.snap, "bytes_base64", "stage_id", "s", "offset", 0))
			return fx.raw(c, nil, "stage_id", "s")
		}),
		both("snapshot_id_mismatch", "snapshot_id did not match snapshot bytes", func(c *sess, fx *fixture) reply {
			return fx.raw(c, nil, "snapshot_id", unknownID)
		}),
		both("unknown_snapshot_id", "unknown snapshot_id `"+unknownID+"`", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "snapshot_id", unknownID)
		}),
		both("unknown_snapshot_id", "unknown snapshot_id `"+unknownID+"`", func(c *sess, fx *fixture) reply {
			return c.call("snapshot", nil, "", "snapshot_id", unknownID)
		}),
		// The fixture's later starts evicted its first snapshot.
		{code: "evicted_snapshot_id", phrase: "unknown snapshot_id `<id>`", opts: protocol.Options{MaxSnapshots: 1, MaxContinuations: 1}, do: func(c *sess, fx *fixture) reply {
			return fx.cached(c)
		}},
		{code: "evicted_snapshot_id", phrase: "unknown snapshot_id `<id>`", opts: protocol.Options{MaxSnapshots: 1, MaxContinuations: 1}, do: func(c *sess, fx *fixture) reply {
			return c.call("snapshot", nil, "", "snapshot_id", fx.id)
		}},
		both("missing_policy", "resume requires policy or policy_id", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "policy_id", nil)
		}),
		both("missing_limits", "raw snapshot restore requires explicit limits", func(c *sess, fx *fixture) reply {
			return fx.raw(c, with(rawPolicy(fx.id, "fetch_data"), "limits", nil))
		}),
		both("policy_id_mismatch", "policy_id did not match policy", func(c *sess, fx *fixture) reply {
			return fx.raw(c, nil, "policy_id", unknownID)
		}),
		both("unknown_policy_id", "unknown policy_id `"+unknownID+"`", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "policy_id", unknownID)
		}),
		// A start under other limits evicted the fixture's policy, which
		// only its own snapshots keep.
		{code: "evicted_policy_id", phrase: "unknown policy_id `<id>`", opts: protocol.Options{MaxPolicies: 1}, do: func(c *sess, fx *fixture) reply {
			id := c.must(c.call("start", nil, "", "program_id", fx.progID, "options", with(limits("call_depth_limit", 99), "capabilities", []string{"fetch_data"}))).str("snapshot_id")
			return c.call("resume", nil, "", "snapshot_id", id, "policy_id", fx.pol, "auth", auth(id), "payload", numPayload(1))
		}},
		both("missing_auth", "resume with policy_id requires auth metadata", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "auth", nil)
		}),
		both("missing_auth", "raw snapshot restore requires snapshot_id", func(c *sess, fx *fixture) reply {
			return fx.raw(c, with(rawPolicy(fx.id, "fetch_data"), "snapshot_id", nil))
		}),
		both("missing_auth", "raw snapshot restore requires snapshot_key_base64", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "auth", with(auth(fx.id), "snapshot_key_base64", nil))
		}),
		both("missing_auth", "raw snapshot restore requires snapshot_token", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "auth", with(auth(fx.id), "snapshot_token", nil))
		}),
		both("missing_auth", "raw snapshot restore requires snapshot_key_digest", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "auth", with(auth(fx.id), "snapshot_key_digest", nil))
		}),
		both("key_digest_mismatch", "raw snapshot restore rejected a mismatched snapshot key digest", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "auth", with(auth(fx.id), "snapshot_key_digest", unknownID))
		}),
		both("tampered_snapshot", "raw snapshot restore rejected a tampered or unauthenticated snapshot", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "auth", with(auth(fx.id), "snapshot_token", unknownID))
		}),
		both("tampered_snapshot", "raw snapshot restore rejected a tampered or unauthenticated snapshot", func(c *sess, fx *fixture) reply {
			return fx.raw(c, with(rawPolicy(fx.id, "fetch_data"), "snapshot_id", unknownID))
		}),
		both("unauthorized_capability", "snapshot policy rejected unauthorized capability `fetch_data`", func(c *sess, fx *fixture) reply {
			return fx.raw(c, rawPolicy(fx.id, "other"))
		}),
		both("host_calls_mismatch", "resume payload does not match host_calls one", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "payload", nil, "answers", []any{answer(1)})
		}),
		both("console_mismatch", "snapshot policy rejected console `collect`; the execution started with console `off`", func(c *sess, fx *fixture) reply {
			return fx.raw(c, with(rawPolicy(fx.id, "fetch_data"), "console", "collect"))
		}),
		both("unknown_call_id", "unknown call_id 9", batch(answer(9))),
		both("call_answered_twice", "call_id 1 answered twice", batch(answer(1), answer(1))),

		// Sealed snapshots.
		both("invalid_seal_key", "options.seal_key_base64 must decode to at least 32 bytes", start(map[string]any{"seal_key_base64": "AAAA"})),
		both("seal_key_required", "snapshot is sealed and no seal key was given", sealed(nil)),
		both("wrong_seal_key", "snapshot was sealed under another seal key", sealed(otherSeal)),
		both("snapshot_not_sealed", "snapshot is not sealed but a seal key was given", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "auth", with(auth(fx.id), "seal_key_base64", sealKey))
		}),

		// snapshot (fetch) and stage.
		both("offset_past_end", "offset 1000000 is past the end of snapshot (<total> bytes)", func(c *sess, fx *fixture) reply {
			return c.call("snapshot", nil, "", "snapshot_id", fx.id, "offset", 1000000)
		}),
		both("unknown_stage_id", "unknown stage_id `nope`", func(c *sess, fx *fixture) reply {
			return c.call("stage", []byte("x"), "bytes_base64", "stage_id", "nope", "offset", 1)
		}),
		both("unknown_stage_id", "unknown stage_id `nope`", func(c *sess, fx *fixture) reply {
			return fx.raw(c, nil, "stage_id", "nope")
		}),
		both("stage_offset_mismatch", "stage offset 5 does not match staged length 1", func(c *sess, fx *fixture) reply {
			c.must(c.call("stage", []byte("x"), "bytes_base64", "stage_id", "s", "offset", 0))
			return c.call("stage", []byte("x"), "bytes_base64", "stage_id", "s", "offset", 5)
		}),
		both("too_many_stages", fmt.Sprintf("too many stages (at most %d); resume or restart one", protocol.MaxStages), func(c *sess, fx *fixture) reply {
			for i := range protocol.MaxStages {
				c.must(c.call("stage", []byte("x"), "bytes_base64", "stage_id", fmt.Sprint("s", i), "offset", 0))
			}
			return c.call("stage", []byte("x"), "bytes_base64", "stage_id", "one-more", "offset", 0)
		}),
		// The default run: binary frames only (the same 64 MiB in base64
		// lines takes minutes under -race).
		{code: "stage_too_large", phrase: "stage exceeds 67108864 bytes", binary: !longtest.Enabled(), do: func(c *sess, fx *fixture) reply {
			c.must(c.call("stage", make([]byte, 1<<19), "bytes_base64", "stage_id", "big", "offset", 0))
			for off := 1 << 19; ; off += 1 << 19 {
				if r := c.call("stage", make([]byte, 1<<19), "bytes_base64", "stage_id", "big", "offset", off); !r.ok() {
					return r
				}
			}
		}},

		// Values past 1 MiB.
		both("value_and_stage_id", "resume takes payload or payload_stage_id, not both", func(c *sess, fx *fixture) reply {
			c.must(c.call("stage", []byte(`{"type":"value","value":"Null"}`), "bytes_base64", "stage_id", "s", "offset", 0))
			return fx.cached(c, "payload_stage_id", "s")
		}),
		both("value_and_stage_id", "options takes inputs or inputs_stage_id, not both", func(c *sess, fx *fixture) reply {
			c.must(c.call("stage", []byte(`{}`), "bytes_base64", "stage_id", "s", "offset", 0))
			return start(map[string]any{"inputs": map[string]any{}, "inputs_stage_id": "s"})(c, fx)
		}),
		both("invalid_staged_bytes", "payload_stage_id: the staged bytes are not valid JSON", func(c *sess, fx *fixture) reply {
			c.must(c.call("stage", []byte(`{"type":`), "bytes_base64", "stage_id", "s", "offset", 0))
			return fx.cached(c, "payload", nil, "payload_stage_id", "s")
		}),
		both("invalid_staged_bytes", "source_stage_id: the staged bytes are not valid UTF-8", func(c *sess, fx *fixture) reply {
			c.must(c.call("stage", []byte("'\xff'"), "bytes_base64", "stage_id", "s", "offset", 0))
			return c.call("compile", nil, "", "source_stage_id", "s")
		}),

		// Guest-side failures.
		both("parse", "Parse: …", hdr(`{"protocol_version":2,"id":1,"method":"compile","source":"let = ;"}`)),
		both("validation", `Validation: global name "Math" is already defined`, start(map[string]any{"inputs": map[string]any{"Math": "Null"}})),
		both("runtime", "Runtime: TypeError: bad\n  at <script> (1:7)", func(c *sess, fx *fixture) reply {
			return run(c, `throw new TypeError("bad")`, nil)
		}),
		both("serialization", "Serialization: program bytes are not a mustard-sidecar program", func(c *sess, fx *fixture) reply {
			return c.call("start", []byte("not a program"), "program_base64", "options", map[string]any{})
		}),
		both("limit_instruction_budget", "Limit: instruction budget exhausted", func(c *sess, fx *fixture) reply {
			return run(c, `for (;;) {}`, limits("instruction_budget", 1000))
		}),
		both("limit_heap", "Limit: heap limit exceeded", func(c *sess, fx *fixture) reply {
			return run(c, `const a = []; for (;;) a.push('x'.repeat(1000) + a.length);`, limits("heap_limit_bytes", 1<<20, "instruction_budget", 1e12, "allocation_budget", 1e12))
		}),
		both("limit_allocation_budget", "Limit: allocation budget exhausted", func(c *sess, fx *fixture) reply {
			return run(c, `const a = []; for (;;) a.push({});`, limits("allocation_budget", 100, "instruction_budget", 1e12))
		}),
		both("limit_call_depth", "Limit: call depth limit exceeded", func(c *sess, fx *fixture) reply {
			return run(c, `function f() { return f() + 1; } f();`, limits("call_depth_limit", 10))
		}),
		both("limit_outstanding_host_calls", "Limit: outstanding host-call limit exhausted", func(c *sess, fx *fixture) reply {
			return run(c, `async function m() { fetch_data(1); fetch_data(2); } m();`, limits("max_outstanding_host_calls", 1))
		}),
		both("limit_cancelled", "Limit: execution cancelled", func(c *sess, fx *fixture) reply {
			return fx.cached(c, "payload", map[string]any{"type": "cancelled"})
		}),
		both("limit_wall_time", "Limit: wall time exceeded", func(c *sess, fx *fixture) reply {
			return run(c, `for (;;) {}`, limits("instruction_budget", 1e15, "wall_time_ms", 5))
		}),
		// The long suites: a snapshot of 128 MiB over the default stage
		// bound. The default run: one of 2 MiB over a bound of 1 MiB (128
		// MiB in base64 lines takes minutes under -race).
		{code: "limit_snapshot_size", phrase: "Limit: snapshot size limit exceeded", opts: longtest.Pick(protocol.Options{MaxStageBytes: 1 << 20}, protocol.Options{}), do: func(c *sess, fx *fixture) reply {
			return run(c, "fetch_data('x'.repeat("+longtest.Pick("1 << 21", "1 << 27")+"));", limits("heap_limit_bytes", 1<<30, "instruction_budget", 1e12, "allocation_budget", 1e12))
		}},
		// The long suites: 600,000 tokens, about 150 MiB to compile, over
		// the default budget. The default run: 120,000 tokens, about 30
		// MiB, over a budget of 16 MiB.
		{code: "limit_memory_budget", phrase: "Limit: source too large to compile within the memory budget", opts: longtest.Pick(protocol.Options{MemoryBudget: 16 << 20}, protocol.Options{}), do: func(c *sess, fx *fixture) reply {
			return c.call("compile", nil, "", "source", strings.Repeat("a;", longtest.Pick(60_000, 300_000)))
		}},
	}
}

// unreachable codes: a guard no request reaches today (listed so that the
// table below covers every code).
var unreachable = map[string]string{
	"no_answers": "a resume must answer at least one call",
	"limit":      "Limit: <a limit without a code of its own>",
	"internal":   "request failed",
}

// Every failure answers with its phrase and its code, in both transports
// (binary-only phrases in binary, JSONL-only ones in JSONL), and every
// code is driven by at least one row.
func TestErrorCodes(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range codeCases() {
		seen[tc.code] = true
		modes := []bool{false, true}
		if tc.jsonl {
			modes = []bool{true}
		} else if tc.binary {
			modes = []bool{false}
		}
		for _, jsonl := range modes {
			name := fmt.Sprintf("%s/%s/%s", tc.code, map[bool]string{false: "binary", true: "jsonl"}[jsonl], tc.phrase)
			t.Run(name, func(t *testing.T) {
				c := newSess(t, jsonl, tc.opts)
				fx := newFixture(c)
				r := tc.do(c, fx)
				if r.ok() {
					t.Fatalf("succeeded: %s", r.raw)
				}
				got, _ := r.hdr["error_code"].(string)
				if pattern := strings.Replace(tc.phrase, "…", "<rest>", 1); strings.Contains(pattern, "<") {
					if !docPattern(pattern).MatchString(r.err()) {
						t.Fatalf("error %q, want %q", r.err(), tc.phrase)
					}
				} else if r.err() != tc.phrase {
					t.Fatalf("error %q, want %q", r.err(), tc.phrase)
				}
				if got != tc.code {
					t.Fatalf("error_code %q, want %q (%s)", got, tc.code, r.raw)
				}
				// The session goes on.
				c.must(c.call("ping", nil, ""))
			})
		}
	}
	for _, code := range protocol.ErrorCodes() {
		if !seen[code] && unreachable[code] == "" {
			t.Errorf("no row drives error_code %q", code)
		}
	}
}

// docs/protocol.md lists every code, in ErrorCodes' order, with every
// phrase the failures above produce; codes are snake_case.
func TestErrorCodesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "## Error codes")
	if !ok {
		t.Fatal("docs/protocol.md has no Error codes section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9_]+)` \\|(.*)\\|$")
	var listed []string
	rows := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		listed = append(listed, m[1])
		rows[m[1]] = m[2]
	}
	if !slices.Equal(listed, protocol.ErrorCodes()) {
		t.Fatalf("docs list codes\n%v\nErrorCodes()\n%v", listed, protocol.ErrorCodes())
	}
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	for _, code := range listed {
		if !snake.MatchString(code) {
			t.Errorf("code %q is not snake_case", code)
		}
	}
	span := regexp.MustCompile("`` ?(.+?) ?``|`([^`]+)`")
	for _, tc := range codeCases() {
		phrase := strings.Replace(strings.Replace(tc.phrase, "…", "x", 1), "<total>", "1", 1)
		found := false
		for _, m := range span.FindAllStringSubmatch(strings.SplitN(rows[tc.code], " | ", 2)[0], -1) {
			found = found || docPattern(m[1]+m[2]).MatchString(phrase)
		}
		if !found {
			t.Errorf("the row of %s gives no phrase matching %q", tc.code, tc.phrase)
		}
	}
}

// docPattern matches what a phrase the table quotes stands for: each
// <…> is any text.
func docPattern(quoted string) *regexp.Regexp {
	parts := regexp.MustCompile(`<[^>]*>`).Split(quoted, -1)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(`(?s)^` + strings.Join(parts, ".+") + `$`)
}
