package mustardtemporal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// barrier holds each call until n calls are inside at once: a guest's
// parallel calls pass it, calls made one after another never do.
type barrier struct {
	n    int
	mu   sync.Mutex
	in   int
	max  int
	full chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, full: make(chan struct{})} }

func (b *barrier) wait(ctx context.Context) error {
	b.mu.Lock()
	b.in++
	b.max = max(b.max, b.in)
	if b.in == b.n {
		close(b.full)
	}
	b.mu.Unlock()
	defer func() { b.mu.Lock(); b.in--; b.mu.Unlock() }()
	select {
	case <-b.full:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(30 * time.Second):
		return fmt.Errorf("only %d of %d calls ran at once", b.max, b.n)
	}
}

const tickets = 6

// triageTools are fake tools for the gallery's triage program; get_ticket
// waits at b until every ticket is being fetched.
func triageTools(b *barrier, counts *sync.Map) map[string]durable.Capability {
	count := func(c durable.Call) {
		n, _ := counts.LoadOrStore(fmt.Sprintf("%s/%d", c.Execution, c.ID), new(int))
		*n.(*int)++
	}
	return map[string]durable.Capability{
		"list_tickets": func(ctx context.Context, c durable.Call) (value.Value, error) {
			count(c)
			ids := []any{}
			for i := range tickets {
				ids = append(ids, fmt.Sprintf("T-%d", i+1))
			}
			return value.FromGo(map[string]any{"ids": ids})
		},
		"get_ticket": func(ctx context.Context, c durable.Call) (value.Value, error) {
			count(c)
			var q struct{ ID string }
			if err := c.Decode(&q); err != nil {
				return value.Value{}, err
			}
			if err := b.wait(ctx); err != nil {
				return value.Value{}, err
			}
			var i int
			fmt.Sscanf(q.ID, "T-%d", &i)
			tags := []any{}
			if i == 5 {
				tags = append(tags, "spam")
			}
			return value.FromGo(map[string]any{"id": q.ID, "title": "ticket " + q.ID, "priority": 1 + i%3,
				"sla_hours_left": 10 * i, "tags": tags, "customer_id": fmt.Sprintf("C-%d", i%4)})
		},
		"get_customer": func(ctx context.Context, c durable.Call) (value.Value, error) {
			count(c)
			var q struct{ ID string }
			if err := c.Decode(&q); err != nil {
				return value.Value{}, err
			}
			if q.ID == "C-3" {
				return value.Value{}, host.CallError{Name: "Error", Message: "no such customer", Code: "NOT_FOUND"}
			}
			return value.FromGo(map[string]any{"name": "customer " + q.ID, "plan": []string{"free", "pro", "enterprise"}[len(q.ID)%3], "mrr": 100 * len(q.ID)})
		},
		"post_summary": func(ctx context.Context, c durable.Call) (value.Value, error) {
			count(c)
			return value.FromGo(map[string]any{"message_id": "M-42"})
		},
	}
}

func triageSource(t *testing.T) string {
	b, err := os.ReadFile("../../bench/workloads/triage.js")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func capsOf(tools map[string]durable.Capability) []Capability {
	var out []Capability
	for name := range tools {
		out = append(out, Capability{Name: name, Retry: &temporal.RetryPolicy{MaximumAttempts: 1}})
	}
	return out
}

func result(t *testing.T, h *harness) value.Value {
	t.Helper()
	if !h.env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := h.env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow failed: %v", err)
	}
	var v *value.Value
	if err := h.env.GetWorkflowResult(&v); err != nil {
		t.Fatal(err)
	}
	if v == nil {
		t.Fatal("no result")
	}
	return *v
}

func keys(t *testing.T, s *BucketStore) []string {
	t.Helper()
	var out []string
	it := s.bucket.List(nil)
	for {
		o, err := it.Next(context.Background())
		if err != nil {
			break
		}
		out = append(out, o.Key)
	}
	return out
}

// A gallery program with parallel calls gives the same value as
// durable.Runner; each call is its own activity with id <execution>/<call
// id>, called once; segments after the first are hot; the ended
// execution's snapshots are deleted.
func TestTriageMatchesRunner(t *testing.T) {
	ctx := context.Background()
	src := triageSource(t)
	inputs := map[string]value.Value{"team": value.String("support-eu")}

	pool, err := host.NewPool(host.PoolConfig{Size: 1, Command: sidecarCommand})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	prog, err := pool.Compile(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	var runnerCounts sync.Map
	runner := &durable.Runner{Pool: pool, Key: testKey, SealKey: testSeal}
	want, err := runner.Run(ctx, durable.Execution{ID: "triage-1", Program: prog, Inputs: inputs,
		Capabilities: triageTools(newBarrier(tickets), &runnerCounts)})
	if err != nil {
		t.Fatal(err)
	}

	blobs := memStore(t)
	if err := StoreProgram(ctx, blobs, prog); err != nil {
		t.Fatal(err)
	}
	w := newSidecar(t, "a", blobs)
	var counts sync.Map
	b := newBarrier(tickets)
	tools := triageTools(b, &counts)
	h := newHarness(t, tools, w)
	h.env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "triage-1"})
	h.env.ExecuteWorkflow(WorkflowName, Execution{ProgramID: prog.ID, Inputs: inputs, Capabilities: capsOf(tools), Queue: testQueue})
	got := result(t, h)
	if !value.Equal(got, want) {
		t.Fatalf("workflow result\n%s\nhost.Runner result\n%s", got.AppendJSON(nil), want.AppendJSON(nil))
	}
	if b.max != tickets {
		t.Errorf("at most %d get_ticket calls ran at once, want %d", b.max, tickets)
	}

	var ids []string
	for _, info := range h.started() {
		if strings.HasPrefix(info.ActivityType.Name, "mustard.tool.") {
			ids = append(ids, info.ActivityID)
		}
	}
	slices.Sort(ids)
	var wantIDs []string
	runnerCounts.Range(func(k, _ any) bool { wantIDs = append(wantIDs, k.(string)); return true })
	slices.Sort(wantIDs)
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("tool activity ids %v, want the Runner's calls %v", ids, wantIDs)
	}
	counts.Range(func(k, n any) bool {
		if *n.(*int) != 1 {
			t.Errorf("call %s ran %d times", k, *n.(*int))
		}
		return true
	})
	st := w.Stats()
	t.Logf("result %s; %d tool activities; segments %+v", got.AppendJSON(nil), len(ids), st)
	if st.Started != 1 || st.Cold != 0 || st.Hot < 3 {
		t.Errorf("segments: %+v, want 1 start, only hot resumes", st)
	}
	for _, k := range keys(t, blobs) {
		if strings.HasPrefix(k, "snapshots/") {
			t.Errorf("%s left in the blob store after the execution ended", k)
		}
	}
}

const stepsSource = `
async function main() {
  const a = await step({ n: 1 });
  const b = await step({ n: a + 1 });
  const c = await step({ n: b + 1 });
  return [a, b, c];
}
main();
`

// A segment goes to the worker that parked the execution; when that
// worker is gone, another resumes it cold from the blob store; when the
// worker is up but its sidecar died, it resumes cold from the bytes.
func TestHotAndColdSegments(t *testing.T) {
	blobs := memStore(t)
	a := newSidecar(t, "a", blobs)
	b := newSidecar(t, "b", blobs)
	var h *harness
	tools := map[string]durable.Capability{
		"step": func(ctx context.Context, c durable.Call) (value.Value, error) {
			switch c.ID {
			case 1:
				h.fleet.stop(a) // the worker holding the execution goes away
			case 2:
				b.Kill() // the new worker's sidecar crashes
			}
			var q struct{ N float64 }
			if err := c.Decode(&q); err != nil {
				return value.Value{}, err
			}
			return value.Number(q.N * 10), nil
		},
	}
	h = newHarness(t, tools, a, b)
	h.env.ExecuteWorkflow(WorkflowName, Execution{Source: stepsSource, Capabilities: capsOf(tools), Queue: testQueue})
	got := result(t, h)
	want := value.Array(value.Number(10), value.Number(110), value.Number(1110))
	if !value.Equal(got, want) {
		t.Fatalf("result %s, want %s", got.AppendJSON(nil), want.AppendJSON(nil))
	}
	if st := a.Stats(); st.Started != 1 || st.Hot+st.Cold != 0 {
		t.Errorf("worker a: %+v, want the start only", st)
	}
	// Resume 1: a's queue times out, b resumes cold from the blob store.
	// Resume 2: b's queue, but its sidecar died: cold from b's bytes.
	// Resume 3: hot on b.
	if st := b.Stats(); st.Cold != 2 || st.Hot != 1 {
		t.Errorf("worker b: %+v, want 2 cold resumes and 1 hot", st)
	}
	var queues []string
	for _, r := range h.fleet.resumes {
		queues = append(queues, fmt.Sprintf("%s hot=%v", r.queue, r.hot))
	}
	wantQ := []string{testQueue + " hot=false", b.HotQueue() + " hot=false", b.HotQueue() + " hot=true"}
	if !slices.Equal(queues, wantQ) {
		t.Errorf("segments ran on %q, want %q", queues, wantQ)
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

type decided struct {
	accepted, rejected error
	done               bool
}

func (d *decided) Accept()                   {}
func (d *decided) Reject(err error)          { d.rejected = err }
func (d *decided) Complete(_ any, err error) { d.done, d.accepted = true, err }

func approvalRun(t *testing.T, decide func(h *harness)) (value.Value, int, *harness) {
	t.Helper()
	blobs := memStore(t)
	w := newSidecar(t, "a", blobs)
	refunds := 0
	tools := map[string]durable.Capability{
		"refund": func(ctx context.Context, c durable.Call) (value.Value, error) {
			refunds++
			return value.String("refunded"), nil
		},
	}
	h := newHarness(t, tools, w)
	if decide != nil {
		decide(h)
	}
	caps := []Capability{{Name: "refund", Approval: &Approval{Timeout: 2 * time.Hour}}}
	h.env.ExecuteWorkflow(WorkflowName, Execution{Source: approvalSource, Capabilities: caps, Queue: testQueue})
	return result(t, h), refunds, h
}

func obj(t *testing.T, v value.Value) map[string]any {
	t.Helper()
	var m map[string]any
	if err := value.Decode(v, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// The call waits an hour (skipped) for its approval, shows in the status
// query with its arguments, then runs the tool.
func TestApprovalApproved(t *testing.T) {
	var status Status
	var d, wrong decided
	got, refunds, _ := approvalRun(t, func(h *harness) {
		h.env.RegisterDelayedCallback(func() {
			v, err := h.env.QueryWorkflow(StatusQuery)
			if err == nil {
				err = v.Get(&status)
			}
			if err != nil {
				t.Error(err)
			}
			h.env.UpdateWorkflow(DecideUpdate, "wrong", &wrong, Decision{CallID: 99, Approve: true})
			h.env.UpdateWorkflow(DecideUpdate, "ok", &d, Decision{CallID: 1, Approve: true})
		}, time.Hour)
	})
	if m := obj(t, got); m["ok"] != "refunded" || refunds != 1 {
		t.Fatalf("result %v after %d refunds, want ok: refunded after 1", m, refunds)
	}
	if !d.done || d.accepted != nil || d.rejected != nil {
		t.Errorf("decision: %+v", d)
	}
	if wrong.rejected == nil || !strings.Contains(wrong.rejected.Error(), "call 99") {
		t.Errorf("a decision for a call that does not wait was not refused: %+v", wrong)
	}
	if len(status.AwaitingDecision) != 1 || status.AwaitingDecision[0].Capability != "refund" ||
		!strings.Contains(string(status.AwaitingDecision[0].Args[0].AppendJSON(nil)), "A-17") {
		t.Errorf("status while waiting: %+v", status)
	}
}

func TestApprovalRejected(t *testing.T) {
	got, refunds, _ := approvalRun(t, func(h *harness) {
		h.env.RegisterDelayedCallback(func() {
			h.env.UpdateWorkflow(DecideUpdate, "no", &decided{}, Decision{CallID: 1, Reason: "over the limit"})
		}, time.Minute)
	})
	m := obj(t, got)
	if m["name"] != ErrNameApprovalDenied || m["code"] != CodeApprovalDenied || m["message"] != "over the limit" || refunds != 0 {
		t.Fatalf("guest saw %v after %d refunds", m, refunds)
	}
}

func TestApprovalTimedOut(t *testing.T) {
	got, refunds, _ := approvalRun(t, nil)
	m := obj(t, got)
	if m["name"] != ErrNameApprovalTimeout || m["code"] != CodeApprovalTimeout || refunds != 0 {
		t.Fatalf("guest saw %v after %d refunds", m, refunds)
	}
}

// Cancelling the workflow ends the guest in band while it runs (the
// sidecar process stays up), and no activity starts afterwards.
func TestCancel(t *testing.T) {
	blobs := memStore(t)
	w := newSidecar(t, "a", blobs)
	tools := map[string]durable.Capability{
		"ready": func(ctx context.Context, c durable.Call) (value.Value, error) { return value.Bool(true), nil },
	}
	h := newHarness(t, tools, w)
	type ended struct {
		err error
		at  time.Time
	}
	segmentEnded := make(chan ended, 1)
	resume := h.fleet.resume
	h.env.RegisterActivityWithOptions(func(ctx context.Context, in ResumeInput) (*Segment, error) {
		seg, err := resume(ctx, in)
		segmentEnded <- ended{err, time.Now()}
		return seg, err
	}, activity.RegisterOptions{Name: ResumeActivity, DisableAlreadyRegisteredCheck: true})
	var cancelledAt time.Time
	var startedAfter []string
	h.env.SetOnActivityHeartbeatListener(func(info *activity.Info, _ converter.EncodedValues) {
		if info.ActivityType.Name == ResumeActivity && cancelledAt.IsZero() {
			cancelledAt = time.Now()
			h.env.CancelWorkflow()
		}
	})
	h.env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if !cancelledAt.IsZero() {
			startedAfter = append(startedAfter, info.ActivityType.Name)
		}
	})
	src := `async function main() { await ready(); while (true) {} } main();`
	h.env.ExecuteWorkflow(WorkflowName, Execution{Source: src, Capabilities: capsOf(tools), Queue: testQueue,
		Limits: Limits{InstructionBudget: host.Limit(1 << 60)}})
	if err := h.env.GetWorkflowError(); !temporal.IsCanceledError(err) {
		t.Fatalf("workflow ended with %v, want cancelled", err)
	}
	select {
	case e := <-segmentEnded:
		if !errors.Is(e.err, context.Canceled) {
			t.Errorf("the segment ended with %v, want cancelled", e.err)
		}
		t.Logf("guest ended %v after the cancel", e.at.Sub(cancelledAt))
		if d := e.at.Sub(cancelledAt); d > 5*time.Second {
			t.Errorf("the guest ran on %v after the cancel", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the guest still runs 20s after the cancel")
	}
	if len(startedAfter) > 0 {
		t.Errorf("activities started after the cancel: %v", startedAfter)
	}
	if w.procs[0].gen != 1 || !alive(w.procs[0].c) {
		t.Error("the sidecar process was replaced: the cancel was not in band")
	}
}
