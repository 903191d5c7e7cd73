package engine_test

import (
	"os"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

// The metering-determinism tests run a program in a second process: this
// test binary, re-executed as the sidecar.
func TestMain(m *testing.M) {
	hosttest.RunAsSidecar(cli.Main)
	os.Exit(hosttest.RunTests(m))
}
