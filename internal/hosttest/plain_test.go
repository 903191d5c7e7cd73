package hosttest_test

import (
	"debug/buildinfo"
	"os"
	"os/exec"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

func TestMain(m *testing.M) {
	hosttest.RunAsSidecar(cli.Main)
	os.Exit(hosttest.RunTests(m))
}

// The sidecar a test starts is race-instrumented exactly when the test
// binary is and the long suites run (or no go command is at hand);
// otherwise a plain build stands in under -race, and it serves.
func TestSidecarIsRaceInstrumentedOnlyInTheLongSuites(t *testing.T) {
	if os.Getenv(hosttest.BinaryEnv) != "" {
		t.Skipf("%s names the sidecar", hosttest.BinaryEnv)
	}
	bin, err := hosttest.Binary()
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	_, noGo := exec.LookPath("go")
	// Without a go command to build with (a test binary run by hand) the
	// sidecar is this binary too.
	wantSelf := !hosttest.RaceEnabled || longtest.Enabled() || noGo != nil
	if (bin == self) != wantSelf {
		t.Fatalf("Binary() = %s, this binary %s: want this binary %v", bin, self, wantSelf)
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	raced := false
	for _, s := range info.Settings {
		if s.Key == "-race" && s.Value == "true" {
			raced = true
		}
	}
	if want := hosttest.RaceEnabled && wantSelf; raced != want {
		t.Errorf("the sidecar's build has -race %v, want %v", raced, want)
	}
	sc, err := hosttest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Kill()
	resp, err := sc.Call(map[string]any{"protocol_version": 2, "id": 1, "method": "ping"}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if !resp.OK() {
		t.Fatalf("ping: %s", resp.Raw)
	}
}
