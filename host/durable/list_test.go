package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/host"

	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// A ListStore lists executions by state with the time of their last step,
// reports one's status without running it, and Prune deletes the finished
// ones past their retention, keeping the running ones.
func TestStoresListExecutionsByStateAndPrune(t *testing.T) {
	forEachLeaseStore(t, func(t *testing.T, st LeaseStore) {
		noLeaks(t)
		ctx := context.Background()
		pool := newPool(t, 1)
		prog, err := pool.Compile(ctx, `const v = f(); if (v === 'throw') throw new TypeError('no'); v`)
		require.NoError(t, err)
		seal, err := host.GenerateSealKey()
		require.NoError(t, err)
		before := time.Now().UTC()
		r := &Runner{Pool: pool, Key: testKey, Store: st, Owner: "lister"}
		sealed := &Runner{Pool: pool, Key: testKey, SealKey: seal, Store: st}
		answer := func(v value.Value, err error) map[string]Capability {
			return map[string]Capability{"f": func(context.Context, Call) (value.Value, error) { return v, err }}
		}
		_, err = r.Run(ctx, Execution{ID: "done", Program: prog, Capabilities: answer(value.Number(1), nil)})
		require.NoError(t, err)
		_, err = r.Run(ctx, Execution{ID: "failed", Program: prog, Capabilities: answer(value.String("throw"), nil)})
		require.Error(t, err)
		_, err = sealed.Run(ctx, Execution{ID: "sealedfail", Program: prog, Capabilities: answer(value.String("throw"), nil)})
		require.Error(t, err)
		_, err = r.Run(ctx, Execution{ID: "waiting", Program: prog, Capabilities: answer(value.Value{}, errors.New("stop"))})
		require.Error(t, err)
		_, err = r.Run(ctx, Execution{ID: "cancelled", Program: prog, Capabilities: answer(value.Value{}, errors.New("stop"))})
		require.Error(t, err)
		require.NoError(t, r.Cancel(ctx, "cancelled"))

		entered, release := make(chan struct{}), make(chan struct{})
		runDone := make(chan error)
		go func() {
			_, err := r.Run(ctx, Execution{ID: "running", Program: prog, Capabilities: map[string]Capability{
				"f": func(context.Context, Call) (value.Value, error) {
					close(entered)
					<-release
					return value.Number(2), nil
				},
			}})
			runDone <- err
		}()
		<-entered

		ls := st.(ListStore)
		all, err := ls.List(ctx)
		require.NoError(t, err)
		states := map[string]State{}
		for _, e := range all {
			states[e.ID] = e.State
			require.False(t, e.Updated.Before(before.Add(-time.Second)), "%s updated %v", e.ID, e.Updated)
			require.Equal(t, prog.ID, e.ProgramID, e.ID)
		}
		require.Equal(t, map[string]State{"done": StateDone, "failed": StateFailed, "sealedfail": StateFailed,
			"waiting": StateWaiting, "cancelled": StateCancelled, "running": StateRunning}, states)
		failed, err := ls.List(ctx, StateFailed, StateCancelled)
		require.NoError(t, err)
		require.Len(t, failed, 3)
		require.Equal(t, "cancelled", failed[0].ID)
		require.Equal(t, "runtime", failed[1].FailureCode)
		require.Equal(t, "runtime", failed[2].FailureCode, "a sealed failure keeps its code readable")

		s, err := r.Status(ctx, "running")
		require.NoError(t, err)
		require.Equal(t, StateRunning, s.State)
		require.Equal(t, "lister", s.Owner)
		require.True(t, s.LeaseExpires.After(time.Now()))
		s, err = r.Status(ctx, "waiting")
		require.NoError(t, err)
		require.Equal(t, StateWaiting, s.State)
		require.Equal(t, 0, s.Calls)
		_, err = r.Status(ctx, "nothing")
		require.ErrorIs(t, err, ErrUnknownExecution)

		// Nothing is old enough yet; then everything finished is.
		gone, err := Prune(ctx, ls, Retention{Done: time.Hour, Failed: time.Hour, Cancelled: time.Hour})
		require.NoError(t, err)
		require.Empty(t, gone)
		gone, err = Prune(ctx, ls, Retention{Done: time.Nanosecond, Failed: time.Nanosecond, Cancelled: time.Nanosecond,
			Waiting: time.Nanosecond})
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"done", "failed", "sealedfail", "cancelled", "waiting"}, gone)
		close(release)
		require.NoError(t, <-runDone)
		all, err = ls.List(ctx)
		require.NoError(t, err)
		require.Len(t, all, 1)
		require.Equal(t, StateDone, all[0].State)
		require.Equal(t, 1, all[0].Calls)
	})
}
