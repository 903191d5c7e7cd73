package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/host"

	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Must hold: a capability that fails twice transiently and then succeeds
// gives the guest its success, each try with the same call ID, each seen
// by the Call interceptor and the retries by the logger; a final error
// (not transient, or the last try's) throws in the guest, which catches
// it with the tool's message.
func TestRunnerRetriesTransientErrorsAndShowsFinalOnesToTheGuest(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode host.HostCalls) {
		noLeaks(t)
		ctx := context.Background()
		pool := newPool(t, 1)
		prog, err := pool.Compile(ctx, `
const out = [flaky()];
try { broken(); } catch (e) { out.push(e.name + ': ' + e.message); }
try { down(); } catch (e) { out.push(e.name + ': ' + e.message + ' ' + e.code); }
out;`)
		require.NoError(t, err)
		var mu sync.Mutex
		tries := map[string][]uint64{}
		var attempts []int
		note := func(c Call) int {
			mu.Lock()
			defer mu.Unlock()
			tries[c.Name] = append(tries[c.Name], c.ID)
			return len(tries[c.Name])
		}
		var logs bytes.Buffer
		r := &Runner{Pool: pool, Key: testKey, HostCalls: mode,
			Retry:  RetryPolicy{Attempts: 3, Backoff: time.Millisecond},
			Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			Intercept: Interceptor{Call: func(ctx context.Context, c Call, next func(context.Context) (value.Value, error)) (value.Value, error) {
				mu.Lock()
				attempts = append(attempts, c.Attempt)
				mu.Unlock()
				return next(ctx)
			}},
		}
		v, err := r.Run(ctx, Execution{ID: "retry", Program: prog, Capabilities: map[string]Capability{
			"flaky": func(_ context.Context, c Call) (value.Value, error) {
				if note(c) < 3 {
					return value.Value{}, Transient(errors.New("rate limited"))
				}
				return value.String("ok"), nil
			},
			"broken": func(_ context.Context, c Call) (value.Value, error) {
				note(c)
				return value.Value{}, errors.New("no such repository")
			},
			"down": func(_ context.Context, c Call) (value.Value, error) {
				note(c)
				return value.Value{}, Transient(&host.CallError{Name: "ToolError", Message: "service unavailable", Code: "UNAVAILABLE"})
			},
		}})
		require.NoError(t, err)
		require.Equal(t, `{"Array":[{"String":"ok"},{"String":"Error: no such repository"},{"String":"ToolError: service unavailable UNAVAILABLE"}]}`, wireText(t, v))
		require.Equal(t, []uint64{1, 1, 1}, tries["flaky"], "three tries of call 1")
		require.Equal(t, []uint64{2}, tries["broken"], "a final error is not tried again")
		require.Equal(t, []uint64{3, 3, 3}, tries["down"], "the last try's error goes to the guest")
		require.Equal(t, []int{1, 2, 3, 1, 1, 2, 3}, attempts)
		require.Equal(t, 4, bytes.Count(logs.Bytes(), []byte("capability failed; trying it again")), logs.String())
		require.Equal(t, 2, bytes.Count(logs.Bytes(), []byte("the guest's call throws its error")), logs.String())
	})
}

// Per capability, Execution.Retry replaces Runner.Retry; StopRun keeps
// the error from the guest and stops Run, as without a policy, and the
// call is asked again by the next Run.
func TestRetryPolicyPerCapabilityAndStopRun(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	pool := newPool(t, 1)
	prog, err := pool.Compile(ctx, `f() + g()`)
	require.NoError(t, err)
	var fTries, gTries atomic.Int32
	fail := errors.New("database down")
	r := &Runner{Pool: pool, Key: testKey, Retry: RetryPolicy{Attempts: 5, Backoff: time.Millisecond}}
	e := Execution{ID: "stop", Program: prog,
		Retry: map[string]RetryPolicy{"g": {Attempts: 2, Backoff: time.Millisecond, StopRun: true}},
		Capabilities: map[string]Capability{
			"f": func(context.Context, Call) (value.Value, error) {
				if fTries.Add(1) < 4 {
					return value.Value{}, Transient(fail)
				}
				return value.Number(1), nil
			},
			"g": func(context.Context, Call) (value.Value, error) {
				if gTries.Add(1) <= 2 {
					return value.Value{}, Transient(fail)
				}
				return value.Number(2), nil
			},
		}}
	_, err = r.Run(ctx, e)
	require.ErrorIs(t, err, fail)
	require.True(t, IsTransient(err))
	require.EqualValues(t, 4, fTries.Load())
	require.EqualValues(t, 2, gTries.Load())
	v, err := r.Run(ctx, e)
	require.NoError(t, err)
	require.Equal(t, 3.0, v.Num)
	require.EqualValues(t, 4, fTries.Load(), "f's answer was stored")
	require.EqualValues(t, 3, gTries.Load())
}

func TestTransient(t *testing.T) {
	base := errors.New("x")
	require.Nil(t, Transient(nil))
	require.False(t, IsTransient(base))
	require.True(t, IsTransient(Transient(base)))
	require.ErrorIs(t, Transient(base), base)
	require.EqualError(t, Transient(base), "x")
	require.True(t, IsTransient(errors.Join(errors.New("y"), Transient(base))))
}
