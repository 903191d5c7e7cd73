package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	mustardtemporal "github.com/mustard-sidecar/mustard-sidecar/contrib/temporal"
	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// fiveTools calls an instant tool five times in sequence: six segments,
// five tool activities, one after another.
const fiveTools = `async function main() {
  let sum = 0;
  for (let i = 0; i < 5; i++) sum += (await step({ i })).n;
  return { sum };
}
main();`

// TimelineEnv, set, makes BenchmarkFiveTools log the history of each
// mode's last run with the time of every event.
const TimelineEnv = "MUSTARD_E2E_TIMELINE"

func stepTool() map[string]durable.Capability {
	return map[string]durable.Capability{
		"step": func(ctx context.Context, c durable.Call) (value.Value, error) {
			var q struct{ I int }
			if err := c.Decode(&q); err != nil {
				return value.Value{}, err
			}
			return value.FromGo(map[string]any{"n": q.I + 1})
		},
	}
}

// BenchmarkFiveTools times one execution of fiveTools end to end (start
// to result, on a real server, 2 sidecar worker processes and a tool
// worker): "back-to-back" starts each run as soon as the previous one
// returned, "spaced" waits a second (not timed) between runs; on a
// server with the default history.transferProcessorMaxPollRPS (20) and
// 1000. The figures are in the README ("Latency").
//
//	go test -run '^$' -bench FiveTools -benchtime 20x .
func BenchmarkFiveTools(b *testing.B) {
	b.Run("server-default", func(b *testing.B) { benchFiveTools(b, serverSettings{}) })
	b.Run(fmt.Sprintf("poll-rps-%d", recommended.transferPollRPS), func(b *testing.B) {
		benchFiveTools(b, serverSettings{transferPollRPS: recommended.transferPollRPS})
	})
}

func benchFiveTools(b *testing.B, settings serverSettings) {
	e := newEnvWith(b, settings)
	e.startWorker("a", 2)
	e.startWorker("b", 2)
	e.startTools(stepTool())
	ctx := context.Background()
	n := 0
	once := func() (time.Duration, string) {
		n++
		id := fmt.Sprintf("five-%d", n)
		s := time.Now()
		r, err := mustardtemporal.Start(ctx, e.c, id, mustardtemporal.Execution{Source: fiveTools,
			Capabilities: e.caps("step"), Queue: e.queue})
		if err != nil {
			b.Fatal(err)
		}
		var v *value.Value
		if err := r.Get(ctx, &v); err != nil {
			b.Fatalf("%s: %v", id, err)
		}
		took := time.Since(s)
		if got, _ := value.ToPlainJSON(*v); string(got) != `{"sum":15}` {
			b.Fatalf("%s: result %s", id, got)
		}
		return took, id
	}
	once() // the first run warms the workers up
	for _, mode := range []string{"spaced", "back-to-back"} {
		b.Run(mode, func(b *testing.B) {
			var lat []time.Duration
			var last string
			for b.Loop() {
				if mode == "spaced" {
					b.StopTimer()
					time.Sleep(time.Second)
					b.StartTimer()
				}
				d, id := once()
				lat = append(lat, d)
				last = id
			}
			b.ReportMetric(float64(median(lat).Microseconds())/1000, "median-ms")
			b.ReportMetric(0, "ns/op")
			if os.Getenv(TimelineEnv) != "" {
				b.Logf("run %s:\n%s", last, e.timeline(ctx, last))
			}
		})
	}
}

// timeline lists a workflow's history events with their time since the
// first one.
func (e *env) timeline(ctx context.Context, id string) string {
	evs := e.history(ctx, id)
	if len(evs) == 0 {
		return ""
	}
	t0 := evs[0].GetEventTime().AsTime()
	var sb strings.Builder
	for _, ev := range evs {
		extra := ""
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			extra = " " + a.GetActivityType().GetName() + " on " + a.GetTaskQueue().GetName()
		}
		if a := ev.GetWorkflowTaskScheduledEventAttributes(); a != nil {
			extra = " on " + a.GetTaskQueue().GetName()
		}
		fmt.Fprintf(&sb, "  %7.1f ms  %s%s\n", float64(ev.GetEventTime().AsTime().Sub(t0).Microseconds())/1000,
			ev.GetEventType(), extra)
	}
	return sb.String()
}

// The workflow returns its result without waiting for a cleanup
// activity: the segment that ended the execution deletes its snapshot
// after Temporal took the result.
func TestResultBeforeCleanup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := newEnvWith(t, recommended)
	e.startWorker("a", 1)
	snapshots := func() int {
		ents, _ := os.ReadDir(filepath.Join(e.blobDir, "snapshots"))
		n := 0
		for _, ent := range ents {
			if !strings.HasSuffix(ent.Name(), ".attrs") {
				n++
			}
		}
		return n
	}
	var whileParked atomic.Int64
	tools := stepTool()
	step := tools["step"]
	tools["step"] = func(ctx context.Context, c durable.Call) (value.Value, error) {
		if c.ID == 5 {
			whileParked.Store(int64(snapshots()))
		}
		return step(ctx, c)
	}
	e.startTools(tools)
	r, err := mustardtemporal.Start(ctx, e.c, "five", mustardtemporal.Execution{Source: fiveTools,
		Capabilities: e.caps("step"), Queue: e.queue})
	if err != nil {
		t.Fatal(err)
	}
	var v *value.Value
	if err := r.Get(ctx, &v); err != nil {
		t.Fatal(err)
	}
	for _, ev := range e.history(ctx, "five") {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == mustardtemporal.ForgetActivity {
			t.Errorf("the workflow scheduled %s", mustardtemporal.ForgetActivity)
		}
	}
	if whileParked.Load() == 0 {
		t.Fatal("no snapshot in the blob store while the execution was parked: the check below proves nothing")
	}
	waitFor(t, time.Minute, "snapshots deleted", func() bool { return snapshots() == 0 })
}

// The time from a killed sidecar worker to the next step, with the
// documented settings (WorkerOptions, DefaultHotWait): an execution
// parked on worker a waits for its second tool call; a is killed with
// its sidecars (SIGKILL to its process group) and the call answered at
// once; the test times the answer to the third call reaching the tool
// (the next segment ran on worker b, cold), against the same step of a
// run without a kill; on a server with the default timer settings and
// with the recommended ones. The figures are in the README ("A worker
// dies").
func TestKilledWorkerNextStep(t *testing.T) {
	t.Run("server-default", func(t *testing.T) { killedWorkerNextStep(t, serverSettings{}) })
	t.Run("recommended", func(t *testing.T) { killedWorkerNextStep(t, recommended) })
}

func killedWorkerNextStep(t *testing.T, settings serverSettings) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := newEnvWith(t, settings)
	a := e.startWorker("a", 1)
	var mu sync.Mutex
	seen := map[string]time.Time{} // "<execution>/<call id>": when it reached the tool
	hold := make(chan struct{})
	held := make(chan struct{}, 1)
	tools := stepTool()
	step := tools["step"]
	tools["step"] = func(ctx context.Context, c durable.Call) (value.Value, error) {
		k := fmt.Sprintf("%s/%d", c.Execution, c.ID)
		mu.Lock()
		if _, ok := seen[k]; !ok {
			seen[k] = time.Now()
		}
		mu.Unlock()
		if c.Execution == "killed" && c.ID == 2 {
			held <- struct{}{}
			select {
			case <-hold:
			case <-ctx.Done():
				return value.Value{}, ctx.Err()
			}
		}
		return step(ctx, c)
	}
	e.startTools(tools)
	run := func(id string) client.WorkflowRun {
		r, err := mustardtemporal.Start(ctx, e.c, id, mustardtemporal.Execution{Source: fiveTools,
			Capabilities: e.caps("step"), Queue: e.queue})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	wait := func(r client.WorkflowRun) {
		var v *value.Value
		if err := r.Get(ctx, &v); err != nil {
			t.Fatalf("%s: %v", r.GetID(), err)
		}
		if got, _ := value.ToPlainJSON(*v); string(got) != `{"sum":15}` {
			t.Fatalf("%s: result %s", r.GetID(), got)
		}
	}
	wait(run("plain"))

	r := run("killed")
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("the second call never reached the tool")
	}
	st, err := mustardtemporal.GetStatus(ctx, e.c, "killed")
	if err != nil {
		t.Fatal(err)
	}
	if st.WorkerQueue != a.hotQueue {
		t.Fatalf("parked on %s, want worker a", st.WorkerQueue)
	}
	b := e.startWorker("b", 1)
	a.kill()
	answered := time.Now()
	close(hold)
	wait(r)
	sb := b.stop()

	mu.Lock()
	defer mu.Unlock()
	killed := seen["killed/3"].Sub(answered)
	plain := seen["plain/3"].Sub(seen["plain/2"])
	t.Logf("from the answer to the next tool call: %v after worker a was killed, %v without a kill (a whole step)",
		killed.Round(time.Millisecond), plain.Round(time.Millisecond))
	if os.Getenv(TimelineEnv) != "" {
		t.Logf("killed:\n%s", e.timeline(ctx, "killed"))
	}
	if sb == nil || sb.Cold == 0 {
		t.Errorf("worker b's segments %+v, want a cold resume", sb)
	}
}
