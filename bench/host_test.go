package bench

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// The lean response reader gives what encoding/json gives, on every
// response the workloads produce in process and on hand-written ones that
// take the fallback.
func TestParseResponseMatchesEncodingJSON(t *testing.T) {
	ws, err := LoadWorkloads()
	if err != nil {
		t.Fatal(err)
	}
	s := protocol.NewSession(protocol.Options{})
	defer s.Close()
	var headers [][]byte
	for _, w := range ws {
		r, err := s.Handle(compileRequest(1, w.Source), nil)
		if err != nil {
			t.Fatal(err)
		}
		headers = append(headers, r.Header)
		pid, err := parseResponse(r.Header)
		if err != nil {
			t.Fatal(err)
		}
		r, err = s.Handle(startRequest(2, pid.Result.ProgramID, w.inputs, mustJSONText(w.Capabilities)), nil)
		for err == nil {
			headers = append(headers, r.Header)
			step, perr := parseResponse(r.Header)
			if perr != nil || step.Result.Step.Type != wire.StepSuspended {
				break
			}
			p, aerr := w.answer(step.Result.Step.Capability, step.Result.Step.Args)
			if aerr != nil {
				t.Fatal(aerr)
			}
			r, err = s.Handle(resumeRequest(nil, 3, step.Result.SnapshotID, step.Result.PolicyID, p), nil)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	headers = append(headers,
		[]byte(`{"id":1,"ok":false,"error":"no such program"}`),
		[]byte(`{"ok":true,"result":{"kind":"step","step":{"type":"suspended","capability":"a\"b","args":[]},"snapshot_id":"x"}}`),
		[]byte(`{ "ok" : true , "result" : { "step" : { "value" : {"String":"\\\"}"} , "type" : "completed" } , "kind" : "step" } }`),
	)
	if len(headers) < 50 {
		t.Fatalf("only %d responses", len(headers))
	}
	for _, h := range headers {
		var want stepResponse
		if err := json.Unmarshal(h, &want); err != nil {
			t.Fatal(err)
		}
		got, err := parseResponse(h)
		if (err == nil) != want.OK {
			t.Fatalf("%s: error %v", h, err)
		}
		if !reflect.DeepEqual(*got, want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", h, *got, want)
		}
	}
}

// The kept HMAC signs as the package's one-off Token does, every time.
func TestTokenSignerMatchesToken(t *testing.T) {
	for _, id := range []string{"a", "b", strings.Repeat("f", 64), ""} {
		if got, want := string(benchTokens.append(nil, id)), hosttest.Token(benchKey, id); got != want {
			t.Fatalf("%q: %s, want %s", id, got, want)
		}
	}
}
