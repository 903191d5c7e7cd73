package protocol_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// stageAll uploads b under id in chunks of at most 960 KiB.
func (c *sess) stageAll(id string, b []byte) {
	c.t.Helper()
	for off := 0; off == 0 || off < len(b); {
		n := min(960<<10, len(b)-off)
		c.must(c.call("stage", b[off:off+n], "bytes_base64", "stage_id", id, "offset", off))
		off += n
		if off == len(b) {
			break
		}
	}
}

// gone checks that stage id no longer exists: continuing it fails.
func (c *sess) gone(id string) {
	c.t.Helper()
	c.fail(c.call("stage", []byte("x"), "bytes_base64", "stage_id", id, "offset", 1), "unknown stage_id `"+id+"`")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// strValue is a StructuredValue string.
func strValue(s string) map[string]any { return map[string]any{"String": s} }

// A compile's source, a start's program and inputs, and a resume's answer
// (one mode, hot and from bytes; batch mode) each come from a stage; the
// result is what the inline request gives, and every stage a request
// named is gone afterwards.
func TestStagedValues(t *testing.T) {
	forBothLong(t, func(t *testing.T, jsonl bool) {
		c := newSess(t, jsonl, protocol.Options{})
		// A source past a frame: a long comment, then the program.
		source := "// " + strings.Repeat("padding ", 200_000) + "\n" +
			`const a = fetch_data(big.length); a.text.length + ":" + a.text.slice(0, 3) + ":" + big.slice(-2);`
		c.stageAll("src", []byte(source))
		p := c.must(c.call("compile", nil, "", "source_stage_id", "src"))
		c.gone("src")
		inline := c.must(c.call("compile", nil, "", "source", source))
		if p.str("program_id") != inline.str("program_id") {
			t.Fatal("a staged source compiles to another program than the same source inline")
		}
		progBytes := p.bytes
		if jsonl {
			progBytes = mustBase64(t, p.str("program_base64"))
		}

		// A start with the program and its inputs staged, in a fresh
		// session that has not seen the program.
		c2 := newSess(t, jsonl, protocol.Options{})
		big := strings.Repeat("b", 1_500_000) + "yz"
		c2.stageAll("prog", progBytes)
		c2.stageAll("in", mustJSON(t, map[string]any{"big": strValue(big)}))
		opts := map[string]any{"capabilities": []string{"fetch_data"}, "inputs_stage_id": "in"}
		st := c2.must(c2.call("start", nil, "", "program_stage_id", "prog", "options", opts))
		c2.gone("prog")
		c2.gone("in")
		if st.step()["args"].([]any)[0].(map[string]any)["Number"].(map[string]any)["Finite"].(json.Number) != "1500002.0" {
			t.Fatalf("the staged input did not reach the guest: %.300s", st.raw)
		}
		id, pol, snap := st.str("snapshot_id"), st.str("policy_id"), st.bytes

		answer := mustJSON(t, map[string]any{"type": "value", "value": map[string]any{"Object": map[string]any{
			"text": strValue("ans" + strings.Repeat("x", 1_200_000))}}})
		want := "1200003:ans:yz"
		// Hot.
		c2.stageAll("a1", answer)
		r := c2.must(c2.call("resume", nil, "", "snapshot_id", id, "policy_id", pol, "auth", auth(id), "payload_stage_id", "a1"))
		c2.gone("a1")
		if got := r.step()["value"].(map[string]any)["String"]; got != want {
			t.Fatalf("hot: completed with %v, want %s", got, want)
		}
		// From bytes, staged too, in a fresh session.
		c3 := newSess(t, jsonl, protocol.Options{})
		c3.stageAll("snap", snap)
		c3.stageAll("a2", answer)
		r = c3.must(c3.call("resume", nil, "", "stage_id", "snap", "policy", rawPolicy(id, "fetch_data"), "payload_stage_id", "a2"))
		c3.gone("snap")
		c3.gone("a2")
		if got := r.step()["value"].(map[string]any)["String"]; got != want {
			t.Fatalf("cold: completed with %v, want %s", got, want)
		}

		// Batch mode: one answer staged, one inline.
		bp := c3.must(c3.call("compile", nil, "", "source",
			`async function m() { const [a, b] = await Promise.all([fetch_data(1), fetch_data(2)]); return a.text.length + b; } m();`)).str("program_id")
		b := c3.must(c3.call("start", nil, "", "program_id", bp, "options", map[string]any{"capabilities": []string{"fetch_data"}, "host_calls": "batch"}))
		bid, bpol := b.str("snapshot_id"), b.str("policy_id")
		c3.stageAll("b1", answer)
		r = c3.must(c3.call("resume", nil, "", "snapshot_id", bid, "policy_id", bpol, "auth", auth(bid), "answers", []any{
			map[string]any{"call_id": 1, "payload_stage_id": "b1"},
			map[string]any{"call_id": 2, "payload": numPayload(7)},
		}))
		c3.gone("b1")
		if got := r.step()["value"].(map[string]any)["Number"].(map[string]any)["Finite"].(json.Number); got != "1200010.0" {
			t.Fatalf("batch: completed with %v", got)
		}
	})
}

// A request drops every stage it names, also when it fails, and staged
// bytes are checked as the inline field would be.
func TestStagedValuesFailures(t *testing.T) {
	forBoth(t, func(t *testing.T, jsonl bool) {
		c := newSess(t, jsonl, protocol.Options{})
		st := c.startThree("")
		id, pol := st.str("snapshot_id"), st.str("policy_id")
		cached := func(kv ...any) reply {
			return c.call("resume", nil, "", append([]any{"snapshot_id", id, "policy_id", pol, "auth", auth(id)}, kv...)...)
		}
		for _, tc := range []struct {
			name   string
			staged string
			do     func() reply
			want   string
		}{
			{"payload and its stage", `{"type":"value","value":"Null"}`, func() reply {
				return cached("payload", numPayload(1), "payload_stage_id", "s")
			}, "resume takes payload or payload_stage_id, not both"},
			{"payload not JSON", `{"type":`, func() reply { return cached("payload_stage_id", "s") },
				"payload_stage_id: the staged bytes are not valid JSON"},
			{"payload not UTF-8", "{\"type\":\"value\",\"value\":{\"String\":\"\xff\"}}", func() reply { return cached("payload_stage_id", "s") },
				"payload_stage_id: the staged bytes are not valid UTF-8"},
			{"payload not an object", `[1]`, func() reply { return cached("payload_stage_id", "s") },
				"payload must be an object"},
			{"payload with an unknown field", `{"type":"value","value":"Null","extra":1}`, func() reply { return cached("payload_stage_id", "s") },
				"unknown field `extra` in payload"},
			{"payload value invalid", `{"type":"value","value":"Hole"}`, func() reply { return cached("payload_stage_id", "s") },
				"invalid payload.value: invalid StructuredValue: Hole is only valid as an element of an Array"},
			{"stage dropped by a failure before the payload", `{"type":"value","value":"Null"}`, func() reply {
				return cached("payload_stage_id", "s", "snapshot_delivery", "some")
			}, "unknown snapshot_delivery `some`"},
			{"inputs and their stage", `{}`, func() reply {
				return c.call("start", nil, "", "program_id", "x", "options", map[string]any{"inputs": map[string]any{}, "inputs_stage_id": "s"})
			}, "options takes inputs or inputs_stage_id, not both"},
			{"inputs not an object", `"x"`, func() reply {
				return c.call("start", nil, "", "program_id", "x", "options", map[string]any{"inputs_stage_id": "s"})
			}, "inputs must be an object of StructuredValues"},
			{"inputs invalid", `{"x":{"Nope":1}}`, func() reply {
				return c.call("start", nil, "", "program_id", "x", "options", map[string]any{"inputs_stage_id": "s"})
			}, `invalid input "x": invalid StructuredValue: unknown variant "Nope"`},
			{"source and its stage", `1`, func() reply {
				return c.call("compile", nil, "", "source", "1", "source_stage_id", "s")
			}, "compile takes source or source_stage_id, not both"},
			{"source not UTF-8", "'\xff'", func() reply { return c.call("compile", nil, "", "source_stage_id", "s") },
				"source_stage_id: the staged bytes are not valid UTF-8"},
			{"source that does not parse", "let = ;", func() reply { return c.call("compile", nil, "", "source_stage_id", "s") },
				"Parse: …"},
			{"program and its stage", "x", func() reply {
				return c.call("start", []byte("x"), "program_base64", "program_stage_id", "s", "options", map[string]any{})
			}, "start takes program bytes or program_stage_id, not both"},
			{"program not a program", "x", func() reply {
				return c.call("start", nil, "", "program_stage_id", "s", "options", map[string]any{})
			}, "Serialization: program bytes are not a mustard-sidecar program"},
			{"answer and its stage", `{"type":"value","value":"Null"}`, func() reply {
				return cached("answers", []any{map[string]any{"call_id": 1, "payload": numPayload(1), "payload_stage_id": "s"}})
			}, "answers[0] takes payload or payload_stage_id, not both"},
			{"answer not JSON", `{`, func() reply {
				return cached("answers", []any{map[string]any{"call_id": 1, "payload_stage_id": "s"}})
			}, "answers[0].payload_stage_id: the staged bytes are not valid JSON"},
			{"staged answer in one mode", `{"type":"value","value":"Null"}`, func() reply {
				return cached("answers", []any{map[string]any{"call_id": 1, "payload_stage_id": "s"}})
			}, "resume payload does not match host_calls one"},
			{"bad stage id", `1`, func() reply { return cached("payload_stage_id", "a b") },
				"payload_stage_id must be 1 to 64 characters of [A-Za-z0-9_-]"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c.stageAll("s", []byte(tc.staged))
				r := tc.do()
				if r.ok() {
					t.Fatalf("succeeded: %s", r.raw)
				}
				if want, ok := strings.CutSuffix(tc.want, "…"); ok {
					if !strings.HasPrefix(r.err(), want) {
						t.Fatalf("error %q, want %s…", r.err(), want)
					}
				} else if r.err() != tc.want {
					t.Fatalf("error %q, want %q", r.err(), tc.want)
				}
				if tc.name != "bad stage id" {
					c.gone("s")
				}
				c.call("stage", nil, "bytes_base64", "stage_id", "s", "offset", 0) // reset for the next case
			})
		}
		// Unknown stages.
		c.fail(cached("payload_stage_id", "none"), "unknown stage_id `none`")
		c.fail(c.call("compile", nil, "", "source_stage_id", "none"), "unknown stage_id `none`")
		// The parked execution is still there: nothing above resumed it.
		r := c.must(cached("payload", numPayload(1)))
		if r.step()["type"] != "suspended" {
			t.Fatalf("the execution did not go on: %s", r.raw)
		}
	})
}

// Staged values count against the stage bound like staged snapshots.
func TestStagedValuesBound(t *testing.T) {
	c := newSess(t, false, protocol.Options{MaxStageBytes: 2 << 20})
	c.stageAll("a", make([]byte, 1<<20))
	c.stageAll("b", make([]byte, 900<<10))
	r := c.call("stage", make([]byte, 200<<10), "bytes_base64", "stage_id", "b", "offset", 900<<10)
	c.fail(r, fmt.Sprintf("stage exceeds %d bytes", 2<<20))
}
