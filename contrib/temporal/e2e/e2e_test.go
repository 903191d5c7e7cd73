package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	mustardtemporal "github.com/mustard-sidecar/mustard-sidecar/contrib/temporal"
	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// triage is the reference gallery's triage program (bench/workloads): it
// lists a team's tickets, fetches them in parallel, looks up the urgent
// ones' customers in parallel (tolerating a missing one), and posts a
// summary.
func triage(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../../bench/workloads/triage.js")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const tickets = 6

var triageCaps = []string{"list_tickets", "get_ticket", "get_customer", "post_summary"}

// triageTools are fake tools for the triage program whose answers depend
// on the team, so that every execution has its own result. before, if
// set, runs first in every get_ticket call (to hold or count calls).
func triageTools(before func(ctx context.Context, c durable.Call) error) map[string]durable.Capability {
	return map[string]durable.Capability{
		"list_tickets": func(ctx context.Context, c durable.Call) (value.Value, error) {
			var q struct{ Team string }
			if err := c.Decode(&q); err != nil {
				return value.Value{}, err
			}
			ids := []any{}
			for i := range tickets {
				ids = append(ids, fmt.Sprintf("T-%s-%d", q.Team, i+1))
			}
			return value.FromGo(map[string]any{"ids": ids})
		},
		"get_ticket": func(ctx context.Context, c durable.Call) (value.Value, error) {
			if before != nil {
				if err := before(ctx, c); err != nil {
					return value.Value{}, err
				}
			}
			var q struct{ ID string }
			if err := c.Decode(&q); err != nil {
				return value.Value{}, err
			}
			var team, i int
			if _, err := fmt.Sscanf(q.ID, "T-team-%d-%d", &team, &i); err != nil {
				return value.Value{}, err
			}
			tags := []any{}
			if i == 5 {
				tags = append(tags, "spam")
			}
			return value.FromGo(map[string]any{"id": q.ID, "title": "ticket " + q.ID, "priority": 1 + (i+team)%3,
				"sla_hours_left": 10*i + team%7, "tags": tags, "customer_id": fmt.Sprintf("C-%d", (i+team)%4)})
		},
		"get_customer": func(ctx context.Context, c durable.Call) (value.Value, error) {
			var q struct{ ID string }
			if err := c.Decode(&q); err != nil {
				return value.Value{}, err
			}
			if q.ID == "C-3" {
				return value.Value{}, host.CallError{Name: "Error", Message: "no such customer", Code: "NOT_FOUND"}
			}
			return value.FromGo(map[string]any{"name": "customer " + q.ID,
				"plan": []string{"free", "pro", "enterprise"}[len(q.ID)%3], "mrr": 100 * len(q.ID)})
		},
		"post_summary": func(ctx context.Context, c durable.Call) (value.Value, error) {
			var q struct{ Team string }
			if err := c.Decode(&q); err != nil {
				return value.Value{}, err
			}
			return value.FromGo(map[string]any{"message_id": "M-" + q.Team})
		},
	}
}

func teamInputs(i int) map[string]value.Value {
	return map[string]value.Value{"team": value.String(fmt.Sprintf("team-%d", i))}
}

// runnerResults runs the n triage executions on durable.Runner alone (the
// same sidecar binary, the same tools) and returns their results.
func runnerResults(t *testing.T, src string, n int) []value.Value {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pool, err := host.NewPool(host.PoolConfig{Size: 2, Command: sidecarCommand})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	prog, err := pool.Compile(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	runner := &durable.Runner{Pool: pool, Key: testKey, SealKey: testSeal, HostCalls: host.HostCallsBatch}
	out := make([]value.Value, n)
	for i := range n {
		out[i], err = runner.Run(ctx, durable.Execution{ID: fmt.Sprintf("triage-%d", i), Program: prog,
			Inputs: teamInputs(i), Capabilities: triageTools(nil)})
		if err != nil {
			t.Fatalf("durable.Runner, execution %d: %v", i, err)
		}
	}
	return out
}

// startTriage starts n triage executions and returns their runs.
func (e *env) startTriage(ctx context.Context, src string, n int) []client.WorkflowRun {
	e.t.Helper()
	var out []client.WorkflowRun
	for i := range n {
		r, err := mustardtemporal.Start(ctx, e.c, fmt.Sprintf("triage-%d", i), mustardtemporal.Execution{
			Source: src, Inputs: teamInputs(i), Capabilities: e.caps(triageCaps...), Queue: e.queue})
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// results waits for every run and checks its value against want.
func results(ctx context.Context, t *testing.T, rs []client.WorkflowRun, want []value.Value) {
	t.Helper()
	for i, r := range rs {
		var got *value.Value
		if err := r.Get(ctx, &got); err != nil {
			t.Fatalf("execution %s: %v", r.GetID(), err)
		}
		if got == nil || !value.Equal(*got, want[i]) {
			var g []byte
			if got != nil {
				g = got.AppendJSON(nil)
			}
			t.Fatalf("execution %s: result\n%s\nhost.Runner's\n%s", r.GetID(), g, want[i].AppendJSON(nil))
		}
	}
}

// parallel holds each get_ticket call until all of its execution's
// calls are in: the guest's Promise.all runs as parallel activities.
type parallel struct {
	mu sync.Mutex
	m  map[string]chan struct{}
	n  map[string]int
}

func (p *parallel) wait(ctx context.Context, c durable.Call) error {
	p.mu.Lock()
	if p.m == nil {
		p.m, p.n = map[string]chan struct{}{}, map[string]int{}
	}
	ch := p.m[c.Execution]
	if ch == nil {
		ch = make(chan struct{})
		p.m[c.Execution] = ch
	}
	p.n[c.Execution]++
	if p.n[c.Execution] == tickets {
		close(ch)
	}
	p.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Minute):
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("execution %s: its %d get_ticket calls never ran at once", c.Execution, tickets), "NotParallel", nil)
	}
}

const executions = 50

// 50 executions of the gallery's triage program, on 2 sidecar worker
// processes and 1 tool worker, complete with the values durable.Runner
// gives; each execution's parallel calls run at once; each call's effect
// happens once, and no tool activity runs twice unless the server timed
// out an attempt (Temporal runs an activity at least once: an attempt
// whose heartbeat came late on a busy machine goes on running while the
// next starts; the tools are idempotent by the call's key, as tools with
// effects must be).
func TestTriageMatchesRunner(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	src := triage(t)
	want := runnerResults(t, src, executions)

	e := newEnv(t)
	a, b := e.startWorker("a", 2), e.startWorker("b", 2)
	counted := newRuns()
	var par parallel
	var effects ledger
	e.startTools(counted.wrap(effects.wrap(triageTools(par.wait))))
	start := time.Now()
	rs := e.startTriage(ctx, src, executions)
	results(ctx, t, rs, want)
	took := time.Since(start)

	wantCalls := executions*(1+tickets+1) + countCustomerCalls(t, want)
	calls, twice, timedOut, wrong := counted.report(e.toolAttempts(ctx, ids(rs)))
	if calls != wantCalls || effects.effects() != wantCalls {
		t.Errorf("%d tool calls ran, %d applied their effect; the executions made %d", calls, effects.effects(), wantCalls)
	}
	if len(wrong) > 0 {
		t.Errorf("tool activities run more than once other than after a timed-out attempt: %v", wrong)
	}
	if twice > timedOut {
		t.Errorf("%d calls ran more than once, %d of them after a timed-out attempt", twice, timedOut)
	}
	sa, sb := a.stop(), b.stop()
	if sa == nil || sb == nil {
		t.Fatal("no segment counts")
	}
	t.Logf("%d executions in %v; %d tool activities, %d run again after a timed-out attempt; worker a %+v, worker b %+v",
		executions, took.Round(time.Millisecond), calls, twice, *sa, *sb)
	if sa.Started+sb.Started != executions {
		t.Errorf("%d executions started, want %d", sa.Started+sb.Started, executions)
	}
	if sa.Started+sa.Hot+sa.Cold == 0 || sb.Started+sb.Hot+sb.Cold == 0 {
		t.Error("a worker ran no segment")
	}
	if sa.Hot+sb.Hot == 0 {
		t.Error("no hot resume")
	}
}

// countCustomerCalls is the number of get_customer calls the executions
// made, from their results (one per distinct customer of the urgent
// tickets: the rows, and the missing customer's).
func countCustomerCalls(t *testing.T, results []value.Value) int {
	t.Helper()
	n := 0
	for _, r := range results {
		var res struct {
			Top []struct{ Customer string }
		}
		if err := value.Decode(r, &res); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, row := range res.Top {
			seen[row.Customer] = true
		}
		n += len(seen)
	}
	return n
}

// gate holds get_ticket calls until it opens, counting the calls (not
// the attempts: an attempt the server timed out is run again) it holds.
type gate struct {
	open chan struct{}
	once sync.Once
	mu   sync.Mutex
	held map[string]bool
}

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

func (g *gate) wait(ctx context.Context, c durable.Call) error {
	g.mu.Lock()
	if g.held == nil {
		g.held = map[string]bool{}
	}
	g.held[fmt.Sprintf("%s/%d", c.Execution, c.ID)] = true
	g.mu.Unlock()
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// calls is the number of calls the gate held.
func (g *gate) calls() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.held)
}

// Killing a sidecar worker process with its sidecars, while the
// executions it holds wait for their tool calls: every execution
// completes on the other worker with the value durable.Runner gives, which
// resumes those from the blob store; each call's effect happens once; a
// tool activity runs again only as Temporal's retry after a failed
// attempt (get_customer fails its first attempt for customer C-1) or
// after an attempt the server timed out while it ran (at-least-once: see
// TestTriageMatchesRunner).
func TestKillWorkerMidRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	src := triage(t)
	want := runnerResults(t, src, executions)

	e := newEnv(t)
	a, b := e.startWorker("a", 2), e.startWorker("b", 2)
	g := &gate{open: make(chan struct{})}
	defer g.release()
	tools := triageTools(g.wait)
	customer := tools["get_customer"]
	tools["get_customer"] = func(ctx context.Context, c durable.Call) (value.Value, error) {
		var q struct{ ID string }
		if err := c.Decode(&q); err != nil {
			return value.Value{}, err
		}
		if q.ID == "C-1" && activity.GetInfo(ctx).Attempt == 1 {
			return value.Value{}, errors.New("customer service unavailable")
		}
		return customer(ctx, c)
	}
	counted := newRuns()
	var effects ledger
	e.startTools(counted.wrap(effects.wrap(tools)))
	rs := e.startTriage(ctx, src, executions)

	// Every execution is parked, waiting for its get_ticket calls.
	waitFor(t, time.Minute, "all get_ticket calls held", func() bool { return g.calls() == executions*tickets })
	onA := 0
	for _, r := range rs {
		st, err := mustardtemporal.GetStatus(ctx, e.c, r.GetID())
		if err != nil {
			t.Fatal(err)
		}
		switch st.WorkerQueue {
		case a.hotQueue:
			onA++
		case b.hotQueue:
		default:
			t.Fatalf("execution %s parked on %q, not on a worker", r.GetID(), st.WorkerQueue)
		}
	}
	if onA == 0 {
		t.Fatal("worker a holds no execution: nothing to test")
	}
	a.kill()
	killed := time.Now()
	g.release()
	results(ctx, t, rs, want)
	took := time.Since(killed)

	sb := b.stop()
	if sb == nil {
		t.Fatal("no segment counts from worker b")
	}
	wantCalls := executions*(1+tickets+1) + countCustomerCalls(t, want)
	calls, twice, timedOut, wrong := counted.report(e.toolAttempts(ctx, ids(rs)))
	segTimeouts := e.segmentTimeouts(ctx, ids(rs))
	t.Logf("worker a killed holding %d of %d executions; all completed %v later; worker b %+v; "+
		"%d tool activities, %d run more than once (%d after a timed-out attempt); %d segment attempts timed out",
		onA, executions, took.Round(time.Millisecond), *sb, calls, twice, timedOut, segTimeouts)
	if calls != wantCalls || effects.effects() != wantCalls {
		t.Errorf("%d tool calls ran, %d applied their effect; the executions made %d", calls, effects.effects(), wantCalls)
	}
	// Worker b resumes from the blob store each execution worker a held,
	// except one whose snapshot b parked too: a segment b ran whose
	// attempt the server timed out, run again on a, ends in the same
	// snapshot (its id is the hash of its bytes), and b resumes that hot.
	if sb.Cold+int64(segTimeouts) < int64(onA) {
		t.Errorf("worker b resumed %d executions cold (%d segment attempts timed out), want at least the %d worker a held",
			sb.Cold, segTimeouts, onA)
	}
	if len(wrong) > 0 {
		t.Errorf("tool activities run more than once other than after a failed or timed-out attempt: %v", wrong)
	}
	if twice == 0 {
		t.Error("no get_customer call was retried: the count proves nothing")
	}
}

// snapshotSizes returns the size of the largest snapshot in the blob
// store directory and how many there are.
func snapshotSizes(dir string) (largest int64, n int) {
	_ = filepath.WalkDir(filepath.Join(dir, "snapshots"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".attrs") || strings.Contains(d.Name(), ".tmp") {
			return nil
		}
		if info, err := d.Info(); err == nil {
			n++
			largest = max(largest, info.Size())
		}
		return nil
	})
	return largest, n
}

// A guest that keeps 5.4 MB of tool answers (six of 900 KB: each answer
// is an activity result in history, where Temporal's payloads stop at
// 2 MB): its snapshots pass 2 MB and go through the blob store, while
// history holds only references to them.
func TestLargeSnapshot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := newEnv(t)
	e.startWorker("a", 1)
	var mu sync.Mutex
	var largest int64
	e.startTools(map[string]durable.Capability{
		"chunk": func(ctx context.Context, c durable.Call) (value.Value, error) {
			l, _ := snapshotSizes(e.blobDir) // the execution is parked: its snapshot is there
			mu.Lock()
			largest = max(largest, l)
			mu.Unlock()
			// Random letters: the sidecar compresses snapshots.
			rng := rand.New(rand.NewPCG(c.ID, 1))
			b := make([]byte, 900_000)
			for i := range b {
				b[i] = byte('A' + rng.IntN(58))
			}
			return value.String(string(b)), nil
		},
	})
	// The guest keeps its chunks, so its snapshots are the journal of
	// them (a checkpoint's image would be larger).
	src := `let n = 0; const kept = []; for (let i = 0; i < 6; i++) { const c = chunk(i); kept.push(c); n += c.length; } n;`
	r, err := mustardtemporal.Start(ctx, e.c, "large", mustardtemporal.Execution{Source: src,
		Capabilities: e.caps("chunk"), Queue: e.queue})
	if err != nil {
		t.Fatal(err)
	}
	var got *value.Value
	if err := r.Get(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Num != 6*900_000 {
		t.Fatalf("result %v", got)
	}
	var hist int
	for _, ev := range e.history(ctx, "large") {
		hist += proto.Size(ev)
	}
	t.Logf("largest snapshot %d bytes; history of the run %d bytes", largest, hist)
	if largest < 4_000_000 {
		t.Errorf("largest snapshot %d bytes, want over 4 MB (the guest had read 4.5 MB by its last call)", largest)
	}
}

const approvalSource = `
async function main() {
  try {
    const r = await refund({ order: "A-17", amount: 420 });
    return { ok: r };
  } catch (e) {
    return { name: e.name, code: e.code, message: e.message };
  }
}
main();
`

// Approval on a real server: a call waits for the decision (an Update)
// and resumes; a refusal and a timeout reach the guest as catchable
// errors. (Waiting an hour of skipped time is TestApprovalApproved in
// contrib/temporal, on the SDK's test environment: a real server's
// timers cannot be skipped.)
func TestApproval(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := newEnv(t)
	e.startWorker("a", 1)
	var refunds atomic.Int64
	e.startTools(map[string]durable.Capability{
		"refund": func(ctx context.Context, c durable.Call) (value.Value, error) {
			refunds.Add(1)
			return value.String("refunded"), nil
		},
	})
	start := func(id string, timeout time.Duration) client.WorkflowRun {
		caps := e.caps("refund")
		caps[0].Approval = &mustardtemporal.Approval{Timeout: timeout}
		r, err := mustardtemporal.Start(ctx, e.c, id, mustardtemporal.Execution{Source: approvalSource,
			Capabilities: caps, Queue: e.queue})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// awaiting waits until the call shows in the status query as
	// waiting for a decision, with its arguments.
	awaiting := func(id string) {
		var st mustardtemporal.Status
		waitFor(t, time.Minute, id+" waiting for a decision", func() bool {
			var err error
			st, err = mustardtemporal.GetStatus(ctx, e.c, id)
			return err == nil && len(st.AwaitingDecision) == 1
		})
		if c := st.AwaitingDecision[0]; c.Capability != "refund" || !strings.Contains(string(c.Args[0].AppendJSON(nil)), "A-17") {
			t.Errorf("%s: status %+v", id, st)
		}
	}
	guest := func(r client.WorkflowRun) map[string]any {
		var v *value.Value
		if err := r.Get(ctx, &v); err != nil {
			t.Fatalf("%s: %v", r.GetID(), err)
		}
		var m map[string]any
		if err := value.Decode(*v, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}

	approved, refused := start("approved", 10*time.Minute), start("refused", 10*time.Minute)
	timedOut := start("timed-out", 2*time.Second)
	awaiting("approved")
	awaiting("refused")
	if err := mustardtemporal.Decide(ctx, e.c, "approved", mustardtemporal.Decision{CallID: 99, Approve: true}); err == nil ||
		!strings.Contains(err.Error(), "call 99") {
		t.Errorf("a decision for a call that does not wait: %v", err)
	}
	if err := mustardtemporal.Decide(ctx, e.c, "approved", mustardtemporal.Decision{CallID: 1, Approve: true}); err != nil {
		t.Fatal(err)
	}
	if err := mustardtemporal.Decide(ctx, e.c, "refused", mustardtemporal.Decision{CallID: 1, Reason: "over the limit"}); err != nil {
		t.Fatal(err)
	}
	if m := guest(approved); m["ok"] != "refunded" {
		t.Errorf("approved: guest returned %v", m)
	}
	if m := guest(refused); m["name"] != mustardtemporal.ErrNameApprovalDenied ||
		m["code"] != mustardtemporal.CodeApprovalDenied || m["message"] != "over the limit" {
		t.Errorf("refused: guest caught %v", m)
	}
	if m := guest(timedOut); m["name"] != mustardtemporal.ErrNameApprovalTimeout || m["code"] != mustardtemporal.CodeApprovalTimeout {
		t.Errorf("timed out: guest caught %v", m)
	}
	if n := refunds.Load(); n != 1 {
		t.Errorf("refund ran %d times, want once (approved only)", n)
	}
}

// Cancelling the workflow ends a guest spinning in while(true) within a
// second, and no activity starts after the cancel.
func TestCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := newEnv(t)
	e.startWorker("a", 1)
	var calls atomic.Int64
	e.startTools(map[string]durable.Capability{
		"ready": func(ctx context.Context, c durable.Call) (value.Value, error) {
			calls.Add(1)
			return value.Bool(true), nil
		},
	})
	src := `async function main() { await ready(); while (true) {} } main();`
	r, err := mustardtemporal.Start(ctx, e.c, "spin", mustardtemporal.Execution{Source: src, Capabilities: e.caps("ready"),
		Queue: e.queue, Limits: mustardtemporal.Limits{InstructionBudget: host.Limit(1 << 60)}})
	if err != nil {
		t.Fatal(err)
	}
	// The guest spins: the resume after ready() runs and heartbeats.
	waitFor(t, time.Minute, "the spinning segment heartbeating", func() bool {
		d, err := e.c.DescribeWorkflowExecution(ctx, "spin", "")
		if err != nil {
			return false
		}
		for _, p := range d.GetPendingActivities() {
			if p.GetActivityType().GetName() == mustardtemporal.ResumeActivity &&
				p.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED && p.GetLastHeartbeatTime() != nil {
				return true
			}
		}
		return false
	})
	if err := e.c.CancelWorkflow(ctx, "spin", ""); err != nil {
		t.Fatal(err)
	}
	if err := r.Get(ctx, nil); !temporal.IsCanceledError(err) {
		t.Fatalf("workflow ended with %v, want cancelled", err)
	}
	var requested, ended time.Time
	var after []string
	for _, ev := range e.history(ctx, "spin") {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
			requested = ev.GetEventTime().AsTime()
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
			ended = ev.GetEventTime().AsTime()
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if !requested.IsZero() {
				after = append(after, ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName())
			}
		}
	}
	if requested.IsZero() || ended.IsZero() {
		t.Fatalf("history has no cancel request (%v) or no cancelled segment (%v)", requested, ended)
	}
	took := ended.Sub(requested)
	t.Logf("the guest ended %v after the cancel request", took.Round(time.Millisecond))
	if took > time.Second {
		t.Errorf("the guest ran on %v after the cancel request", took)
	}
	if len(after) > 0 {
		t.Errorf("activities scheduled after the cancel: %v", after)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("ready ran %d times", n)
	}
}

const markerSource = `
async function main() {
  const a = await lookup({ q: secret });
  const b = await lookup({ q: "MARKER-ARG-4417" });
  return a + "|" + b;
}
main();
`

// payloads collects the Payload messages anywhere in m.
func payloads(m protoreflect.Message, out *[]*commonpb.Payload) {
	if p, ok := m.Interface().(*commonpb.Payload); ok {
		*out = append(*out, p)
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := range v.List().Len() {
				payloads(v.List().Get(i).Message(), out)
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				payloads(mv.Message(), out)
				return true
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			payloads(v.Message(), out)
		}
		return true
	})
}

// No plaintext tool argument, answer, input or result in the blob store
// (read while the execution is parked on its second call, and after) nor
// in the workflow history (every event's raw bytes, as the server
// returns them); decoding the history's payloads with the codec finds
// them, so the check can fail.
func TestNoPlaintextAtRest(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	markers := []string{"MARKER-INPUT-7f3a", "MARKER-ARG-4417", "MARKER-ANSWER-9921"}
	e := newEnv(t)
	e.startWorker("a", 1)
	var mu sync.Mutex
	var scanned int
	var inBlobs []string
	scan := func() {
		_ = filepath.WalkDir(e.blobDir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil // renamed or deleted meanwhile
			}
			mu.Lock()
			defer mu.Unlock()
			if strings.Contains(p, "snapshots") && !strings.HasSuffix(p, ".attrs") {
				scanned++
			}
			for _, m := range markers {
				if bytes.Contains(b, []byte(m)) {
					inBlobs = append(inBlobs, fmt.Sprintf("%s in %s", m, p))
				}
			}
			return nil
		})
	}
	e.startTools(map[string]durable.Capability{
		"lookup": func(ctx context.Context, c durable.Call) (value.Value, error) {
			if c.ID == 2 {
				scan() // the snapshot holds the first call's argument and answer
			}
			var q struct{ Q string }
			if err := c.Decode(&q); err != nil {
				return value.Value{}, err
			}
			return value.String("MARKER-ANSWER-9921:" + q.Q), nil
		},
	})
	r, err := mustardtemporal.Start(ctx, e.c, "markers", mustardtemporal.Execution{Source: markerSource,
		Capabilities: e.caps("lookup"), Queue: e.queue,
		Inputs: map[string]value.Value{"secret": value.String("MARKER-INPUT-7f3a")}})
	if err != nil {
		t.Fatal(err)
	}
	var got *value.Value
	if err := r.Get(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if want := "MARKER-ANSWER-9921:MARKER-INPUT-7f3a|MARKER-ANSWER-9921:MARKER-ARG-4417"; got == nil || got.Str != want {
		t.Fatalf("result %v", got)
	}
	scan()
	if scanned == 0 {
		t.Fatal("no snapshot in the blob store while the execution was parked")
	}
	for _, s := range inBlobs {
		t.Errorf("blob store holds %s", s)
	}

	events := e.history(ctx, "markers")
	var raw []byte
	var ps []*commonpb.Payload
	for _, ev := range events {
		b, err := proto.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		raw = append(raw, b...)
		if sa := ev.GetUpsertWorkflowSearchAttributesEventAttributes(); sa != nil {
			// Search attributes are indexed, so never encoded; the SDK's
			// GetVersion records its change ids in TemporalChangeVersion.
			for k := range sa.GetSearchAttributes().GetIndexedFields() {
				if k != "TemporalChangeVersion" {
					t.Errorf("search attribute %s upserted", k)
				}
			}
			continue
		}
		payloads(ev.ProtoReflect(), &ps)
	}
	decoded, err := e.codec.Decode(ps)
	if err != nil {
		t.Fatal(err)
	}
	var plain []byte
	clear := 0
	for i, p := range decoded {
		if string(ps[i].GetMetadata()["encoding"]) != mustardtemporal.Encoding {
			clear++
		}
		plain = append(plain, p.GetData()...)
	}
	for _, m := range markers {
		if bytes.Contains(raw, []byte(m)) {
			t.Errorf("the history holds %s in the clear", m)
		}
		if !bytes.Contains(plain, []byte(m)) {
			t.Errorf("%s is not in the history's decoded payloads: the check above proves nothing", m)
		}
	}
	if clear > 0 {
		t.Errorf("%d of the history's %d payloads are not encrypted", clear, len(ps))
	}
	t.Logf("%d history events (%d bytes, %d payloads, all encrypted); %d snapshot files read; no marker in either",
		len(events), len(raw), len(ps), scanned)
}
