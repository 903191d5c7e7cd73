package host

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// needFeatures fails a test against a sidecar that does not announce
// every feature named: the tests run this repository's own sidecar, which
// must have them.
func needFeatures(t *testing.T, features ...string) {
	t.Helper()
	c := newClient(t, Config{Cmd: sidecarCmd(t)})
	pong, err := c.Ping(context.Background())
	require.NoError(t, err)
	for _, f := range features {
		if !pong.Has(f) {
			t.Fatalf("the sidecar does not announce the %q feature", f)
		}
	}
	require.NoError(t, c.Close())
}

const consoleSource = `
console.log("a", 1, true);
const x = get(1);
console.warn("got", x);
console.info("done");
x + 1;
`

// Each step carries the lines written since the previous one, the same
// hot and cold, on both transports.
func TestClientReturnsEachStepsLogLines(t *testing.T) {
	needFeatures(t, "console")
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx := context.Background()
			c := newClient(t, Config{Cmd: sidecarCmd(t), JSONL: tr.jsonl})
			prog, err := c.Compile(ctx, consoleSource)
			require.NoError(t, err)
			caps := []string{"get"}
			st, err := c.Start(ctx, StartRequest{Program: prog, Capabilities: caps, Console: ConsoleCollect})
			require.NoError(t, err)
			require.NotNil(t, st.Suspended)
			require.Equal(t, []LogLine{{"log", "a 1 true"}}, st.Logs)
			s := st.Suspended
			want := []LogLine{{"warn", "got 5"}, {"info", "done"}}

			hot, err := c.Resume(ctx, ResumeRequest{SnapshotID: s.SnapshotID, PolicyID: s.PolicyID, Key: testKey,
				Payload: Return(value.Number(5))})
			require.NoError(t, err)
			require.Equal(t, 6.0, hot.Value.Num)
			require.Equal(t, want, hot.Logs)

			c2 := newClient(t, Config{Cmd: sidecarCmd(t), JSONL: tr.jsonl})
			cold, err := c2.Resume(ctx, ResumeRequest{Snapshot: s.Snapshot, Key: testKey, Payload: Return(value.Number(5)),
				Policy: &Policy{Capabilities: caps, Console: ConsoleCollect}})
			require.NoError(t, err)
			require.Equal(t, 6.0, cold.Value.Num)
			require.Equal(t, want, cold.Logs, "a cold resume returns its own segment's lines only")
		})
	}
}

// A failed start carries the lines written before the failure, and
// max_log_bytes bounds a step's lines.
func TestClientReturnsTheLogLinesOfAFailureAndBoundsThem(t *testing.T) {
	needFeatures(t, "console")
	ctx := context.Background()
	c := newClient(t, Config{Cmd: sidecarCmd(t)})
	prog, err := c.Compile(ctx, `console.error("about to fail"); throw new TypeError("bad");`)
	require.NoError(t, err)
	_, err = c.Start(ctx, StartRequest{Program: prog, Console: ConsoleCollect})
	var se *Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, "Runtime", se.Kind())
	require.Equal(t, []LogLine{{"error", "about to fail"}}, se.Logs)

	prog, err = c.Compile(ctx, `console.log("aaaa"); console.log("bbbb"); console.debug("c"); 1`)
	require.NoError(t, err)
	st, err := c.Start(ctx, StartRequest{Program: prog, Console: ConsoleCollect, Limits: Limits{MaxLogBytes: Limit(5)}})
	require.NoError(t, err)
	require.Len(t, st.Logs, 2)
	require.Equal(t, LogLine{"log", "aaaa"}, st.Logs[0])
	require.Equal(t, "warn", st.Logs[1].Level)
	require.Contains(t, st.Logs[1].Text, "2 more log lines dropped")

	// Without the console mode the guest has no console.
	_, err = c.Start(ctx, StartRequest{Program: prog})
	require.ErrorAs(t, err, &se)
	require.Contains(t, se.Message, "console")
	require.Empty(t, se.Logs)
}

// A granted console.* capability is a host call like any other, on the
// wire under its dotted name, and the guest's call returns undefined.
func TestClientConsoleCapabilitiesAreHostCalls(t *testing.T) {
	needFeatures(t, "console")
	ctx := context.Background()
	c := newClient(t, Config{Cmd: sidecarCmd(t)})
	prog, err := c.Compile(ctx, `const r = console.log("hi", 2); [typeof r];`)
	require.NoError(t, err)
	st, err := c.Start(ctx, StartRequest{Program: prog, Capabilities: []string{"console.log"}})
	require.NoError(t, err)
	require.NotNil(t, st.Suspended)
	require.Equal(t, "console.log", st.Suspended.Capability)
	require.Equal(t, `{"Array":[{"String":"hi"},{"Number":{"Finite":2.0}}]}`, wireText(t, value.Array(st.Suspended.Args...)))
	st, err = c.Resume(ctx, ResumeRequest{SnapshotID: st.Suspended.SnapshotID, PolicyID: st.Suspended.PolicyID, Key: testKey,
		Payload: Return(value.String("ignored"))})
	require.NoError(t, err)
	require.Equal(t, `{"Array":[{"String":"undefined"}]}`, wireText(t, st.Value))
}

// Dotted capability names reach the guest as namespaces and the host
// under their full names, in both host-call modes.
func TestClientNamespacedCapabilities(t *testing.T) {
	needFeatures(t, "namespaces")
	for _, mode := range []HostCalls{HostCallsOne, HostCallsBatch} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := context.Background()
			c := newClient(t, Config{Cmd: sidecarCmd(t)})
			prog, err := c.Compile(ctx, `github.create_issue({ title: "t" }).number + tools["get-file"]("a");`)
			require.NoError(t, err)
			caps := []string{"github.create_issue", "tools.get-file"}
			st, err := c.Start(ctx, StartRequest{Program: prog, Capabilities: caps, HostCalls: mode})
			require.NoError(t, err)
			require.Equal(t, "github.create_issue", st.Suspended.Capability)
			answer := func(s *Suspension, v value.Value) ResumeRequest {
				req := ResumeRequest{Snapshot: s.Snapshot, Key: testKey, Policy: &Policy{Capabilities: caps, HostCalls: mode}}
				if mode == HostCallsBatch {
					require.Equal(t, s.Capability, s.Calls[0].Capability)
					req.Answers = []Answer{{ID: s.Calls[0].ID, Payload: Return(v)}}
				} else {
					req.Payload = Return(v)
				}
				return req
			}
			st, err = c.Resume(ctx, answer(st.Suspended, MustValueOf(map[string]int{"number": 7})))
			require.NoError(t, err)
			require.Equal(t, "tools.get-file", st.Suspended.Capability)
			st, err = c.Resume(ctx, answer(st.Suspended, value.String("!")))
			require.NoError(t, err)
			require.Equal(t, "7!", st.Value.Str)

			// A name that is both a function and a namespace is refused.
			_, err = c.Start(ctx, StartRequest{Program: prog, Capabilities: []string{"a", "a.b"}})
			var se *Error
			require.ErrorAs(t, err, &se)
			require.Equal(t, "invalid_capability", se.Code)
		})
	}
}

// A TypeScript program compiles with its types erased, and errors point
// into the TypeScript source.
func TestClientCompilesTypeScript(t *testing.T) {
	needFeatures(t, "typescript")
	ctx := context.Background()
	c := newClient(t, Config{Cmd: sidecarCmd(t)})
	src := "interface P { n: number }\nconst add = (p: P, m: number): number => p.n + m;\nadd({ n: 1 } as P, 2);\n"
	ts, err := c.CompileWith(ctx, src, CompileOptions{Language: TypeScript})
	require.NoError(t, err)
	st, err := c.Start(ctx, StartRequest{Program: ts})
	require.NoError(t, err)
	require.Equal(t, 3.0, st.Value.Num)

	_, err = c.Compile(ctx, src)
	var se *Error
	require.ErrorAs(t, err, &se, "as JavaScript the source does not parse")
	require.Equal(t, "Parse", se.Kind())

	_, err = c.CompileWith(ctx, "const a: number = 1;\nconst b: string = ;\n", CompileOptions{Language: TypeScript})
	require.ErrorAs(t, err, &se)
	require.Equal(t, "Parse", se.Kind())
	require.Contains(t, se.Message, "2:")

	_, err = c.CompileWith(ctx, "1", CompileOptions{Language: "cobol"})
	require.ErrorAs(t, err, &se)
	require.Contains(t, se.Message, "unknown language `cobol`")
}

// With EntryCall the program evaluates to a function that gets the
// inputs object.
func TestClientCallsAFunctionShapedProgram(t *testing.T) {
	needFeatures(t, "entry_call")
	ctx := context.Background()
	c := newClient(t, Config{Cmd: sidecarCmd(t)})
	prog, err := c.Compile(ctx, `async function main({ n, who }) { const x = await get(n); return who + ":" + x; } main;`)
	require.NoError(t, err)
	st, err := c.Start(ctx, StartRequest{Program: prog, Entry: EntryCall, Capabilities: []string{"get"},
		Inputs: map[string]value.Value{"n": value.Number(2), "who": value.String("w")}})
	require.NoError(t, err)
	require.Equal(t, "get", st.Suspended.Capability)
	c2 := newClient(t, Config{Cmd: sidecarCmd(t)})
	st, err = c2.Resume(ctx, ResumeRequest{Snapshot: st.Suspended.Snapshot, Key: testKey, Payload: Return(value.Number(4)),
		Policy: &Policy{Capabilities: []string{"get"}}})
	require.NoError(t, err, "the entry travels in the snapshot")
	require.Equal(t, "w:4", st.Value.Str)

	prog, err = c.Compile(ctx, `42`)
	require.NoError(t, err)
	_, err = c.Start(ctx, StartRequest{Program: prog, Entry: EntryCall})
	var se *Error
	require.ErrorAs(t, err, &se)
	require.Contains(t, se.Message, "program did not evaluate to a function (got number)")
}

const runnerConsoleSource = `
let s = 0;
for (let i = 0; i < 5; i++) { console.log("before", i); s += f(i); }
console.log("end", s);
s;
`

func runnerConsoleWant() []LogLine {
	var want []LogLine
	for i := range 5 {
		want = append(want, LogLine{"log", "before " + string(rune('0'+i))})
	}
	return append(want, LogLine{"log", "end 10"})
}

// OnLog gets every line once, in order, while the process holding the
// execution is killed and it continues cold elsewhere; SegmentInfo
// carries each segment's lines.
func TestRunnerDeliversLogLinesOnceAcrossSidecarCrashes(t *testing.T) {
	needFeatures(t, "console")
	forEachMode(t, func(t *testing.T, mode HostCalls) {
		noLeaks(t)
		ctx := context.Background()
		pool := newPool(t, 2)
		prog, err := pool.Compile(ctx, runnerConsoleSource)
		require.NoError(t, err)
		var home *Client
		var segLogs []LogLine
		r := &Runner{Pool: pool, Key: testKey, HostCalls: mode}
		r.observe = func(c *Client, hot bool) { home = c }
		r.Intercept.Segment = func(ctx context.Context, s *SegmentInfo, next func(context.Context) error) error {
			err := next(ctx)
			segLogs = append(segLogs, s.Logs...)
			return err
		}
		var got []LogLine
		v, err := r.Run(ctx, Execution{ID: "logs", Program: prog, Console: ConsoleCollect,
			OnLog: func(l LogLine) { got = append(got, l) },
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
	forEachMode(t, func(t *testing.T, mode HostCalls) {
		ctx := context.Background()
		pool := newPool(t, 1)
		prog, err := pool.Compile(ctx, runnerConsoleSource)
		require.NoError(t, err)
		for failAt := 1; failAt <= 8; failAt++ {
			store := &saveFailingStore{fail: []int{failAt}}
			r := &Runner{Pool: pool, Key: testKey, HostCalls: mode, Store: store}
			var got []LogLine
			var calls atomic.Int32
			e := Execution{ID: "logs", Program: prog, Console: ConsoleCollect,
				OnLog: func(l LogLine) { got = append(got, l) },
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
// *Error carries them too.
func TestRunnerDeliversTheLinesOfAFailedSegment(t *testing.T) {
	needFeatures(t, "console")
	ctx := context.Background()
	pool := newPool(t, 1)
	prog, err := pool.Compile(ctx, `f(1); console.error("failing"); throw new Error("no");`)
	require.NoError(t, err)
	r := &Runner{Pool: pool, Key: testKey}
	var got []LogLine
	_, err = r.Run(ctx, Execution{ID: "fail", Program: prog, Console: ConsoleCollect,
		OnLog:        func(l LogLine) { got = append(got, l) },
		Capabilities: map[string]Capability{"f": func(context.Context, Call) (value.Value, error) { return value.Null(), nil }}})
	var se *Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, []LogLine{{"error", "failing"}}, got)
	require.Equal(t, got, se.Logs)
}

// Dotted names in Execution.Capabilities, console.* among them, work as
// any other; an EntryCall execution gets its inputs as an argument.
func TestRunnerRunsNamespacedCapabilitiesAndCallEntries(t *testing.T) {
	needFeatures(t, "namespaces", "entry_call", "console")
	forEachMode(t, func(t *testing.T, mode HostCalls) {
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
		v, err := r.Run(ctx, Execution{ID: "ns", Program: prog, Entry: EntryCall,
			Inputs: map[string]value.Value{"repo": value.String("o/r")},
			Capabilities: map[string]Capability{
				"github.create_issue": func(_ context.Context, c Call) (value.Value, error) {
					var in struct{ Repo, Title string }
					if err := c.Decode(&in); err != nil {
						return value.Value{}, err
					}
					return ValueOf(map[string]int{"number": len(in.Title) * 10})
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
