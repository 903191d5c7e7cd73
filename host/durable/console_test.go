package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/host"

	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

const runnerConsoleSource = `
let s = 0;
for (let i = 0; i < 5; i++) { console.log("before", i); s += f(i); }
console.log("end", s);
s;
`

func runnerConsoleWant() []host.LogLine {
	var want []host.LogLine
	for i := range 5 {
		want = append(want, host.LogLine{Level: "log", Text: "before " + string(rune('0'+i))})
	}
	return append(want, host.LogLine{Level: "log", Text: "end 10"})
}

// OnLog gets every line once, in order, while the process holding the
// execution is killed and it continues cold elsewhere; SegmentInfo
// carries each segment's lines.
func TestRunnerDeliversLogLinesOnceAcrossSidecarCrashes(t *testing.T) {
	needFeatures(t, "console")
	forEachMode(t, func(t *testing.T, mode host.HostCalls) {
		noLeaks(t)
		ctx := context.Background()
		pool := newPool(t, 2)
		prog, err := pool.Compile(ctx, runnerConsoleSource)
		require.NoError(t, err)
		var home *host.Client
		var segLogs []host.LogLine
		r := &Runner{Pool: pool, Key: testKey, HostCalls: mode}
		r.observe = func(c *host.Client, hot bool) { home = c }
		r.Intercept.Segment = func(ctx context.Context, s *SegmentInfo, next func(context.Context) error) error {
			err := next(ctx)
			segLogs = append(segLogs, s.Logs...)
			return err
		}
		var got []host.LogLine
		v, err := r.Run(ctx, Execution{ID: "logs", Program: prog, Console: host.ConsoleCollect,
			OnLog: func(l host.LogLine) { got = append(got, l) },
			Capabilities: map[string]Capability{"f": func(_ context.Context, c Call) (value.Value, error) {
				if c.Seq == 2 || c.Seq == 3 {
					home.Kill()
					<-home.Done()
				}
				return value.Number(float64(c.Seq)), nil
			}}})
		require.NoError(t, err)
		require.Equal(t, 10.0, v.Num)
		require.Equal(t, runnerConsoleWant(), got)
		require.Equal(t, runnerConsoleWant(), segLogs)
	})
}

// saveFailingStore fails the saves whose numbers (from 1) fail lists.
type saveFailingStore struct {
	MemoryStore
	mu    sync.Mutex
	saves int
	fail  []int
}

var errSaveFailed = errors.New("save failed")

func (s *saveFailingStore) Save(ctx context.Context, id string, cp *Checkpoint) error {
	s.mu.Lock()
	s.saves++
	n := s.saves
	s.mu.Unlock()
	for _, f := range s.fail {
		if f == n {
			return errSaveFailed
		}
	}
	return s.MemoryStore.Save(ctx, id, cp)
}

// A segment whose step was not stored does not deliver its lines: the
// next Run runs it again and delivers them then, once.
func TestRunnerDeliversLinesOnlyOfStoredSegments(t *testing.T) {
	needFeatures(t, "console")
	forEachMode(t, func(t *testing.T, mode host.HostCalls) {
		ctx := context.Background()
		pool := newPool(t, 1)
		prog, err := pool.Compile(ctx, runnerConsoleSource)
		require.NoError(t, err)
		for failAt := 1; failAt <= 8; failAt++ {
			store := &saveFailingStore{fail: []int{failAt}}
			r := &Runner{Pool: pool, Key: testKey, HostCalls: mode, Store: store}
			var got []host.LogLine
			var calls atomic.Int32
			e := Execution{ID: "logs", Program: prog, Console: host.ConsoleCollect,
				OnLog: func(l host.LogLine) { got = append(got, l) },
				Capabilities: map[string]Capability{"f": func(_ context.Context, c Call) (value.Value, error) {
					calls.Add(1)
					return value.Number(float64(c.Seq)), nil
				}}}
			_, err := r.Run(ctx, e)
			require.ErrorIs(t, err, errSaveFailed, "save %d", failAt)
			v, err := r.Run(ctx, e)
			require.NoError(t, err, "save %d", failAt)
			require.Equal(t, 10.0, v.Num)
			require.Equal(t, runnerConsoleWant(), got, "save %d", failAt)
		}
	})
}

// A guest failure delivers the lines written before it, and Run's
// *host.Error carries them too.
func TestRunnerDeliversTheLinesOfAFailedSegment(t *testing.T) {
	needFeatures(t, "console")
	ctx := context.Background()
	pool := newPool(t, 1)
	prog, err := pool.Compile(ctx, `f(1); console.error("failing"); throw new Error("no");`)
	require.NoError(t, err)
	r := &Runner{Pool: pool, Key: testKey}
	var got []host.LogLine
	_, err = r.Run(ctx, Execution{ID: "fail", Program: prog, Console: host.ConsoleCollect,
		OnLog:        func(l host.LogLine) { got = append(got, l) },
		Capabilities: map[string]Capability{"f": func(context.Context, Call) (value.Value, error) { return value.Null(), nil }}})
	var se *host.Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, []host.LogLine{{Level: "error", Text: "failing"}}, got)
	require.Equal(t, got, se.Logs)
}

// Dotted names in Execution.Capabilities, console.* among them, work as
// any other; a host.EntryCall execution gets its inputs as an argument.
func TestRunnerRunsNamespacedCapabilitiesAndCallEntries(t *testing.T) {
	needFeatures(t, "namespaces", "entry_call", "console")
	forEachMode(t, func(t *testing.T, mode host.HostCalls) {
		ctx := context.Background()
		pool := newPool(t, 1)
		prog, err := pool.Compile(ctx, `async ({ repo }) => {
			console.log("opening in", repo);
			const [a, b] = await Promise.all([github.create_issue({ repo, title: "x" }), github.create_issue({ repo, title: "y" })]);
			return a.number + b.number;
		}`)
		require.NoError(t, err)
		var mu sync.Mutex
		var logged []string
		r := &Runner{Pool: pool, Key: testKey, HostCalls: mode}
		v, err := r.Run(ctx, Execution{ID: "ns", Program: prog, Entry: host.EntryCall,
			Inputs: map[string]value.Value{"repo": value.String("o/r")},
			Capabilities: map[string]Capability{
				"github.create_issue": func(_ context.Context, c Call) (value.Value, error) {
					var in struct{ Repo, Title string }
					if err := c.Decode(&in); err != nil {
						return value.Value{}, err
					}
					return host.ValueOf(map[string]int{"number": len(in.Title) * 10})
				},
				"console.log": func(_ context.Context, c Call) (value.Value, error) {
					var parts []string
					for _, a := range c.Args {
						parts = append(parts, a.Str)
					}
					mu.Lock()
					logged = append(logged, c.Name+": "+strings.Join(parts, " "))
					mu.Unlock()
					return value.String("ignored"), nil
				},
			}})
		require.NoError(t, err)
		require.Equal(t, 20.0, v.Num)
		require.Equal(t, []string{"console.log: opening in o/r"}, logged)
	})
}
