package protocol_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

func (c *sess) read(header string) *protocol.Request {
	return c.s.Read([]byte(header), nil)
}

func (c *sess) serve(r *protocol.Request) reply {
	c.t.Helper()
	resp, err := c.s.Serve(r)
	if err != nil {
		c.t.Fatalf("fatal %v", err)
	}
	var out reply
	out.raw = string(resp.Header)
	d := json.NewDecoder(strings.NewReader(out.raw))
	d.UseNumber()
	if err := d.Decode(&out.hdr); err != nil {
		c.t.Fatal(err)
	}
	return out
}

const modeProgram = `const mode = fetch_data(0); if (mode === 1) { for(;;){} } 'done';`

// A cancel read while its target runs ends the target's execution, drops
// its parked state and leaves the snapshot it resumed from resumable; one
// read while the target waits its turn answers it without running it.
func TestCancelInProcess(t *testing.T) {
	c := newSess(t, false, protocol.Options{})
	prog := c.must(c.call("compile", nil, "", "source", modeProgram)).str("program_id")
	opts := map[string]any{"capabilities": []string{"fetch_data"}, "limits": map[string]any{"instruction_budget": uint64(1e15)}}
	s := c.must(c.call("start", nil, "", "program_id", prog, "options", opts))
	sid, pid := s.str("snapshot_id"), s.str("policy_id")
	if c.s.Parked() != 1 {
		t.Fatalf("parked %d", c.s.Parked())
	}
	resume := func(id int, mode int) string {
		b, _ := json.Marshal(map[string]any{"protocol_version": 2, "id": id, "method": "resume", "snapshot_id": sid, "policy_id": pid,
			"auth": auth(sid), "payload": numPayload(mode)})
		return string(b)
	}

	// Running: the resume is served on another goroutine, the cancel read
	// on this one while it runs (or, if it has not begun yet, waits).
	n := c.read(resume(5, 1))
	answered := make(chan reply, 1)
	go func() { answered <- c.serve(n) }()
	m := c.read(`{"protocol_version":2,"id":6,"method":"cancel","target_id":5}`)
	if r := <-answered; r.err() != "Limit: execution cancelled" {
		t.Fatalf("the cancelled resume answered %s", r.raw)
	}
	if r := c.serve(m); r.raw != `{"protocol_version":2,"id":6,"ok":true,"result":{"kind":"cancelled","target_id":5,"was_running":true}}` {
		t.Fatalf("cancel answered %s", r.raw)
	}
	// Whether the cancel was read while the resume ran or before it began
	// (goroutine scheduling decides), its execution is over and no longer
	// parked; the snapshot still resumes, by replay.
	if c.s.Parked() != 0 {
		t.Fatalf("the cancelled execution is still parked")
	}
	before := c.s.Stats()
	if r := c.rawCall(resume(7, 2), nil); r.step()["value"].(map[string]any)["String"] != "done" {
		t.Fatalf("the snapshot did not resume: %s", r.raw)
	}
	if after := c.s.Stats(); after.Replays != before.Replays+1 {
		t.Fatalf("stats %+v after %+v: want a replay", after, before)
	}

	// Queued: read, cancelled, then served: it ends at its first
	// instruction and parks nothing.
	n = c.read(fmt.Sprintf(`{"protocol_version":2,"id":8,"method":"start","program_id":%q,"options":{}}`, prog))
	m = c.read(`{"protocol_version":2,"id":9,"method":"cancel","target_id":8}`)
	if r := c.serve(n); r.err() != "Limit: execution cancelled" {
		t.Fatalf("the queued start answered %s", r.raw)
	}
	if r := c.serve(m); !strings.Contains(r.raw, `"was_running":true`) {
		t.Fatalf("cancel answered %s", r.raw)
	}
	if c.s.Parked() != 0 {
		t.Fatalf("a cancelled start parked an execution")
	}

	// After its answer a request is out of reach.
	n = c.read(fmt.Sprintf(`{"protocol_version":2,"id":10,"method":"start","program_id":%q,"options":{"capabilities":["fetch_data"]}}`, prog))
	c.must(c.serve(n))
	if r := c.serve(c.read(`{"protocol_version":2,"id":11,"method":"cancel","target_id":10}`)); !strings.Contains(r.raw, `"was_running":false`) {
		t.Fatalf("cancel answered %s", r.raw)
	}
	if c.s.Parked() != 1 {
		t.Fatalf("a cancel after the answer disturbed the parked execution")
	}
}
