// Command example runs the gallery's triage program as a Temporal
// workflow: it starts a sidecar worker, a tool worker with fake tools and
// a workflow worker in this process, runs one execution whose
// post_summary call needs an approval, approves it, and prints the
// result.
//
// It needs a Temporal server (for example `temporal server start-dev`)
// and mustard-sidecar on PATH. From the repository root:
//
//	go install ./cmd/mustard-sidecar
//	(cd contrib/temporal && go run ./example -program ../../bench/workloads/triage.js)
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	_ "gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/memblob"

	"github.com/mustard-sidecar/mustard-sidecar/contrib/temporal"
	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

func main() {
	addr := flag.String("temporal", client.DefaultHostPort, "Temporal frontend address")
	blobURL := flag.String("blobs", "mem://", "blob store URL (mem://, file:///dir, s3://bucket, ...)")
	program := flag.String("program", "../../bench/workloads/triage.js", "guest program")
	flag.Parse()
	if err := run(*addr, *blobURL, *program); err != nil {
		log.Fatal(err)
	}
}

func run(addr, blobURL, program string) error {
	ctx := context.Background()
	src, err := os.ReadFile(program)
	if err != nil {
		return err
	}
	// In production these come from a secret store, the same for every
	// worker and client.
	key, _ := host.GenerateKey()
	seal, _ := host.GenerateSealKey()
	codecKey := make([]byte, 32)
	rand.Read(codecKey)
	codec, err := mustardtemporal.NewCodec(codecKey)
	if err != nil {
		return err
	}
	c, err := client.Dial(client.Options{HostPort: addr, DataConverter: codec.DataConverter()})
	if err != nil {
		return err
	}
	defer c.Close()
	blobs, err := mustardtemporal.OpenBucket(ctx, blobURL)
	if err != nil {
		return err
	}
	defer blobs.Close()

	const queue = "mustard"
	sidecars, err := mustardtemporal.NewSidecarWorker(mustardtemporal.SidecarConfig{Queue: queue, Key: key,
		SealKey: seal, Blobs: blobs})
	if err != nil {
		return err
	}
	defer sidecars.Close()
	// A short sticky timeout (an execution whose worker died moves on
	// within about a second) and heartbeats every 250 ms at most (a
	// cancel reaches a running guest that soon).
	segments := mustardtemporal.WorkerOptions(worker.Options{})
	shared := worker.New(c, queue, segments)
	mustardtemporal.RegisterWorkflow(shared)
	sidecars.Register(shared)
	hot := worker.New(c, sidecars.HotQueue(), segments)
	sidecars.RegisterHot(hot)
	tools := worker.New(c, "tools", worker.Options{})
	mustardtemporal.RegisterTools(tools, fakeTools())
	for _, w := range []worker.Worker{shared, hot, tools} {
		if err := w.Start(); err != nil {
			return err
		}
		defer w.Stop()
	}

	var caps []mustardtemporal.Capability
	for name := range fakeTools() {
		cp := mustardtemporal.Capability{Name: name, TaskQueue: "tools", StartToClose: 10 * time.Second}
		if name == "post_summary" {
			cp.Approval = &mustardtemporal.Approval{Timeout: time.Hour}
		}
		caps = append(caps, cp)
	}
	id := fmt.Sprintf("triage-%d", time.Now().UnixNano())
	wr, err := mustardtemporal.Start(ctx, c, id, mustardtemporal.Execution{Source: string(src), Queue: queue,
		Inputs: map[string]value.Value{"team": value.String("support-eu")}, Capabilities: caps})
	if err != nil {
		return err
	}
	// The approver: wait for the call, show it, approve it.
	for {
		st, err := mustardtemporal.GetStatus(ctx, c, id)
		if err != nil {
			return err
		}
		if len(st.AwaitingDecision) > 0 {
			k := st.AwaitingDecision[0]
			args, err := value.ToPlainJSON(value.Array(k.Args...))
			if err != nil {
				return err
			}
			fmt.Printf("step %d: %s%s waits for approval\n", st.Step, k.Capability, args)
			if err := mustardtemporal.Decide(ctx, c, id, mustardtemporal.Decision{CallID: k.ID, Approve: true}); err != nil {
				return err
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	var v *value.Value
	if err := wr.Get(ctx, &v); err != nil {
		return err
	}
	// Plain JSON, as the guest's JSON.stringify would write it (a
	// value.Value's own JSON is the tagged wire form).
	out, err := value.ToPlainJSON(*v)
	if err != nil {
		return err
	}
	fmt.Printf("result: %s\n", out)
	return nil
}

func fakeTools() map[string]durable.Capability {
	return map[string]durable.Capability{
		"list_tickets": func(ctx context.Context, c durable.Call) (value.Value, error) {
			return value.FromGo(map[string]any{"ids": []string{"T-1", "T-2", "T-3", "T-4"}})
		},
		"get_ticket": func(ctx context.Context, c durable.Call) (value.Value, error) {
			var q struct{ ID string }
			if err := c.Decode(&q); err != nil {
				return value.Value{}, err
			}
			return value.FromGo(map[string]any{"id": q.ID, "title": "ticket " + q.ID, "priority": 1,
				"sla_hours_left": 12, "tags": []string{}, "customer_id": "C-" + q.ID[2:]})
		},
		"get_customer": func(ctx context.Context, c durable.Call) (value.Value, error) {
			var q struct{ ID string }
			if err := c.Decode(&q); err != nil {
				return value.Value{}, err
			}
			if q.ID == "C-3" {
				return value.Value{}, host.CallError{Message: "no such customer", Code: "NOT_FOUND"}
			}
			return value.FromGo(map[string]any{"name": "customer " + q.ID, "plan": "pro", "mrr": 250})
		},
		"post_summary": func(ctx context.Context, c durable.Call) (value.Value, error) {
			return value.FromGo(map[string]any{"message_id": "M-1"})
		},
	}
}
