package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	mustardtemporal "github.com/mustard-sidecar/mustard-sidecar/contrib/temporal"
	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// ThroughputEnv, set to a number of executions, runs TestThroughput.
const ThroughputEnv = "MUSTARD_E2E_THROUGHPUT"

// Executions per second of the triage program (9 to 12 tool calls,
// about 9 segments, tools answering at once) with 2 sidecar worker
// processes of 2 sidecars each and 1 tool worker, all at once; against
// durable.Runner alone on a pool of 4 sidecars; and the latency of one
// execution at a time on each. The figures are in bench/README.md.
//
//	MUSTARD_E2E_THROUGHPUT=500 go test -run Throughput -v .
func TestThroughput(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv(ThroughputEnv))
	if n <= 0 {
		t.Skipf("set %s to a number of executions", ThroughputEnv)
	}
	const sequential = 20
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	src := triage(t)

	// durable.Runner alone.
	pool, err := host.NewPool(host.PoolConfig{Size: 4, Command: sidecarCommand})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	prog, err := pool.Compile(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	runner := &durable.Runner{Pool: pool, Key: testKey, SealKey: testSeal, HostCalls: host.HostCallsBatch}
	tools := triageTools(nil)
	runOne := func(id string, i int) error {
		_, err := runner.Run(ctx, durable.Execution{ID: id, Program: prog, Inputs: teamInputs(i), Capabilities: tools})
		return err
	}
	var runnerLat []time.Duration
	for i := range sequential {
		s := time.Now()
		if err := runOne(fmt.Sprintf("seq-%d", i), i); err != nil {
			t.Fatal(err)
		}
		runnerLat = append(runnerLat, time.Since(s))
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			if err := runOne(fmt.Sprintf("par-%d", i), i); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	runnerTook := time.Since(start)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	pool.Close()

	// Temporal.
	e := newEnv(t)
	a, b := e.startWorker("a", 2), e.startWorker("b", 2)
	e.startTools(triageTools(nil))
	startOne := func(id string, i int) client.WorkflowRun {
		r, err := mustardtemporal.Start(ctx, e.c, id, mustardtemporal.Execution{Source: src, Inputs: teamInputs(i),
			Capabilities: e.caps(triageCaps...), Queue: e.queue})
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
	}
	var temporalLat []time.Duration
	for i := range sequential {
		s := time.Now()
		wait(startOne(fmt.Sprintf("seq-%d", i), i))
		temporalLat = append(temporalLat, time.Since(s))
	}
	start = time.Now()
	var rs []client.WorkflowRun
	for i := range n {
		rs = append(rs, startOne(fmt.Sprintf("par-%d", i), i))
	}
	for _, r := range rs {
		wait(r)
	}
	temporalTook := time.Since(start)
	sa, sb := a.stop(), b.stop()

	rate := func(d time.Duration) float64 { return float64(n) / d.Seconds() }
	t.Logf("%d executions at once: durable.Runner %v (%.0f/s), Temporal %v (%.1f/s), %.1fx",
		n, runnerTook.Round(time.Millisecond), rate(runnerTook), temporalTook.Round(time.Millisecond), rate(temporalTook),
		temporalTook.Seconds()/runnerTook.Seconds())
	t.Logf("one at a time, median of %d: durable.Runner %v, Temporal %v", sequential, median(runnerLat), median(temporalLat))
	if sa != nil && sb != nil {
		t.Logf("segments: worker a %+v, worker b %+v", *sa, *sb)
	}
}

func median(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2].Round(100 * time.Microsecond)
}
