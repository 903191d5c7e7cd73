package mustardtemporal

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"gocloud.dev/blob/memblob"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

// The tests run the real sidecar: the test binary re-executes itself as
// the sidecar. Temporal is the SDK's test environment (no server), with
// time skipping for timers and update timeouts.

func TestMain(m *testing.M) {
	hosttest.RunAsSidecar(cli.Main)
	os.Exit(hosttest.RunTests(m))
}

const testQueue = "mustard-test"

var (
	testKey  = mustKey()
	testSeal = mustSeal()
)

func mustKey() host.Key {
	k, err := host.NewKey([]byte(strings.Repeat("k", 32)))
	if err != nil {
		panic(err)
	}
	return k
}

func mustSeal() host.SealKey {
	k, err := host.NewSealKey([]byte(strings.Repeat("s", 32)))
	if err != nil {
		panic(err)
	}
	return k
}

func sidecarCommand() *exec.Cmd {
	cmd, err := hosttest.Command()
	if err != nil {
		panic(err)
	}
	return cmd
}

func memStore(t *testing.T) *BucketStore {
	t.Helper()
	s := NewBucketStore(memblob.OpenBucket(nil))
	t.Cleanup(func() { s.Close() })
	return s
}

// newSidecar starts a sidecar worker named id on the shared test queue.
func newSidecar(t *testing.T, id string, blobs BlobStore, edit ...func(*SidecarConfig)) *SidecarWorker {
	t.Helper()
	cfg := SidecarConfig{Queue: testQueue, ID: id, Command: sidecarCommand, Processes: 1, Key: testKey,
		SealKey: testSeal, Blobs: blobs}
	for _, e := range edit {
		e(&cfg)
	}
	w, err := NewSidecarWorker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// fleet stands for the task queues of several sidecar workers in the test
// environment, which runs every activity itself: a segment sent to a
// worker's own queue runs on that worker, or times out before it starts
// if the worker is gone (as Temporal does for a queue nobody polls); a
// segment on the shared queue runs on the first worker still up.
type fleet struct {
	mu      sync.Mutex
	workers []*SidecarWorker
	gone    map[*SidecarWorker]bool
	resumes []resumeRecord
}

type resumeRecord struct {
	worker *SidecarWorker
	queue  string
	hot    bool
	err    error
}

func (f *fleet) stop(w *SidecarWorker) {
	f.mu.Lock()
	f.gone[w] = true
	f.mu.Unlock()
	w.Close()
}

func (f *fleet) pick(queue string) (*SidecarWorker, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, w := range f.workers {
		if queue == w.HotQueue() {
			if f.gone[w] {
				return nil, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
			}
			return w, nil
		}
	}
	for _, w := range f.workers {
		if !f.gone[w] {
			return w, nil
		}
	}
	return nil, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
}

func (f *fleet) start(ctx context.Context, in StartInput) (*Segment, error) {
	w, err := f.pick(activity.GetInfo(ctx).TaskQueue)
	if err != nil {
		return nil, err
	}
	return w.Start(ctx, in)
}

func (f *fleet) resume(ctx context.Context, in ResumeInput) (*Segment, error) {
	q := activity.GetInfo(ctx).TaskQueue
	w, err := f.pick(q)
	if err != nil {
		return nil, err
	}
	seg, err := w.Resume(ctx, in)
	f.mu.Lock()
	f.resumes = append(f.resumes, resumeRecord{worker: w, queue: q, hot: seg != nil && seg.Hot, err: err})
	f.mu.Unlock()
	return seg, err
}

func (f *fleet) forget(ctx context.Context, ids []string) error {
	w, err := f.pick(activity.GetInfo(ctx).TaskQueue)
	if err != nil {
		return err
	}
	return w.Forget(ctx, ids)
}

// recordingCodec keeps every payload the codec encoded: what Temporal
// would store in history.
type recordingCodec struct {
	*Codec
	mu  sync.Mutex
	out [][]byte
}

func (c *recordingCodec) Encode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out, err := c.Codec.Encode(ps)
	c.mu.Lock()
	for _, p := range out {
		b, _ := p.Marshal()
		c.out = append(c.out, b)
	}
	c.mu.Unlock()
	return out, err
}

type harness struct {
	env   *testsuite.TestWorkflowEnvironment
	fleet *fleet
	codec *recordingCodec

	mu         sync.Mutex
	activities []*activity.Info
}

// newHarness is a test environment with the workflow, the sidecar workers
// and the tools registered, and the codec in the data converter.
func newHarness(t *testing.T, tools map[string]durable.Capability, workers ...*SidecarWorker) *harness {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestWorkflowEnvironment()
	c, err := NewCodec([]byte(strings.Repeat("c", 32)))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{env: env, fleet: &fleet{workers: workers, gone: map[*SidecarWorker]bool{}}, codec: &recordingCodec{Codec: c}}
	env.SetDataConverter(converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), h.codec))
	RegisterWorkflow(env)
	env.RegisterActivityWithOptions(h.fleet.start, activity.RegisterOptions{Name: StartActivity})
	env.RegisterActivityWithOptions(h.fleet.resume, activity.RegisterOptions{Name: ResumeActivity})
	env.RegisterActivityWithOptions(h.fleet.forget, activity.RegisterOptions{Name: ForgetActivity})
	RegisterTools(env, tools)
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		h.mu.Lock()
		h.activities = append(h.activities, info)
		h.mu.Unlock()
	})
	return h
}

func (h *harness) started() []*activity.Info {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*activity.Info(nil), h.activities...)
}

func activityRegisterOptions(name string) activity.RegisterOptions {
	return activity.RegisterOptions{Name: name, DisableAlreadyRegisteredCheck: true}
}
