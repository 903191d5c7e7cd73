package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/internal/link"

	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

func dirStore(t *testing.T, dir string) *DirStore {
	t.Helper()
	s, err := NewDirStore(dir)
	require.NoError(t, err)
	return s
}

// requireCancelled checks the stored record of a cancelled execution.
func requireCancelled(t *testing.T, store Store, id string) {
	t.Helper()
	cp, ok, err := store.Load(context.Background(), id)
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, cp.Done)
	require.True(t, cp.Cancelled)
	require.Empty(t, cp.Snapshot, "the snapshot is dropped")
}

// Must hold: Cancel while a capability call runs cancels the call's ctx,
// the Run returns promptly with ErrCancelled, and every later Run of the
// id (by a new Runner on the same directory too: a restarted host)
// returns ErrCancelled without calling anything.
func TestRunnerCancelEndsARunningCallForGood(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode host.HostCalls) {
		noLeaks(t)
		ctx := context.Background()
		dir := t.TempDir()
		pool := newPool(t, 1)
		prog, err := pool.Compile(ctx, `f(1) + f(2)`)
		require.NoError(t, err)
		r := &Runner{Pool: pool, Store: dirStore(t, dir), Key: testKey, HostCalls: mode}
		entered := make(chan struct{})
		var asked, cancelled atomic.Int32
		e := Execution{ID: "doomed", Program: prog, Capabilities: map[string]Capability{
			"f": func(ctx context.Context, c Call) (value.Value, error) {
				asked.Add(1)
				if c.Seq == 1 {
					close(entered)
					<-ctx.Done()
					cancelled.Add(1)
					return value.Value{}, ctx.Err()
				}
				return c.Args[0], nil
			},
		}}
		errc := make(chan error, 1)
		go func() {
			_, err := r.Run(ctx, e)
			errc <- err
		}()
		<-entered
		require.NoError(t, r.Cancel(ctx, "doomed"))
		require.ErrorIs(t, <-errc, ErrCancelled)
		require.EqualValues(t, 1, cancelled.Load(), "the running call's ctx was cancelled")
		requireCancelled(t, r.Store, "doomed")

		_, err = r.Run(ctx, e)
		require.ErrorIs(t, err, ErrCancelled)
		require.EqualError(t, err, `execution "doomed": execution cancelled`)
		require.NoError(t, r.Cancel(ctx, "doomed"), "Cancel is idempotent")

		// The host restarts: a new pool, Runner and DirStore on the directory.
		pool2 := newPool(t, 1)
		r2 := &Runner{Pool: pool2, Store: dirStore(t, dir), Key: testKey, HostCalls: mode}
		_, err = r2.Run(ctx, e)
		require.ErrorIs(t, err, ErrCancelled)
		require.EqualValues(t, 2, asked.Load(), "nothing was called again")
		names, err := filepath.Glob(filepath.Join(dir, "*"))
		require.NoError(t, err)
		require.Equal(t, []string{filepath.Join(dir, "doomed.json")}, names, "no snapshot left")
		b, err := os.ReadFile(names[0])
		require.NoError(t, err)
		require.Contains(t, string(b), `"cancelled":true`)
	})
}

// Must hold: Cancel while a segment runs in the sidecar cancels it in
// band: the Run returns promptly and the process is not killed.
func TestRunnerCancelEndsARunningSegmentInBand(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	pool := newPool(t, 1)
	var started atomic.Int32
	var client atomic.Pointer[host.Client]
	setStarted(pool, func(c *host.Client) { started.Add(1); client.Store(c) })
	prog, err := pool.Compile(ctx, `ready(); for (;;) {}`)
	require.NoError(t, err)
	store := &MemoryStore{}
	r := &Runner{Pool: pool, Store: store, Key: testKey}
	c := slotClient(pool, 0)
	var ready atomic.Bool
	e := Execution{ID: "spin", Program: prog, Limits: host.Limits{InstructionBudget: host.Limit(1 << 62)},
		Capabilities: map[string]Capability{"ready": func(context.Context, Call) (value.Value, error) {
			ready.Store(true)
			return value.Null(), nil
		}}}
	errc := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx, e)
		errc <- err
	}()
	eventually(t, "the endless segment to run", func() bool {
		return ready.Load() && link.Outstanding(c) == 1 // the resume after ready()
	})
	began := time.Now()
	require.NoError(t, r.Cancel(ctx, "spin"))
	require.ErrorIs(t, <-errc, ErrCancelled)
	t.Logf("the Run ended %v after the cancel", time.Since(began).Round(100*time.Microsecond))
	requireCancelled(t, store, "spin")
	require.True(t, link.Running(c), "the process was not killed")
	require.Zero(t, started.Load(), "no new process")

	// The same process runs the next execution.
	prog2, err := pool.Compile(ctx, `1 + 1`)
	require.NoError(t, err)
	v, err := r.Run(ctx, Execution{ID: "next", Program: prog2})
	require.NoError(t, err)
	require.Equal(t, 2.0, v.Num)
	require.Zero(t, started.Load())
}

// Must hold: an execution parked between steps (its last Run stopped)
// is cancelled in the Store; an unknown id and an execution that ended
// are reported and left as they are.
func TestRunnerCancelsParkedExecutionsAndReportsOthers(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode host.HostCalls) {
		noLeaks(t)
		ctx := context.Background()
		pool := newPool(t, 1)
		prog, err := pool.Compile(ctx, `f(1) + f(2)`)
		require.NoError(t, err)
		store := &MemoryStore{}
		r := &Runner{Pool: pool, Store: store, Key: testKey, HostCalls: mode}
		var asked atomic.Int32
		down := errors.New("backend down")
		e := Execution{ID: "parked", Program: prog, Capabilities: map[string]Capability{
			"f": func(_ context.Context, c Call) (value.Value, error) {
				asked.Add(1)
				if c.Seq == 1 {
					return value.Value{}, down
				}
				return c.Args[0], nil
			},
		}}
		_, err = r.Run(ctx, e)
		require.ErrorIs(t, err, down)
		cp, _, err := store.Load(ctx, "parked")
		require.NoError(t, err)
		require.False(t, cp.Done, "parked on f(2)")

		require.NoError(t, r.Cancel(ctx, "parked"))
		requireCancelled(t, store, "parked")
		_, err = r.Run(ctx, e)
		require.ErrorIs(t, err, ErrCancelled)
		require.EqualValues(t, 2, asked.Load())

		err = r.Cancel(ctx, "nobody")
		require.ErrorIs(t, err, ErrUnknownExecution)
		_, ok, err := store.Load(ctx, "nobody")
		require.NoError(t, err)
		require.False(t, ok, "nothing recorded")

		e.ID = "finished"
		e.Capabilities["f"] = func(_ context.Context, c Call) (value.Value, error) { return c.Args[0], nil }
		v, err := r.Run(ctx, e)
		require.NoError(t, err)
		require.ErrorIs(t, r.Cancel(ctx, "finished"), ErrExecutionDone)
		again, err := r.Run(ctx, e)
		require.NoError(t, err, "the result stays")
		require.Equal(t, v.Num, again.Num)
	})
}

// Must hold: a Cancel of a parked execution survives a restart of the
// host: a new Runner on the same directory refuses to continue it.
func TestRunnerCancelSurvivesAHostRestart(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	dir := t.TempDir()
	down := errors.New("host going down")
	run := func(f Capability) error {
		pool := newPool(t, 1)
		defer pool.Close()
		prog, err := pool.Compile(ctx, `f(1) + f(2)`)
		require.NoError(t, err)
		_, err = (&Runner{Pool: pool, Store: dirStore(t, dir), Key: testKey}).Run(ctx,
			Execution{ID: "long", Program: prog, Capabilities: map[string]Capability{"f": f}})
		return err
	}
	require.ErrorIs(t, run(func(_ context.Context, c Call) (value.Value, error) {
		if c.Seq == 1 {
			return value.Value{}, down
		}
		return c.Args[0], nil
	}), down)

	// Another host process cancels it.
	pool := newPool(t, 1)
	require.NoError(t, (&Runner{Pool: pool, Store: dirStore(t, dir), Key: testKey}).Cancel(ctx, "long"))

	// And a third finds it cancelled.
	var asked atomic.Int32
	err := run(func(_ context.Context, c Call) (value.Value, error) {
		asked.Add(1)
		return c.Args[0], nil
	})
	require.ErrorIs(t, err, ErrCancelled)
	require.Zero(t, asked.Load())
}

// A Cancel racing the start of a Run: the Run either starts first and is
// cancelled, or waits for the Cancel; it never continues the execution
// after Cancel returned nil.
func TestRunnerCancelWhileRunsComeAndGo(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	pool := newPool(t, 2)
	prog, err := pool.Compile(ctx, `f(1) + f(2)`)
	require.NoError(t, err)
	r := &Runner{Pool: pool, Key: testKey}
	e := Execution{ID: "race", Program: prog, Capabilities: map[string]Capability{
		"f": func(ctx context.Context, c Call) (value.Value, error) { return c.Args[0], nil },
	}}
	// Park it: a first Run whose ctx ends at its first call.
	cctx, cancel := context.WithCancel(ctx)
	e.Capabilities["f"] = func(ctx context.Context, c Call) (value.Value, error) {
		cancel()
		<-ctx.Done()
		return value.Value{}, ctx.Err()
	}
	_, err = r.Run(cctx, e)
	require.ErrorIs(t, err, context.Canceled)
	e.Capabilities["f"] = func(ctx context.Context, c Call) (value.Value, error) { return c.Args[0], nil }
	errc := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx, e)
		errc <- err
	}()
	cerr := r.Cancel(ctx, "race")
	err = <-errc
	if cerr == nil {
		require.ErrorIs(t, err, ErrCancelled)
	} else {
		require.ErrorIs(t, cerr, ErrExecutionDone)
		require.NoError(t, err)
	}
	_, err = r.Run(ctx, e)
	if cerr == nil {
		require.ErrorIs(t, err, ErrCancelled)
	} else {
		require.NoError(t, err)
	}
}
