package hosttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// A race-instrumented test binary that is its own sidecar makes every
// sidecar it starts race-instrumented too, and such a process takes about
// three times the CPU of a plain one to start (10,000 first page faults
// for the detector's shadow memory against 2,700). With some 1,100
// sidecars started, that was half the default run of `go test -race
// ./...`. So in that run a test binary under RunTests starts a plain
// build of the sidecar instead, made once with `go build`; with the long
// suites on (.ci/run), or outside RunTests, it starts itself,
// race-instrumented.
const sidecarPackage = "github.com/mustard-sidecar/mustard-sidecar/cmd/mustard-sidecar"

var plain struct {
	mu     sync.Mutex
	active bool   // inside RunTests, whose end removes dir
	dir    string // the build's directory, once made
	bin    string
	err    error
}

// RunTests runs m (a *testing.M) and returns its exit code, removing the
// plain sidecar build the run made, if any. For TestMain, after
// RunAsSidecar:
//
//	os.Exit(hosttest.RunTests(m))
func RunTests(m interface{ Run() int }) int {
	plain.mu.Lock()
	plain.active = true
	plain.mu.Unlock()
	defer func() {
		plain.mu.Lock()
		defer plain.mu.Unlock()
		if plain.dir != "" {
			os.RemoveAll(plain.dir)
		}
		plain.active, plain.dir, plain.bin, plain.err = false, "", "", nil
	}()
	return m.Run()
}

// usePlainBuild reports whether Binary builds a plain sidecar rather than
// run this binary.
func usePlainBuild() bool {
	if !RaceEnabled || longtest.Enabled() {
		return false
	}
	plain.mu.Lock()
	defer plain.mu.Unlock()
	return plain.active
}

// plainBinary builds the sidecar without -race, once per RunTests, and
// returns its path. The build runs in the test's directory, so a module that
// requires this one (contrib/*) builds the version it requires. Without a
// go command on PATH (a test binary run by hand) it is this binary.
func plainBinary() (string, error) {
	plain.mu.Lock()
	defer plain.mu.Unlock()
	if plain.bin != "" || plain.err != nil {
		return plain.bin, plain.err
	}
	if _, err := exec.LookPath("go"); err != nil { // a test binary run by hand, without a toolchain: itself
		plain.bin, plain.err = os.Executable()
		return plain.bin, plain.err
	}
	dir, err := os.MkdirTemp("", "mustard-sidecar-plain-")
	if err != nil {
		plain.err = err
		return "", err
	}
	plain.dir = dir
	plain.bin, plain.err = BuildSidecar(dir)
	return plain.bin, plain.err
}

// BuildSidecar builds the sidecar (cmd/mustard-sidecar) without -race
// into dir with the go command on PATH, and returns its path: for tests
// that hand a sidecar to another program (the Node and Python suites). The
// build runs in the current directory, so a module that requires this one
// (contrib/*) builds the version it requires.
func BuildSidecar(dir string) (string, error) {
	bin := filepath.Join(dir, "mustard-sidecar")
	if out, err := exec.Command("go", "build", "-o", bin, sidecarPackage).CombinedOutput(); err != nil {
		return "", fmt.Errorf("hosttest: building the sidecar: %v\n%s", err, out)
	}
	return bin, nil
}
