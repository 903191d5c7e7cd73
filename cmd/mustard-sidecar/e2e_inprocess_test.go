package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// inproc drives a protocol.Session directly, to look at what the wire
// cannot show: goroutines and the resume counters.
type inproc struct {
	t  *testing.T
	s  *protocol.Session
	id uint64
}

func newInproc(t *testing.T, opts protocol.Options) *inproc {
	s := protocol.NewSession(opts)
	t.Cleanup(s.Close)
	return &inproc{t: t, s: s}
}

// call sends one binary-transport request and returns the decoded header.
func (p *inproc) call(method string, payload []byte, kv ...any) (map[string]any, []byte) {
	p.t.Helper()
	p.id++
	req := map[string]any{"protocol_version": 2, "id": p.id, "method": method}
	for i := 0; i < len(kv); i += 2 {
		req[kv[i].(string)] = kv[i+1]
	}
	hdr, err := json.Marshal(req)
	require.NoError(p.t, err)
	resp, err := p.s.Handle(hdr, payload)
	require.NoError(p.t, err)
	var out map[string]any
	d := json.NewDecoder(bytes.NewReader(resp.Header))
	d.UseNumber()
	require.NoError(p.t, d.Decode(&out))
	require.Equal(p.t, true, out["ok"], "%s", resp.Header)
	return out, resp.Payload
}

func (p *inproc) compile(src string) string {
	p.t.Helper()
	out, _ := p.call("compile", nil, "source", src)
	return out["result"].(map[string]any)["program_id"].(string)
}

// ipStep is a start/resume result: snapshot id and bytes when suspended,
// the value's JSON when completed.
type ipStep struct {
	snapID, policyID, value string
	snap                    []byte
}

func (p *inproc) step(out map[string]any, payload []byte) ipStep {
	res := out["result"].(map[string]any)
	st := res["step"].(map[string]any)
	if st["type"] == "completed" {
		return ipStep{value: hosttest.JSON(st["value"])}
	}
	return ipStep{snapID: res["snapshot_id"].(string), policyID: res["policy_id"].(string), snap: append([]byte(nil), payload...)}
}

func (p *inproc) start(programID string, caps ...string) ipStep {
	p.t.Helper()
	return p.step(p.call("start", nil, "program_id", programID, "options", options(caps, nil)))
}

func (p *inproc) resumeCached(s ipStep, v any) ipStep {
	p.t.Helper()
	return p.step(p.call("resume", nil, "snapshot_id", s.snapID, "policy_id", s.policyID,
		"auth", hosttest.Auth(hostKey, s.snapID), "payload", valuePayload(v)))
}

func (p *inproc) resumeRaw(s ipStep, caps []string, v any) ipStep {
	p.t.Helper()
	return p.step(p.call("resume", s.snap, "policy", hosttest.Policy(hostKey, s.snapID, caps, nil), "payload", valuePayload(v)))
}

// A hot resume continues the parked execution without replaying; resuming
// a snapshot whose execution is no longer parked (consumed, evicted, or in
// another process) replays it, with identical results.
func TestInProcessHotResumeDoesNotReplay(t *testing.T) {
	t.Parallel()
	const src = `const a = fetch_data(1); const b = fetch_data(2); a + b;`
	caps := []string{"fetch_data"}
	p := newInproc(t, protocol.Options{})
	programID := p.compile(src)
	s1 := p.start(programID, "fetch_data")
	require.Equal(t, protocol.Stats{}, resumeStats(p.s))

	s2 := p.resumeCached(s1, num(1))
	require.Equal(t, protocol.Stats{HotResumes: 1}, resumeStats(p.s), "cached id with a parked execution")
	require.Equal(t, `{"Number":{"Finite":3.0}}`, p.resumeCached(s2, num(2)).value)
	require.Equal(t, protocol.Stats{HotResumes: 2}, resumeStats(p.s))

	// s1's execution moved on: resuming it again replays, identically.
	again := p.resumeCached(s1, num(1))
	require.Equal(t, protocol.Stats{HotResumes: 2, Replays: 1}, resumeStats(p.s))
	require.Equal(t, s2, again)
	// The replay parked its execution, so raw bytes of s2 now resume hot.
	require.Equal(t, `{"Number":{"Finite":3.0}}`, p.resumeRaw(s2, caps, num(2)).value)
	require.Equal(t, protocol.Stats{HotResumes: 3, Replays: 1}, resumeStats(p.s))

	// A fresh session knows nothing: raw bytes replay.
	fresh := newInproc(t, protocol.Options{})
	require.Equal(t, s2, fresh.resumeRaw(s1, caps, num(1)))
	require.Equal(t, protocol.Stats{Replays: 1}, resumeStats(fresh.s))

	// Eviction from the continuation cache falls back to replay.
	small := newInproc(t, protocol.Options{MaxContinuations: 1})
	programID = small.compile(src)
	x, y := small.start(programID, "fetch_data"), small.start(programID, "fetch_data")
	require.Equal(t, 1, small.s.Parked())
	small.resumeCached(y, num(1))
	require.Equal(t, protocol.Stats{HotResumes: 1, EvictedExecutions: 1}, resumeStats(small.s))
	small.resumeCached(x, num(1))
	require.Equal(t, protocol.Stats{HotResumes: 1, Replays: 1, EvictedExecutions: 2}, resumeStats(small.s), "x was evicted by y, then y's by x's")
}

// abandonPrograms suspend in different guest states; an abandoned one must
// end even if guest code would rather not (finally, catch, loops).
var abandonPrograms = []string{
	`fetch_data(1);`,
	`const xs = []; for (let i = 0; i < 200; i++) xs.push({ i }); fetch_data(xs.length);`,
	`Promise.all([fetch_data(1), fetch_data(2), fetch_data(3)]);`,
	`async function f() { try { return await fetch_data(1); } finally { for (;;) {} } } f();`,
	`for (;;) { try { fetch_data(1); } catch (e) {} }`,
}

// waitGoroutines polls until at most n goroutines run or the deadline.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(exitTimeout)
	for runtime.NumGoroutine() > n && time.Now().Before(deadline) {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), n, "goroutines left:\n%s", goroutineDump())
}

// resumeStats are a session's resume counters, without the compile
// counter these tests do not look at.
func resumeStats(s *protocol.Session) protocol.Stats {
	st := s.Stats()
	st.Compiles = 0
	return st
}

func goroutineDump() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

// Abandoning 1,000 suspended executions leaks nothing: the continuation
// cache (64) evicts continuously, each eviction ends its goroutine, and
// Close ends the rest and the engine's own goroutines (realm pre-builder,
// heap watchdog). Not parallel: it counts the process's goroutines.
func TestInProcessAbandonedExecutionsDoNotLeak(t *testing.T) {
	base := runtime.NumGoroutine()
	s := protocol.NewSession(protocol.Options{})
	p := &inproc{t: t, s: s}
	var ids []string
	for _, src := range abandonPrograms {
		ids = append(ids, p.compile(src))
	}
	// The engine's two goroutines start with the first execution.
	p.resumeCached(p.start(ids[0], "fetch_data"), num(1))
	running := base + 2
	for i := 0; i < 1000; i++ {
		st := p.start(ids[i%len(ids)], "fetch_data")
		require.NotEmpty(t, st.snapID, "start %d did not suspend", i)
		if i%100 == 99 {
			// One parked goroutine per parked execution, no more.
			require.Equal(t, 64, s.Parked())
			waitGoroutines(t, running+64)
		}
	}
	s.Close()
	require.Equal(t, 0, s.Parked())
	waitGoroutines(t, base)
}

// The binary's peak memory stays bounded while 1,000 suspended executions
// are abandoned, and the oldest snapshot still resumes (by replay).
func TestE2EAbandonedExecutionsBoundedMemory(t *testing.T) {
	t.Parallel()
	// Observed: under 40 MiB. Keeping all 1,000 executions parked would take
	// about 240 MiB of heap. A race-instrumented binary needs a few times more.
	bound := int64(128 << 20)
	if hosttest.RaceEnabled {
		bound *= 4
	}
	h := newHost(t, transports[0])
	var programIDs []string
	for _, src := range abandonPrograms {
		id, _ := h.compile(src)
		programIDs = append(programIDs, id)
	}
	const n = 1000
	sendErr := make(chan error, 1)
	go func() {
		for i := 0; i < n; i++ {
			req := map[string]any{"protocol_version": 2, "id": 1000 + i, "method": "start",
				"program_id": programIDs[i%len(programIDs)], "options": options(fetchCaps, nil)}
			if err := h.sc.Send(req, nil, ""); err != nil {
				sendErr <- err
				return
			}
		}
		sendErr <- nil
	}()
	var first, last step
	for i := 0; i < n; i++ {
		resp, err := h.sc.Recv()
		require.NoError(t, err)
		st := stepOf(t, resp)
		require.Equal(t, "suspended", st.Type)
		if i == 0 {
			first = st
		}
		last = st
	}
	require.NoError(t, <-sendErr)

	hwm := vmHWM(t, h.sc.Pid())
	t.Logf("VmHWM after %d abandoned suspensions: %d MiB", n, hwm>>20)
	require.Less(t, hwm, bound)

	require.Equal(t, `{"Number":{"Finite":7.0}}`, stepOf(t, h.resumeCached(first.SnapshotID, first.PolicyID, valuePayload(num(7)))).Value)
	require.Equal(t, "suspended", stepOf(t, h.resumeCached(last.SnapshotID, last.PolicyID, valuePayload(num(7)))).Type)
}

// vmHWM reads a process's peak resident set size.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		var kb int64
		if _, err := fmt.Sscanf(string(line), "VmHWM: %d kB", &kb); err == nil {
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// A host error's name, message and code reach guest code exactly, unpaired
// surrogates included, whether the resume is hot or replays the journal.
func TestInProcessHostErrorKeepsUnpairedSurrogates(t *testing.T) {
	t.Parallel()
	const src = `let r; try { fetch_data(1); } catch (e) {
  r = [e.name.charCodeAt(0), e.message.charCodeAt(1), e.code.charCodeAt(0), e.name.length]; }
fetch_data(2); r;`
	caps := []string{"fetch_data"}
	errPayload := map[string]any{"type": "error", "error": map[string]any{
		"name": json.RawMessage(`"\ud800"`), "message": json.RawMessage(`"x\udc00"`), "code": json.RawMessage(`"\udfff"`)}}
	want := `{"Array":[{"Number":{"Finite":55296.0}},{"Number":{"Finite":56320.0}},{"Number":{"Finite":57343.0}},{"Number":{"Finite":1.0}}]}`

	p := newInproc(t, protocol.Options{})
	s1 := p.start(p.compile(src), "fetch_data")
	s2 := p.step(p.call("resume", nil, "snapshot_id", s1.snapID, "policy_id", s1.policyID,
		"auth", hosttest.Auth(hostKey, s1.snapID), "payload", errPayload))
	require.Equal(t, want, p.resumeCached(s2, num(0)).value, "hot")

	// The journal keeps the strings: a fresh session replaying s2 agrees.
	fresh := newInproc(t, protocol.Options{})
	require.Equal(t, want, fresh.resumeRaw(s2, caps, num(0)).value, "cold")
}

// Resuming with a different policy gives the same outcome hot (the parked
// execution continues) and cold (a fresh session replays the journal): the
// journaled past runs under the limits it ran under, the future under the
// resume's, and budgets and memory count the whole execution. Not
// parallel: the heap figure is the process's, so executions of other tests
// running at the same time would blur it.
func TestInProcessPolicyChangeHotEqualsCold(t *testing.T) {
	const deep = `function f(n) { return n === 0 ? fetch_data(1) : f(n - 1) + 0 }
function g(n) { return n === 0 ? 0 : g(n - 1) + 0 }
`
	const loops = `let s = 0; for (let i = 0; i < 10000; i++) s += i;
fetch_data(1); for (let i = 0; i < 10000; i++) s += i; s`
	const objects = `const a = []; for (let i = 0; i < 1000; i++) a.push({ i });
fetch_data(1); for (let i = 0; i < 1000; i++) a.push({ i }); a.length`
	// 40,000 strings of about 105 bytes in the long suites, 20,000 in the
	// default run: over a heap limit of 1 MiB and under one of 32 MiB either way.
	n := longtest.Pick(20000, 40000)
	kept := fmt.Sprintf(`const keep = []; for (let i = 0; i < %d; i++) keep.push('x'.repeat(100) + i);
fetch_data(1); keep.length`, n)
	garbage := fmt.Sprintf(`let s = ''; for (let i = 0; i < %d; i++) s = 'x'.repeat(100) + i;
fetch_data(1); s.length`, n)
	lim := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		name          string
		src           string
		start, resume map[string]any
		want          string // the resume's outcome: a value's JSON or an error
	}{
		{"depth: past deeper than the new limit", deep + "f(200)", nil, lim("call_depth_limit", 50), `{"Number":{"Finite":1.0}}`},
		{"depth: future deeper than the new limit", deep + "f(10); g(60)", nil, lim("call_depth_limit", 50), "Limit: call depth limit exceeded"},
		{"depth: past under a stricter limit", deep + "f(40); g(200)", lim("call_depth_limit", 50), nil, `{"Number":{"Finite":0.0}}`},
		{"instructions: future over the new budget", loops, nil, lim("instruction_budget", 200000), "Limit: instruction budget exhausted"},
		{"instructions: past over the new budget", loops, nil, lim("instruction_budget", 100000), "Limit: instruction budget exhausted"},
		{"instructions: room for both", loops, nil, lim("instruction_budget", 300000), `{"Number":{"Finite":99990000.0}}`},
		{"allocations: future over the new budget", objects, nil, lim("allocation_budget", 1500), "Limit: allocation budget exhausted"},
		{"allocations: past over the new budget", objects, nil, lim("allocation_budget", 500), "Limit: allocation budget exhausted"},
		{"allocations: room for both", objects, nil, lim("allocation_budget", 3000), `{"Number":{"Finite":2000.0}}`},
		{"heap: kept memory over the new limit", kept, nil, lim("heap_limit_bytes", 1<<20), "Limit: heap limit exceeded"},
		{"heap: kept memory under a larger limit", kept, nil, lim("heap_limit_bytes", 32<<20), fmt.Sprintf(`{"Number":{"Finite":%d.0}}`, n)},
		{"heap: garbage does not count", garbage, nil, lim("heap_limit_bytes", 1<<20), `{"Number":{"Finite":105.0}}`},
		{"host calls: none allowed any more", "fetch_data(1); (async () => fetch_data(2))(); 3", nil, lim("max_outstanding_host_calls", 0), "Limit: outstanding host-call limit exhausted"},
	}
	caps := []string{"fetch_data"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outcome := func(p *inproc, s ipStep) string {
				p.id++
				hdr, err := json.Marshal(map[string]any{"protocol_version": 2, "id": p.id, "method": "resume",
					"policy": hosttest.Policy(hostKey, s.snapID, caps, c.resume), "payload": valuePayload(num(1))})
				require.NoError(t, err)
				resp, err := p.s.Handle(hdr, s.snap)
				require.NoError(t, err)
				var out map[string]any
				d := json.NewDecoder(bytes.NewReader(resp.Header))
				d.UseNumber()
				require.NoError(t, d.Decode(&out))
				if out["ok"] != true {
					return out["error"].(string)
				}
				st := out["result"].(map[string]any)["step"].(map[string]any)
				require.Equal(t, "completed", st["type"], "%s", resp.Header)
				return hosttest.JSON(st["value"])
			}
			hot := newInproc(t, protocol.Options{})
			opts := options(caps, nil)
			if c.start != nil {
				opts["limits"] = c.start
			}
			p := hot.step(hot.call("start", nil, "program_id", hot.compile(c.src), "options", opts))
			require.NotEmpty(t, p.snapID, "the program must suspend")
			require.Equal(t, c.want, outcome(hot, p), "hot")
			if hot.s.Stats().Replays == 0 {
				require.Equal(t, 1, hot.s.Stats().HotResumes, "the hot run continued the parked execution")
			}
			cold := newInproc(t, protocol.Options{})
			require.Equal(t, c.want, outcome(cold, p), "cold")
			require.Equal(t, protocol.Stats{Replays: 1}, resumeStats(cold.s))
		})
	}
}

// Memory an execution keeps across resumes counts: a program that keeps
// 1.5 MB more at every suspension fails with the heap limit (8 MiB) a few
// resumes in, although no single segment grows by the limit. Not parallel:
// the heap figure is the process's.
func TestInProcessKeptMemoryIsCumulative(t *testing.T) {
	const src = `const keep = [];
for (let k = 0; k < 20; k++) { keep.push('x'.repeat(15e5) + k); fetch_data(k); }
keep.length`
	p := newInproc(t, protocol.Options{})
	s := p.start(p.compile(src), "fetch_data")
	for k := 1; k <= 20; k++ {
		p.id++
		hdr, err := json.Marshal(map[string]any{"protocol_version": 2, "id": p.id, "method": "resume",
			"snapshot_id": s.snapID, "policy_id": s.policyID, "auth": hosttest.Auth(hostKey, s.snapID), "payload": valuePayload(num(0))})
		require.NoError(t, err)
		resp, err := p.s.Handle(hdr, nil)
		require.NoError(t, err)
		var out map[string]any
		require.NoError(t, json.Unmarshal(resp.Header, &out))
		if out["ok"] != true {
			require.Equal(t, "Limit: heap limit exceeded", out["error"])
			t.Logf("failed at resume %d, holding about %.1f MB", k, 1.5*float64(k))
			// At resume k the execution holds k strings of 1.5 MB and builds
			// one more through a 1.5 MB temporary: over 8 MiB from k = 4.
			// The count may forget up to one limit of a segment's growth when
			// a collection reclaims older garbage (docs/limits.md), and an
			// eighth of the limit between confirmations: on a busy machine
			// the failure can come up to six resumes later, never sooner.
			require.GreaterOrEqual(t, k, 4)
			require.LessOrEqual(t, k, 10)
			return
		}
		s = p.step(out, resp.Payload)
		require.NotEmpty(t, s.snapID, "resume %d completed: kept memory was not counted", k)
	}
	t.Fatal("20 resumes kept 30 MB under an 8 MiB limit")
}
