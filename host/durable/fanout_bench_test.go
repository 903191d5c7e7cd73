package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/host"

	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// BenchmarkRunnerFanOut runs `await Promise.all` over ten calls that each
// sleep 200 ms through a Runner: in batch mode a Run takes about 200 ms,
// one call at a time about 2 s. ns/op is the wall time of one Run;
// resumes/op how many resumes carried the ten answers.
func BenchmarkRunnerFanOut(b *testing.B) {
	ctx := context.Background()
	pool, err := host.NewPool(host.PoolConfig{Size: 1, Command: func() *exec.Cmd { return sidecarCmd(b) }})
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	prog, err := pool.Compile(ctx, fanOutSource)
	if err != nil {
		b.Fatal(err)
	}
	caps := map[string]Capability{
		"slow": func(ctx context.Context, c Call) (value.Value, error) {
			select {
			case <-time.After(200 * time.Millisecond):
				return c.Args[0], nil
			case <-ctx.Done():
				return value.Value{}, ctx.Err()
			}
		},
	}
	for _, mode := range []host.HostCalls{host.HostCallsBatch, host.HostCallsOne} {
		b.Run(string(mode), func(b *testing.B) {
			store := &MemoryStore{}
			r := &Runner{Pool: pool, Key: testKey, Store: store, HostCalls: mode}
			resumes := 0
			r.observe = func(*host.Client, bool) { resumes++ }
			n := 0
			for b.Loop() {
				n++
				id := fmt.Sprint("fan-out-", n)
				v, err := r.Run(ctx, Execution{ID: id, Program: prog, Inputs: idsInput(10), Capabilities: caps})
				if err != nil || len(v.Elems) != 10 {
					b.Fatal(err, v)
				}
				store.Delete(ctx, id)
			}
			b.ReportMetric(float64(resumes)/float64(n), "resumes/op")
		})
	}
}
