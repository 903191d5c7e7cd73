package mustardtemporal

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"

	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// A tool that fails its last attempt throws a catchable ToolFailed in the
// guest; a guest that throws fails the workflow with its error; the search
// attributes follow the steps.
func TestFailures(t *testing.T) {
	blobs := memStore(t)
	w := newSidecar(t, "a", blobs)
	tools := map[string]durable.Capability{
		"flaky": func(ctx context.Context, c durable.Call) (value.Value, error) {
			return value.Value{}, errors.New("connection refused")
		},
	}
	h := newHarness(t, tools, w)
	var mu sync.Mutex
	var steps []int64
	h.env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		if n, ok := sa.GetInt64(StepAttribute); ok {
			mu.Lock()
			steps = append(steps, n)
			mu.Unlock()
		}
	}).Return(nil)
	src := `async function main() {
  try { await flaky(1); } catch (e) { if (e.name !== "ToolFailed" || e.code !== "tool_failed") throw e; }
  throw new RangeError("guest gave up");
}
main();`
	h.env.ExecuteWorkflow(WorkflowName, Execution{Source: src, Capabilities: capsOf(tools), Queue: testQueue,
		Options: Options{SearchAttributes: true}})
	var ae *temporal.ApplicationError
	err := h.env.GetWorkflowError()
	if !errors.As(err, &ae) || ae.Type() != ErrTypeGuest || !strings.HasPrefix(ae.Message(), "Runtime: RangeError: guest gave up") {
		t.Fatalf("workflow ended with %v, want the guest's RangeError", err)
	}
	if len(steps) == 0 || steps[0] != 1 {
		t.Errorf("search attribute steps %v", steps)
	}
}
