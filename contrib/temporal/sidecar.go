package mustardtemporal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/mustard-sidecar/mustard-sidecar/host"
)

// SidecarConfig configures a SidecarWorker.
type SidecarConfig struct {
	// Queue is the task queue the sidecar workers share (required).
	Queue string
	// ID names this worker in its own task queue (HotQueue); empty means
	// the host name, the process id and a random suffix.
	ID string
	// Command returns a new unstarted sidecar command each time the
	// worker starts a process; nil means host.DefaultCommand.
	Command func() *exec.Cmd
	// Client configures each process's client; its Cmd is ignored.
	Client host.Config
	// Processes is the number of sidecar processes, each running one
	// segment at a time; 0 means 2.
	Processes int
	// Key signs the snapshots the worker resumes (required); every
	// worker of a queue needs the same key.
	Key host.Key
	// SealKey seals every execution the worker starts; every worker of a
	// queue needs the same key. It is required unless Unsealed is set,
	// which stores snapshots in the blob store in the clear.
	SealKey  host.SealKey
	Unsealed bool
	// Blobs keeps the snapshots and programs (required), shared by every
	// worker of the queue.
	Blobs BlobStore
	// CanRead reports whether this worker's sidecar reads snapshots
	// written by a sidecar of version recorded; nil means only its own
	// version. A segment it cannot read fails with ErrTypeVersion rather
	// than being resumed wrongly.
	CanRead func(recorded string) bool
	// MaxParked bounds the executions kept parked in the worker's
	// processes for hot resumes (their snapshot bytes stay in memory);
	// 0 means 1024. Past it the oldest resume cold.
	MaxParked int
}

// DefaultHotWait is Options.HotWait's default.
const DefaultHotWait = 300 * time.Millisecond

// WorkerOptions returns o with the settings the Temporal workers of a
// SidecarWorker (the shared queue's and HotQueue's) need, where o leaves
// them zero:
//
//   - StickyScheduleToStartTimeout 300 ms (the SDK's default is 5 s): how
//     long a workflow task waits for the worker that holds the workflow
//     in its cache before any worker replays it. With DefaultHotWait
//     this bounds the stall of an execution whose worker died: its next
//     step runs about 0.75 s after the answer on a server whose timers
//     fire on time (history.timerProcessorMaxTimeShift 100 ms), 2 s with
//     the server's default of 1 s; a segment that was running waits for
//     its 1 s heartbeat timeout first.
//   - MaxHeartbeatThrottleInterval 250 ms (the SDK sends heartbeats only
//     every 0.8 × the 1 s heartbeat timeout otherwise): a cancel reaches
//     a running guest in about a quarter second.
func WorkerOptions(o worker.Options) worker.Options {
	if o.StickyScheduleToStartTimeout == 0 {
		o.StickyScheduleToStartTimeout = 300 * time.Millisecond
	}
	if o.MaxHeartbeatThrottleInterval == 0 {
		o.MaxHeartbeatThrottleInterval = 250 * time.Millisecond
	}
	return o
}

// SidecarWorker runs segments of guest executions on sidecar processes:
// the activities StartActivity, ResumeActivity and ForgetActivity.
// Register it on a Temporal worker of Config.Queue (Register) and on a
// second worker of its own queue, HotQueue (RegisterHot), where the
// workflow sends the next segment of an execution this worker parked.
type SidecarWorker struct {
	cfg      SidecarConfig
	version  string
	hotQueue string

	mu      sync.Mutex
	procs   []*proc
	changed chan struct{} // closed and replaced when a process is released
	closed  bool

	parked   map[string]*parkedExec // by snapshot id
	order    []string               // parked ids, oldest first (may hold stale ids)
	programs map[string][]byte

	hot, cold, started atomic.Int64
}

type proc struct {
	c    *host.Client
	gen  uint64
	busy bool
}

// parkedExec is an execution suspended in one of the worker's
// processes.
type parkedExec struct {
	proc     int
	gen      uint64
	policyID string
	bytes    []byte
}

// NewSidecarWorker starts the sidecar processes and asks one for its
// version.
func NewSidecarWorker(cfg SidecarConfig) (*SidecarWorker, error) {
	switch {
	case cfg.Queue == "":
		return nil, errors.New("SidecarConfig.Queue is empty")
	case cfg.Key.IsZero():
		return nil, errors.New("SidecarConfig.Key is not set")
	case cfg.SealKey.IsZero() && !cfg.Unsealed:
		return nil, errors.New("SidecarConfig.SealKey is not set (set Unsealed to store snapshots in the clear)")
	case !cfg.SealKey.IsZero() && cfg.Unsealed:
		return nil, errors.New("SidecarConfig has both SealKey and Unsealed")
	case cfg.Blobs == nil:
		return nil, errors.New("SidecarConfig.Blobs is nil")
	}
	if cfg.Processes <= 0 {
		cfg.Processes = 2
	}
	if cfg.MaxParked <= 0 {
		cfg.MaxParked = 1024
	}
	if cfg.Command == nil {
		cfg.Command = host.DefaultCommand
	}
	if cfg.ID == "" {
		cfg.ID = defaultWorkerID()
	}
	s := &SidecarWorker{cfg: cfg, hotQueue: cfg.Queue + "@" + cfg.ID, changed: make(chan struct{}),
		parked: map[string]*parkedExec{}, programs: map[string][]byte{}}
	for range cfg.Processes {
		s.procs = append(s.procs, &proc{})
	}
	for i := range s.procs {
		if err := s.restart(i); err != nil {
			s.Close()
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pong, err := s.procs[0].c.Ping(ctx)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("asking the sidecar for its version: %w", err)
	}
	s.version = pong.SidecarVersion
	if s.cfg.CanRead == nil {
		own := s.version
		s.cfg.CanRead = func(recorded string) bool { return recorded == own }
	}
	return s, nil
}

func defaultWorkerID() string {
	h, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", h, os.Getpid(), hex.EncodeToString(b[:]))
}

// Version is the sidecar version of the worker's processes.
func (s *SidecarWorker) Version() string { return s.version }

// HotQueue is the worker's own task queue, where segments of the
// executions it parked are sent.
func (s *SidecarWorker) HotQueue() string { return s.hotQueue }

// Register registers the segment activities on a worker of Config.Queue.
func (s *SidecarWorker) Register(r worker.ActivityRegistry) {
	r.RegisterActivityWithOptions(s.Start, activity.RegisterOptions{Name: StartActivity})
	r.RegisterActivityWithOptions(s.Resume, activity.RegisterOptions{Name: ResumeActivity})
	r.RegisterActivityWithOptions(s.Forget, activity.RegisterOptions{Name: ForgetActivity})
}

// RegisterHot registers the resume activity on a worker of HotQueue.
func (s *SidecarWorker) RegisterHot(r worker.ActivityRegistry) {
	r.RegisterActivityWithOptions(s.Resume, activity.RegisterOptions{Name: ResumeActivity})
}

// SidecarStats counts the segments a worker ran.
type SidecarStats struct {
	Started int64 // executions started
	Hot     int64 // resumes of an execution parked in this worker
	Cold    int64 // resumes from the blob store
}

// Stats returns the worker's counts so far.
func (s *SidecarWorker) Stats() SidecarStats {
	return SidecarStats{Started: s.started.Load(), Hot: s.hot.Load(), Cold: s.cold.Load()}
}

// Close stops the sidecar processes. Executions parked in them resume
// cold elsewhere.
func (s *SidecarWorker) Close() error {
	s.mu.Lock()
	s.closed = true
	procs := slices.Clone(s.procs)
	s.parked = map[string]*parkedExec{}
	s.order = nil
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	var errs []error
	for _, p := range procs {
		if p.c != nil {
			if err := p.c.Close(); err != nil && !errors.Is(err, host.ErrProcessExited) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Kill kills every sidecar process at once, as a crash would: the
// executions parked in them resume cold. (For tests and drills.)
func (s *SidecarWorker) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.procs {
		if p.c != nil {
			p.c.Kill()
		}
	}
}

// restart starts process i (held busy by the caller, or during setup).
func (s *SidecarWorker) restart(i int) error {
	p := s.procs[i]
	if p.c != nil {
		p.c.Kill()
		_ = p.c.Close()
	}
	cfg := s.cfg.Client
	cfg.Cmd = s.cfg.Command()
	c, err := host.NewClient(cfg)
	if err != nil {
		return err
	}
	s.mu.Lock()
	p.c = c
	p.gen++
	s.mu.Unlock()
	return nil
}

// acquire lends process want (or any free one when want < 0) with a
// running sidecar, and its generation.
func (s *SidecarWorker) acquire(ctx context.Context, want int) (int, *host.Client, uint64, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return 0, nil, 0, errors.New("sidecar worker is closed")
		}
		pick := -1
		if want >= 0 {
			if !s.procs[want].busy {
				pick = want
			}
		} else {
			for i, p := range s.procs {
				if !p.busy {
					pick = i
					break
				}
			}
		}
		if pick >= 0 {
			p := s.procs[pick]
			p.busy = true
			c := p.c
			s.mu.Unlock()
			if !alive(c) {
				if err := s.restart(pick); err != nil {
					s.release(pick)
					return 0, nil, 0, err
				}
			}
			s.mu.Lock()
			c, gen := p.c, p.gen
			s.mu.Unlock()
			return pick, c, gen, nil
		}
		wait := s.changed
		s.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return 0, nil, 0, ctx.Err()
		}
	}
}

func alive(c *host.Client) bool {
	if c == nil {
		return false
	}
	select {
	case <-c.Done():
		return false
	default:
		return true
	}
}

func (s *SidecarWorker) release(i int) {
	s.mu.Lock()
	s.procs[i].busy = false
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// park remembers an execution suspended in process i.
func (s *SidecarWorker) park(id string, x *parkedExec) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.parked[id] = x
	s.order = append(s.order, id)
	for len(s.parked) > s.cfg.MaxParked && len(s.order) > 0 {
		delete(s.parked, s.order[0])
		s.order = s.order[1:]
	}
	if len(s.order) > 2*s.cfg.MaxParked+16 {
		s.order = slices.DeleteFunc(s.order, func(id string) bool { return s.parked[id] == nil })
	}
}

// unpark returns and forgets the parked execution suspended at id.
func (s *SidecarWorker) unpark(id string) *parkedExec {
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.parked[id]
	delete(s.parked, id)
	return x
}

// heartbeat records heartbeats while a segment runs, so that a cancelled
// workflow reaches it (Temporal delivers cancellation with heartbeats).
func heartbeat(ctx context.Context) (stop func()) {
	every := activity.GetInfo(ctx).HeartbeatTimeout / 4
	if every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			activity.RecordHeartbeat(ctx)
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// Start runs an execution's first segment: from its start to its first
// suspension or its end.
func (s *SidecarWorker) Start(ctx context.Context, in StartInput) (*Segment, error) {
	defer heartbeat(ctx)()
	prog, err := s.program(ctx, in)
	if err != nil {
		return nil, err
	}
	i, c, gen, err := s.acquire(ctx, -1)
	if err != nil {
		return nil, err
	}
	defer s.release(i)
	st, err := c.Start(ctx, host.StartRequest{Program: prog, Inputs: in.Inputs, Capabilities: in.Capabilities,
		Limits: in.Limits.Host(), SealKey: s.cfg.SealKey, HostCalls: host.HostCallsBatch})
	s.started.Add(1)
	seg, err := s.finish(ctx, i, gen, st, nil, err)
	if seg != nil {
		seg.ProgramID = prog.ID
	}
	return seg, err
}

// program finds or compiles the program of a start.
func (s *SidecarWorker) program(ctx context.Context, in StartInput) (host.Program, error) {
	if in.ProgramID != "" {
		s.mu.Lock()
		b := s.programs[in.ProgramID]
		s.mu.Unlock()
		if b == nil {
			var err error
			if b, err = getVerified(ctx, s.cfg.Blobs, ProgramKey(in.ProgramID), in.ProgramID); err != nil {
				return host.Program{}, snapshotError(fmt.Errorf("program %s: %w", in.ProgramID, err))
			}
			s.rememberProgram(in.ProgramID, b)
		}
		return host.Program{ID: in.ProgramID, Bytes: b}, nil
	}
	if in.Source == "" {
		return host.Program{}, temporal.NewNonRetryableApplicationError("the execution has neither a program id nor source", ErrTypeGuest, nil)
	}
	i, c, _, err := s.acquire(ctx, -1)
	if err != nil {
		return host.Program{}, err
	}
	prog, err := c.Compile(ctx, in.Source)
	s.release(i)
	var he *host.Error
	if errors.As(err, &he) && he.Kind() != "" {
		return host.Program{}, temporal.NewNonRetryableApplicationError(he.Message, ErrTypeGuest, nil)
	}
	if err != nil {
		return host.Program{}, err
	}
	s.rememberProgram(prog.ID, prog.Bytes)
	return prog, nil
}

func (s *SidecarWorker) rememberProgram(id string, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.programs) >= 64 {
		clear(s.programs)
	}
	s.programs[id] = b
}

// Resume runs the next segment of a suspended execution: hot, in the
// process that parked it, when this worker did and the process still
// runs; otherwise from the snapshot bytes in the blob store.
func (s *SidecarWorker) Resume(ctx context.Context, in ResumeInput) (*Segment, error) {
	if in.SidecarVersion != "" && !s.cfg.CanRead(in.SidecarVersion) {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("execution %s was written by sidecar %s, which this worker's sidecar %s cannot read; run it on a worker of that version",
				in.Execution, in.SidecarVersion, s.version), ErrTypeVersion, nil)
	}
	defer heartbeat(ctx)()
	policy := &host.Policy{Capabilities: in.Capabilities, Limits: in.Limits.Host(), HostCalls: host.HostCallsBatch}
	var seg *Segment
	var err error
	if x := s.unpark(in.SnapshotID); x != nil {
		seg, err = s.resumeHot(ctx, in, x, policy)
	} else {
		seg, err = s.resumeCold(ctx, in, policy, nil)
	}
	if err != nil {
		return nil, err
	}
	for _, id := range in.Drop {
		if id != seg.SnapshotID && id != in.SnapshotID {
			_ = s.cfg.Blobs.Delete(ctx, SnapshotKey(id))
		}
	}
	if seg.Done {
		return s.completeAndForget(ctx, seg, in.SnapshotID)
	}
	return seg, nil
}

// completeAndForget ends the execution's last segment and then deletes
// the snapshot it resumed: the workflow returns the result without
// waiting for the cleanup. The segment is completed through the worker's
// client first, so the snapshot is deleted only once Temporal holds the
// result (a segment retried after a lost completion still finds it);
// in the SDK's test environment, which has no server to complete
// through, it is deleted before the segment returns.
func (s *SidecarWorker) completeAndForget(ctx context.Context, seg *Segment, snapshotID string) (*Segment, error) {
	info := activity.GetInfo(ctx)
	var c client.Client
	if info.WorkflowNamespace != sdkTestNamespace {
		c = activity.GetClient(ctx)
	}
	if c == nil || len(info.TaskToken) == 0 {
		_ = s.Forget(ctx, []string{snapshotID})
		return seg, nil
	}
	token := slices.Clone(info.TaskToken)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.CompleteActivity(ctx, token, seg, nil); err != nil {
			return
		}
		_ = s.Forget(ctx, []string{snapshotID})
	}()
	return nil, activity.ErrResultPending
}

func (s *SidecarWorker) resumeHot(ctx context.Context, in ResumeInput, x *parkedExec, policy *host.Policy) (*Segment, error) {
	i, c, gen, err := s.acquire(ctx, x.proc)
	if err != nil {
		return nil, err
	}
	if gen != x.gen {
		// The process that held it died: resume from the bytes.
		s.release(i)
		return s.resumeCold(ctx, in, policy, x.bytes)
	}
	st, err := c.Resume(ctx, host.ResumeRequest{SnapshotID: in.SnapshotID, PolicyID: x.policyID, Key: s.cfg.Key,
		SealKey: s.cfg.SealKey, Answers: in.Answers, Delivery: host.DeliverDelta})
	hot := true
	if errors.Is(err, host.ErrUnknownSnapshotID) || errors.Is(err, host.ErrUnknownPolicyID) {
		// The process let it go (its caches are bounded): send the bytes.
		hot = false
		st, err = c.Resume(ctx, host.ResumeRequest{Snapshot: x.bytes, Policy: policy, Key: s.cfg.Key,
			SealKey: s.cfg.SealKey, Answers: in.Answers, Delivery: host.DeliverDelta})
	}
	if errors.Is(err, host.ErrProcessExited) && ctx.Err() == nil {
		// The process died under the segment: another one resumes it
		// from the bytes.
		s.release(i)
		return s.resumeCold(ctx, in, policy, x.bytes)
	}
	defer s.release(i)
	seg, err := s.finish(ctx, i, gen, st, x.bytes, err)
	switch {
	case seg == nil:
	case hot:
		seg.Hot = true
		s.hot.Add(1)
	default:
		s.cold.Add(1)
	}
	return seg, err
}

func (s *SidecarWorker) resumeCold(ctx context.Context, in ResumeInput, policy *host.Policy, snap []byte) (*Segment, error) {
	if snap == nil {
		var err error
		if snap, err = getVerified(ctx, s.cfg.Blobs, SnapshotKey(in.SnapshotID), in.SnapshotID); err != nil {
			if errors.Is(err, ErrBlobNotFound) {
				return nil, snapshotError(fmt.Errorf("execution %s: snapshot %s is not in the blob store", in.Execution, in.SnapshotID))
			}
			return nil, err
		}
	}
	i, c, gen, err := s.acquire(ctx, -1)
	if err != nil {
		return nil, err
	}
	defer s.release(i)
	st, err := c.Resume(ctx, host.ResumeRequest{Snapshot: snap, Policy: policy, Key: s.cfg.Key, SealKey: s.cfg.SealKey,
		Answers: in.Answers, Delivery: host.DeliverDelta})
	seg, err := s.finish(ctx, i, gen, st, snap, err)
	if seg != nil {
		s.cold.Add(1)
	}
	return seg, err
}

// finish turns a step of process i into a Segment: it stores a new
// snapshot in the blob store and parks the execution for a hot resume.
func (s *SidecarWorker) finish(ctx context.Context, i int, gen uint64, st *host.Step, base []byte, err error) (*Segment, error) {
	var he *host.Error
	switch {
	case err == nil:
	case ctx.Err() != nil:
		// Cancelled: the sidecar ended the execution in band.
		return nil, ctx.Err()
	case errors.As(err, &he) && he.Kind() != "":
		// The guest failed: that is how the execution ends.
		return &Segment{Done: true, Failure: he.Message, WorkerQueue: s.hotQueue, SidecarVersion: s.version}, nil
	case errors.Is(err, host.ErrSealKey), errors.Is(err, host.ErrTamperedSnapshot):
		return nil, snapshotError(err)
	case errors.Is(err, host.ErrProcessExited):
		return nil, fmt.Errorf("the sidecar process exited during the segment: %w", err)
	default:
		return nil, err
	}
	seg := &Segment{WorkerQueue: s.hotQueue, SidecarVersion: s.version}
	sus := st.Suspended
	if sus == nil {
		v := st.Value
		seg.Done, seg.Value = true, &v
		return seg, nil
	}
	full, err := sus.Extend(base)
	if err != nil {
		return nil, err
	}
	if err := s.cfg.Blobs.Put(ctx, SnapshotKey(sus.SnapshotID), full); err != nil {
		return nil, err
	}
	s.park(sus.SnapshotID, &parkedExec{proc: i, gen: gen, policyID: sus.PolicyID, bytes: full})
	seg.SnapshotID, seg.Calls = sus.SnapshotID, sus.Calls
	return seg, nil
}

// sdkTestNamespace is the namespace of the SDK's test environment
// (go.temporal.io/sdk/testsuite).
const sdkTestNamespace = "default-test-namespace"

func snapshotError(err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeSnapshot, nil)
}

// Forget deletes snapshots of an execution that ended from the blob
// store and from the worker.
func (s *SidecarWorker) Forget(ctx context.Context, snapshotIDs []string) error {
	for _, id := range snapshotIDs {
		s.unpark(id)
		if err := s.cfg.Blobs.Delete(ctx, SnapshotKey(id)); err != nil {
			return err
		}
	}
	return nil
}
