package bench

import (
	"fmt"
	"testing"
)

func TestParseCalls(t *testing.T) {
	raw := []byte(`[{"call_id":1,"capability":"fetch_data","args":[{"Number":{"Finite":1.0}}]}, {"call_id":12,"capability":"get","args":[]}]`)
	calls, err := parseCalls(nil, raw)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%d %s %s|%d %s %s", calls[0].id, calls[0].capability, calls[0].args, calls[1].id, calls[1].capability, calls[1].args); got != `1 fetch_data [{"Number":{"Finite":1.0}}]|12 get []` || len(calls) != 2 {
		t.Errorf("parsed %s (%d calls)", got, len(calls))
	}
	// An escaped name goes through encoding/json.
	calls, err = parseCalls(calls[:0], []byte(`[{"call_id":3,"capability":"get\u005fx","args":[]}]`))
	if err != nil || len(calls) != 1 || calls[0].id != 3 || calls[0].capability != "get_x" {
		t.Errorf("escaped: %+v %v", calls, err)
	}
	for _, bad := range []string{``, `{}`, `[{"call_id":1,"capability":"x","args":[]}`, `[1]`} {
		if calls, err := parseCalls(nil, []byte(bad)); err == nil {
			t.Errorf("%q: parsed %+v", bad, calls)
		}
	}
}

func TestBatchResumeRequest(t *testing.T) {
	calls := []hostCall{{id: 2, capability: "a"}, {id: 5, capability: "b"}}
	payloads := [][]byte{[]byte(`{"type":"value","value":"Null"}`), []byte(`{"type":"cancelled"}`)}
	got := string(batchResumeRequest(nil, 7, "sid", "pid", calls, payloads))
	want := string(resumeHead(nil, 7, "sid", "pid")) + `"answers":[{"call_id":2,"payload":{"type":"value","value":"Null"}},{"call_id":5,"payload":{"type":"cancelled"}}]}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
