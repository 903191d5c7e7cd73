package protocol_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// rawCall sends a request header written by hand, so that key order and
// spelling are exactly as given.
func (c *sess) rawCall(header string, payload []byte) reply {
	c.t.Helper()
	resp, err := c.s.Handle([]byte(header), payload)
	if err != nil {
		c.t.Fatalf("%s: fatal %v", header, err)
	}
	var r reply
	r.raw = string(resp.Header)
	d := json.NewDecoder(strings.NewReader(r.raw))
	d.UseNumber()
	if err := d.Decode(&r.hdr); err != nil {
		c.t.Fatalf("response %s: %v", resp.Header, err)
	}
	checkCode(c.t, r)
	return r
}

// Every structure the contract closes rejects a key it does not define,
// with `unknown field `<name>` in <structure>`, in both transports, for a
// misspelling, a near miss in case, a field of another structure and a
// made-up one; the same request without the key succeeds, so each row
// proves the key alone made it fail. Unknown top-level keys stay ignored.
func TestClosedStructures(t *testing.T) {
	forBoth(t, func(t *testing.T, jsonl bool) {
		c := newSess(t, jsonl, protocol.Options{})
		susp := c.startThree("")
		sid, pid := susp.str("snapshot_id"), susp.str("policy_id")
		prog := c.must(c.call("compile", nil, "", "source", threeCalls)).str("program_id")
		snap := susp.bytes
		snapField, payload := "", []byte(nil)
		if jsonl {
			snapField = `,"snapshot_base64":"` + base64.StdEncoding.EncodeToString(snap) + `"`
		} else {
			payload = snap
		}
		a := auth(sid)
		authJSON := func(extra string) string {
			return fmt.Sprintf(`{"snapshot_key_base64":%q,"snapshot_key_digest":%q,"snapshot_token":%q%s}`,
				a["snapshot_key_base64"], a["snapshot_key_digest"], a["snapshot_token"], extra)
		}
		policyJSON := func(extra, limitsExtra string) string {
			return fmt.Sprintf(`{"capabilities":["fetch_data"],"limits":{"instruction_budget":100000%s},"snapshot_id":%q,"snapshot_key_base64":%q,"snapshot_key_digest":%q,"snapshot_token":%q%s}`,
				limitsExtra, sid, a["snapshot_key_base64"], a["snapshot_key_digest"], a["snapshot_token"], extra)
		}
		start := func(optionsExtra, limitsExtra string) (string, []byte) {
			return fmt.Sprintf(`{"protocol_version":2,"id":7,"method":"start","program_id":%q,"options":{"inputs":{"n":{"Number":{"Finite":1}}},"capabilities":["fetch_data"],"limits":{"call_depth_limit":64%s}%s}}`,
				prog, limitsExtra, optionsExtra), nil
		}
		cached := func(authExtra, payloadExtra string) (string, []byte) {
			pay := `{"type":"value","value":{"Number":{"Finite":1}}` + payloadExtra + `}`
			return fmt.Sprintf(`{"protocol_version":2,"id":7,"method":"resume","snapshot_id":%q,"policy_id":%q,"auth":%s,"payload":%s}`,
				sid, pid, authJSON(authExtra), pay), nil
		}
		hostError := func(errorExtra string) (string, []byte) {
			pay := `{"type":"error","error":{"name":"E","message":"m","code":"c","details":"Null"` + errorExtra + `}}`
			return fmt.Sprintf(`{"protocol_version":2,"id":7,"method":"resume","snapshot_id":%q,"policy_id":%q,"auth":%s,"payload":%s}`,
				sid, pid, authJSON(""), pay), nil
		}
		raw := func(policyExtra, limitsExtra string) (string, []byte) {
			return fmt.Sprintf(`{"protocol_version":2,"id":7,"method":"resume","policy":%s,"payload":{"type":"value","value":{"Number":{"Finite":1}}}%s}`,
				policyJSON(policyExtra, limitsExtra), snapField), payload
		}
		type build func(extra string) (string, []byte)
		structures := []struct {
			structure string
			build     build
			keys      []string
		}{
			{"options", func(x string) (string, []byte) { return start(x, "") }, []string{"input", "Inputs", "capability", "limit", "policy", "seal_key"}},
			{"limits", func(x string) (string, []byte) { return start("", x) }, []string{"instructions", "Instruction_Budget", "heap_limit", "wall_time", "inputs"}},
			{"policy", func(x string) (string, []byte) { return raw(x, "") }, []string{"capability", "limit", "snapshot_key", "auth", "policy_id", "seal_key"}},
			{"limits", func(x string) (string, []byte) { return raw("", x) }, []string{"instructions", "max_outstanding_calls", "Wall_Time_MS"}},
			{"auth", func(x string) (string, []byte) { return cached(x, "") }, []string{"snapshot_id", "snapshot_key", "token", "key_digest"}},
			{"payload", func(x string) (string, []byte) { return cached("", x) }, []string{"values", "Value", "message", "kind"}},
			{"payload.error", hostError, []string{"mesage", "Name", "stack", "detail"}},
		}
		for _, st := range structures {
			// Without the key: accepted (a resume may fail only for a
			// reason the key has nothing to do with).
			hdr, pl := st.build("")
			r := c.rawCall(hdr, pl)
			if st.structure == "payload.error" {
				// The guest does not catch it: the host's error is what
				// ends the execution.
				if !strings.HasPrefix(r.err(), "Runtime: E: m\n") {
					t.Fatalf("the host error was not delivered: %s", r.raw)
				}
			} else if !r.ok() {
				t.Fatalf("%s: the request without an unknown key failed: %s", st.structure, r.raw)
			}
			for _, key := range st.keys {
				hdr, pl := st.build(fmt.Sprintf(`,%q:1`, key))
				r := c.rawCall(hdr, pl)
				want := "unknown field `" + key + "` in " + st.structure
				if r.ok() || r.err() != want {
					t.Errorf("%s with %q: want error %q, got %s", st.structure, key, want, r.raw)
				}
			}
		}

		// The first unknown key in document order is named, whatever
		// the other keys.
		hdr, _ := start(`,"zeta":1,"alpha":2`, "")
		c.fail(c.rawCall(hdr, nil), "unknown field `zeta` in options")
		hdr, _ = start("", `,"b":1,"a":2`)
		c.fail(c.rawCall(hdr, nil), "unknown field `b` in limits")
		// An escaped key is named as it decodes.
		hdr, _ = start(`,"in\u0070ut":1`, "")
		c.fail(c.rawCall(hdr, nil), "unknown field `input` in options")

		// Unknown top-level keys are ignored.
		hdr, _ = start("", "")
		hdr = strings.Replace(hdr, `"id":7,`, `"id":7,"trace_id":"abc","x":{"y":[1]},`, 1)
		c.must(c.rawCall(hdr, nil))
	})
}
