package host

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

var testKey = func() Key {
	k, err := NewKey([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		panic(err)
	}
	return k
}()

func newClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := NewClient(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestClientRunsAProgramHotAndCold(t *testing.T) {
	for _, tr := range hosttest.Transports {
		t.Run(tr.Name, func(t *testing.T) {
			noLeaks(t)
			ctx := context.Background()
			c := newClient(t, Config{Cmd: sidecarCmd(t), JSONL: tr.JSONL})
			prog, err := c.Compile(ctx, `const a = fetch_data(n); const b = fetch_data(a + 1); [a, b, -0, NaN];`)
			require.NoError(t, err)
			require.Len(t, prog.ID, 64)

			caps := []string{"fetch_data"}
			st, err := c.Start(ctx, StartRequest{Program: prog, Capabilities: caps,
				Inputs: map[string]value.Value{"n": value.Number(5)}})
			require.NoError(t, err)
			require.NotNil(t, st.Suspended)
			require.Equal(t, "fetch_data", st.Suspended.Capability)
			require.True(t, value.Equal(value.Array(value.Number(5)), value.Array(st.Suspended.Args...)))
			first := st.Suspended

			// Hot: the process holds the parked execution.
			st, err = c.Resume(ctx, ResumeRequest{SnapshotID: first.SnapshotID, PolicyID: first.PolicyID,
				Key: testKey, Payload: Return(value.Number(10))})
			require.NoError(t, err)
			require.NotNil(t, st.Suspended)
			require.True(t, value.Equal(value.Array(value.Number(11)), value.Array(st.Suspended.Args...)))
			st, err = c.Resume(ctx, ResumeRequest{SnapshotID: st.Suspended.SnapshotID, PolicyID: st.Suspended.PolicyID,
				Key: testKey, Payload: Return(value.Number(20))})
			require.NoError(t, err)
			require.Nil(t, st.Suspended)
			want := value.Array(value.Number(10), value.Number(20), value.Number(negZero), value.Number(nan))
			require.True(t, value.Equal(want, st.Value), "%s", st.Value.AppendJSON(nil))

			// Cold: a fresh process knows nothing; the bytes and the policy
			// travel, and the replay reaches the same next step.
			require.NoError(t, c.Close())
			c2 := newClient(t, Config{Cmd: sidecarCmd(t), JSONL: tr.JSONL})
			st, err = c2.Resume(ctx, ResumeRequest{Snapshot: first.Snapshot, Policy: &Policy{Capabilities: caps},
				Key: testKey, Payload: Return(value.Number(10))})
			require.NoError(t, err)
			require.NotNil(t, st.Suspended)
			require.True(t, value.Equal(value.Array(value.Number(11)), value.Array(st.Suspended.Args...)))
		})
	}
}

func TestClientReportsSidecarFailuresAsErrors(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	c := newClient(t, Config{Cmd: sidecarCmd(t)})
	_, err := c.Compile(ctx, `const = 1;`)
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, "Parse", e.Kind())
	require.Equal(t, "parse", e.Code)
	require.Equal(t, "compile", e.Method)

	prog, err := c.Compile(ctx, `throw new TypeError("bad")`)
	require.NoError(t, err)
	_, err = c.Start(ctx, StartRequest{Program: prog})
	require.ErrorAs(t, err, &e)
	require.Equal(t, "Runtime", e.Kind())
	require.True(t, strings.HasPrefix(e.Message, "Runtime: TypeError: bad"), e.Message)

	// A host error thrown at the guest, uncaught.
	prog, err = c.Compile(ctx, `f(1)`)
	require.NoError(t, err)
	st, err := c.Start(ctx, StartRequest{Program: prog, Capabilities: []string{"f"}})
	require.NoError(t, err)
	_, err = c.Resume(ctx, ResumeRequest{SnapshotID: "00", PolicyID: st.Suspended.PolicyID, Key: testKey})
	require.ErrorAs(t, err, &e)
	require.Equal(t, "unknown snapshot_id `00`", e.Message)
	require.Equal(t, "", e.Kind())
	require.Equal(t, "unknown_snapshot_id", e.Code)
	require.ErrorIs(t, err, ErrUnknownSnapshotID)
	require.NotErrorIs(t, err, ErrUnknownPolicyID)
	_, err = c.Resume(ctx, ResumeRequest{Snapshot: st.Suspended.Snapshot, Policy: &Policy{Capabilities: []string{"f"}},
		Key: testKey, Payload: Throw(CallError{Name: "ToolError", Message: "boom", Code: "E1"})})
	require.ErrorAs(t, err, &e)
	require.True(t, strings.HasPrefix(e.Message, "Runtime: ToolError: boom"), e.Message)
}

// A snapshot over 1 MiB resumes in a fresh process through staged chunks;
// delta delivery and chunked fetches give the same bytes.
func TestClientMovesSnapshotsLargerThanARequest(t *testing.T) {
	for _, tr := range hosttest.Transports {
		t.Run(tr.Name, func(t *testing.T) {
			noLeaks(t)
			ctx := context.Background()
			c := newClient(t, Config{Cmd: sidecarCmd(t), JSONL: tr.JSONL})
			// The guest keeps its answers, so its snapshots grow as their
			// journal does (a checkpoint's image would be larger).
			prog, err := c.Compile(ctx, `let n = 0; const kept = []; for (let i = 0; i < 3; i++) { const r = get(); kept.push(r); n += r.length; } n;`)
			require.NoError(t, err)
			caps := []string{"get"}
			big := func() value.Value { // ~690 KiB that compresses poorly
				b := make([]byte, 512<<10)
				_, _ = rand.Read(b)
				return value.String(base64.StdEncoding.EncodeToString(b))
			}
			lim := Limits{HeapLimitBytes: Limit(64 << 20), AllocationBudget: Limit(1 << 30)}
			st, err := c.Start(ctx, StartRequest{Program: prog, Capabilities: caps, Limits: lim, Delivery: DeliverDelta})
			require.NoError(t, err)
			snap := st.Suspended.Snapshot
			var answers []value.Value
			for i := 0; i < 2; i++ {
				answers = append(answers, big())
				prev := st.Suspended
				st, err = c.Resume(ctx, ResumeRequest{SnapshotID: prev.SnapshotID, PolicyID: prev.PolicyID, Key: testKey,
					Payload: Return(answers[i]), Delivery: DeliverDelta})
				require.NoError(t, err)
				require.Equal(t, prev.SnapshotID, st.Suspended.BaseID)
				require.Less(t, len(st.Suspended.Snapshot), 1<<20)
				snap, err = st.Suspended.Extend(snap)
				require.NoError(t, err)
			}
			require.Greater(t, len(snap), 1<<20)
			fetched, err := c.FetchSnapshot(ctx, st.Suspended.SnapshotID)
			require.NoError(t, err)
			require.Equal(t, snap, fetched)

			c2 := newClient(t, Config{Cmd: sidecarCmd(t), JSONL: tr.JSONL})
			done, err := c2.Resume(ctx, ResumeRequest{Snapshot: snap, Policy: &Policy{Capabilities: caps, Limits: lim},
				Key: testKey, Payload: Return(value.String("xyz"))})
			require.NoError(t, err)
			require.Nil(t, done.Suspended)
			want := float64(len(answers[0].Str) + len(answers[1].Str) + 3)
			require.Equal(t, want, done.Value.Num)
		})
	}
}

// A request too large for one frame goes through stages; one whose value
// the sidecar's stage bound cannot hold fails with ErrRequestTooLarge and
// ErrStageTooLarge, the process still serves, and the stage it left
// behind is emptied: the bound is whole again for the next request.
func TestClientRefusesRequestsTheSidecarCannotStage(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	c := newClient(t, Config{Cmd: sidecarCmd(t, "--max-stage-bytes", "2000000")})
	_, err := c.Compile(ctx, strings.Repeat(" ", 2_500_000)+"1")
	require.ErrorIs(t, err, ErrRequestTooLarge)
	require.ErrorIs(t, err, ErrStageTooLarge)
	require.ErrorContains(t, err, "stage exceeds 2000000 bytes")
	p, err := c.Compile(ctx, strings.Repeat(" ", 1_900_000)+"1")
	require.NoError(t, err, "the process is still serving, and the failed stage holds nothing")
	st, err := c.Start(ctx, StartRequest{Program: p})
	require.NoError(t, err)
	require.Equal(t, float64(1), st.Value.Num)
}

func TestClientFailsCallsWhenTheProcessDies(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	c := newClient(t, Config{Cmd: sidecarCmd(t)})
	prog, err := c.Compile(ctx, `for (;;) {}`)
	require.NoError(t, err)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Start(ctx, StartRequest{Program: prog, Limits: Limits{InstructionBudget: Limit(1 << 62)}})
		errc <- err
	}()
	eventually(t, "the start to be written", func() bool { return c.outstanding() == 1 })
	c.Kill()
	err = <-errc
	require.ErrorIs(t, err, ErrProcessExited)
	require.Contains(t, err.Error(), "signal: killed")
	<-c.Done()
	_, err = c.Compile(ctx, "1")
	require.ErrorIs(t, err, ErrProcessExited, "calls after the death fail at once")
	require.ErrorIs(t, c.Close(), ErrProcessExited)
}

func TestClientErrorNamesExitStatusAndStderr(t *testing.T) {
	noLeaks(t)
	c := newClient(t, Config{Cmd: fakeCmd(t, "crash")})
	_, err := c.Ping(context.Background())
	require.ErrorIs(t, err, ErrProcessExited)
	require.Equal(t, "sidecar process exited (exit status 3): mustard-sidecar: something broke", err.Error())
}

// A broken or hostile sidecar cannot make the client allocate without
// bound, or hang it: each violation kills the process and fails the call.
func TestClientStopsASidecarThatBreaksTheProtocol(t *testing.T) {
	cases := []struct {
		mode, want string
		jsonl      bool
		max        int
	}{
		{mode: "huge-prefix", want: "exceeds the client's limit"},
		{mode: "lying-prefix", want: "ended inside a response frame", max: DefaultMaxResponseBytes},
		{mode: "garbage", want: "undecodable response header"},
		{mode: "wrong-id", want: "response id 999 answers request"},
		{mode: "unsolicited", want: "no request outstanding"},
		{mode: "long-line", want: "response line exceeds the client's limit", jsonl: true},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			noLeaks(t)
			max := tc.max
			if max == 0 {
				max = 1 << 20
			}
			c := newClient(t, Config{Cmd: fakeCmd(t, tc.mode), JSONL: tc.jsonl, MaxResponseBytes: max})
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := c.Ping(context.Background())
			if err == nil { // the answer was fine; what followed was not
				<-c.Done()
				err = c.Err()
			}
			runtime.ReadMemStats(&after)
			require.ErrorIs(t, err, ErrProtocol)
			require.ErrorIs(t, err, ErrProcessExited)
			require.Contains(t, err.Error(), tc.want)
			require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "allocated for a response it refused")
			<-c.Done()
		})
	}
}

// Without an answer to the cancel, the client kills the process once the
// grace has passed: a done context always ends the call.
func TestClientKillsASidecarThatIgnoresCancel(t *testing.T) {
	noLeaks(t)
	c := newClient(t, Config{Cmd: fakeCmd(t, "silent"), CancelGrace: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Start(ctx, StartRequest{Program: Program{ID: strings.Repeat("0", 64)}})
		errc <- err
	}()
	eventually(t, "the start to be written", func() bool { return c.outstanding() == 1 })
	cancel()
	err := <-errc
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, ErrProcessExited)
}

// A call whose context is done before it is written is never sent.
func TestClientDropsRequestsCancelledBeforeWriting(t *testing.T) {
	noLeaks(t)
	c := newClient(t, Config{Cmd: sidecarCmd(t)})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Compile(ctx, "1")
	require.ErrorIs(t, err, context.Canceled)
	_, err = c.Compile(context.Background(), "2")
	require.NoError(t, err)
}

func TestClientCloseIsGracefulThenKills(t *testing.T) {
	t.Run("graceful", func(t *testing.T) {
		noLeaks(t)
		c := newClient(t, Config{Cmd: sidecarCmd(t)})
		_, err := c.Compile(context.Background(), "1")
		require.NoError(t, err)
		require.NoError(t, c.Close())
		require.NoError(t, c.Err())
		_, err = c.Compile(context.Background(), "1")
		require.ErrorIs(t, err, ErrClosed)
		require.NoError(t, c.Close(), "again")
	})
	t.Run("kill after grace", func(t *testing.T) {
		noLeaks(t)
		c := newClient(t, Config{Cmd: sidecarCmd(t), CloseGrace: 100 * time.Millisecond})
		prog, err := c.Compile(context.Background(), `for (;;) {}`)
		require.NoError(t, err)
		errc := make(chan error, 1)
		go func() {
			_, err := c.Start(context.Background(), StartRequest{Program: prog, Limits: Limits{InstructionBudget: Limit(1 << 62)}})
			errc <- err
		}()
		eventually(t, "the start to be written", func() bool { return c.outstanding() == 1 })
		err = c.Close()
		require.ErrorContains(t, err, "killed")
		require.ErrorIs(t, <-errc, ErrProcessExited)
	})
}

func TestDefaultCommandNamesTheBinaryOnPath(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := NewClient(Config{})
	require.ErrorContains(t, err, "go install github.com/mustard-sidecar/mustard-sidecar/cmd/mustard-sidecar@latest")
}

func TestStderrSummaryIsTheFirstAndLastLine(t *testing.T) {
	var w tailWriter
	require.Equal(t, "", w.summary())
	w.Write([]byte("mustard-sidecar: unknown argument \"-x\"\nusage: ...\n"))
	require.Equal(t, `mustard-sidecar: unknown argument "-x" … usage: ...`, w.summary())
	w.Write([]byte(strings.Repeat("y", 10<<10) + "\n"))
	require.Equal(t, `mustard-sidecar: unknown argument "-x" … `+strings.Repeat("y", 300)+"…", w.summary())
	var one tailWriter
	one.Write([]byte("invalid request header: truncated frame\n"))
	require.Equal(t, "invalid request header: truncated frame", one.summary())
}

// Calls from several goroutines are pipelined on one process and each
// gets its own answer.
func TestClientCallsMayOverlap(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	c := newClient(t, Config{Cmd: sidecarCmd(t)})
	prog, err := c.Compile(ctx, `f(n) * 2`)
	require.NoError(t, err)
	const n = 32
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := c.Start(ctx, StartRequest{Program: prog, Capabilities: []string{"f"},
				Inputs: map[string]value.Value{"n": value.Number(float64(i))}})
			if !assert.NoError(t, err) {
				return
			}
			s := st.Suspended
			assert.Equal(t, float64(i), s.Args[0].Num)
			st, err = c.Resume(ctx, ResumeRequest{SnapshotID: s.SnapshotID, PolicyID: s.PolicyID, Key: testKey,
				Payload: Return(value.Number(float64(i + 1)))})
			if assert.NoError(t, err) {
				assert.Equal(t, float64(2*(i+1)), st.Value.Num)
			}
		}()
	}
	wg.Wait()
}
