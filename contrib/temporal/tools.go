package mustardtemporal

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
)

// RegisterTools registers each capability as the activity
// ToolActivity(name), on a worker of the capability's task queue. The
// functions are the ones durable.Runner takes: a host.CallError (or
// *host.CallError) is thrown in the guest, catchable; any other error
// fails the attempt, which Temporal retries as the capability's retry
// policy says (after the last attempt the guest gets a ToolFailed
// error). Call.Execution is the workflow id and Call.ID the call id: the
// activity id "<execution>/<call id>" is the same on every attempt, an
// idempotency key for tools with effects outside the host.
func RegisterTools(r worker.ActivityRegistry, tools map[string]durable.Capability) {
	for name, fn := range tools {
		r.RegisterActivityWithOptions(toolActivity(name, fn), activity.RegisterOptions{Name: ToolActivity(name)})
	}
}

func toolActivity(name string, fn durable.Capability) func(ctx context.Context, call ToolCall) (host.Payload, error) {
	return func(ctx context.Context, call ToolCall) (p host.Payload, err error) {
		defer heartbeat(ctx)()
		defer func() {
			if x := recover(); x != nil {
				err = fmt.Errorf("capability %s panicked: %v", name, x)
			}
		}()
		v, err := fn(ctx, durable.Call{Execution: call.Execution, ID: call.CallID, Seq: int(call.CallID) - 1,
			Name: call.Capability, Args: call.Args})
		var ce host.CallError
		var pce *host.CallError
		switch {
		case err == nil:
		case errors.As(err, &pce) && pce != nil:
			return host.Throw(*pce), nil
		case errors.As(err, &ce):
			return host.Throw(ce), nil
		default:
			return host.Payload{}, err
		}
		if err := v.Validate(); err != nil {
			return host.Payload{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("capability %s returned a value that cannot cross the boundary: %v", name, err), "MustardToolValue", nil)
		}
		return host.Return(v), nil
	}
}

// StoreProgram puts a compiled program into the blob store, so that
// executions can name it by Execution.ProgramID.
func StoreProgram(ctx context.Context, blobs BlobStore, p host.Program) error {
	id := p.ID
	if id == "" {
		id = sha256Hex(p.Bytes)
	} else if sha256Hex(p.Bytes) != id {
		return errors.New("program bytes do not hash to the program id")
	}
	return blobs.Put(ctx, ProgramKey(id), p.Bytes)
}

// Start starts the workflow of an execution under workflow id id, on the
// sidecar workers' queue.
func Start(ctx context.Context, c client.Client, id string, e Execution) (client.WorkflowRun, error) {
	return c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: e.Queue}, WorkflowName, e)
}

// Decide decides a call waiting for approval and waits until the
// workflow took the decision. A call that is not waiting (unknown,
// already decided, timed out) is refused with an error.
func Decide(ctx context.Context, c client.Client, id string, d Decision) error {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: DecideUpdate,
		Args: []any{d}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return err
	}
	return h.Get(ctx, nil)
}

// GetStatus asks a running execution for its Status.
func GetStatus(ctx context.Context, c client.Client, id string) (Status, error) {
	var s Status
	v, err := c.QueryWorkflow(ctx, id, "", StatusQuery)
	if err != nil {
		return s, err
	}
	return s, v.Get(&s)
}
