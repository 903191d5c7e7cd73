package protocol_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// A snapshot whose bytes are handed over (ReadOwned: the command's frames)
// is kept as it came, sent raw or staged in one chunk; bytes the caller
// keeps (Read) are copied, and the caller may change them afterwards.
func TestHandedOverSnapshotBytesAreKeptAsSent(t *testing.T) {
	for _, staged := range []bool{false, true} {
		for _, owned := range []bool{false, true} {
			c := newSess(t, false, protocol.Options{})
			st := c.startThree("")
			id := st.str("snapshot_id")
			snap := bytes.Clone(st.bytes)

			s := protocol.NewSession(protocol.Options{Transport: protocol.Binary, Entropy: fixedEntropy})
			t.Cleanup(s.Close)
			serve := func(req map[string]any, payload []byte) {
				t.Helper()
				hdr, err := json.Marshal(req)
				if err != nil {
					t.Fatal(err)
				}
				r := s.Read(hdr, payload)
				if owned {
					r = s.ReadOwned(hdr, payload)
				}
				resp, err := s.Serve(r)
				if err != nil || !bytes.Contains(resp.Header, []byte(`"ok":true`)) {
					t.Fatalf("%s: %s, %v", req["method"], resp.Header, err)
				}
			}
			resume := map[string]any{"protocol_version": 2, "id": 2, "method": "resume",
				"policy": rawPolicy(id, "fetch_data"), "payload": numPayload(1)}
			if staged {
				serve(map[string]any{"protocol_version": 2, "id": 1, "method": "stage", "stage_id": "s", "offset": 0}, snap)
				resume["stage_id"] = "s"
				serve(resume, nil)
			} else {
				serve(resume, snap)
			}
			kept := s.CachedSnapshot(id)
			if !bytes.Equal(kept, st.bytes) {
				t.Fatalf("staged %v, owned %v: the session keeps other bytes", staged, owned)
			}
			if shares := &kept[0] == &snap[0]; shares != owned {
				t.Errorf("staged %v, owned %v: kept bytes share the request's: %v", staged, owned, shares)
			}
		}
	}
}
