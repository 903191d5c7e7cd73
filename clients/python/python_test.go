package python_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

// TestPythonSuite runs the Python package's tests (unittest, under tests/)
// against a sidecar built here, so that `go test ./...` covers them. It
// skips when python3 is not on PATH.
func TestPythonSuite(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	if out, err := exec.Command(python, "-c", "import sys; sys.exit(sys.version_info < (3, 9))").CombinedOutput(); err != nil {
		t.Skipf("the package needs Python 3.9 or later: %v %s", err, out)
	}
	bin, err := hosttest.BuildSidecar(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "-m", "unittest", "discover", "-v", "-s", "tests", "-t", ".")
	cmd.Env = append(os.Environ(), "MUSTARD_SIDECAR_BIN="+bin, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the Python suite failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
