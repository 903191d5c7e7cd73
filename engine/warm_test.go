package engine

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// The warm-up program runs to completion (a change that broke it would
// silently cost every first start) and leaves nothing running. What it
// saves is measured by bench/, not asserted here.
func TestWarmUpCompletesAndLeavesNothing(t *testing.T) {
	base := runtime.NumGoroutine()
	step := warmRun()
	require.NoError(t, step.Err)
	require.True(t, step.Done)
	require.Equal(t, value.Object(
		value.M("n", value.Number(2)),
		value.M("top", value.Array(value.Object(value.M("id", value.Number(2)), value.M("name", value.String("n")),
			value.M("tags", value.Array(value.String("a"))), value.M("score", value.Number(2)), value.M("label", value.String("n#2"))))),
		value.M("keys", value.Array(value.String("n"))),
	), step.Value)
	WarmProcess()
	settleGoroutines(t, base)
}

// The replay half resumes a checkpoint from its bytes to completion: a
// change that made the snapshot journal the page instead, or broke the
// replay, would leave a first cold resume paying for its first use again.
func TestWarmReplayResumesACheckpoint(t *testing.T) {
	base := runtime.NumGoroutine()
	step, checkpoint := warmReplay()
	require.NoError(t, step.Err)
	require.True(t, step.Done)
	require.True(t, checkpoint, "the replayed snapshot is a checkpoint")
	require.Equal(t, value.Number(checkpointMin+1), step.Value)
	settleGoroutines(t, base)
}
