package protocol_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// The memory budget, in process: what the session holds stays within it,
// whatever holds it, by evicting the least recently used entry of any
// kind; what cannot be evicted is refused. docs/limits.md, "The memory
// budget".

const mib = 1 << 20

// holder keeps a string of n bytes across a capability call, then
// returns its length and the answer.
func holder(n int) string {
	return fmt.Sprintf(`const s = 'x'.repeat(%d); const a = fetch_data(1); s.length + a;`, n)
}

// withinBudget checks the session's count against its limit.
func withinBudget(t *testing.T, c *sess) (used, limit int64) {
	t.Helper()
	used, limit = c.s.MemoryUsed()
	if used > limit {
		t.Fatalf("the budget counts %d bytes, over its %d", used, limit)
	}
	return used, limit
}

// Parked executions are weighed by what they keep: past the budget the
// least recently used goes, and resumes from its snapshot bytes with what
// the hot resume gives.
func TestMemoryBudgetEvictsParkedExecutions(t *testing.T) {
	// The default run quarters the strings and the budget; the long
	// suites take them whole.
	k := longtest.Pick(4, 1)
	forBothLong(t, func(t *testing.T, jsonl bool) {
		c := newSess(t, jsonl, protocol.Options{MemoryBudget: 48 * mib / int64(k)})
		prog := c.must(c.call("compile", nil, "", "source", holder(6_500_000/k))).str("program_id")
		type parked struct {
			id, pol string
			snap    []byte
		}
		var all []parked
		for i := range 12 {
			// Each its own input, so each its own snapshot.
			opts := map[string]any{"capabilities": []string{"fetch_data"}, "inputs": map[string]any{"n": strValue(fmt.Sprint(i))}}
			r := c.must(c.call("start", nil, "", "program_id", prog, "options", opts))
			all = append(all, parked{r.str("snapshot_id"), r.str("policy_id"), r.bytes})
			withinBudget(t, c)
		}
		if n := c.s.Parked(); n < 2 || n > 7 {
			t.Fatalf("%d of 12 executions of %d bytes parked in a budget of %d MiB", n, 6_500_000/k, 48/k)
		}
		want := fmt.Sprintf(`{"Number":{"Finite":%d.0}}`, 6_500_000/k+1)
		// The newest is parked: a hot resume.
		hot := c.s.Stats().HotResumes
		last := all[len(all)-1]
		r := c.must(c.call("resume", nil, "", "snapshot_id", last.id, "policy_id", last.pol, "auth", auth(last.id), "payload", numPayload(1)))
		if c.s.Stats().HotResumes != hot+1 || mustJSONString(t, r.step()["value"]) != want {
			t.Fatalf("hot resume: %s", r.raw)
		}
		// The oldest was evicted: from its bytes, a replay, the same value.
		replays := c.s.Stats().Replays
		first := all[0]
		r = c.must(c.call("resume", first.snap, "snapshot_base64", "policy", rawPolicy(first.id, "fetch_data"), "payload", numPayload(1)))
		if c.s.Stats().Replays != replays+1 || mustJSONString(t, r.step()["value"]) != want {
			t.Fatalf("cold resume of an evicted execution: %s", r.raw)
		}
		withinBudget(t, c)
	})
}

// Programs are weighed by what their compiled form keeps, not by their
// source: past the budget the least recently used goes (its id is then
// unknown, as the contract allows), and a source whose compile would take
// more than the budget is refused before it takes it.
func TestMemoryBudgetWeighsPrograms(t *testing.T) {
	// The default run quarters every size and budget below (compiling is
	// the test's time); the long suites take them whole.
	k := longtest.Pick(4, 1)
	c := newSess(t, false, protocol.Options{MemoryBudget: 64 * mib / int64(k)})
	// About 120,000 tokens each: ~7 MiB compiled, ~30 MiB at the peak.
	source := func(i int) string { return fmt.Sprintf("var v%d = 0;", i) + strings.Repeat("a=>0;", 30_000/k) + "0" }
	var ids []string
	for i := range 12 {
		ids = append(ids, c.must(c.call("compile", nil, "", "source", source(i))).str("program_id"))
		used, _ := withinBudget(t, c)
		if i == 0 && used < 4*mib/int64(k) {
			t.Fatalf("a program of 120,000 tokens weighs %d bytes", used)
		}
	}
	r := c.call("start", nil, "", "program_id", ids[0], "options", map[string]any{})
	c.fail(r, fmt.Sprintf("unknown program_id `%s`", ids[0]))
	c.must(c.call("start", nil, "", "program_id", ids[11], "options", map[string]any{}))
	// Recompiling an evicted program gives the same id.
	if id := c.must(c.call("compile", nil, "", "source", source(0))).str("program_id"); id != ids[0] {
		t.Fatal("recompiled to another id")
	}

	// Refused: more than the budget to compile. The session goes on.
	big := strings.Repeat("a;", 150_000/k)
	r = c.call("compile", nil, "", "source", big)
	c.fail(r, "Limit: source too large to compile within the memory budget")
	if r.hdr["error_code"] != "limit_memory_budget" {
		t.Fatalf("error_code: %s", r.raw)
	}
	c.must(c.call("compile", nil, "", "source", "1 + 1"))
	withinBudget(t, c)
	// The same source compiles in a larger budget, and in this one
	// unless stages hold what it needs.
	c2 := newSess(t, false, protocol.Options{MemoryBudget: 256 * mib / int64(k)})
	c2.must(c2.call("compile", nil, "", "source", big))
	c3 := newSess(t, false, protocol.Options{MemoryBudget: 64 * mib / int64(k)})
	mid := strings.Repeat("a;", 80_000/k) // 160,000 tokens: an estimated 41 MiB to compile
	c3.stageAll("s", make([]byte, 30*mib/k))
	r = c3.call("compile", nil, "", "source", mid)
	c3.fail(r, "Limit: source too large to compile within the memory budget")
	c3.call("resume", nil, "", "stage_id", "s", "policy", rawPolicy("x"), "payload", numPayload(1)) // drops the stage
	c3.must(c3.call("compile", nil, "", "source", mid))
}

// An evicted program takes its parked executions with it (they would
// keep it in memory, unweighed); they resume from their bytes.
func TestMemoryBudgetProgramTakesItsExecutions(t *testing.T) {
	c := newSess(t, false, protocol.Options{MaxPrograms: 1})
	prog := c.must(c.call("compile", nil, "", "source", threeCalls)).str("program_id")
	st := c.must(c.call("start", nil, "", "program_id", prog, "options", map[string]any{"capabilities": []string{"fetch_data"}}))
	if c.s.Parked() != 1 {
		t.Fatal("not parked")
	}
	c.must(c.call("compile", nil, "", "source", "2 + 2")) // evicts threeCalls (MaxPrograms 1)
	if c.s.Parked() != 0 {
		t.Fatal("the execution of an evicted program stayed parked")
	}
	r := c.must(c.call("resume", st.bytes, "", "policy", rawPolicy(st.str("snapshot_id"), "fetch_data"), "payload", numPayload(1)))
	if r.step()["type"] != "suspended" || c.s.Stats().Replays != 1 {
		t.Fatalf("cold resume: %s", r.raw)
	}
	if c.s.Parked() != 1 {
		t.Fatal("the replayed execution is not parked, with its program cached again")
	}
}

// Staged bytes are held in the budget and evict cached entries to make
// room; they are bounded by half of it; taken, they are given back.
func TestMemoryBudgetStages(t *testing.T) {
	c := newSess(t, false, protocol.Options{MemoryBudget: 32 * mib, MaxStageBytes: 64 * mib})
	// Snapshots of about 900 KB each (the input), many of them.
	prog := c.must(c.call("compile", nil, "", "source", `fetch_data(big.length)`)).str("program_id")
	for i := range 30 {
		big := strings.Repeat("b", 900_000) + fmt.Sprint(i)
		c.must(c.call("start", nil, "", "program_id", prog, "options", map[string]any{
			"capabilities": []string{"fetch_data"}, "inputs": map[string]any{"big": strValue(big)}}))
		withinBudget(t, c)
	}
	chunk := make([]byte, 900<<10)
	staged := 0
	for i := 0; staged+len(chunk) <= 16*mib; i++ {
		c.must(c.call("stage", chunk, "bytes_base64", "stage_id", "s", "offset", staged))
		staged += len(chunk)
		used, _ := withinBudget(t, c)
		if used < int64(staged) {
			t.Fatalf("%d bytes staged, the budget counts %d", staged, used)
		}
	}
	// Half the budget: a stage past it is refused, as the stage bound.
	r := c.call("stage", make([]byte, 900<<10), "bytes_base64", "stage_id", "t", "offset", 0)
	c.fail(r, fmt.Sprintf("stage exceeds %d bytes", 16*mib))
	before, _ := c.s.MemoryUsed()
	r = c.call("resume", nil, "", "stage_id", "s", "policy", rawPolicy("x", "fetch_data"), "payload", numPayload(1))
	if r.ok() {
		t.Fatal("zeros resumed")
	}
	if after, _ := c.s.MemoryUsed(); before-after < int64(staged) {
		t.Fatalf("taking %d staged bytes gave back %d", staged, before-after)
	}
}

// Many distinct policies of many capabilities are weighed too.
func TestMemoryBudgetPolicies(t *testing.T) {
	// The default run: a quarter of the budget and of the policies.
	k := longtest.Pick(4, 1)
	c := newSess(t, false, protocol.Options{MemoryBudget: 8 * mib / int64(k)})
	prog := c.must(c.call("compile", nil, "", "source", "1")).str("program_id")
	for i := range 200 / k {
		caps := make([]string, 1000)
		for j := range caps {
			caps[j] = fmt.Sprintf("cap_%d_%d_%s", i, j, strings.Repeat("x", 100))
		}
		c.must(c.call("start", nil, "", "program_id", prog, "options", map[string]any{"capabilities": caps}))
		withinBudget(t, c)
	}
}

// The budget's defaults: 128 MiB, or twice the stage bound if larger; an
// explicit budget bounds the stage bound to half of it.
func TestMemoryBudgetDefaults(t *testing.T) {
	for _, c := range []struct {
		opts        protocol.Options
		budget, max int64
	}{
		{protocol.Options{}, 128 * mib, 64 * mib},
		{protocol.Options{MaxStageBytes: 100 * mib}, 200 * mib, 100 * mib},
		{protocol.Options{MemoryBudget: 32 * mib}, 32 * mib, 16 * mib},
		{protocol.Options{MemoryBudget: 512 * mib}, 512 * mib, 64 * mib},
	} {
		s := protocol.NewSession(c.opts)
		_, limit := s.MemoryUsed()
		if limit != c.budget {
			t.Errorf("%+v: budget %d, want %d", c.opts, limit, c.budget)
		}
		if got := s.StageBound(); got != c.max {
			t.Errorf("%+v: stage bound %d, want %d", c.opts, got, c.max)
		}
		s.Close()
	}
}

// mustJSONString is v as JSON text.
func mustJSONString(t *testing.T, v any) string {
	t.Helper()
	return string(mustJSON(t, v))
}

// A cached resume of a parked execution whose policy and snapshot entry
// the budget evicted (they are older than the execution): the policy,
// pinned by the entry the execution keeps, is cached again, which may
// evict the execution's program, and a program takes its parked
// executions with it. The execution resumed is out of the cache by then,
// and resumes hot.
func TestResumeCachingItsPolicyKeepsItsExecution(t *testing.T) {
	forBoth(t, func(t *testing.T, jsonl bool) {
		c := newSess(t, jsonl, protocol.Options{MemoryBudget: 8 * mib})
		prog := c.must(c.call("compile", nil, "", "source", holder(1000))).str("program_id")
		r := c.must(c.call("start", nil, "", "program_id", prog, "options", map[string]any{"capabilities": []string{"fetch_data"}}))
		id, pol := r.str("snapshot_id"), r.str("policy_id")
		c.s.ForgetPolicy(pol)
		c.s.ForgetSnapshot(id)
		c.s.FillBudget()
		hot := c.s.Stats().HotResumes
		r = c.must(c.call("resume", nil, "", "snapshot_id", id, "policy_id", pol, "auth", auth(id), "payload", numPayload(1)))
		if mustJSONString(t, r.step()["value"]) != `{"Number":{"Finite":1001.0}}` {
			t.Fatalf("resume: %s", r.raw)
		}
		if c.s.Stats().HotResumes != hot+1 {
			t.Fatalf("the resume did not continue the parked execution: %+v", c.s.Stats())
		}
	})
}
