package mustardtemporal_test

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"gocloud.dev/blob/memblob"

	mustardtemporal "github.com/mustard-sidecar/mustard-sidecar/contrib/temporal"
	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// An execution whose refund call needs an approval, run in Temporal's
// test environment (a server runs it the same way: see example/main.go).
// The approver decides after an hour; the workflow sleeps through it.
func Example() {
	key, _ := host.GenerateKey()
	seal, _ := host.GenerateSealKey()
	codec, _ := mustardtemporal.NewCodec([]byte("an example key of 32 bytes or more"))
	blobs := mustardtemporal.NewBucketStore(memblob.OpenBucket(nil))
	defer blobs.Close()
	sidecars, err := mustardtemporal.NewSidecarWorker(mustardtemporal.SidecarConfig{Queue: "mustard",
		Key: key, SealKey: seal, Blobs: blobs,
		Command: func() *exec.Cmd { c, _ := hosttest.Command(); return c }})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sidecars.Close()

	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	env.SetDataConverter(codec.DataConverter())
	mustardtemporal.RegisterWorkflow(env)
	sidecars.Register(env)
	mustardtemporal.RegisterTools(env, map[string]durable.Capability{
		"refund": func(ctx context.Context, c durable.Call) (value.Value, error) {
			var q struct{ Amount float64 }
			if err := c.Decode(&q); err != nil {
				return value.Value{}, err
			}
			return value.String(fmt.Sprintf("refunded %v (idempotency key %s/%d)", q.Amount, c.Execution, c.ID)), nil
		},
	})
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(mustardtemporal.DecideUpdate, "approve-1", &testsuite.TestUpdateCallback{},
			mustardtemporal.Decision{CallID: 1, Approve: true})
	}, time.Hour)
	env.ExecuteWorkflow(mustardtemporal.WorkflowName, mustardtemporal.Execution{
		Source: `async function main() {
  const r = await refund({ order: "A-17", amount: 42 });
  return "done: " + r;
}
main();`,
		Capabilities: []mustardtemporal.Capability{{Name: "refund", Approval: &mustardtemporal.Approval{Timeout: 24 * time.Hour}}},
		Queue:        "mustard",
	})
	var v *value.Value
	if err := env.GetWorkflowResult(&v); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(v.Str)
	// Output: done: refunded 42 (idempotency key default-test-workflow-id/1)
}
