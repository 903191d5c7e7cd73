package protocol_test

import (
	"encoding/json"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logsOf reads a step's or a failure's logs as "level:text" lines.
func logsOf(m map[string]any) []string {
	var out []string
	ls, _ := m["logs"].([]any)
	for _, l := range ls {
		o := l.(map[string]any)
		out = append(out, o["level"].(string)+":"+o["text"].(string))
	}
	return out
}

// Console lines travel with the step that wrote them, hot and cold alike;
// a failed run carries its lines beside the error.
func TestConsoleLogsOnTheWire(t *testing.T) {
	forBoth(t, func(t *testing.T, jsonl bool) {
		c := newSess(t, jsonl, protocol.Options{})
		src := `console.log("start", 1); const a = tools["get-one"](1); console.warn("got", a);
		  async () => { console.info("in call"); const b = await tools["get-one"](2); console.error("b", b); return a + b; }`
		prog := c.must(c.call("compile", nil, "", "source", src)).str("program_id")
		opts := map[string]any{"capabilities": []string{"tools.get-one"}, "console": "collect", "entry": "call"}
		s1 := c.must(c.call("start", nil, "", "program_id", prog, "options", opts))
		assert.Equal(t, "tools.get-one", s1.step()["capability"])
		assert.Equal(t, []string{"log:start 1"}, logsOf(s1.step()))

		// Cold: the raw form, which must name the same console mode.
		pol := with(rawPolicy(s1.str("snapshot_id"), "tools.get-one"), "console", "collect")
		cold := c.must(c.call("resume", s1.bytes, "snapshot_base64", "policy", pol, "payload", numPayload(10)))
		hot := c.must(c.call("resume", nil, "", "snapshot_id", s1.str("snapshot_id"), "policy_id", s1.str("policy_id"),
			"auth", auth(s1.str("snapshot_id")), "payload", numPayload(10)))
		for _, s2 := range []reply{hot, cold} {
			assert.Equal(t, []string{"warn:got 10", "info:in call"}, logsOf(s2.step()))
			assert.Equal(t, hot.str("snapshot_id"), s2.str("snapshot_id"))
		}
		pol = with(rawPolicy(hot.str("snapshot_id"), "tools.get-one"), "console", "collect")
		done := c.must(c.call("resume", hot.bytes, "snapshot_base64", "policy", pol, "payload", numPayload(5)))
		assert.Equal(t, "completed", done.step()["type"])
		assert.Equal(t, []string{"error:b 5"}, logsOf(done.step()), "a replay never returns earlier segments' lines")

		// A failure carries its lines, before the error.
		failed := c.call("start", nil, "", "program_id", c.must(c.call("compile", nil, "", "source", `console.log("before"); null.x`)).str("program_id"),
			"options", map[string]any{"console": "collect"})
		require.False(t, failed.ok())
		assert.Equal(t, []string{"log:before"}, logsOf(failed.hdr))
		assert.Equal(t, "runtime", failed.hdr["error_code"])

		// Steps without lines carry no logs member.
		plain := c.must(c.call("start", nil, "", "program_id", c.must(c.call("compile", nil, "", "source", `1`)).str("program_id"),
			"options", map[string]any{"console": "collect"}))
		_, has := plain.step()["logs"]
		assert.False(t, has)
	})
}

func TestConsoleModeIsPartOfThePolicy(t *testing.T) {
	c := newSess(t, true, protocol.Options{})
	prog := c.must(c.call("compile", nil, "", "source", `get(1)`)).str("program_id")
	off := c.must(c.call("start", nil, "", "program_id", prog, "options", map[string]any{"capabilities": []string{"get"}}))
	on := c.must(c.call("start", nil, "", "program_id", prog, "options", map[string]any{"capabilities": []string{"get"}, "console": "collect"}))
	offID, onID := off.str("policy_id"), on.str("policy_id")
	assert.NotEqual(t, offID, onID)
	explicit := c.must(c.call("start", nil, "", "program_id", prog, "options", map[string]any{"capabilities": []string{"get"}, "console": "off"}))
	assert.Equal(t, offID, explicit.str("policy_id"), "off is the default")
	// A cached resume under the other console mode's policy is refused.
	r := c.call("resume", nil, "", "snapshot_id", on.str("snapshot_id"), "policy_id", offID, "auth", auth(on.str("snapshot_id")), "payload", numPayload(1))
	assert.Equal(t, "console_mismatch", r.hdr["error_code"])
	// max_log_bytes is a limit, in the policy_id only when set.
	lim := c.must(c.call("start", nil, "", "program_id", prog, "options", map[string]any{"capabilities": []string{"get"}, "limits": map[string]any{"max_log_bytes": 10}}))
	assert.NotEqual(t, offID, lim.str("policy_id"))
	def := c.must(c.call("start", nil, "", "program_id", prog, "options", map[string]any{"capabilities": []string{"get"}, "limits": map[string]any{"max_log_bytes": 262144}}))
	assert.Equal(t, offID, def.str("policy_id"))
}

func TestPingListsCodeModeFeatures(t *testing.T) {
	c := newSess(t, true, protocol.Options{})
	r := c.must(c.call("ping", nil, ""))
	raw, _ := json.Marshal(r.result()["features"])
	for _, f := range []string{"console", "namespaces", "entry_call"} {
		assert.Contains(t, string(raw), `"`+f+`"`)
	}
}
