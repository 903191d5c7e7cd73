package protocol

import (
	"os"
	"testing"
)

// TestMain runs the test binary as a sidecar when a test spawns it as one
// (hostwire_test.go); otherwise it runs the tests.
func TestMain(m *testing.M) {
	if path := os.Getenv(wireChildEnv); path != "" {
		os.Exit(runWireChild(path, os.Args[1:]))
	}
	os.Exit(m.Run())
}
