package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

// Recorded sessions replaying byte for byte: corpus.TestTraceReplays.

// A trace file that cannot be created is a start-up error (exit status 2,
// no path in the message); --trace without a file is a usage error.
func TestE2ETraceStartupErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, path := range []string{filepath.Join(dir, "missing", "trace.jsonl"), dir} {
		stdout, stderr, code, err := hosttest.Run("--trace", path)
		require.NoError(t, err)
		assert.Equal(t, 2, code, stderr)
		assert.Empty(t, stdout)
		assert.Equal(t, "mustard-sidecar: --trace: the trace file cannot be created\n", stderr)
	}
	_, stderr, code, err := hosttest.Run("--trace")
	require.NoError(t, err)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--trace needs a value")
}
