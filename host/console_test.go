package host

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
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
	for _, tr := range hosttest.Transports {
		t.Run(tr.Name, func(t *testing.T) {
			ctx := context.Background()
			c := newClient(t, Config{Cmd: sidecarCmd(t), JSONL: tr.JSONL})
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

			c2 := newClient(t, Config{Cmd: sidecarCmd(t), JSONL: tr.JSONL})
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
