package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Code as code-mode platforms run it: namespaced capabilities, a console
// (granted as capabilities, or collected), and programs that evaluate to
// the function to call (CONTRACT.md, Extensions). Each run is checked
// cold from every step's snapshot, logs included.

// shapedRun runs src with header h (Program and Seed filled in),
// answering every outstanding call at each step with answer, and checks
// that every snapshot resumed cold goes on as the hot run did, with the
// same logs.
func shapedRun(t *testing.T, src string, h snapshot.Header, limits policy.Limits, answer func(snapshot.HostCall) Payload) []Step {
	t.Helper()
	p, err := Compile(src)
	require.NoError(t, err)
	h.Program, h.Seed, h.ClockMillis = p.Bytes, suiteSeed, suiteClock
	var steps []Step
	var answers [][]Answer
	var snaps [][]byte
	x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: limits})
	for round := 0; step.Suspended(); round++ {
		require.Less(t, round, 200, "runaway")
		raw := step.Snapshot
		var as []Answer
		for _, c := range step.Calls {
			as = append(as, Answer{CallID: c.ID, Payload: answer(c)})
		}
		step.Calls = slices.Clone(step.Calls)
		steps, answers, snaps = append(steps, step), append(answers, as), append(snaps, raw)
		x, step = x.ResumeWith(nil, as, limits)
	}
	steps = append(steps, step)
	for k, raw := range snaps {
		snap, err := snapshot.Load(raw, nil)
		require.NoError(t, err)
		assert.Equal(t, h.Entry, snap.Header.Entry)
		assert.Equal(t, h.Console, snap.Header.Console)
		cx, cstep := testRuntime.Start(Config{Program: p, Header: snap.Header, Limits: limits, Journal: snap, Raw: raw, Answers: answers[k]})
		for j := k + 1; ; j++ {
			assert.Equal(t, describeShaped(steps[j]), describeShaped(cstep), "cold from step %d, step %d", k, j)
			if !cstep.Suspended() {
				break
			}
			cx, cstep = cx.ResumeWith(nil, answers[j], limits)
		}
	}
	return steps
}

func describeShaped(s Step) string {
	var logs []string
	for _, l := range s.Logs {
		logs = append(logs, l.Level+":"+l.Text)
	}
	return describeStep(s) + " logs " + strings.Join(logs, "|")
}

// allLogs is every step's lines, in order.
func allLogs(steps []Step) []string {
	var out []string
	for _, s := range steps {
		for _, l := range s.Logs {
			out = append(out, l.Level+":"+l.Text)
		}
	}
	return out
}

// echoArgs answers a call with [capability, ...args].
func echoArgs(c snapshot.HostCall) Payload {
	return ret(value.Array(append([]value.Value{value.String(c.Capability)}, c.Args...)...))
}

func TestNamespacedCapabilities(t *testing.T) {
	src := `
	  const shape = [typeof github, Object.getPrototypeOf(github), Object.isFrozen(github), Object.isFrozen(github.repos),
	    github.create_issue.name, Object.keys(github).join(","), typeof fs["read-file"]];
	  let reassigned;
	  try { github.create_issue = 1; reassigned = "yes"; } catch (e) { reassigned = e.name; }
	  const a = github.create_issue({ title: "t" });
	  async function more() { return [await github.repos.list(1), await fs["read-file"]("x")]; }
	  more().then((m) => [shape, reassigned, a, m]);`
	h := snapshot.Header{Capabilities: []string{"fs.read-file", "github.create_issue", "github.repos.list"}}
	steps := shapedRun(t, src, h, policy.DefaultLimits(), echoArgs)
	require.Len(t, steps, 4)
	assert.Equal(t, "github.create_issue", steps[0].Capability, "the wire name is the full dotted name")
	assert.True(t, steps[0].Calls[0].Sync, "top-level calls stay synchronous")
	assert.Equal(t, "github.repos.list", steps[1].Capability)
	assert.Equal(t, "fs.read-file", steps[2].Capability)
	last := steps[3]
	require.NoError(t, last.Err)
	assert.Equal(t, `[["object",null,true,true,"create_issue","create_issue,repos","function"],"TypeError",`+
		`["github.create_issue",{"title":"t"}],[["github.repos.list",1],["fs.read-file","x"]]]`, plain(last.Value))
}

func TestNamespaceCannotShadowAGlobal(t *testing.T) {
	p, err := Compile(`1`)
	require.NoError(t, err)
	h := snapshot.Header{Program: p.Bytes, Capabilities: []string{"gh.x"}, Inputs: []value.Member{value.M("gh", value.Number(1))}}
	_, step := testRuntime.Start(Config{Program: p, Header: h, Limits: policy.DefaultLimits()})
	require.Error(t, step.Err)
	assert.Contains(t, step.Err.Error(), `global name "gh" is already defined`)

	assert.NoError(t, CheckCapabilities([]string{"gh.x", "console.log", "plain"}, nil))
	assert.ErrorContains(t, CheckCapabilities([]string{"Math.max"}, nil), `"Math.max": Math is a built-in global`)
	assert.ErrorContains(t, CheckCapabilities([]string{"JSON.x"}, nil), "built-in global")
	assert.ErrorContains(t, CheckCapabilities([]string{"gh.x"}, []value.Member{value.M("gh", value.Null())}), `"gh.x": gh is an input`)
}

func TestConsoleCapabilitiesAreHostCallsTheGuestSeesAsUndefined(t *testing.T) {
	src := `
	  const first = console.log("alpha", 1);
	  let second;
	  try { second = console.warn({ ok: true }); } catch (e) { second = "caught " + e.message; }
	  async function f() {
	    const p = console.error("omega");
	    const r = [p instanceof Promise, await p];
	    try { await console.warn("again"); } catch (e) { r.push("rejected " + e.message); }
	    return r;
	  }
	  f().then((r) => [first, second, r, typeof console.info, Object.isFrozen(console), Object.getPrototypeOf(console)]);`
	h := snapshot.Header{Capabilities: []string{"console.error", "console.log", "console.warn"}}
	answer := func(c snapshot.HostCall) Payload {
		if c.Capability == "console.warn" {
			return hostErr("Error", "ignored too")
		}
		return ret(value.String("ignored"))
	}
	steps := shapedRun(t, src, h, policy.DefaultLimits(), answer)
	require.Len(t, steps, 5)
	assert.Equal(t, "console.log", steps[0].Capability)
	assert.Equal(t, `["alpha",1]`, plain(value.Array(steps[0].Args...)))
	assert.Equal(t, "console.warn", steps[1].Capability)
	assert.Equal(t, "console.error", steps[2].Capability)
	assert.Equal(t, "console.warn", steps[3].Capability)
	// A value answer is undefined to the guest; an error answer throws, as
	// in the reference.
	assert.Equal(t, `[undefined,"caught ignored too",[true,undefined,"rejected ignored too"],"undefined",true,null]`, plain(steps[4].Value))
	assert.Empty(t, allLogs(steps), "granted methods are host calls, not collected lines")
}

func TestConsoleCollectsLinesPerStep(t *testing.T) {
	src := `
	  console.log("start", 1);
	  const a = get(1);
	  console.info("got", a);
	  async function f() {
	    console.warn("in async");
	    const b = await get(2);
	    console.error("b is", b);
	    console.debug("done");
	    console.log("granted is a call");
	    return b;
	  }
	  f();`
	h := snapshot.Header{Capabilities: []string{"console.log", "get"}, Console: snapshot.ConsoleCollect}
	answer := func(c snapshot.HostCall) Payload {
		if c.Capability == "get" {
			return ret(value.Number(10 * c.Args[0].Num))
		}
		return ret(value.Undefined())
	}
	steps := shapedRun(t, src, h, policy.DefaultLimits(), answer)
	require.Len(t, steps, 5)
	assert.Equal(t, "console.log", steps[0].Capability, "granted console.log is a host call even with collect")
	assert.Empty(t, steps[0].Logs)
	assert.Equal(t, "get", steps[1].Capability)
	assert.Empty(t, steps[1].Logs)
	assert.Equal(t, []string{"info:got 10", "warn:in async"}, allLogs(steps[2:3]))
	assert.Equal(t, []string{"error:b is 20", "debug:done"}, allLogs(steps[3:4]))
	assert.Equal(t, "console.log", steps[3].Capability)
	assert.Empty(t, steps[4].Logs)
	assert.Equal(t, "20", plain(steps[4].Value))
}

func TestConsoleIsAbsentUnlessAskedFor(t *testing.T) {
	steps := shapedRun(t, `typeof console`, snapshot.Header{Capabilities: []string{"get"}}, policy.DefaultLimits(), echoArgs)
	assert.Equal(t, `"undefined"`, plain(steps[0].Value))
	steps = shapedRun(t, `[typeof console.log, typeof console.table, Object.keys(console).join()]`,
		snapshot.Header{Console: snapshot.ConsoleCollect}, policy.DefaultLimits(), echoArgs)
	assert.Equal(t, `["function","undefined","debug,error,info,log,warn"]`, plain(steps[0].Value))
}

func TestConsoleLogBound(t *testing.T) {
	src := `for (let i = 0; i < 50; i++) console.log("line " + i); const a = get(1); console.log("after"); a`
	limits := policy.DefaultLimits()
	limits.MaxLogBytes = 30 // "line 0" .. "line 4" are 6 bytes each
	steps := shapedRun(t, src, snapshot.Header{Capabilities: []string{"get"}, Console: snapshot.ConsoleCollect}, limits, echoArgs)
	require.Len(t, steps, 2)
	assert.Equal(t, []string{"log:line 0", "log:line 1", "log:line 2", "log:line 3", "log:line 4", "warn:... 45 more log lines dropped"}, allLogs(steps[:1]))
	assert.Equal(t, []string{"log:after"}, allLogs(steps[1:]), "the bound is per step")

	// A failed step carries its lines too.
	steps = shapedRun(t, `console.log("before"); null.x`, snapshot.Header{Console: snapshot.ConsoleCollect}, limits, echoArgs)
	require.Error(t, steps[0].Err)
	assert.Equal(t, []string{"log:before"}, allLogs(steps))
}

func TestConsoleFloodEndsWithTheBudget(t *testing.T) {
	limits := budgetLimits()
	steps := shapedRun(t, `for (;;) console.log("x".repeat(1000))`, snapshot.Header{Console: snapshot.ConsoleCollect}, limits, echoArgs)
	require.Error(t, steps[0].Err)
	assert.Equal(t, ErrInstructionBudget, steps[0].Err)
	logs := allLogs(steps)
	require.NotEmpty(t, logs)
	assert.True(t, strings.HasPrefix(logs[len(logs)-1], "warn:... "), "the flood is cut at max_log_bytes")
	var n uint64
	for _, l := range steps[0].Logs {
		if l.Level == "log" {
			n += uint64(len(l.Text))
		}
	}
	assert.LessOrEqual(t, n, limits.MaxLogBytes)
}

func TestEntryCall(t *testing.T) {
	src := `async ({ owner, repo }) => {
	  const issues = await github.list({ owner, repo });
	  const counts = await Promise.all(issues.map((i) => github.count(i)));
	  return { owner, total: counts.reduce((a, b) => a + b[1], 0), same: typeof repo };
	}`
	h := snapshot.Header{Capabilities: []string{"github.count", "github.list"}, Entry: snapshot.EntryCall,
		Inputs: []value.Member{value.M("owner", value.String("o")), value.M("repo", value.String("r"))}}
	answer := func(c snapshot.HostCall) Payload {
		if c.Capability == "github.list" {
			return ret(value.Array(value.Number(1), value.Number(2), value.Number(3)))
		}
		return ret(value.Array(value.String("n"), value.Number(c.Args[0].Num*2)))
	}
	steps := shapedRun(t, src, h, policy.DefaultLimits(), answer)
	last := steps[len(steps)-1]
	require.NoError(t, last.Err)
	assert.Equal(t, `{"owner":"o","total":12,"same":"string"}`, plain(last.Value))

	// A plain function: its calls are synchronous, as top-level code's.
	steps = shapedRun(t, `function main(input) { return get(input.n) + 1; }; main`, snapshot.Header{Capabilities: []string{"get"},
		Entry: snapshot.EntryCall, Inputs: []value.Member{value.M("n", value.Number(4))}}, policy.DefaultLimits(),
		func(c snapshot.HostCall) Payload { return ret(value.Number(c.Args[0].Num * 10)) })
	require.Len(t, steps, 2)
	assert.True(t, steps[0].Calls[0].Sync)
	assert.Equal(t, "41", plain(steps[1].Value))

	// Top-level await before the function: it is awaited first.
	steps = shapedRun(t, `const base = await get(1); async (i) => base + i.k`, snapshot.Header{Capabilities: []string{"get"},
		Entry: snapshot.EntryCall, Inputs: []value.Member{value.M("k", value.Number(5))}}, policy.DefaultLimits(),
		func(c snapshot.HostCall) Payload { return ret(value.Number(100)) })
	assert.Equal(t, "105", plain(steps[len(steps)-1].Value))

	// The inputs object holds the same values as the globals.
	steps = shapedRun(t, `(i) => [i.o === o, Object.keys(i).join(), Object.getPrototypeOf(i) === Object.prototype]`, snapshot.Header{Entry: snapshot.EntryCall,
		Inputs: []value.Member{value.M("o", value.Object(value.M("k", value.Number(1)))), value.M("z", value.Null())}}, policy.DefaultLimits(), echoArgs)
	assert.Equal(t, `[true,"o,z",true]`, plain(steps[0].Value))
}

func TestEntryCallNeedsAFunction(t *testing.T) {
	for src, got := range map[string]string{
		`1`: "number", `"s"`: "string", `null`: "object", `({})`: "object", `undefined`: "undefined",
		`Symbol()`: "symbol", `1n`: "bigint", `true`: "boolean", `Promise.resolve(3)`: "number", `var x = 1;`: "undefined",
	} {
		steps := shapedRun(t, src, snapshot.Header{Entry: snapshot.EntryCall}, policy.DefaultLimits(), echoArgs)
		require.Error(t, steps[0].Err, src)
		assert.Equal(t, fmt.Sprintf("Runtime: TypeError: program did not evaluate to a function (got %s)", got), steps[0].Err.Error(), src)
	}
	steps := shapedRun(t, `async () => { throw new RangeError("bad") }`, snapshot.Header{Entry: snapshot.EntryCall}, policy.DefaultLimits(), echoArgs)
	require.Error(t, steps[0].Err)
	assert.True(t, strings.HasPrefix(steps[0].Err.Error(), "Runtime: RangeError: bad\n  at "), steps[0].Err.Error())
}

// plain writes a value as JavaScript-ish JSON, for short expectations.
func plain(v value.Value) string {
	var b strings.Builder
	var walk func(v value.Value)
	walk = func(v value.Value) {
		switch v.Kind {
		case value.KindArray:
			b.WriteByte('[')
			for i, e := range v.Elems {
				if i > 0 {
					b.WriteByte(',')
				}
				walk(e)
			}
			b.WriteByte(']')
		case value.KindObject:
			b.WriteByte('{')
			for i, m := range v.Members {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "%q:", m.Key)
				walk(m.Value)
			}
			b.WriteByte('}')
		case value.KindString:
			fmt.Fprintf(&b, "%q", v.Str)
		case value.KindNumber:
			fmt.Fprintf(&b, "%v", v.Num)
		case value.KindBool:
			fmt.Fprintf(&b, "%v", v.Bool)
		case value.KindNull:
			b.WriteString("null")
		default:
			b.WriteString("undefined")
		}
	}
	walk(v)
	return b.String()
}

// An error's stack in a console line shows frames as tracebacks do: the
// guest's own positions, no sidecar frame.
func TestConsoleErrorStacks(t *testing.T) {
	h := snapshot.Header{Console: snapshot.ConsoleCollect, Capabilities: []string{"get"}}
	steps := shapedRun(t, "function f() { return new TypeError('boom') }\nconsole.log(f()); [1].map(() => console.error({ e: f() }));",
		h, policy.DefaultLimits(), echoArgs)
	assert.Equal(t, []string{"log:TypeError: boom\n    at f (1:23)\n    at <script> (2:14)",
		"error:{\n  e: TypeError: boom\n      at f (1:23)\n      at <anonymous> (2:53)\n      at <script> (2:26)\n}"}, allLogs(steps))
	// With top-level await the program runs wrapped; positions are still
	// the guest's own.
	steps = shapedRun(t, "await get(1);\nconsole.log(new Error('x'));", h, policy.DefaultLimits(), echoArgs)
	assert.Equal(t, []string{"log:Error: x\n    at <script> (2:13)"}, allLogs(steps))
}
