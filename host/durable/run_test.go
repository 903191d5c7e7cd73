package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/internal/link"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"

	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// forEachMode runs a Runner test in batch mode (the default) and in
// one-call mode.
func forEachMode(t *testing.T, f func(t *testing.T, mode host.HostCalls)) {
	for _, m := range []struct {
		name string
		mode host.HostCalls
	}{{"batch", ""}, {"one", host.HostCallsOne}} {
		t.Run(m.name, func(t *testing.T) { f(t, m.mode) })
	}
}

func newPool(t *testing.T, size int) *host.Pool {
	t.Helper()
	p, err := host.NewPool(host.PoolConfig{Size: size, Command: func() *exec.Cmd { return sidecarCmd(t) }})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Close()) })
	return p
}

const tripSource = `
const found = lookup(city);
let note;
try { reserve(found.id); } catch (e) { note = e.name + "/" + e.code + "/" + e.details.left; }
({ id: found.id, note, again: lookup("x").id });
`

func tripCaps(calls *atomic.Int32) map[string]Capability {
	return map[string]Capability{
		"lookup": func(ctx context.Context, c Call) (value.Value, error) {
			calls.Add(1)
			var city string
			if err := c.Decode(&city); err != nil {
				return value.Value{}, err
			}
			return host.ValueOf(map[string]any{"id": city + "-1"})
		},
		"reserve": func(ctx context.Context, c Call) (value.Value, error) {
			calls.Add(1)
			details := host.MustValueOf(map[string]int{"left": 0})
			return value.Value{}, &host.CallError{Name: "BookingError", Message: "sold out", Code: "SOLD_OUT", Details: &details}
		},
	}
}

func TestRunnerRunsToCompletionAndRemembersTheResult(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode host.HostCalls) {
		for _, st := range []struct {
			name  string
			store func(t *testing.T) Store
		}{
			{"memory", func(t *testing.T) Store { return &MemoryStore{} }},
			{"dir", func(t *testing.T) Store { s, err := NewDirStore(t.TempDir()); require.NoError(t, err); return s }},
		} {
			t.Run(st.name, func(t *testing.T) {
				noLeaks(t)
				ctx := context.Background()
				pool := newPool(t, 2)
				prog, err := pool.Compile(ctx, tripSource)
				require.NoError(t, err)
				store := st.store(t)
				r := &Runner{Pool: pool, Store: store, Key: testKey, HostCalls: mode}
				var calls atomic.Int32
				e := Execution{ID: "trip-1", Program: prog, Capabilities: tripCaps(&calls),
					Inputs: map[string]value.Value{"city": value.String("Oslo")}}
				v, err := r.Run(ctx, e)
				require.NoError(t, err)
				want := `{"Object":{"id":{"String":"Oslo-1"},"note":{"String":"BookingError/SOLD_OUT/0"},"again":{"String":"x-1"}}}`
				require.Equal(t, want, wireText(t, v))
				require.EqualValues(t, 3, calls.Load())

				cp, ok, err := store.Load(ctx, "trip-1")
				require.NoError(t, err)
				require.True(t, ok)
				require.True(t, cp.Done)
				require.Equal(t, 3, cp.Calls)
				wantMode := host.HostCallsBatch
				if mode == host.HostCallsOne {
					wantMode = "" // as before batch mode
				}
				require.Equal(t, wantMode, cp.HostCalls)

				// The stored outcome is returned without running anything.
				v, err = r.Run(ctx, e)
				require.NoError(t, err)
				require.Equal(t, want, wireText(t, v))
				require.EqualValues(t, 3, calls.Load())

				require.NoError(t, store.Delete(ctx, "trip-1"))
				_, ok, err = store.Load(ctx, "trip-1")
				require.NoError(t, err)
				require.False(t, ok)
			})
		}
	})
}

func TestRunnerStoresGuestFailures(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode host.HostCalls) {
		noLeaks(t)
		ctx := context.Background()
		pool := newPool(t, 1)
		prog, err := pool.Compile(ctx, `const x = f(); x.boom();`)
		require.NoError(t, err)
		r := &Runner{Pool: pool, Key: testKey, HostCalls: mode}
		e := Execution{ID: "fails", Program: prog, Capabilities: map[string]Capability{
			"f": func(context.Context, Call) (value.Value, error) { return value.Null(), nil },
		}}
		_, err = r.Run(ctx, e)
		var se *host.Error
		require.ErrorAs(t, err, &se)
		require.Equal(t, "Runtime", se.Kind())
		_, err2 := r.Run(ctx, e)
		require.Equal(t, err.Error(), err2.Error())
		var se2 *host.Error
		require.ErrorAs(t, err2, &se2)
		require.Equal(t, *se, *se2, "the stored failure is the same error")
		cp, ok, err := r.store().Load(ctx, "fails")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, 1, cp.Calls)
	})
}

// A host error that is not a host.CallError stops Run; the checkpoint stays
// and a later Run asks the same call again.
func TestRunnerStopsOnHostErrorsAndContinuesLater(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode host.HostCalls) {
		noLeaks(t)
		ctx := context.Background()
		pool := newPool(t, 1)
		prog, err := pool.Compile(ctx, `f(1) + f(2)`)
		require.NoError(t, err)
		r := &Runner{Pool: pool, Key: testKey, HostCalls: mode}
		var seen []int
		fail := true
		e := Execution{ID: "flaky", Program: prog, Capabilities: map[string]Capability{
			"f": func(_ context.Context, c Call) (value.Value, error) {
				assert.Equal(t, uint64(c.Seq)+1, c.ID)
				seen = append(seen, c.Seq)
				if c.Seq == 1 && fail {
					fail = false
					return value.Value{}, errors.New("backend down")
				}
				if c.Seq == 1 {
					panic("not like this")
				}
				return c.Args[0], nil
			},
		}}
		_, err = r.Run(ctx, e)
		require.EqualError(t, err, "capability f: backend down")
		_, err = r.Run(ctx, e)
		require.EqualError(t, err, "capability f: panic: not like this")
		require.Equal(t, []int{0, 1, 1}, seen)
		e.Capabilities["f"] = func(_ context.Context, c Call) (value.Value, error) { return c.Args[0], nil }
		v, err := r.Run(ctx, e)
		require.NoError(t, err)
		require.Equal(t, 3.0, v.Num)
	})
}

// A DirStore lets an execution outlive the host: a new Runner, pool and
// store on the same directory continue it without asking answered calls
// again.
func TestRunnerContinuesFromADirectoryAfterTheHostRestarts(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode host.HostCalls) {
		noLeaks(t)
		ctx := context.Background()
		dir := t.TempDir()
		src := `let s = 0; for (let i = 0; i < 4; i++) s += f(i); s;`
		var asked []int
		stop := errors.New("host going down")
		caps := func(stopAt int) map[string]Capability {
			return map[string]Capability{"f": func(_ context.Context, c Call) (value.Value, error) {
				if c.Seq == stopAt {
					return value.Value{}, stop
				}
				asked = append(asked, c.Seq)
				return value.Number(float64(10 * (c.Seq + 1))), nil
			}}
		}
		run := func(stopAt int) (value.Value, error) {
			pool := newPool(t, 1)
			defer pool.Close()
			store, err := NewDirStore(dir)
			require.NoError(t, err)
			prog, err := pool.Compile(ctx, src)
			require.NoError(t, err)
			return (&Runner{Pool: pool, Store: store, Key: testKey, HostCalls: mode}).Run(ctx, Execution{ID: "long", Program: prog, Capabilities: caps(stopAt)})
		}
		_, err := run(2)
		require.ErrorIs(t, err, stop)
		v, err := run(-1)
		require.NoError(t, err)
		require.Equal(t, 100.0, v.Num)
		require.Equal(t, []int{0, 1, 2, 3}, asked)

		names, err := filepath.Glob(filepath.Join(dir, "*"))
		require.NoError(t, err)
		require.Equal(t, []string{filepath.Join(dir, "long.json")}, names, "only the record; no snapshot or temp file left")
	})
}

func TestRunnerRefusesTheSameExecutionTwiceAtOnce(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode host.HostCalls) {
		noLeaks(t)
		ctx := context.Background()
		pool := newPool(t, 1)
		prog, err := pool.Compile(ctx, `f()`)
		require.NoError(t, err)
		r := &Runner{Pool: pool, Key: testKey, HostCalls: mode}
		entered, release := make(chan struct{}), make(chan struct{})
		e := Execution{ID: "once", Program: prog, Capabilities: map[string]Capability{
			"f": func(context.Context, Call) (value.Value, error) {
				close(entered)
				<-release
				return value.Bool(true), nil
			},
		}}
		var wg sync.WaitGroup
		wg.Add(1)
		var first value.Value
		var firstErr error
		go func() {
			defer wg.Done()
			first, firstErr = r.Run(ctx, e)
		}()
		<-entered
		_, err = r.Run(ctx, e)
		require.ErrorIs(t, err, ErrExecutionBusy)
		require.EqualError(t, err, `execution "once" is already running`)
		close(release)
		wg.Wait()
		// Checked here: require may only stop the test's own goroutine.
		require.NoError(t, firstErr)
		require.True(t, first.Bool)
	})
}

func TestDirStoreRejectsBadIDsAndCorruptSnapshots(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := NewDirStore(dir)
	require.NoError(t, err)
	for _, id := range []string{"", "a.b", "../x", "a/b", string(make([]byte, 129))} {
		require.ErrorContains(t, s.Save(ctx, id, &Checkpoint{Done: true}), "is not 1 to 128 characters")
	}
	snap := []byte("snapshot bytes")
	ans := host.Throw(host.CallError{Name: "E", Message: "m"})
	cp := &Checkpoint{ProgramID: "p", Calls: 2, SnapshotID: wire.SHA256Hex(snap), Snapshot: snap, Capability: "f",
		Args: []value.Value{value.Number(negZero), value.Undefined()}, Answer: &ans}
	require.NoError(t, s.Save(ctx, "x", cp))
	got, ok, err := s.Load(ctx, "x")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, cp.Snapshot, got.Snapshot)
	require.True(t, value.Equal(value.Array(cp.Args...), value.Array(got.Args...)))
	require.Equal(t, ans.String(), got.Answer.String())

	journal, err := filepath.Glob(filepath.Join(dir, "x.*.journal"))
	require.NoError(t, err)
	require.Len(t, journal, 1)
	require.NoError(t, os.WriteFile(journal[0], []byte("other bytes, as many"), 0o600))
	_, _, err = s.Load(ctx, "x")
	require.ErrorContains(t, err, "corrupt")
}

var _ = fmt.Sprint
var _ = time.Second

// Hot resumes go to the process holding the parked execution; when that
// process dies, the execution continues on another from its checkpoint.
func TestRunnerResumesHotAtHomeAndColdElsewhere(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode host.HostCalls) {
		noLeaks(t)
		ctx := context.Background()
		pool := newPool(t, 3)
		prog, err := pool.Compile(ctx, `let s = 0; for (let i = 0; i < 6; i++) s += f(i); s;`)
		require.NoError(t, err)
		type event struct {
			pid int
			hot bool
		}
		var events []event
		var home *host.Client
		r := &Runner{Pool: pool, Key: testKey, HostCalls: mode}
		r.observe = func(c *host.Client, hot bool) {
			events = append(events, event{c.Pid(), hot})
			home = c
		}
		killed := 0
		v, err := r.Run(ctx, Execution{ID: "x", Program: prog, Capabilities: map[string]Capability{
			"f": func(_ context.Context, c Call) (value.Value, error) {
				if c.Seq == 3 {
					killed = home.Pid()
					home.Kill()
					<-home.Done()
				}
				return value.Number(float64(c.Seq)), nil
			},
		}})
		require.NoError(t, err)
		require.Equal(t, 15.0, v.Num)
		require.Len(t, events, 6)
		for i, e := range events {
			require.Equal(t, i != 3, e.hot, "resume %d", i)
		}
		require.Equal(t, events[0].pid, events[2].pid, "all hot resumes before the kill on one process")
		require.Equal(t, killed, events[2].pid)
		require.NotEqual(t, killed, events[3].pid, "continued on another process")
		require.Equal(t, events[3].pid, events[5].pid, "and hot there")
	})
}

// A done context stops Run; the checkpoint stays and a later Run
// continues without asking answered calls again.
func TestRunnerStopsWithItsContextAndContinuesLater(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode host.HostCalls) {
		noLeaks(t)
		pool := newPool(t, 1)
		prog, err := pool.Compile(context.Background(), `f(1) + f(2)`)
		require.NoError(t, err)
		r := &Runner{Pool: pool, Key: testKey, HostCalls: mode}
		ctx, cancel := context.WithCancel(context.Background())
		var asked []int
		e := Execution{ID: "c", Program: prog, Capabilities: map[string]Capability{
			"f": func(ctx context.Context, c Call) (value.Value, error) {
				asked = append(asked, c.Seq)
				if c.Seq == 1 && len(asked) == 2 {
					cancel()
					<-ctx.Done()
					return value.Value{}, ctx.Err()
				}
				return c.Args[0], nil
			},
		}}
		_, err = r.Run(ctx, e)
		require.ErrorIs(t, err, context.Canceled)
		v, err := r.Run(context.Background(), e)
		require.NoError(t, err)
		require.Equal(t, 3.0, v.Num)
		require.Equal(t, []int{0, 1, 1}, asked)
	})
}

// After a crash, a snapshot over 1 MiB goes back to a new process in
// staged chunks; the capability is not asked again.
func TestRunnerResumesLargeSnapshotsThroughStages(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode host.HostCalls) {
		noLeaks(t)
		ctx := context.Background()
		pool := newPool(t, 2)
		// The guest keeps its answers, so its snapshots grow as their
		// journal does (a checkpoint's image would be larger).
		prog, err := pool.Compile(ctx, `let n = 0; const kept = []; for (let i = 0; i < 4; i++) { const r = get(i); kept.push(r); n += r.length; } n;`)
		require.NoError(t, err)
		var last *host.Client
		cold := 0
		r := &Runner{Pool: pool, Key: testKey, HostCalls: mode}
		r.observe = func(c *host.Client, hot bool) {
			last = c
			if !hot {
				cold++
				require.EqualValues(t, 1, link.Uploads(c), "the cold resume staged the snapshot")
			}
		}
		chunk := "x"
		b := make([]byte, 512<<10)
		var asked []int
		v, err := r.Run(ctx, Execution{ID: "big", Program: prog,
			Limits: host.Limits{HeapLimitBytes: host.Limit(64 << 20), AllocationBudget: host.Limit(1 << 30)},
			Capabilities: map[string]Capability{"get": func(_ context.Context, c Call) (value.Value, error) {
				asked = append(asked, c.Seq)
				if c.Seq == 3 {
					cp, _, err := r.store().Load(ctx, "big")
					assert.NoError(t, err)
					assert.Greater(t, len(cp.Snapshot), 1<<20)
					last.Kill()
					<-last.Done()
					return value.String(chunk), nil
				}
				_, _ = rand.Read(b)
				return value.String(base64.StdEncoding.EncodeToString(b)), nil
			}},
		})
		require.NoError(t, err)
		require.Equal(t, float64(3*base64.StdEncoding.EncodedLen(len(b))+1), v.Num)
		require.Equal(t, 1, cold)
		require.Equal(t, []int{0, 1, 2, 3}, asked)
	})
}

// A Run's guest failure is a *host.Error with the guest's error in fields,
// the same when a later Run reads it from the Store; the Runner's
// refusals match their sentinels.
func TestRunnerErrorsAreStructuredAndMatchable(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t, 1)
	prog, err := pool.Compile(ctx, "function f(x) {\n  return x.y.z;\n}\nconst a = g();\nf(a);")
	require.NoError(t, err)
	r := &Runner{Pool: pool, Key: testKey}
	e := Execution{ID: "structured", Program: prog, Capabilities: map[string]Capability{
		"g": func(context.Context, Call) (value.Value, error) { return host.ValueOf(map[string]any{}) },
	}}
	for range 2 {
		_, err = r.Run(ctx, e)
		var se *host.Error
		require.ErrorAs(t, err, &se)
		require.Equal(t, "TypeError", se.GuestName)
		require.Contains(t, se.GuestMessage, "undefined")
		require.Equal(t, []host.Frame{{Function: "f", Line: 2, Column: 14}, {Function: "<script>", Line: 5, Column: 2}}, se.Stack, se.Message)
		require.Equal(t, 2, se.Line)
		require.Equal(t, 14, se.Column)
	}

	other, err := pool.Compile(ctx, `1`)
	require.NoError(t, err)
	_, err = r.Run(ctx, Execution{ID: "structured", Program: other})
	require.ErrorIs(t, err, ErrProgramMismatch)
	require.EqualError(t, err, `execution "structured" was stored with another program`)
	_, err = (&Runner{Pool: pool}).Run(ctx, e)
	require.ErrorIs(t, err, ErrInvalidRun)
	e.ID, e.Capabilities = "", nil
	_, err = r.Run(ctx, e)
	require.ErrorIs(t, err, ErrInvalidRun)

	_, err = r.Run(ctx, Execution{ID: "given", Program: prog, Capabilities: map[string]Capability{
		"g": func(context.Context, Call) (value.Value, error) { return value.Value{}, errors.New("stop") },
	}})
	require.Error(t, err)
	_, err = r.Run(ctx, Execution{ID: "given", Program: prog})
	require.ErrorIs(t, err, ErrCapabilityNotGiven)
}

// A guest that drops its large answers gets snapshots that begin with a
// checkpoint (a few hundred bytes, not the answers): the Runner stores
// each whole, as a step that does not extend the last, and a Run after a
// host that stopped mid-way continues from the stored one, asking only
// what was not answered.
func TestRunnerStoresCheckpoints(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode host.HostCalls) {
		noLeaks(t)
		ctx := context.Background()
		pool := newPool(t, 1)
		store, err := NewDirStore(t.TempDir())
		require.NoError(t, err)
		prog, err := pool.Compile(ctx, `let n = 0; for (let i = 0; i < 6; i++) n += get(i).length; n;`)
		require.NoError(t, err)
		stop := errors.New("host going down")
		page := make([]byte, 30_000)
		var asked []int
		run := func(stopAt int) (value.Value, error) {
			r := &Runner{Pool: pool, Store: store, Key: testKey, HostCalls: mode}
			return r.Run(ctx, Execution{ID: "pages", Program: prog, Capabilities: map[string]Capability{
				"get": func(_ context.Context, c Call) (value.Value, error) {
					if c.Seq == stopAt {
						return value.Value{}, stop
					}
					asked = append(asked, c.Seq)
					return value.String(base64.StdEncoding.EncodeToString(page)), nil
				},
			}})
		}
		_, err = run(3)
		require.ErrorIs(t, err, stop)
		cp, _, err := store.Load(ctx, "pages")
		require.NoError(t, err)
		assert.Less(t, len(cp.Snapshot), 2048, "the stored snapshot holds no answer")
		v, err := run(-1)
		require.NoError(t, err)
		require.Equal(t, float64(6*base64.StdEncoding.EncodedLen(len(page))), v.Num)
		require.Equal(t, []int{0, 1, 2, 3, 4, 5}, asked)
	})
}
