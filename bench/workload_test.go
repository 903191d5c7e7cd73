package bench

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// TestWorkloads runs every fixture through a Session in process: the
// program must make exactly the fixture's calls, in the fixture's order
// (the order plain JavaScript makes them), and produce its expected
// result.
func TestWorkloads(t *testing.T) {
	ws, err := LoadWorkloads()
	if err != nil {
		t.Fatal(err)
	}
	s := protocol.NewSession(protocol.Options{})
	defer s.Close()
	var id uint64
	call := func(t *testing.T, req []byte) *stepResponse {
		t.Helper()
		resp, err := s.Handle(req, nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := parseResponse(resp.Header)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, w := range ws {
		t.Run(w.Name, func(t *testing.T) {
			if len(w.Calls) == 0 {
				t.Fatal("no calls")
			}
			id++
			pid := call(t, compileRequest(id, w.Source)).Result.ProgramID
			id++
			r := call(t, startRequest(id, pid, w.inputs, mustJSONText(w.Capabilities)))
			n := 0
			for r.Result.Step.Type == "suspended" {
				if n == len(w.Calls) {
					t.Fatalf("call %d: %s beyond the fixture's %d calls", n+1, r.Result.Step.Capability, len(w.Calls))
				}
				c := w.Calls[n]
				n++
				want, err := Structured(c.Args)
				if err != nil {
					t.Fatal(err)
				}
				wantKey, _ := callKey(c.Capability, want)
				gotKey, err := callKey(r.Result.Step.Capability, r.Result.Step.Args)
				if err != nil || gotKey != wantKey {
					t.Fatalf("call %d: %s(%s), fixture has %s(%s) (%v)", n, r.Result.Step.Capability, r.Result.Step.Args, c.Capability, c.Args, err)
				}
				p, err := w.answer(r.Result.Step.Capability, r.Result.Step.Args)
				if err != nil {
					t.Fatal(err)
				}
				id++
				r = call(t, resumeRequest(nil, id, r.Result.SnapshotID, r.Result.PolicyID, p))
			}
			if r.Result.Step.Type != "completed" {
				t.Fatalf("step %q after %d calls", r.Result.Step.Type, n)
			}
			if n != len(w.Calls) {
				t.Fatalf("completed after %d of %d calls", n, len(w.Calls))
			}
			got, err := canonical(r.Result.Step.Value)
			if err != nil || !bytes.Equal(got, w.expected) {
				t.Fatalf("result %s\nwant   %s (%v)", got, w.expected, err)
			}
		})
	}
}

// TestWorkloadsPeer checks every fixture on the reference implementation
// too, as the driver does before measuring it. It needs Node and an
// installed peer (bench/peer/node_modules); it never installs one.
func TestWorkloadsPeer(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	dir, err := peerDir()
	if err != nil {
		t.Skip(err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not found")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "mustardscript", "package.json")); err != nil {
		t.Skip("peer not installed: run the driver once, or npm install in bench/peer")
	}
	ws, err := LoadWorkloads()
	if err != nil {
		t.Fatal(err)
	}
	p, reason := startPeer(Config{}, ws)
	if p == nil {
		t.Fatal(reason)
	}
	p.close()
}
