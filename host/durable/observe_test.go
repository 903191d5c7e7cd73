package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/host"

	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// captureLog is a slog.Handler that keeps every record.
type captureLog struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *captureLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *captureLog) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}
func (h *captureLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *captureLog) WithGroup(string) slog.Handler      { return h }

// logged is one record: its level, message and attributes.
type logged struct {
	level slog.Level
	msg   string
	attrs map[string]any
}

// find returns the records with message msg.
func (h *captureLog) find(msg string) []logged {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []logged
	for _, r := range h.recs {
		if r.Message != msg {
			continue
		}
		l := logged{level: r.Level, msg: r.Message, attrs: map[string]any{}}
		r.Attrs(func(a slog.Attr) bool {
			l.attrs[a.Key] = a.Value.Resolve().Any()
			return true
		})
		out = append(out, l)
	}
	return out
}

// tspan is a span of the tracer the tests plug into Intercept.
type tspan struct {
	name     string
	seg      *SegmentInfo // for segments, as filled in
	parent   *tspan
	mu       sync.Mutex
	children []*tspan
}

type tspanKey struct{}

func startTSpan(ctx context.Context, name string) (context.Context, *tspan) {
	s := &tspan{name: name}
	if p, ok := ctx.Value(tspanKey{}).(*tspan); ok {
		s.parent = p
		p.mu.Lock()
		p.children = append(p.children, s)
		p.mu.Unlock()
	}
	return context.WithValue(ctx, tspanKey{}, s), s
}

// tree prints s and its children, calls in call order.
func (s *tspan) tree(indent string, b *strings.Builder) {
	fmt.Fprintf(b, "%s%s\n", indent, s.name)
	children := slices.Clone(s.children)
	slices.SortStableFunc(children, func(a, b *tspan) int {
		if strings.HasPrefix(a.name, "call ") && strings.HasPrefix(b.name, "call ") {
			return strings.Compare(a.name, b.name)
		}
		return 0
	})
	for _, c := range children {
		c.tree(indent+"  ", b)
	}
}

// tracer returns an Interceptor opening a span for each Run, segment and
// call, and the roots it opened. Each segment's context is cancelled as
// its interceptor returns, which must not cancel the calls it made.
func tracer() (Interceptor, func() []*tspan) {
	var mu sync.Mutex
	var roots []*tspan
	return Interceptor{
			Execution: func(ctx context.Context, e *ExecutionInfo, next func(context.Context) error) error {
				ctx, s := startTSpan(ctx, "execution "+e.ID)
				mu.Lock()
				roots = append(roots, s)
				mu.Unlock()
				return next(ctx)
			},
			Segment: func(ctx context.Context, info *SegmentInfo, next func(context.Context) error) error {
				ctx, cancel := context.WithCancel(ctx)
				defer cancel()
				ctx, s := startTSpan(ctx, "segment")
				s.seg = info
				err := next(ctx)
				s.name = fmt.Sprintf("segment start=%v answers=%d suspended=%v done=%v", info.Start, info.Answers, info.Suspended, info.Done)
				return err
			},
			Call: func(ctx context.Context, c Call, next func(context.Context) (value.Value, error)) (value.Value, error) {
				ctx, _ = startTSpan(ctx, fmt.Sprintf("call %d %s", c.ID, c.Name))
				return next(ctx)
			},
		}, func() []*tspan {
			mu.Lock()
			defer mu.Unlock()
			return roots
		}
}

type runValueKey struct{}

// Must hold: one span per execution, per segment and per tool call,
// nested: each call under the segment that suspended on it; each segment
// told whether it started, how many answers it sent, where it ran and how
// it ended; a call's context cancelled with the call, not with its
// segment's, and carrying the Run's values.
func TestRunnerInterceptorsNestExecutionSegmentsAndCalls(t *testing.T) {
	src := `
async function main() {
  const a = await f(1);
  const [b, c] = await Promise.all([g(a), g(a + 1)]);
  return b + c;
}
main();`
	for _, tc := range []struct {
		mode host.HostCalls
		want string
		or   string // batch mode: the g calls answered in one resume or two
	}{
		{"", `execution e
  segment start=true answers=0 suspended=true done=false
    call 1 f
  segment start=false answers=1 suspended=true done=false
    call 2 g
    call 3 g
  segment start=false answers=2 suspended=false done=true
`, `execution e
  segment start=true answers=0 suspended=true done=false
    call 1 f
  segment start=false answers=1 suspended=true done=false
    call 2 g
    call 3 g
  segment start=false answers=1 suspended=true done=false
  segment start=false answers=1 suspended=false done=true
`},
		{host.HostCallsOne, `execution e
  segment start=true answers=0 suspended=true done=false
    call 1 f
  segment start=false answers=1 suspended=true done=false
    call 2 g
  segment start=false answers=1 suspended=true done=false
    call 3 g
  segment start=false answers=1 suspended=false done=true
`, ""},
	} {
		t.Run(string(tc.mode)+"mode", func(t *testing.T) {
			noLeaks(t)
			ctx := context.WithValue(context.Background(), runValueKey{}, "from the Run")
			pool := newPool(t, 1)
			prog, err := pool.Compile(ctx, src)
			require.NoError(t, err)
			icpt, roots := tracer()
			r := &Runner{Pool: pool, Key: testKey, HostCalls: tc.mode, Intercept: icpt}
			answer := func(ctx context.Context, c Call) (value.Value, error) {
				if ctx.Err() != nil {
					return value.Value{}, fmt.Errorf("call %d: its context is done: %w", c.ID, ctx.Err())
				}
				if ctx.Value(runValueKey{}) != "from the Run" {
					return value.Value{}, fmt.Errorf("call %d: its context lost the Run's values", c.ID)
				}
				if _, ok := ctx.Value(tspanKey{}).(*tspan); !ok {
					return value.Value{}, fmt.Errorf("call %d: no span in its context", c.ID)
				}
				var n float64
				if err := c.Decode(&n); err != nil {
					return value.Value{}, err
				}
				return value.Number(10 * n), nil
			}
			v, err := r.Run(ctx, Execution{ID: "e", Program: prog, Capabilities: map[string]Capability{
				"f": answer,
				"g": answer,
			}})
			require.NoError(t, err)
			require.Equal(t, 210.0, v.Num)
			rs := roots()
			require.Len(t, rs, 1)
			var b strings.Builder
			rs[0].tree("", &b)
			if got := b.String(); got != tc.or {
				require.Equal(t, tc.want, got)
			}
			for _, s := range rs[0].children {
				require.Equal(t, 1, s.seg.Attempt)
				require.NotZero(t, s.seg.PID)
				require.Equal(t, !s.seg.Start, s.seg.Hot, "every resume hot on a pool of one")
			}
		})
	}
}

// In a Run after the host restarted, a call made before the restart is
// a child of the execution; and an interceptor that does not call next is
// an error, not a silent success.
func TestRunnerInterceptorsAfterARestart(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	pool := newPool(t, 1)
	prog, err := pool.Compile(ctx, `f(1) + f(2)`)
	require.NoError(t, err)
	store := &MemoryStore{}
	stop := fmt.Errorf("host going down")
	caps := func(stopAt uint64) map[string]Capability {
		return map[string]Capability{"f": func(_ context.Context, c Call) (value.Value, error) {
			if c.ID == stopAt {
				return value.Value{}, stop
			}
			return value.Number(1), nil
		}}
	}
	first := &Runner{Pool: pool, Key: testKey, Store: store}
	_, err = first.Run(ctx, Execution{ID: "e", Program: prog, Capabilities: caps(2)})
	require.ErrorIs(t, err, stop)

	icpt, roots := tracer()
	second := &Runner{Pool: pool, Key: testKey, Store: store, Intercept: icpt}
	v, err := second.Run(ctx, Execution{ID: "e", Program: prog, Capabilities: caps(0)})
	require.NoError(t, err)
	require.Equal(t, 2.0, v.Num)
	var b strings.Builder
	roots()[0].tree("", &b)
	require.Equal(t, `execution e
  call 2 f
  segment start=false answers=1 suspended=false done=true
`, b.String())

	lazy := &Runner{Pool: pool, Key: testKey, Intercept: Interceptor{
		Segment: func(context.Context, *SegmentInfo, func(context.Context) error) error { return nil },
	}}
	_, err = lazy.Run(ctx, Execution{ID: "lazy", Program: prog, Capabilities: caps(0)})
	require.EqualError(t, err, "the Segment interceptor did not call next")
	lazy = &Runner{Pool: pool, Key: testKey, Intercept: Interceptor{
		Execution: func(context.Context, *ExecutionInfo, func(context.Context) error) error { return nil },
	}}
	_, err = lazy.Run(ctx, Execution{ID: "lazy2", Program: prog, Capabilities: caps(0)})
	require.EqualError(t, err, "the Execution interceptor did not call next")
}

// Must hold: the host.Pool logs its processes' starts, exits (with status) and
// respawns; the Runner logs cold resumes with their reason and limits hit,
// to its own Logger or else the host.Pool's.
func TestPoolAndRunnerLog(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	poolLog := &captureLog{}
	pool, err := host.NewPool(host.PoolConfig{Size: 1, Command: func() *exec.Cmd { return sidecarCmd(t) }, Logger: slog.New(poolLog)})
	require.NoError(t, err)
	prog, err := pool.Compile(ctx, `let s = 0; for (let i = 0; i < 3; i++) s += f(i); s;`)
	require.NoError(t, err)
	var killed int
	r := &Runner{Pool: pool, Key: testKey}
	v, err := r.Run(ctx, Execution{ID: "killed", Program: prog, Capabilities: map[string]Capability{
		"f": func(_ context.Context, c Call) (value.Value, error) {
			if c.Seq == 1 {
				// The process holding the execution dies while the call runs.
				live := liveClients(pool)
				if len(live) != 1 {
					return value.Value{}, fmt.Errorf("%d live processes", len(live))
				}
				killed = live[0].Pid()
				live[0].Kill()
				<-live[0].Done()
			}
			return value.Number(1), nil
		},
	}})
	require.NoError(t, err)
	require.Equal(t, 3.0, v.Num)

	started := poolLog.find("sidecar process started")
	require.Len(t, started, 2)
	require.Equal(t, slog.LevelInfo, started[0].level)
	require.Equal(t, int64(0), started[0].attrs["place"])
	require.Equal(t, int64(killed), started[0].attrs["pid"])
	require.Equal(t, uint64(0), started[0].attrs["restarts"])
	require.Equal(t, uint64(1), started[1].attrs["restarts"])
	exited := poolLog.find("sidecar process exited")
	require.Len(t, exited, 1)
	require.Equal(t, slog.LevelWarn, exited[0].level)
	require.Equal(t, int64(killed), exited[0].attrs["pid"])
	require.Equal(t, "signal: killed", exited[0].attrs["status"])
	respawn := poolLog.find("respawning sidecar process")
	require.Len(t, respawn, 1)
	require.Equal(t, int64(killed), respawn[0].attrs["previous_pid"])
	cold := poolLog.find("cold resume")
	require.Len(t, cold, 1, "the Runner logs to the Pool's logger")
	require.Equal(t, "killed", cold[0].attrs["execution"])
	require.Equal(t, "the process holding the execution ended", cold[0].attrs["reason"])

	// A Runner with a Logger of its own logs there.
	runLog := &captureLog{}
	r2 := &Runner{Pool: pool, Key: testKey, Logger: slog.New(runLog)}
	spin, err := pool.Compile(ctx, `for (;;) {}`)
	require.NoError(t, err)
	_, err = r2.Run(ctx, Execution{ID: "spin", Program: spin, Limits: host.Limits{InstructionBudget: host.Limit(10_000)}})
	require.ErrorIs(t, err, host.ErrLimit)
	hit := runLog.find("execution hit a limit")
	require.Len(t, hit, 1)
	require.Equal(t, slog.LevelWarn, hit[0].level)
	require.Equal(t, "spin", hit[0].attrs["execution"])
	require.Equal(t, "limit_instruction_budget", hit[0].attrs["code"])
	require.Empty(t, poolLog.find("execution hit a limit"))

	require.NoError(t, pool.Close())
	exited = poolLog.find("sidecar process exited")
	require.Len(t, exited, 2)
	require.Equal(t, slog.LevelInfo, exited[1].level, "closed by the pool")
	require.Equal(t, "exit status 0", exited[1].attrs["status"])
}
