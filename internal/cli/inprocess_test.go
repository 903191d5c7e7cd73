package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

func TestSessionOptions(t *testing.T) {
	key := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(key, []byte("0123456789abcdef0123456789abcdef"), 0o600))

	opts, err := SessionOptions(nil)
	require.NoError(t, err)
	require.Equal(t, protocol.Options{Transport: protocol.Binary}, opts)

	opts, err = SessionOptions([]string{"--memory-budget", "1048576", "--max-stage-bytes=4096", "--snapshot-key-file", key})
	require.NoError(t, err)
	require.Equal(t, int64(1<<20), opts.MemoryBudget)
	require.Equal(t, int64(4096), opts.MaxStageBytes)
	require.Equal(t, []byte("0123456789abcdef0123456789abcdef"), opts.PinnedKey)
	require.Equal(t, int64(1<<20)+softMemoryLimitAbove, SoftMemoryLimit(opts))
	require.Equal(t, int64(protocol.DefaultMemoryBudget+softMemoryLimitAbove), SoftMemoryLimit(protocol.Options{}))

	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"--jsonl"}, "--jsonl: a session in process takes binary frames only"},
		{[]string{"--trace", "t.jsonl"}, "--trace: a session in process records no transcript"},
		{[]string{"--log-format", "json"}, "--log-format: a session in process has no stderr log"},
		{[]string{"--version"}, "--version and --help print and exit: a session in process takes neither"},
		{[]string{"-h"}, "--version and --help print and exit: a session in process takes neither"},
		{[]string{"--memory-budget"}, "--memory-budget needs a value"},
		{[]string{"--max-stage-bytes", "0"}, `--max-stage-bytes must be a positive integer, got "0"`},
		{[]string{"--memory-budget", "100", "--max-stage-bytes", "80"}, "--max-stage-bytes (80) must be at most half of --memory-budget (100)"},
		{[]string{"--snapshot-key-file", filepath.Join(t.TempDir(), "none")}, "--snapshot-key-file: "},
		{[]string{"extra"}, `unknown argument "extra"`},
	} {
		_, err := SessionOptions(tc.args)
		require.Error(t, err, "%q", tc.args)
		require.Contains(t, err.Error(), tc.err, "%q", tc.args)
		require.NotContains(t, err.Error(), "usage:", "%q", tc.args)
	}
}
