package bench

import (
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
	for _, w := range ws {
		t.Run(w.Name, func(t *testing.T) {
			if len(w.Calls) == 0 {
				t.Fatal("no calls")
			}
			if err := w.RunInSession(s, true); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestWorkloadModes runs every fixture in one mode and in batch mode
// (host_calls), each hot and cold (every resume from the snapshot bytes in
// a new Session, as in a new process): each run must complete with the
// expected result, a cold run must take the hot run's steps, and in one
// mode the calls come in the fixture's order. The round trips each mode
// takes (start + resumes) are pinned: batch mode saves them where calls
// are concurrent.
func TestWorkloadModes(t *testing.T) {
	ws, err := LoadWorkloads()
	if err != nil {
		t.Fatal(err)
	}
	roundTrips := map[string][2]int{
		"expenses":   {19, 10},
		"onboarding": {13, 13},
		"oncall":     {26, 5},
		"payouts":    {8, 8},
		"release":    {11, 5},
		"research":   {11, 11},
		"restock":    {15, 15},
		"triage":     {26, 5},
	}
	s := protocol.NewSession(protocol.Options{})
	defer s.Close()
	for _, w := range ws {
		t.Run(w.Name, func(t *testing.T) {
			x, err := w.checkInSession(s)
			if err != nil {
				t.Fatal(err)
			}
			if x.OrderNote != "" {
				t.Error(x.OrderNote)
			}
			if got := [2]int{x.One, x.Batch}; got != roundTrips[w.Name] {
				t.Errorf("round trips (one, batch) %v, want %v", got, roundTrips[w.Name])
			}
		})
	}
}

// TestWorkloadsPeer checks every fixture on the reference implementation
// too, as the driver does before measuring it. It needs Node and an
// installed peer (bench/peer/node_modules); it never installs one.
func TestWorkloadsPeer(t *testing.T) {
	p, _ := startTestPeer(t)
	p.close()
}

// startTestPeer starts the peer with the workloads, or skips the test
// (short, or no Node and installed peer here).
func startTestPeer(t *testing.T) (*peer, []*Workload) {
	t.Helper()
	if testing.Short() {
		t.Skip("short")
	}
	requirePeer(t)
	ws, err := LoadWorkloads()
	if err != nil {
		t.Fatal(err)
	}
	p, reason := startPeer(Config{}, ws)
	if p == nil {
		t.Fatal(reason)
	}
	return p, ws
}

// requirePeer skips the test unless Node and an installed peer are here.
func requirePeer(t *testing.T) {
	t.Helper()
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
}

// The expenses workload typed as TypeScript makes the same calls, in the
// same order, and completes with the same result.
func TestWorkloadInTypeScript(t *testing.T) {
	ws, err := LoadWorkloads()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../engine/testdata/typescript/expenses.ts")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if w.Name != "expenses" {
			continue
		}
		w.Source, w.Language = string(src), "typescript"
		s := protocol.NewSession(protocol.Options{})
		defer s.Close()
		if err := w.RunInSession(s, true); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("no expenses workload")
}
