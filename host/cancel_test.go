package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Must hold: cancelling the context of a start or resume sends the
// in-band cancel; the call ends with the sidecar's "Limit: execution
// cancelled" (which also matches context.Canceled), in a tight loop and
// inside a long built-in, and the process serves the next request.
func TestClientContextCancelSendsCancel(t *testing.T) {
	noLeaks(t)
	// A generous grace: the kill fallback must not be what ends the call.
	c := newClient(t, Config{Cmd: sidecarCmd(t), CancelGrace: 20 * time.Second})
	pong, err := c.Ping(context.Background())
	require.NoError(t, err)
	require.True(t, pong.Has("cancel"), "%v", pong.Features)
	huge := Limits{InstructionBudget: Limit(1 << 62), AllocationBudget: Limit(1 << 40), HeapLimitBytes: Limit(1 << 30)}
	for _, tc := range []struct{ name, src string }{
		{"tight loop", `ready(); for (;;) {}`},
		// 10^6 numbers in the long suites, 2*10^5 by default: their sort
		// still runs far longer than the cancel takes to arrive.
		{"long built-in", fmt.Sprintf(`const a = []; for (let i = 0; i < %d; i++) a.push((i * 7919) %% 1000003);
			ready(); for (;;) a.sort((x, y) => x - y);`, longtest.Pick(200_000, 1_000_000))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prog, err := c.Compile(context.Background(), tc.src)
			require.NoError(t, err)
			// Suspended on ready(): what follows is the endless part.
			st, err := c.Start(context.Background(), StartRequest{Program: prog, Capabilities: []string{"ready"}, Limits: huge})
			require.NoError(t, err)
			s := st.Suspended
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				_, err := c.Resume(ctx, ResumeRequest{SnapshotID: s.SnapshotID, PolicyID: s.PolicyID, Key: testKey})
				errc <- err
			}()
			eventually(t, "the resume to be written", func() bool { return c.outstanding() == 1 })
			cancelled := time.Now()
			cancel()
			err = <-errc
			t.Logf("ended %v after the cancel", time.Since(cancelled).Round(100*time.Microsecond))
			var se *Error
			require.ErrorAs(t, err, &se)
			require.Equal(t, "Limit: execution cancelled", se.Message)
			require.ErrorIs(t, err, context.Canceled)
			require.Equal(t, "Limit: execution cancelled", err.Error())
			_, err = c.Compile(context.Background(), "1")
			require.NoError(t, err, "the process serves the next request")
		})
	}
}

// The ping extension and the wall-time limit, through the typed API.
func TestClientPingAndWallTime(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	c := newClient(t, Config{Cmd: sidecarCmd(t)})
	pong, err := c.Ping(ctx)
	require.NoError(t, err)
	require.Equal(t, []int{2}, pong.ProtocolVersions)
	require.Equal(t, "binary", pong.Transport)
	require.NotEmpty(t, pong.SidecarVersion)
	require.EqualValues(t, 1<<20, pong.MaxRequestBytes)
	require.Equal(t, uint64(1_000_000), *pong.DefaultLimits.InstructionBudget)
	require.Equal(t, uint64(128), *pong.DefaultLimits.MaxOutstandingHostCalls)
	require.True(t, pong.Has("wall_time"), "%v", pong.Features)

	prog, err := c.Compile(ctx, `for (;;) {}`)
	require.NoError(t, err)
	started := time.Now()
	_, err = c.Start(ctx, StartRequest{Program: prog, Limits: Limits{InstructionBudget: Limit(1 << 62), WallTime: 50 * time.Millisecond}})
	var se *Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, "Limit: wall time exceeded", se.Message)
	require.GreaterOrEqual(t, time.Since(started), 50*time.Millisecond)
}

// A sidecar pinned to one key (--snapshot-key-file) resumes what the
// host's Key signs, and refuses another key.
func TestClientWithAPinnedKey(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(file, testKey.Bytes(), 0o600))
	c := newClient(t, Config{Cmd: sidecarCmd(t, "--snapshot-key-file", file)})
	prog, err := c.Compile(ctx, `f() + 1`)
	require.NoError(t, err)
	st, err := c.Start(ctx, StartRequest{Program: prog, Capabilities: []string{"f"}})
	require.NoError(t, err)
	s := st.Suspended
	other, err := GenerateKey()
	require.NoError(t, err)
	_, err = c.Resume(ctx, ResumeRequest{Snapshot: s.Snapshot, Policy: &Policy{Capabilities: []string{"f"}}, Key: other, Payload: Return(value.Number(1))})
	require.ErrorContains(t, err, "raw snapshot restore rejected a mismatched snapshot key digest")
	done, err := c.Resume(ctx, ResumeRequest{Snapshot: s.Snapshot, Policy: &Policy{Capabilities: []string{"f"}}, Key: testKey, Payload: Return(value.Number(1))})
	require.NoError(t, err)
	require.Equal(t, 2.0, done.Value.Num)
}
