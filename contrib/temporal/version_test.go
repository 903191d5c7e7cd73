package mustardtemporal

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

func stepTools() map[string]durable.Capability {
	return map[string]durable.Capability{
		"step": func(ctx context.Context, c durable.Call) (value.Value, error) {
			var q struct{ N float64 }
			if err := c.Decode(&q); err != nil {
				return value.Value{}, err
			}
			return value.Number(q.N * 10), nil
		},
	}
}

// When Temporal suggests it, the execution continues as new carrying
// references (and the answers not yet given), and the new run finishes it
// on another worker. A worker refuses a snapshot whose sidecar version it
// cannot read.
func TestContinueAsNewAndVersions(t *testing.T) {
	blobs := memStore(t)
	a := newSidecar(t, "a", blobs)
	tools := stepTools()
	h := newHarness(t, tools, a)
	h.env.SetContinueAsNewSuggested(true)
	h.env.ExecuteWorkflow(WorkflowName, Execution{Source: stepsSource, Capabilities: capsOf(tools), Queue: testQueue,
		Inputs: map[string]value.Value{"unused": value.String("x")}})
	var can *workflow.ContinueAsNewError
	if !errors.As(h.env.GetWorkflowError(), &can) {
		t.Fatalf("workflow ended with %v, want continue-as-new", h.env.GetWorkflowError())
	}
	var next Execution
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), h.codec)
	if err := dc.FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	st := next.State
	if st == nil || st.SnapshotID == "" || st.Step != 1 || st.SidecarVersion != a.Version() || st.WorkerQueue != a.HotQueue() ||
		len(st.Answers) != 1 || next.Inputs != nil || next.Source != "" || st.ProgramID == "" {
		t.Fatalf("continued with %+v, state %+v", next, st)
	}

	// A snapshot recorded by another sidecar version is refused, not run.
	other := next
	ost := *st
	ost.SidecarVersion = "0.0.0-elsewhere"
	other.State = &ost
	h2 := newHarness(t, tools, newSidecar(t, "b", blobs))
	h2.env.ExecuteWorkflow(WorkflowName, other)
	var ae *temporal.ApplicationError
	if err := h2.env.GetWorkflowError(); !errors.As(err, &ae) || ae.Type() != ErrTypeVersion ||
		!strings.Contains(ae.Message(), "0.0.0-elsewhere") {
		t.Fatalf("workflow ended with %v, want a version refusal", err)
	}
	for _, info := range h2.started() {
		if strings.HasPrefix(info.ActivityType.Name, "mustard.tool.") {
			t.Errorf("%s ran after the refusal", info.ActivityType.Name)
		}
	}

	// The real state finishes on a worker that did not park it.
	c := newSidecar(t, "c", blobs)
	h3 := newHarness(t, tools, c)
	h3.env.ExecuteWorkflow(WorkflowName, next)
	got := result(t, h3)
	want := value.Array(value.Number(10), value.Number(110), value.Number(1110))
	if !value.Equal(got, want) {
		t.Fatalf("result %s, want %s", got.AppendJSON(nil), want.AppendJSON(nil))
	}
	if s := c.Stats(); s.Cold != 1 || s.Hot != 2 {
		t.Errorf("worker c: %+v, want 1 cold resume then hot ones", s)
	}
}
