package engine_test

import (
	"os"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

// The metering-determinism tests run a program in a second process: this
// test binary, re-executed as the sidecar.
func TestMain(m *testing.M) {
	hosttest.RunAsSidecar(cli.Main)
	code := hosttest.RunTests(m)
	engine.ReportCheckpoints() // a checkpoint sweep's run (checkpoint_test.go)
	os.Exit(code)
}
