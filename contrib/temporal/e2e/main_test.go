// Package e2e runs mustardtemporal end to end: a real Temporal server in
// the test process (go.temporal.io/server/temporaltest: in-memory SQLite,
// loopback only), the real mustard-sidecar binary (built with go build
// into a temporary directory), sidecar workers as processes of their own
// (this test binary, re-executed in worker mode, so that a test can kill
// one with its sidecars), a tool worker in the test process, and a blob
// store in a local directory (fileblob).
//
// It is a module of its own because the server's dependency tree is
// large; contrib/temporal's own tests need no server.
package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/common/dynamicconfig"
	temporalserver "go.temporal.io/server/temporal"
	"go.temporal.io/server/temporaltest"
	"gocloud.dev/blob/fileblob"

	mustardtemporal "github.com/mustard-sidecar/mustard-sidecar/contrib/temporal"
	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Environment of a worker process (set by startWorker).
const (
	workerEnv    = "MUSTARD_E2E_WORKER" // "1" runs TestMain as a sidecar worker
	addrEnv      = "MUSTARD_E2E_ADDR"
	namespaceEnv = "MUSTARD_E2E_NAMESPACE"
	queueEnv     = "MUSTARD_E2E_QUEUE"
	idEnv        = "MUSTARD_E2E_ID"
	blobsEnv     = "MUSTARD_E2E_BLOBS"
	processesEnv = "MUSTARD_E2E_PROCESSES"
	// SidecarEnv names a prebuilt mustard-sidecar binary to use instead
	// of building one.
	SidecarEnv = "MUSTARD_E2E_SIDECAR"
)

// sidecarBin is the mustard-sidecar binary every worker and durable.Runner
// runs.
var sidecarBin string

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "1" {
		os.Exit(workerMain())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	sidecarBin = os.Getenv(SidecarEnv)
	if sidecarBin == "" {
		dir, err := os.MkdirTemp("", "mustard-e2e-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		sidecarBin = filepath.Join(dir, "mustard-sidecar")
		root, err := filepath.Abs("../../..")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		cmd := exec.Command("go", "build", "-o", sidecarBin, "./cmd/mustard-sidecar")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building the sidecar in %s: %v\n%s", root, err, out)
			return 1
		}
	}
	return m.Run()
}

var (
	testKey  = mustKey(host.NewKey([]byte(strings.Repeat("k", 32))))
	testSeal = mustKey(host.NewSealKey([]byte(strings.Repeat("s", 32))))
	codecKey = []byte(strings.Repeat("c", 32))
)

func mustKey[K any](k K, err error) K {
	if err != nil {
		panic(err)
	}
	return k
}

func newCodec() *mustardtemporal.Codec {
	c, err := mustardtemporal.NewCodec(codecKey)
	if err != nil {
		panic(err)
	}
	return c
}

func sidecarCommand() *exec.Cmd { return exec.Command(sidecarBin) }

func quietLogger(w io.Writer, level slog.Level) log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})))
}

// workerMain is a sidecar worker process: the workflow and the segment
// activities on the shared queue, the hot resumes on its own queue. It
// prints "ready <hot queue>" once its workers poll, runs until its
// standard input closes, then stops and prints "stats <json>".
func workerMain() int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	sidecarBin = os.Getenv(SidecarEnv)
	id, queue := os.Getenv(idEnv), os.Getenv(queueEnv)
	processes := 2
	if p := os.Getenv(processesEnv); p != "" {
		if _, err := fmt.Sscan(p, &processes); err != nil {
			return fail(err)
		}
	}
	c, err := client.Dial(client.Options{HostPort: os.Getenv(addrEnv), Namespace: os.Getenv(namespaceEnv),
		DataConverter: newCodec().DataConverter(), Logger: quietLogger(os.Stderr, slog.LevelWarn), Identity: id})
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	bucket, err := fileblob.OpenBucket(os.Getenv(blobsEnv), nil)
	if err != nil {
		return fail(err)
	}
	blobs := mustardtemporal.NewBucketStore(bucket)
	defer blobs.Close()
	sidecars, err := mustardtemporal.NewSidecarWorker(mustardtemporal.SidecarConfig{Queue: queue, ID: id,
		Command: sidecarCommand, Processes: processes, Key: testKey, SealKey: testSeal, Blobs: blobs})
	if err != nil {
		return fail(err)
	}
	defer sidecars.Close()
	// The documented settings: a sticky timeout of 500 ms, heartbeats
	// every 250 ms at most.
	opts := mustardtemporal.WorkerOptions(worker.Options{Identity: id})
	shared := worker.New(c, queue, opts)
	mustardtemporal.RegisterWorkflow(shared)
	sidecars.Register(shared)
	hot := worker.New(c, sidecars.HotQueue(), opts)
	sidecars.RegisterHot(hot)
	if err := shared.Start(); err != nil {
		return fail(err)
	}
	if err := hot.Start(); err != nil {
		shared.Stop()
		return fail(err)
	}
	fmt.Println("ready", sidecars.HotQueue())
	_, _ = io.Copy(io.Discard, os.Stdin)
	hot.Stop()
	shared.Stop()
	b, _ := json.Marshal(sidecars.Stats())
	fmt.Println("stats", string(b))
	return 0
}

// serverSettings are dynamic config values of the tests' server (newEnv
// runs it with the server's defaults; the latency tests also with the
// values contrib/temporal/README.md recommends):
//
//   - history.transferProcessorMaxPollRPS: how many times a second a
//     history shard reads the tasks it must hand to matching (activity
//     and workflow tasks to dispatch). The default, 20 with a burst of
//     20, makes every dispatch wait up to 50 ms once the burst is spent:
//     a sequential execution started less than a second after another
//     takes about three times as long (BenchmarkFiveTools). The test
//     server, like a dev server, has one shard for every workflow.
//   - history.timerProcessorMaxTimeShift: the default, 1 s, makes
//     timeouts fire up to about a second late, among them the sticky
//     and hot-queue timeouts an execution whose worker died waits for
//     (TestKilledWorkerNextStep).
type serverSettings struct {
	transferPollRPS int           // 0: the server's default
	timerTimeShift  time.Duration // 0: the server's default
}

var recommended = serverSettings{transferPollRPS: 1000, timerTimeShift: 100 * time.Millisecond}

// serverConfig is the test server's dynamic config: temporaltest's own
// setting and s.
func serverConfig(s serverSettings) dynamicconfig.StaticClient {
	c := dynamicconfig.StaticClient{
		dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): []dynamicconfig.ConstrainedValue{{Value: true}},
	}
	if s.transferPollRPS > 0 {
		c[dynamicconfig.TransferProcessorMaxPollRPS.Key()] = []dynamicconfig.ConstrainedValue{{Value: s.transferPollRPS}}
	}
	if s.timerTimeShift > 0 {
		c[dynamicconfig.TimerProcessorMaxTimeShift.Key()] = []dynamicconfig.ConstrainedValue{{Value: s.timerTimeShift}}
	}
	return c
}

// env is a Temporal server with a client, a blob store directory shared
// by the workers, and the test's task queues.
type env struct {
	t         testing.TB
	ts        *temporaltest.TestServer
	c         client.Client
	codec     *mustardtemporal.Codec
	queue     string
	toolQueue string
	blobDir   string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvWith(t, serverSettings{})
}

// newEnvWith is newEnv with a server running with settings.
func newEnvWith(t testing.TB, settings serverSettings) *env {
	t.Helper()
	codec := newCodec()
	var ts *temporaltest.TestServer
	opts := []temporaltest.TestServerOption{temporaltest.WithBaseServerOptions(
		temporalserver.WithDynamicConfigClient(serverConfig(settings)))}
	if tt, ok := t.(*testing.T); ok {
		ts = temporaltest.NewServer(append(opts, temporaltest.WithT(tt))...)
	} else {
		ts = temporaltest.NewServer(opts...)
		t.Cleanup(ts.Stop)
	}
	// The client's and the tool worker's log (tools that fail on purpose
	// log errors) goes to a file, shown if the test fails.
	logPath := filepath.Join(t.TempDir(), "client.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		logf.Close()
		if t.Failed() {
			t.Logf("client log:\n%s", tail(logPath))
		}
	})
	c := ts.NewClientWithOptions(client.Options{DataConverter: codec.DataConverter(), Logger: quietLogger(logf, slog.LevelWarn)})
	name := strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	return &env{t: t, ts: ts, c: c, codec: codec, queue: "mustard-" + name, toolQueue: "tools-" + name,
		blobDir: t.TempDir()}
}

// startTools runs a tool worker for tools in the test process.
func (e *env) startTools(tools map[string]durable.Capability) {
	w := worker.New(e.c, e.toolQueue, worker.Options{Identity: "tools"})
	mustardtemporal.RegisterTools(w, tools)
	if err := w.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(w.Stop)
}

// caps grants tools on the test's tool queue, retrying a failed attempt
// up to twice.
func (e *env) caps(names ...string) []mustardtemporal.Capability {
	var out []mustardtemporal.Capability
	for _, n := range names {
		out = append(out, mustardtemporal.Capability{Name: n, TaskQueue: e.toolQueue, StartToClose: time.Minute,
			Retry: &retryPolicy})
	}
	return out
}

// workerProc is a sidecar worker process.
type workerProc struct {
	t        testing.TB
	id       string
	hotQueue string
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	lines    chan string // stdout lines after "ready"
	done     chan struct{}
	log      string
	stats    *mustardtemporal.SidecarStats
}

// startWorker starts a sidecar worker process with processes sidecars and
// waits until it polls.
func (e *env) startWorker(id string, processes int) *workerProc {
	t := e.t
	t.Helper()
	logPath := filepath.Join(t.TempDir(), id+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), workerEnv+"=1", addrEnv+"="+e.ts.GetFrontendHostPort(),
		namespaceEnv+"="+e.ts.GetDefaultNamespace(), queueEnv+"="+e.queue, idEnv+"="+id,
		blobsEnv+"="+e.blobDir, SidecarEnv+"="+sidecarBin, fmt.Sprintf("%s=%d", processesEnv, processes))
	cmd.Stderr = logf
	// Its own process group, which its sidecars join: kill takes them all.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &workerProc{t: t, id: id, cmd: cmd, stdin: stdin, lines: make(chan string, 16), done: make(chan struct{}), log: logPath}
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case w.lines <- sc.Text():
			default: // nobody reads that much
			}
		}
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		w.stop()
		if t.Failed() {
			t.Logf("worker %s log:\n%s", id, w.logTail())
		}
	})
	select {
	case l := <-w.lines:
		q, ok := strings.CutPrefix(l, "ready ")
		if !ok {
			t.Fatalf("worker %s printed %q", id, l)
		}
		w.hotQueue = q
	case <-w.done:
		t.Fatalf("worker %s exited before it was ready: %s", id, w.logTail())
	case <-time.After(time.Minute):
		t.Fatalf("worker %s not ready after a minute: %s", id, w.logTail())
	}
	return w
}

func (w *workerProc) logTail() string { return tail(w.log) }

// tail returns the end of a log file.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func (w *workerProc) exited() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// kill kills the worker process and its sidecars at once (SIGKILL to its
// process group), as a machine failure would.
func (w *workerProc) kill() {
	w.t.Helper()
	if err := syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		w.t.Fatalf("killing worker %s: %v", w.id, err)
	}
	select {
	case <-w.done:
	case <-time.After(30 * time.Second):
		w.t.Fatalf("worker %s still runs 30s after SIGKILL", w.id)
	}
}

// stop stops the worker gracefully and returns its segment counts (nil
// if it was killed).
func (w *workerProc) stop() *mustardtemporal.SidecarStats {
	if w.stats != nil || w.exited() {
		return w.stats
	}
	_ = w.stdin.Close()
	select {
	case <-w.done:
	case <-time.After(time.Minute):
		_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
		<-w.done
		w.t.Errorf("worker %s did not stop within a minute: %s", w.id, w.logTail())
		return nil
	}
	for {
		select {
		case l := <-w.lines:
			if s, ok := strings.CutPrefix(l, "stats "); ok {
				var st mustardtemporal.SidecarStats
				if err := json.Unmarshal([]byte(s), &st); err != nil {
					w.t.Errorf("worker %s: %v", w.id, err)
				}
				w.stats = &st
				return w.stats
			}
		default:
			w.t.Errorf("worker %s exited without its counts: %s", w.id, w.logTail())
			return nil
		}
	}
}

// retryPolicy retries a tool attempt that failed, twice at most.
var retryPolicy = temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, BackoffCoefficient: 2, MaximumAttempts: 3}

// runs counts the tool activity runs per <execution>/<call id>, with
// the attempt of each run and whether it failed.
type runs struct {
	mu sync.Mutex
	m  map[string][]attempt
}

type attempt struct {
	n      int32
	failed bool
}

func newRuns() *runs { return &runs{m: map[string][]attempt{}} }

// wrap counts every run of tools (which must run as activities).
func (r *runs) wrap(tools map[string]durable.Capability) map[string]durable.Capability {
	out := map[string]durable.Capability{}
	for name, fn := range tools {
		out[name] = func(ctx context.Context, c durable.Call) (v value.Value, err error) {
			n := activity.GetInfo(ctx).Attempt
			defer func() {
				var ce host.CallError
				r.mu.Lock()
				k := fmt.Sprintf("%s/%d", c.Execution, c.ID)
				r.m[k] = append(r.m[k], attempt{n: n, failed: err != nil && !errors.As(err, &ce)})
				r.mu.Unlock()
			}()
			return fn(ctx, c)
		}
	}
	return out
}

// closedAttempt is what the server recorded of the attempt that closed a
// tool activity: its number, and whether the attempt before it timed out
// (rather than failed in the tool).
type closedAttempt struct {
	n                int32
	afterTimeout     bool
	lastFailureKnown bool
}

// toolAttempts reads, from the histories of the workflows ids, the
// attempt that closed each tool activity, by activity id
// (<execution>/<call id>).
func (e *env) toolAttempts(ctx context.Context, ids []string) map[string]closedAttempt {
	out := map[string]closedAttempt{}
	for _, id := range ids {
		scheduled := map[int64]string{} // event id -> activity id
		for _, ev := range e.history(ctx, id) {
			if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil &&
				strings.HasPrefix(a.GetActivityType().GetName(), "mustard.tool.") {
				scheduled[ev.GetEventId()] = a.GetActivityId()
			}
			if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
				if k, ok := scheduled[a.GetScheduledEventId()]; ok {
					f := a.GetLastFailure()
					out[k] = closedAttempt{n: a.GetAttempt(), lastFailureKnown: f != nil,
						afterTimeout: f.GetTimeoutFailureInfo() != nil || f.GetCause().GetTimeoutFailureInfo() != nil}
				}
			}
		}
	}
	return out
}

// report counts the calls and those run more than once, and lists the
// calls whose runs are not what Temporal's at-least-once delivery
// allows, given closed (toolAttempts): each run is a distinct attempt;
// the attempt that closed the activity ran; an earlier attempt that did
// not fail in the tool ran only if the server timed out an attempt (its
// heartbeat came late: the attempt went on running on a live worker
// while the next one started). timedOut counts the calls whose closing
// attempt followed such a timeout.
func (r *runs) report(closed map[string]closedAttempt) (calls, twice, timedOut int, wrong []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, as := range r.m {
		calls++
		if len(as) > 1 {
			twice++
		}
		slices.SortFunc(as, func(a, b attempt) int { return int(a.n - b.n) })
		c, ok := closed[k]
		bad := !ok
		ranClosing := false
		for i, a := range as {
			switch {
			case i > 0 && a.n == as[i-1].n, a.n > c.n:
				bad = true
			case a.n == c.n:
				ranClosing = true
			case !a.failed:
				bad = bad || !c.afterTimeout
			}
		}
		if c.n > 1 && !c.lastFailureKnown || len(as) < int(c.n) && !c.afterTimeout {
			// A retry without a recorded failure, or an attempt that
			// never reached the tool and did not time out.
			bad = true
		}
		if c.afterTimeout {
			timedOut++
		}
		if bad || !ranClosing {
			wrong = append(wrong, fmt.Sprintf("%s: runs %+v, closed by attempt %d (after a timeout: %v)", k, as, c.n, c.afterTimeout))
		}
	}
	slices.Sort(wrong)
	return
}

// ledger makes tools idempotent, as a tool with effects outside the host
// must be (RegisterTools): the first run of a call to finish applies the
// call's effect (here: records its answer) under its idempotency key,
// "<execution>/<call id>"; a later run of the same call returns the
// recorded answer and applies nothing. A run that fails (not a
// host.CallError) applies nothing.
type ledger struct {
	mu      sync.Mutex
	answers map[string]ledgerEntry
}

type ledgerEntry struct {
	v   value.Value
	err error
}

func (l *ledger) wrap(tools map[string]durable.Capability) map[string]durable.Capability {
	out := map[string]durable.Capability{}
	for name, fn := range tools {
		out[name] = func(ctx context.Context, c durable.Call) (value.Value, error) {
			v, err := fn(ctx, c)
			var ce host.CallError
			if err != nil && !errors.As(err, &ce) {
				return v, err
			}
			k := fmt.Sprintf("%s/%d", c.Execution, c.ID)
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.answers == nil {
				l.answers = map[string]ledgerEntry{}
			}
			if e, ok := l.answers[k]; ok {
				return e.v, e.err
			}
			l.answers[k] = ledgerEntry{v, err}
			return v, err
		}
	}
	return out
}

// effects is the number of calls whose effect was applied.
func (l *ledger) effects() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.answers)
}

// ids returns the workflow ids of rs.
func ids(rs []client.WorkflowRun) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.GetID())
	}
	return out
}

// segmentTimeouts counts, in the histories of the workflows ids, the
// segment attempts (mustard.Start, mustard.Resume) the server timed out
// while they ran: a timed-out segment on a hot queue, and the attempt
// before a retried one when it timed out.
func (e *env) segmentTimeouts(ctx context.Context, ids []string) int {
	n := 0
	for _, id := range ids {
		segment := map[int64]bool{}
		for _, ev := range e.history(ctx, id) {
			if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
				name := a.GetActivityType().GetName()
				segment[ev.GetEventId()] = name == mustardtemporal.StartActivity || name == mustardtemporal.ResumeActivity
			}
			if a := ev.GetActivityTaskTimedOutEventAttributes(); a != nil && segment[a.GetScheduledEventId()] &&
				a.GetFailure().GetTimeoutFailureInfo().GetTimeoutType() != enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START {
				n++
			}
			if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && segment[a.GetScheduledEventId()] &&
				a.GetLastFailure().GetTimeoutFailureInfo() != nil {
				n++
			}
		}
	}
	return n
}

// history returns the events of a workflow's history.
func (e *env) history(ctx context.Context, id string) []*historypb.HistoryEvent {
	e.t.Helper()
	it := e.c.GetWorkflowHistory(ctx, id, "", false, 0)
	var out []*historypb.HistoryEvent
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			e.t.Fatalf("history of %s: %v", id, err)
		}
		out = append(out, ev)
	}
	return out
}

// waitFor polls cond every 20 ms until it holds; past deadline the test
// fails with what.
func waitFor(t *testing.T, deadline time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("%s: not after %v", what, deadline)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
