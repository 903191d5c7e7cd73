package bench

import (
	"os"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

func TestMain(m *testing.M) {
	hosttest.RunAsSidecar(cli.Main)
	os.Exit(hosttest.RunTests(m))
}
