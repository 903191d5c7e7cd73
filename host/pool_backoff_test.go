package host

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Must hold: a slot whose processes die at once respawns after waits
// that double up to the cap, each jittered within [d/2, d]; a process
// that lived Reset or longer starts the count afresh. The clock and the
// sleep are the test's, so nothing depends on real time.
func TestPoolBacksOffRespawnsOfProcessesThatDieYoung(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	p, err := NewPool(PoolConfig{Command: func() *exec.Cmd { return fakeCmd(t, "crash") },
		Backoff: Backoff{Min: 10 * time.Millisecond, Max: 80 * time.Millisecond, Reset: time.Minute}})
	require.NoError(t, err)
	defer p.Close()
	var mu sync.Mutex
	clock := time.Unix(0, 0)
	var waits []time.Duration
	p.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	p.sleep = func(_ context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
		clock = clock.Add(d)
		return nil
	}
	// Each attempt's process reads the request and exits 3: Compile
	// tries maxAttempts processes, each respawned after a wait.
	_, err = p.Compile(ctx, "1")
	require.ErrorIs(t, err, ErrProcessExited)
	require.Len(t, waits, maxAttempts-1, "one wait per respawn")
	for i, d := range waits {
		ceil := min(10*time.Millisecond<<i, 80*time.Millisecond)
		require.GreaterOrEqual(t, d, ceil/2, "wait %d", i)
		require.LessOrEqual(t, d, ceil, "wait %d", i)
	}

	// A process that lived a minute: the next respawn does not wait, the
	// one after waits Min again.
	mu.Lock()
	clock = clock.Add(time.Minute)
	waits = nil
	mu.Unlock()
	_, err = p.Compile(ctx, "1")
	require.ErrorIs(t, err, ErrProcessExited)
	require.Len(t, waits, maxAttempts-1)
	require.LessOrEqual(t, waits[0], 10*time.Millisecond)
}

// Must hold: with the real clock, a crash loop is slowed down: 20
// respawns with Min 5ms take at least the sum of the minimum waits.
func TestPoolBackoffSlowsACrashLoop(t *testing.T) {
	noLeaks(t)
	p, err := NewPool(PoolConfig{Command: func() *exec.Cmd { return fakeCmd(t, "crash") },
		Backoff: Backoff{Min: 5 * time.Millisecond, Max: 20 * time.Millisecond}})
	require.NoError(t, err)
	defer p.Close()
	began := time.Now()
	_, err = p.Compile(context.Background(), "1")
	require.ErrorIs(t, err, ErrProcessExited)
	// Waits of at least 2.5, 5, 10, then 10 ms for the other 16.
	require.GreaterOrEqual(t, time.Since(began), (2500+5000+10000+16*10000)*time.Microsecond)
}

// Must hold: Close ends a backoff wait at once.
func TestPoolCloseEndsABackoffWait(t *testing.T) {
	noLeaks(t)
	p, err := NewPool(PoolConfig{Command: func() *exec.Cmd { return fakeCmd(t, "crash") },
		Backoff: Backoff{Min: time.Hour, Max: time.Hour}})
	require.NoError(t, err)
	errc := make(chan error, 1)
	go func() {
		_, err := p.Compile(context.Background(), "1")
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond) // let it reach the wait (not needed for correctness)
	require.NoError(t, p.Close())
	select {
	case err := <-errc:
		require.Error(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("Compile still waiting after Close")
	}
}

// Must hold: a process that answered a request and is then killed from
// outside is replaced without a wait, however young it was.
func TestPoolReplacesProcessesKilledWhileServingAtOnce(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	p := newPool(t, 1)
	var waits atomic.Int32
	p.sleep = func(context.Context, time.Duration) error { waits.Add(1); return nil }
	for range 5 {
		_, err := p.Compile(ctx, "1")
		require.NoError(t, err)
		c := p.slots[0].client
		c.Kill()
		<-c.Done()
	}
	_, err := p.Compile(ctx, "1")
	require.NoError(t, err)
	require.Zero(t, waits.Load())
}

// Processes tells operators each place's process: its PID (the real one),
// when it started, and how many it replaced.
func TestPoolProcesses(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	before := time.Now()
	p := newPool(t, 2)
	procs := p.Processes()
	require.Len(t, procs, 2)
	for _, pr := range procs {
		require.Positive(t, pr.PID)
		require.False(t, pr.Busy)
		require.Zero(t, pr.Restarts)
		require.False(t, pr.StartedAt.Before(before))
		_, err := os.FindProcess(pr.PID)
		require.NoError(t, err)
	}
	require.NotEqual(t, procs[0].PID, procs[1].PID)

	// A process that dies shows no PID until its place is needed again.
	one := newPool(t, 1)
	first := one.Processes()[0]
	c := one.slots[0].client
	c.Kill()
	<-c.Done()
	require.Zero(t, one.Processes()[0].PID)
	_, err := one.Compile(ctx, "1")
	require.NoError(t, err)
	after := one.Processes()[0]
	require.Positive(t, after.PID)
	require.NotEqual(t, first.PID, after.PID)
	require.Equal(t, 1, after.Restarts)
}
