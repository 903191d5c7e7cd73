package host

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Stats reads what the sidecar holds: a parked execution, its program and
// snapshot, and how resumes ran.
func TestClientStats(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, Config{Cmd: sidecarCmd(t)})
	pong, err := c.Ping(ctx)
	require.NoError(t, err)
	require.True(t, pong.Has("stats"), "%v", pong.Features)

	st, err := c.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, Stats{MemoryBudgetBytes: st.MemoryBudgetBytes}, *st, "a fresh sidecar holds nothing")
	require.Positive(t, st.MemoryBudgetBytes)

	prog, err := c.Compile(ctx, `const a = fetch(1); const b = fetch(2); a + b`)
	require.NoError(t, err)
	step, err := c.Start(ctx, StartRequest{Program: prog, Capabilities: []string{"fetch"}})
	require.NoError(t, err)
	st, err = c.Stats(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, st.ParkedExecutions)
	require.EqualValues(t, 1, st.CachedPrograms)
	require.EqualValues(t, 1, st.Compiles)
	require.EqualValues(t, 1, st.CachedSnapshots)
	require.Positive(t, st.MemoryUsedBytes)

	_, err = c.Resume(ctx, ResumeRequest{SnapshotID: step.Suspended.SnapshotID, PolicyID: step.Suspended.PolicyID, Key: testKey, Payload: Return(value.Number(1))})
	require.NoError(t, err)
	st, err = c.Stats(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, st.HotResumes)
	require.EqualValues(t, 0, st.Replays)
	require.EqualValues(t, 1, st.ParkedExecutions, "the resume parked the execution again")
}

// A sidecar answering stats with another kind of result breaks the
// protocol: the call fails and the process is stopped.
func TestClientStatsRefusesAnotherKind(t *testing.T) {
	noLeaks(t)
	c := newClient(t, Config{Cmd: fakeCmd(t, "wrong-kind")})
	_, err := c.Stats(context.Background())
	require.ErrorIs(t, err, ErrProtocol)
	require.Contains(t, err.Error(), "stats answered without stats")
	<-c.Done()
}

// A Pool answers for each place: what its process holds, nil where no
// process runs.
func TestPoolStats(t *testing.T) {
	ctx := context.Background()
	p := newPool(t, 2)
	st, err := p.Stats(ctx)
	require.NoError(t, err)
	require.Len(t, st, 2)
	for _, s := range st {
		require.NotNil(t, s)
		require.Zero(t, s.Compiles)
	}
	_, err = p.Compile(ctx, "1 + 1")
	require.NoError(t, err)
	st, err = p.Stats(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, st[0].Compiles+st[1].Compiles, "one process compiled the program")

	c := p.slots[0].client
	c.Kill()
	<-c.Done()
	st, err = p.Stats(ctx)
	require.NoError(t, err)
	require.Nil(t, st[0], "a place whose process ended")
	require.NotNil(t, st[1])
	require.Zero(t, p.Processes()[0].PID, "asking did not start a process")
}

// Pool.Stats waits for a place that serves a request; its context ends
// the wait.
func TestPoolStatsWaitsForABusyPlace(t *testing.T) {
	ctx := context.Background()
	p := newPool(t, 2)
	l, err := p.acquire(ctx, nil)
	require.NoError(t, err)
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := p.Stats(cctx); done <- err }()
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	p.release(l)
	st, err := p.Stats(ctx)
	require.NoError(t, err)
	require.NotNil(t, st[0])
	require.NotNil(t, st[1])
}
