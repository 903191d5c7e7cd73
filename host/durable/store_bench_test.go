package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/host"

	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// stepSource makes steps capability calls, each passing ~1 KiB, so that
// the snapshot grows by ~1 KiB a step.
const stepSource = `let acc = 0; for (let i = 0; i < steps; i++) { acc += cap({ i, note }).n; } acc;`

// BenchmarkDirStoreStep measures what one step of an execution costs a
// Runner at a given length of its history: from the host's answer to one
// call to the guest's next call (storing the answer, the hot resume,
// storing the new checkpoint), with the execution already history steps
// long. The journal grows ~1 KiB a step. Each iteration runs a fresh
// execution to history steps untimed, then times window steps one by one;
// ns/op is the window, ns/step the median of every timed step. Stores:
// memory (MemoryStore), dir (DirStore) and dir-sealed (DirStore with a
// host.SealKey). Run it with a fixed count, e.g.
//
//	go test -run '^$' -bench DirStoreStep -benchtime 5x ./host/
func BenchmarkDirStoreStep(b *testing.B) {
	const window = 10
	ctx := context.Background()
	pool, err := host.NewPool(host.PoolConfig{Size: 1, Command: func() *exec.Cmd { return sidecarCmd(b) }})
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	prog, err := pool.Compile(ctx, stepSource)
	if err != nil {
		b.Fatal(err)
	}
	note := value.String(strings.Repeat("n", 1000))
	for _, kind := range []string{"memory", "dir", "dir-sealed"} {
		for _, history := range []int{10, 100, 1000} {
			b.Run(fmt.Sprintf("%s/history=%d", kind, history), func(b *testing.B) {
				r := &Runner{Pool: pool, Key: testKey}
				switch kind {
				case "memory":
					r.Store = &MemoryStore{}
				case "dir", "dir-sealed":
					s, err := NewDirStore(b.TempDir())
					if err != nil {
						b.Fatal(err)
					}
					r.Store = s
				}
				if kind == "dir-sealed" {
					r.SealKey = testSealKey
				}
				var steps []time.Duration
				b.StopTimer()
				for i := range b.N {
					steps = append(steps, stepWindow(b, r, prog, fmt.Sprint("step-", i), note, history, window)...)
				}
				b.ReportMetric(float64(medianDuration(steps).Nanoseconds()), "ns/step")
			})
		}
	}
}

// stepWindow runs one execution to history steps, then times the next
// window steps (the timer runs only then) and returns each.
func stepWindow(b *testing.B, r *Runner, prog host.Program, id string, note value.Value, history, window int) []time.Duration {
	ctx := context.Background()
	arrived := make(chan struct{})
	proceed := make(chan bool)
	caps := map[string]Capability{"cap": func(ctx context.Context, c Call) (value.Value, error) {
		arrived <- struct{}{}
		if !<-proceed {
			return value.Value{}, errStopBench
		}
		return host.MustValueOf(map[string]int{"n": c.Seq}), nil
	}}
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx, Execution{ID: id, Program: prog, Capabilities: caps,
			Inputs: map[string]value.Value{"steps": value.Number(float64(history + window + 1)), "note": note}})
		done <- err
	}()
	wait := func() {
		select {
		case <-arrived:
		case err := <-done:
			b.Fatalf("the execution ended early: %v", err)
		}
	}
	wait() // call 1
	for range history - 1 {
		proceed <- true
		wait()
	}
	var out []time.Duration
	b.StartTimer()
	for range window {
		t0 := time.Now()
		proceed <- true
		wait()
		out = append(out, time.Since(t0))
	}
	b.StopTimer()
	proceed <- false
	if err := <-done; !errors.Is(err, errStopBench) {
		b.Fatal(err)
	}
	if err := r.Store.Delete(ctx, id); err != nil {
		b.Fatal(err)
	}
	return out
}

var errStopBench = errors.New("benchmark done")

func medianDuration(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
