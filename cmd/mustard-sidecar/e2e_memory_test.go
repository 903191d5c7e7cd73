package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// The memory budget end to end (docs/limits.md, "The memory budget"): the
// attacks on the process's memory, each in a fresh process at default
// settings. Every request is answered (with its result, an eviction the
// host recovers from as the contract says, or a clear refusal), the
// process's peak RSS (VmHWM) stays under 256 MiB, and it then still
// compiles and runs 1 + 1.
//
// The soak (TestE2EMemorySoak) runs a short mix by default; for the long
// version: go test -run TestE2EMemorySoak -mustard.soak=10m ./cmd/mustard-sidecar/

var memSoak = flag.Duration("mustard.soak", 0, "run TestE2EMemorySoak for this long (0: the short version)")

const (
	memLimitError = "Limit: source too large to compile within the memory budget"
	memLimitCode  = "limit_memory_budget"
)

// memHost is a sidecar of its own, at default settings.
func memHost(t *testing.T) *host {
	t.Helper()
	return newHost(t, transports[0])
}

// memCheck logs the process's peak RSS, checks it against the bound, and
// checks that the process still compiles and runs 1 + 1.
func (h *host) memCheck(what string) int64 {
	h.t.Helper()
	hwm := vmHWM(h.t, h.sc.Pid())
	h.t.Logf("%s: VmHWM %.1f MiB", what, float64(hwm)/(1<<20))
	if !limRace {
		assert.Less(h.t, hwm, limRSS, "%s: peak RSS", what)
	}
	id, _ := h.compile("1 + 1")
	resp := h.do(h.req("start", "program_id", id, "options", options(nil, nil)), nil, "")
	require.Equal(h.t, `{"Number":{"Finite":2.0}}`, stepOf(h.t, resp).Value)
	return hwm
}

// memResume resumes a suspension: by its cached ids, or, when the process
// no longer holds the snapshot, from its bytes, as a host does. It
// reports whether it had to send the bytes.
func (h *host) memResume(st step, caps []string, payload map[string]any) (hosttest.Response, bool) {
	h.t.Helper()
	resp := h.resumeCached(st.SnapshotID, st.PolicyID, payload)
	if code := resp.Header["error_code"]; !resp.OK() && (code == "unknown_snapshot_id" || code == "evicted_snapshot_id") {
		return h.resumeRaw(st.Snapshot, caps, payload), true
	}
	return resp, false
}

// Attack: 64 parked executions of 6.5 MB each, under the default heap
// limit (414 MiB of RSS before the budget). The budget keeps what fits
// and evicts the least recently used; every one resumes with the value a
// hot resume gives, from its bytes if it was evicted.
func TestE2EMemoryParkedExecutions(t *testing.T) {
	if limRace {
		t.Skip("slow under the race detector, and its bounds are the plain binary's: .ci/run runs it without -race")
	}
	h := memHost(t)
	id, _ := h.compile(`const keep = 'x'.repeat(6.5e6); const a = fetch_data(n); keep.length + a;`)
	var parked []step
	for i := range 64 {
		resp := h.do(h.req("start", "program_id", id, "options", options(fetchCaps, map[string]any{"n": num(float64(i))})), nil, "")
		st := stepOf(t, resp)
		require.Equal(t, "suspended", st.Type, "start %d", i)
		parked = append(parked, st)
	}
	h.memCheck("64 executions of 6.5 MB parked")
	want := `{"Number":{"Finite":6500007.0}}`
	// The newest is parked: resumed by id. The oldest was evicted for
	// memory: its id resumes by a replay of the cached snapshot, or, if
	// that was evicted too, from its bytes. Same value.
	resp, _ := h.memResume(parked[63], fetchCaps, valuePayload(num(7)))
	require.Equal(t, want, stepOf(t, resp).Value, "hot")
	resp = h.resumeRaw(parked[0].Snapshot, fetchCaps, valuePayload(num(7)))
	require.Equal(t, want, stepOf(t, resp).Value, "cold, from the bytes")
	cold := 0
	for i, st := range parked[1:63] {
		resp, raw := h.memResume(st, fetchCaps, valuePayload(num(7)))
		require.Equal(t, want, stepOf(t, resp).Value, "execution %d", i+1)
		if raw {
			cold++
		}
	}
	t.Logf("%d of 62 resumed from their bytes (their snapshots evicted too)", cold)
	h.memCheck("after every resume")
}

// memProgram is a compiled program as a host keeps it: its id and bytes.
type memProgram struct {
	id    string
	bytes []byte
}

// memStart starts a program by its id, or, when the process no longer
// holds it, from its bytes, as a host does.
func (h *host) memStart(p memProgram, opts map[string]any) hosttest.Response {
	h.t.Helper()
	resp := h.do(h.req("start", "program_id", p.id, "options", opts), nil, "")
	if code := resp.Header["error_code"]; !resp.OK() && (code == "unknown_program_id" || code == "evicted_program_id") {
		return h.do(h.req("start", "options", opts), p.bytes, "")
	}
	return resp
}

// memSources are distinct sources of about n bytes of the given shapes.
func memSource(shape string, i, n int) string {
	head := fmt.Sprintf("var v%d = %d;\n", i, i)
	switch shape {
	case "arrow functions":
		return head + strings.Repeat("()=>0,", (n-len(head))/6) + "0;"
	case "small functions":
		var b strings.Builder
		b.WriteString(head)
		for j := 0; b.Len() < n; j++ {
			fmt.Fprintf(&b, "function f%d_%d(a, b) { return a * %d + b; }\n", i, j, j)
		}
		b.WriteString("0;")
		return b.String()
	case "a data literal":
		var b strings.Builder
		b.WriteString(head + "const data = [")
		for j := 0; b.Len() < n; j++ {
			fmt.Fprintf(&b, `{"id":%d,"name":"item %d","tags":["a","b"]},`, j, j)
		}
		b.WriteString("]; data.length;")
		return b.String()
	}
	panic(shape)
}

// Attack: 19 compiles of distinct 480 KB sources (334 MiB of RSS before
// the budget: programs were weighed by their source, and compile to many
// times that). Each compiles, or is refused before it takes the memory;
// the programs the budget evicted are unknown by id and start from their
// bytes.
func TestE2EMemoryCompiles(t *testing.T) {
	if limRace {
		t.Skip("slow under the race detector, and its bounds are the plain binary's: .ci/run runs it without -race")
	}
	for _, shape := range []string{"arrow functions", "small functions", "a data literal"} {
		t.Run(shape, func(t *testing.T) {
			h := memHost(t)
			type compiled struct {
				id    string
				bytes []byte
			}
			var progs []compiled
			refused := 0
			for i := range 19 {
				resp := h.do(h.req("compile", "source", memSource(shape, i, 480_000)), nil, "")
				if !resp.OK() {
					require.Equal(t, memLimitError, resp.Error())
					require.Equal(t, memLimitCode, resp.Header["error_code"])
					refused++
					continue
				}
				progs = append(progs, compiled{resp.Result()["program_id"].(string), resp.Payload})
			}
			t.Logf("%s: %d compiled, %d refused", shape, len(progs), refused)
			h.memCheck("19 compiles of 480 KB of " + shape)
			evicted := 0
			for _, p := range progs {
				resp := h.do(h.req("start", "program_id", p.id, "options", options(nil, nil)), nil, "")
				if !resp.OK() {
					require.Equal(t, fmt.Sprintf("unknown program_id `%s`", p.id), resp.Error())
					evicted++
					resp = h.do(h.req("start", "options", options(nil, nil)), p.bytes, "")
				}
				require.True(t, resp.OK(), "%s", limTrunc(resp.Raw))
			}
			t.Logf("%d of %d programs evicted, started from their bytes", evicted, len(progs))
			h.memCheck("after starting each")
		})
	}
}

// Attack: 150 cached snapshots of 880 KB inputs beside 60 MiB staged
// (267 MiB of RSS before the budget). The stage is held; the snapshots
// and parked executions the budget cannot keep are evicted, and resume
// from their bytes.
func TestE2EMemorySnapshotsAndStages(t *testing.T) {
	if limRace {
		t.Skip("slow under the race detector, and its bounds are the plain binary's: .ci/run runs it without -race")
	}
	h := memHost(t)
	chunk := make([]byte, 960<<10)
	staged := 0
	for staged+len(chunk) <= 60<<20 {
		resp := h.mustOK(h.do(h.req("stage", "stage_id", "big", "offset", staged), chunk, "bytes_base64"))
		staged += len(chunk)
		require.Equal(t, json.Number(strconv.Itoa(staged)), resp.Result()["total_bytes"])
	}
	id, _ := h.compile(`const a = fetch_data(1); inp.length + a;`)
	var sts []step
	for i := range 150 {
		inp := fmt.Sprintf("%06d", i) + strings.Repeat("y", 880_000-6)
		resp := h.do(h.req("start", "program_id", id, "options", options(fetchCaps, map[string]any{"inp": str(inp)})), nil, "")
		st := stepOf(t, resp)
		require.Equal(t, "suspended", st.Type)
		sts = append(sts, st)
	}
	h.memCheck("150 snapshots of 880 KB inputs and 60 MiB staged")
	want := `{"Number":{"Finite":880002.0}}`
	cold := 0
	for _, i := range []int{149, 148, 100, 50, 0} {
		resp, raw := h.memResume(sts[i], fetchCaps, valuePayload(num(2)))
		require.Equal(t, want, stepOf(t, resp).Value, "execution %d", i)
		if raw {
			cold++
		}
	}
	t.Logf("%d of 5 resumed from their bytes", cold)
	// The stage is still there, whole: continuing it at its length works.
	resp := h.mustOK(h.do(h.req("stage", "stage_id", "big", "offset", staged), []byte("z"), "bytes_base64"))
	require.Equal(t, json.Number(strconv.Itoa(staged+1)), resp.Result()["total_bytes"])
	h.memCheck("after the resumes")
}

// memPeakShapes are sources up to the largest a compile accepts (4 MiB,
// staged), of the shapes that take the most memory to compile, and two
// that take little.
var memPeakShapes = []struct {
	name    string
	src     func(n int) string
	refused bool // at default settings
}{
	{"arrow functions", func(n int) string { return "0," + strings.Repeat("()=>0,", (n-4)/6) + "0" }, true},
	{"arrow function statements", func(n int) string { return strings.Repeat("a=>0;", n/5) }, true},
	{"object literals", func(n int) string { return "[" + strings.Repeat("{a:1,b:[2]},", (n-2)/12) + "]" }, true},
	{"nested arrays", func(n int) string { return strings.Repeat("[[[[[[1]]]]]];", n/14) }, true},
	{"template literals", func(n int) string { return strings.Repeat("`a${a}b${b}c`;", n/14) }, true},
	{"tagged templates", func(n int) string { return strings.Repeat("f`a${b}`;", n/9) }, true},
	{"regular expression literals", func(n int) string { return strings.Repeat("/a[b]c/g;", n/9) }, true},
	{"identifiers", func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n-16; i++ {
			b.WriteString("a" + strconv.Itoa(i) + ";")
		}
		return b.String()
	}, true},
	{"a string literal", func(n int) string { return "'" + strings.Repeat("s", n-2) + "'" }, false},
	{"a comment", func(n int) string { return "/*" + strings.Repeat("c", n-5) + "*/1" }, false},
}

// Attack: the compile itself. A 1 MB source of arrow functions compiled at
// 184 MiB of RSS before the budget (346 MiB in another measurement); at
// the 4 MiB a staged source may have, the dense shapes took up to 626 MiB. Each is refused, in a fresh process,
// before the parse has taken more than the budget; the sparse ones
// compile.
func TestE2EMemoryCompilePeak(t *testing.T) {
	if limRace {
		t.Skip("slow under the race detector, and its bounds are the plain binary's: .ci/run runs it without -race")
	}
	t.Run("1 MB of arrow functions", func(t *testing.T) {
		h := memHost(t)
		// Staged: in JSON each > is escaped, and the request would pass
		// 1 MiB.
		src := strings.Repeat("()=>0,", 170_000) + "0"
		h.stageAll("src", []byte(src), 960<<10)
		began := time.Now()
		resp := h.do(h.req("compile", "source_stage_id", "src"), nil, "")
		t.Logf("%q in %v, VmHWM %.1f MiB", resp.Error(), time.Since(began).Round(time.Millisecond), float64(vmHWM(t, h.sc.Pid()))/(1<<20))
		require.Equal(t, memLimitError, resp.Error())
		require.Equal(t, memLimitCode, resp.Header["error_code"])
		h.memCheck("1 MB of arrow functions")
	})
	for _, c := range memPeakShapes {
		t.Run("4 MiB of "+c.name+", staged", func(t *testing.T) {
			h := memHost(t)
			src := c.src(4 << 20)
			require.LessOrEqual(t, len(src), 4<<20)
			h.stageAll("src", []byte(src), 960<<10)
			began := time.Now()
			resp := h.do(h.req("compile", "source_stage_id", "src"), nil, "")
			t.Logf("%d bytes: ok %v %q in %v, VmHWM %.1f MiB", len(src), resp.OK(), resp.Error(), time.Since(began).Round(time.Millisecond), float64(vmHWM(t, h.sc.Pid()))/(1<<20))
			if c.refused {
				require.Equal(t, memLimitError, resp.Error())
				require.Equal(t, memLimitCode, resp.Header["error_code"])
			} else {
				require.True(t, resp.OK(), "%s", limTrunc(resp.Raw))
			}
			limInTime(t, time.Since(began))
			h.memCheck(fmt.Sprintf("4 MiB of %s", c.name))
		})
	}
}

// Evicted for memory, a parked execution resumes from its snapshot bytes
// with exactly what its hot resume gives: the next step and the same
// snapshot bytes, then the same value.
func TestE2EMemoryEvictedResumesAsHot(t *testing.T) {
	if limRace {
		t.Skip("slow under the race detector, and its bounds are the plain binary's: .ci/run runs it without -race")
	}
	h := memHost(t)
	id, _ := h.compile(`const keep = 'k'.repeat(6e6); const a = fetch_data(n); const b = fetch_data(a + 1); [keep.length, a, b, Math.random()];`)
	first := stepOf(t, h.do(h.req("start", "program_id", id, "options", options(fetchCaps, map[string]any{"n": num(0)})), nil, ""))
	// Twin of the first, resumed hot as the reference: the same program,
	// inputs and answers from its own snapshot bytes, in a second process
	// where nothing is evicted.
	ref := memHost(t)
	refStep := stepOf(t, ref.resumeRaw(first.Snapshot, fetchCaps, valuePayload(num(5))))
	refLast := stepOf(t, ref.resumeCached(refStep.SnapshotID, refStep.PolicyID, valuePayload(num(9))))
	// Push the first out: 40 more of 6 MB.
	for i := 1; i <= 40; i++ {
		stepOf(t, h.do(h.req("start", "program_id", id, "options", options(fetchCaps, map[string]any{"n": num(float64(i))})), nil, ""))
	}
	resp, raw := h.memResume(first, fetchCaps, valuePayload(num(5)))
	st := stepOf(t, resp)
	t.Logf("the first execution resumed from its bytes: %v", raw)
	require.Equal(t, refStep.SnapshotID, st.SnapshotID, "the same next snapshot as the hot resume")
	require.Equal(t, refStep.Args, st.Args)
	last := stepOf(t, h.resumeCached(st.SnapshotID, st.PolicyID, valuePayload(num(9))))
	require.Equal(t, refLast.Value, last.Value)
	h.memCheck("after 41 executions of 6 MB")
}

// The soak: parked executions, compiled programs, cached snapshots and
// stages of the attacks' sizes, interleaved at random, in one process at
// default settings. Every request is answered as the contract says; the
// peak RSS is logged and stays under the bound.
func TestE2EMemorySoak(t *testing.T) {
	h := memHost(t)
	rng := rand.New(rand.NewPCG(7, 42)) // the same mix every run: before and after compare
	deadline := time.Now().Add(*memSoak)
	shortOps := 3000
	if limRace {
		shortOps = 300 // several times slower: the mix, not the count, is the test there
	}
	if !longtest.Enabled() {
		shortOps /= 10
	}
	holderID, holderBytes := h.compile(`const keep = 'x'.repeat(size); const a = fetch_data(n); const b = fetch_data(a); keep.length + a + b;`)
	smallID, smallBytes := h.compile(`const a = fetch_data(n); a * 2;`)
	holder := memProgram{holderID, holderBytes}
	small := memProgram{smallID, smallBytes}
	var parked []step
	var stats struct{ starts, resumes, cold, compiles, refused, stages, fetches int }
	began := time.Now()
	for op := 0; ; op++ {
		if *memSoak == 0 && op >= shortOps || *memSoak > 0 && time.Now().After(deadline) {
			break
		}
		switch p := rng.IntN(100); {
		case p < 45: // park an execution: small, 1 MB, 6.5 MB or with a 880 KB input
			var resp hosttest.Response
			n := num(float64(op))
			switch rng.IntN(4) {
			case 0:
				resp = h.memStart(small, options(fetchCaps, map[string]any{"n": n}))
			case 1:
				resp = h.memStart(holder, options(fetchCaps, map[string]any{"n": n, "size": num(1e6)}))
			case 2:
				resp = h.memStart(holder, options(fetchCaps, map[string]any{"n": n, "size": num(6.5e6)}))
			default:
				inp := strings.Repeat("i", 880_000) + strconv.Itoa(op)
				resp = h.memStart(small, options(fetchCaps, map[string]any{"n": n, "pad": str(inp)}))
			}
			st := stepOf(t, resp)
			require.Equal(t, "suspended", st.Type)
			parked = append(parked, st)
			stats.starts++
		case p < 75 && len(parked) > 0: // resume one, the recent ones more often
			i := len(parked) - 1 - min(len(parked)-1, int(rng.ExpFloat64()*20))
			st := parked[i]
			parked = append(parked[:i], parked[i+1:]...)
			resp, raw := h.memResume(st, fetchCaps, valuePayload(num(1)))
			next := stepOf(t, resp)
			if next.Type == "suspended" {
				parked = append(parked, next)
			}
			stats.resumes++
			if raw {
				stats.cold++
			}
		case p < 85: // compile a distinct source, up to 480 KB
			size := []int{2_000, 2_000, 20_000, 40_000, 200_000, 480_000}[rng.IntN(6)]
			shape := []string{"arrow functions", "small functions", "a data literal"}[rng.IntN(3)]
			resp := h.do(h.req("compile", "source", memSource(shape, op, size)), nil, "")
			if !resp.OK() {
				require.Equal(t, memLimitError, resp.Error())
				stats.refused++
			}
			stats.compiles++
		case p < 92: // stage up to 12 MiB, then drop it by resuming with it
			id := "s" + strconv.Itoa(rng.IntN(4))
			size := (1 + rng.IntN(12)) << 20
			h.stageAll(id, make([]byte, size), 960<<10)
			pol := hosttest.Policy(hostKey, sha256Hex(make([]byte, size)), fetchCaps, map[string]any{})
			resp := h.do(h.req("resume", "stage_id", id, "policy", pol, "payload", valuePayload(num(1))), nil, "")
			require.False(t, resp.OK(), "zeros resumed")
			stats.stages++
		default: // fetch a snapshot the process may still hold
			if len(parked) == 0 {
				continue
			}
			st := parked[rng.IntN(len(parked))]
			resp := h.do(h.req("snapshot", "snapshot_id", st.SnapshotID, "max_bytes", 960<<10), nil, "")
			if !resp.OK() {
				// The process held it: evicted since (unknown once
				// forgotten among many evictions).
				require.Contains(t, []any{"evicted_snapshot_id", "unknown_snapshot_id"}, resp.Header["error_code"], resp.Error())
			}
			stats.fetches++
		}
		if len(parked) > 200 {
			parked = parked[len(parked)-200:] // the host forgets the oldest
		}
	}
	t.Logf("%v: %d starts, %d resumes (%d from bytes), %d compiles (%d refused), %d stages, %d fetches",
		time.Since(began).Round(time.Second), stats.starts, stats.resumes, stats.cold, stats.compiles, stats.refused, stats.stages, stats.fetches)
	h.memCheck("soak")
}

// Attack: 64 parked executions each keeping 6.5 MB on a built-in rather
// than in a binding: on Math, on Object.prototype, on Array.prototype
// under a symbol. The memory budget weighs a parked execution by the walk
// of what it keeps, which counts what is stored on built-ins as it counts
// a binding, so the process stays under the bound as in
// TestE2EMemoryParkedExecutions, and every execution resumes with its
// value.
func TestE2EMemoryParkedOnBuiltins(t *testing.T) {
	if limRace {
		t.Skip("slow under the race detector, and its bounds are the plain binary's: .ci/run runs it without -race")
	}
	for _, c := range []struct{ name, src string }{
		{"Math", `Math.keep = 'x'.repeat(6.5e6); const a = fetch_data(n); Math.keep.length + a;`},
		{"Object.prototype", `Object.prototype.keep = new Uint8Array(6.5e6); const a = fetch_data(n); ({}).keep.length + a;`},
		{"Array.prototype under a symbol", `Array.prototype[Symbol.for('keep')] = 'x'.repeat(6.5e6); const a = fetch_data(n); [][Symbol.for('keep')].length + a;`},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := memHost(t)
			id, _ := h.compile(c.src)
			var parked []step
			for i := range 64 {
				resp := h.do(h.req("start", "program_id", id, "options", options(fetchCaps, map[string]any{"n": num(float64(i))})), nil, "")
				st := stepOf(t, resp)
				require.Equal(t, "suspended", st.Type, "start %d", i)
				parked = append(parked, st)
			}
			h.memCheck("64 executions keeping 6.5 MB on " + c.name + " parked")
			want := `{"Number":{"Finite":6500007.0}}`
			cold := 0
			for i := len(parked) - 1; i >= 0; i-- {
				resp, raw := h.memResume(parked[i], fetchCaps, valuePayload(num(7)))
				require.Equal(t, want, stepOf(t, resp).Value, "execution %d", i)
				if raw {
					cold++
				}
			}
			t.Logf("%d of 64 resumed from their bytes (their snapshots evicted too)", cold)
			h.memCheck("after every resume")
		})
	}
}
