package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/host"

	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// forEachLeaseStore runs f with a MemoryStore and with a DirStore.
func forEachLeaseStore(t *testing.T, f func(t *testing.T, st LeaseStore)) {
	t.Run("memory", func(t *testing.T) { f(t, &MemoryStore{}) })
	t.Run("dir", func(t *testing.T) {
		st, err := NewDirStore(t.TempDir())
		require.NoError(t, err)
		f(t, st)
	})
}

// A lease gives an execution one writer: another Acquire is busy, a write
// without the token is refused while the lease is active, a write with
// the token of a lease that was taken over is refused as lost, and every
// acquisition's token is greater than the last.
func TestLeaseStoresFenceWrites(t *testing.T) {
	forEachLeaseStore(t, func(t *testing.T, st LeaseStore) {
		ctx := context.Background()
		done := &Checkpoint{ProgramID: "p", Calls: 1, Done: true, Result: value.Number(1)}
		fenced := func(token uint64) *Checkpoint { c := *done; c.Fence = token; return &c }

		a, err := st.Acquire(ctx, "x", "a", time.Hour)
		require.NoError(t, err)
		require.Equal(t, "a", a.Owner)
		_, err = st.Acquire(ctx, "x", "b", time.Hour)
		require.ErrorIs(t, err, ErrExecutionBusy)
		_, ok, err := st.Load(ctx, "x")
		require.NoError(t, err)
		require.False(t, ok, "a lease is not a checkpoint")

		require.NoError(t, st.Save(ctx, "x", fenced(a.Token)))
		require.ErrorIs(t, st.Save(ctx, "x", done), ErrExecutionBusy)
		require.ErrorIs(t, st.Delete(ctx, "x"), ErrExecutionBusy)
		a, err = st.Renew(ctx, "x", a, time.Hour)
		require.NoError(t, err)
		require.NoError(t, st.Release(ctx, "x", a))

		b, err := st.Acquire(ctx, "x", "b", time.Hour)
		require.NoError(t, err)
		require.Greater(t, b.Token, a.Token)
		require.ErrorIs(t, st.Save(ctx, "x", fenced(a.Token)), ErrLeaseLost)
		_, err = st.Renew(ctx, "x", a, time.Hour)
		require.ErrorIs(t, err, ErrLeaseLost)
		require.NoError(t, st.Release(ctx, "x", a), "releasing a lease taken over does nothing")
		_, err = st.Acquire(ctx, "x", "c", time.Hour)
		require.ErrorIs(t, err, ErrExecutionBusy, "b still holds it")

		// A lease that expired unrenewed is taken over, and its holder
		// cannot write any more.
		require.NoError(t, st.Release(ctx, "x", b))
		c, err := st.Acquire(ctx, "x", "c", time.Nanosecond)
		require.NoError(t, err)
		d, err := st.Acquire(ctx, "x", "d", time.Hour)
		require.NoError(t, err)
		require.ErrorIs(t, st.Save(ctx, "x", fenced(c.Token)), ErrLeaseLost)
		require.NoError(t, st.Save(ctx, "x", fenced(d.Token)))
		cp, ok, err := st.Load(ctx, "x")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, d.Token, cp.Fence)
		require.NoError(t, st.Release(ctx, "x", d))
		require.NoError(t, st.Delete(ctx, "x"))
		_, ok, err = st.Load(ctx, "x")
		require.NoError(t, err)
		require.False(t, ok)
		e, err := st.Acquire(ctx, "x", "e", time.Hour)
		require.NoError(t, err)
		require.Greater(t, e.Token, d.Token, "tokens grow across a delete")
		require.NoError(t, st.Save(ctx, "x", fenced(e.Token)))
		require.NoError(t, st.Release(ctx, "x", e))

		// A holder whose lease was taken over cannot write after the new
		// holder released it either; a checkpoint loaded and saved again
		// as it is can.
		f, err := st.Acquire(ctx, "x", "f", time.Nanosecond)
		require.NoError(t, err)
		g, err := st.Acquire(ctx, "x", "g", time.Hour)
		require.NoError(t, err)
		require.NoError(t, st.Save(ctx, "x", fenced(g.Token)))
		require.NoError(t, st.Release(ctx, "x", g))
		require.ErrorIs(t, st.Save(ctx, "x", fenced(f.Token)), ErrLeaseLost)
		cp, ok, err = st.Load(ctx, "x")
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, st.Save(ctx, "x", cp))
	})
}

// A DirStore knows a dead holder: its lease is free at once, however long
// it had to run, since the kernel unlocks the owner file of a process
// that ended. Here the holder's owner file is closed as its death would.
func TestDirStoreTakesOverTheLeaseOfADeadHolderAtOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	one, err := NewDirStore(dir)
	require.NoError(t, err)
	two, err := NewDirStore(dir)
	require.NoError(t, err)
	a, err := one.Acquire(ctx, "x", "one", time.Hour)
	require.NoError(t, err)
	_, err = two.Acquire(ctx, "x", "two", time.Hour)
	require.ErrorIs(t, err, ErrExecutionBusy, "the holder lives")

	one.mu.Lock()
	for _, f := range one.owners {
		f.Close() // what the end of its process does
	}
	one.owners = nil
	one.mu.Unlock()
	b, err := two.Acquire(ctx, "x", "two", time.Hour)
	require.NoError(t, err)
	require.Greater(t, b.Token, a.Token)
	require.ErrorIs(t, one.Save(ctx, "x", &Checkpoint{ProgramID: "p", Done: true, Fence: a.Token}), ErrLeaseLost)
	_, err = one.Acquire(ctx, "x", "one", time.Hour)
	require.ErrorIs(t, err, ErrExecutionBusy, "two holds it, alive")
	require.NoError(t, two.Release(ctx, "x", b))
	names, err := filepathGlob(dir)
	require.NoError(t, err)
	require.Empty(t, names, "a lease never saved leaves nothing behind")
}

// leaseWatch is a LeaseStore whose Renew can be made to fail.
type leaseWatch struct {
	*MemoryStore
	lose atomic.Bool
}

func (s *leaseWatch) Renew(ctx context.Context, id string, l Lease, ttl time.Duration) (Lease, error) {
	if s.lose.Load() {
		return Lease{}, lostError(id)
	}
	return s.MemoryStore.Renew(ctx, id, l, ttl)
}

// Two Runners sharing a Store run an execution once: a second Run fails
// with ErrExecutionBusy, or with WaitIfBusy waits and returns the stored
// result; the capability runs once. A Cancel from the other Runner is
// busy too.
func TestRunnersSharingAStoreRunAnExecutionOnce(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode host.HostCalls) {
		noLeaks(t)
		ctx := context.Background()
		pool := newPool(t, 2)
		prog, err := pool.Compile(ctx, `f() + 1`)
		require.NoError(t, err)
		store := &MemoryStore{}
		var calls atomic.Int32
		entered, release := make(chan struct{}), make(chan struct{})
		e := Execution{ID: "shared", Program: prog, Capabilities: map[string]Capability{
			"f": func(context.Context, Call) (value.Value, error) {
				if calls.Add(1) == 1 {
					close(entered)
				}
				<-release
				return value.Number(41), nil
			},
		}}
		one := &Runner{Pool: pool, Key: testKey, Store: store, HostCalls: mode, Owner: "one"}
		two := &Runner{Pool: pool, Key: testKey, Store: store, HostCalls: mode, Owner: "two"}
		waiting := &Runner{Pool: pool, Key: testKey, Store: store, HostCalls: mode, WaitIfBusy: true}
		var wg sync.WaitGroup
		results := make([]value.Value, 2)
		errs := make([]error, 2)
		wg.Add(1)
		go func() { defer wg.Done(); results[0], errs[0] = one.Run(ctx, e) }()
		<-entered
		_, err = two.Run(ctx, e)
		require.ErrorIs(t, err, ErrExecutionBusy)
		require.ErrorIs(t, two.Cancel(ctx, "shared"), ErrExecutionBusy)
		wg.Add(1)
		go func() { defer wg.Done(); results[1], errs[1] = waiting.Run(ctx, e) }()
		close(release)
		wg.Wait()
		for i := range 2 {
			require.NoError(t, errs[i])
			require.Equal(t, 42.0, results[i].Num)
		}
		require.EqualValues(t, 1, calls.Load())
	})
}

// A Run whose lease is taken over stops: its capability's ctx is
// cancelled and Run returns an error matching ErrLeaseLost; the Store
// then refuses its writes.
func TestARunThatLosesItsLeaseStops(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	pool := newPool(t, 1)
	prog, err := pool.Compile(ctx, `f()`)
	require.NoError(t, err)
	store := &leaseWatch{MemoryStore: &MemoryStore{}}
	r := &Runner{Pool: pool, Key: testKey, Store: store, LeaseTTL: 30 * time.Millisecond}
	_, err = r.Run(ctx, Execution{ID: "lost", Program: prog, Capabilities: map[string]Capability{
		"f": func(ctx context.Context, _ Call) (value.Value, error) {
			store.lose.Store(true)
			<-ctx.Done()
			return value.Value{}, ctx.Err()
		},
	}})
	require.ErrorIs(t, err, ErrLeaseLost)
	require.EqualError(t, err, `execution "lost": its lease was taken over by another Runner`)
	require.False(t, errors.Is(err, ErrExecutionBusy))
}

// filepathGlob lists the files of dir.
func filepathGlob(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out, err
}

// A holder that took a lease over by expiry, while the hung holder
// before it still held the owner file, is not thought dead when that
// one's process ends: its lease holds until it expires or is released.
func TestDirStoreKeepsALeaseTakenOverByExpiry(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	stores := make([]*DirStore, 3)
	for i := range stores {
		var err error
		stores[i], err = NewDirStore(dir)
		require.NoError(t, err)
	}
	_, err := stores[0].Acquire(ctx, "x", "hung", time.Nanosecond)
	require.NoError(t, err)
	b, err := stores[1].Acquire(ctx, "x", "next", time.Hour)
	require.NoError(t, err, "an expired lease is taken over")
	stores[0].mu.Lock()
	for _, f := range stores[0].owners {
		f.Close() // the hung holder's process ends
	}
	stores[0].mu.Unlock()
	_, err = stores[2].Acquire(ctx, "x", "third", time.Hour)
	require.ErrorIs(t, err, ErrExecutionBusy)
	require.NoError(t, stores[1].Release(ctx, "x", b))
	_, err = stores[2].Acquire(ctx, "x", "third", time.Hour)
	require.NoError(t, err)
}
