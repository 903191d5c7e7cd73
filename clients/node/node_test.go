package node_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// TestNodeSuite runs the Node package's tests (node --test, through
// test/run.js) against a sidecar built here, so that `go test ./...`
// covers them: on sidecar processes, and with the long suites on the
// in-process engine too (its addon's build and pass take about as long
// again). It skips when node is not on PATH, and when
// MUSTARD_SKIP_NODE_SUITE=1 (.ci/run runs the suite itself with npm test).
func TestNodeSuite(t *testing.T) {
	if os.Getenv("MUSTARD_SKIP_NODE_SUITE") == "1" {
		t.Skip("MUSTARD_SKIP_NODE_SUITE=1")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	if testing.Short() {
		t.Skip("the Node suite takes a while; skipped with -short")
	}
	bin, err := hosttest.BuildSidecar(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join("test", "run.js"))
	cmd.Env = append(os.Environ(), "MUSTARD_SIDECAR_BIN="+bin)
	if !longtest.Enabled() {
		cmd.Env = append(cmd.Env, "MUSTARD_NODE_SIDECAR_ONLY=1")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the Node suite failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
