package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	hostapi "github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Pauses that put the sidecar in the state a workflow engine leaves it in
// between activities. They set up the case; nothing waits on them.
const (
	// idlePause is long enough for an idle sidecar to stop every ticker it
	// runs (after 100 idle periods of 1 ms), so that nothing in the process
	// wakes until the next request.
	idlePause = 400 * time.Millisecond
	// betweenSteps is a host's round trip from a suspension to the resume
	// that answers it: short enough that the tickers the start woke still
	// run, long enough that the work the start set off in the background
	// (preparing the next realm) is over.
	betweenSteps = 30 * time.Millisecond
)

// The pattern a workflow engine drives (contrib/temporal's TestCancel):
// a host starts a program that suspends at once on a tool call, answers
// it, and the resume spins in `while (true) {}` with a budget it will
// never spend; the user then cancels. The host is the host package's
// Client, which sends the in-band cancel when the resume's context ends
// and stops the process if the cancel is not honoured within its grace
// (host.DefaultCancelGrace). What is asserted is the outcome: the resume
// ends cancelled ("Limit: execution cancelled") and the same process
// serves the next request. Several rounds, each after the sidecar went
// idle: a cancel that does not reach the guest fails the round; should
// the machine be too busy for the process to go idle, the round passes
// without reaching the case, never failing for it. With the sidecar's
// default GOMAXPROCS and with GOMAXPROCS=1.
func TestE2ECancelAfterIdle(t *testing.T) {
	t.Parallel()
	// With one processor, the guest's, nothing else can run until the
	// runtime preempts it.
	for _, c := range []struct {
		name string
		env  []string
	}{{"default", nil}, {"GOMAXPROCS=1", []string{"GOMAXPROCS=1"}}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cancelAfterIdle(t, c.env)
		})
	}
}

func cancelAfterIdle(t *testing.T, env []string) {
	cmd, err := hosttest.CommandEnv(env)
	require.NoError(t, err)
	c, err := hostapi.NewClient(hostapi.Config{Cmd: cmd})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	prog, err := c.Compile(ctx, `async function main() { await ready(); while (true) {} } main();`)
	require.NoError(t, err)
	key, err := hostapi.NewKey(hostKey)
	require.NoError(t, err)
	limits := hostapi.Limits{InstructionBudget: hostapi.Limit(1 << 60)}
	for round := 0; round < 4; round++ {
		time.Sleep(idlePause)
		st, err := c.Start(ctx, hostapi.StartRequest{Program: prog, Capabilities: []string{"ready"},
			Limits: limits, HostCalls: hostapi.HostCallsBatch})
		require.NoError(t, err)
		s := st.Suspended
		require.NotNil(t, s)
		require.Len(t, s.Calls, 1)
		time.Sleep(betweenSteps)

		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		busy0, procOK := cpuTicks(cmd.Process.Pid)
		go func() {
			_, err := c.Resume(runCtx, hostapi.ResumeRequest{SnapshotID: s.SnapshotID, PolicyID: s.PolicyID, Key: key,
				Answers: []hostapi.Answer{{ID: s.Calls[0].ID, Payload: hostapi.Return(value.Bool(true))}}})
			done <- err
		}()
		if procOK {
			waitBusy(cmd.Process.Pid, busy0, 2) // in the loop
		}
		cancel()
		var resumeErr error
		select {
		case resumeErr = <-done:
		case <-time.After(10 * hostapi.DefaultCancelGrace):
			t.Fatalf("round %d: the resume did not end after the cancel", round)
		}
		var he *hostapi.Error
		require.ErrorAs(t, resumeErr, &he, "round %d: %v", round, resumeErr)
		require.Equal(t, "Limit: execution cancelled", he.Message, "round %d", round)
		_, err = c.Compile(ctx, "1")
		require.NoError(t, err, "round %d: the process serves the next request", round)
	}
}
