package mustardtemporal

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Search attributes the workflow keeps up to date with
// Options.SearchAttributes.
var (
	StepAttribute         = temporal.NewSearchAttributeKeyInt64("MustardStep")
	PendingCallsAttribute = temporal.NewSearchAttributeKeyInt64("MustardPendingCalls")
	LastErrorAttribute    = temporal.NewSearchAttributeKeyKeyword("MustardLastError")
)

// RegisterWorkflow registers Workflow under WorkflowName.
func RegisterWorkflow(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
}

// Workflow runs one guest execution to its end: a fixed loop of segments
// (activities on the sidecar workers) and capability calls (activities on
// the tool workers, or decisions by update). Its state holds references
// only (program id, snapshot id, step, worker queue, sidecar version);
// the snapshot bytes stay in the blob store. It continues as new before
// its history grows past Options.MaxHistoryEvents.
//
// It returns the guest's result, or fails with an ApplicationError of
// type ErrTypeGuest carrying the guest's failure. Cancelling it cancels
// the running segment (the sidecar ends the guest in band) and the
// running tool activities; the execution then ends for good.
func Workflow(ctx workflow.Context, in Execution) (*value.Value, error) {
	if in.Queue == "" {
		return nil, temporal.NewNonRetryableApplicationError("Execution.Queue is empty", "MustardConfig", nil)
	}
	r := &run{ctx: ctx, in: in, id: workflow.GetInfo(ctx).WorkflowExecution.ID, caps: map[string]Capability{},
		pending: map[uint64]*pendingCall{}, results: workflow.NewBufferedChannel(ctx, 1<<20)}
	r.defaults()
	for _, c := range in.Capabilities {
		if c.Name == "" {
			return nil, temporal.NewNonRetryableApplicationError("a capability has no name", "MustardConfig", nil)
		}
		r.caps[c.Name] = c
		r.names = append(r.names, c.Name)
	}
	slices.Sort(r.names)
	if err := r.handlers(); err != nil {
		return nil, err
	}
	return r.loop()
}

type run struct {
	ctx   workflow.Context
	in    Execution
	opts  Options
	id    string
	caps  map[string]Capability
	names []string

	st      State
	pending map[uint64]*pendingCall // calls listed and not yet given to the guest
	running int                     // calls whose answer has not come back yet
	results workflow.Channel        // answers, as calls return
	lastErr string
}

type pendingCall struct {
	call     host.PendingCall
	awaiting bool // waits for a Decision
	decision *Decision
}

func (r *run) defaults() {
	o := r.in.Options
	if o.HotWait == 0 {
		o.HotWait = DefaultHotWait
	}
	if o.SegmentTimeout <= 0 {
		o.SegmentTimeout = 5 * time.Minute
	}
	if o.SegmentHeartbeat <= 0 {
		o.SegmentHeartbeat = time.Second
	}
	if o.SegmentAttempts <= 0 {
		o.SegmentAttempts = 10
	}
	if o.MaxHistoryEvents <= 0 {
		o.MaxHistoryEvents = 10_000
	}
	r.opts = o
}

func (r *run) handlers() error {
	err := workflow.SetUpdateHandlerWithOptions(r.ctx, DecideUpdate,
		func(ctx workflow.Context, d Decision) error {
			r.pending[d.CallID].decision = &d
			return nil
		},
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, d Decision) error {
			p := r.pending[d.CallID]
			if p == nil || !p.awaiting || p.decision != nil {
				return fmt.Errorf("call %d of execution %s is not waiting for a decision", d.CallID, r.id)
			}
			return nil
		}})
	if err != nil {
		return err
	}
	return workflow.SetQueryHandler(r.ctx, StatusQuery, func() (Status, error) {
		s := Status{Step: r.st.Step, SnapshotID: r.st.SnapshotID, SidecarVersion: r.st.SidecarVersion,
			WorkerQueue: r.st.WorkerQueue, LastError: r.lastErr, Pending: []uint64{}, AwaitingDecision: []host.PendingCall{}}
		for _, id := range r.pendingIDs() {
			s.Pending = append(s.Pending, id)
			if p := r.pending[id]; p.awaiting && p.decision == nil {
				s.AwaitingDecision = append(s.AwaitingDecision, p.call)
			}
		}
		return s, nil
	})
}

func (r *run) pendingIDs() []uint64 {
	ids := make([]uint64, 0, len(r.pending))
	for id := range r.pending {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (r *run) loop() (*value.Value, error) {
	var seg *Segment
	var ready []host.Answer
	var drop []string // snapshots the execution moved past
	if s := r.in.State; s != nil {
		r.st = *s
		ready, drop = s.Answers, s.Drop
		r.st.Answers, r.st.Drop = nil, nil
	} else {
		var err error
		if seg, err = r.start(); err != nil {
			return nil, err
		}
		r.st.ProgramID = seg.ProgramID
	}
	for {
		if seg != nil {
			if seg.Done {
				// The segment that ended the execution deletes the snapshot
				// it resumed once Temporal holds its result: the result is
				// returned without waiting for a cleanup activity.
				// Executions that started before keep theirs.
				if workflow.GetVersion(r.ctx, "segment-forgets", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
					r.forget(append(drop, r.st.SnapshotID))
				}
				if seg.Failure != "" {
					return nil, temporal.NewNonRetryableApplicationError(seg.Failure, ErrTypeGuest, nil)
				}
				return seg.Value, nil
			}
			if r.st.SnapshotID != "" {
				drop = append(drop, r.st.SnapshotID)
			}
			r.st.SnapshotID, r.st.WorkerQueue, r.st.SidecarVersion = seg.SnapshotID, seg.WorkerQueue, seg.SidecarVersion
			r.st.Step++
			for _, k := range seg.Calls {
				if r.pending[k.ID] == nil {
					r.call(k)
				}
			}
			r.attributes()
			if r.continueAsNew() {
				return nil, r.continued(ready, drop)
			}
		}
		// Wait for at least one answer, then take every one that came.
		for len(ready) == 0 {
			var a host.Answer
			sel := workflow.NewSelector(r.ctx)
			sel.AddReceive(r.results, func(c workflow.ReceiveChannel, _ bool) { c.Receive(r.ctx, &a) })
			sel.AddReceive(r.ctx.Done(), func(workflow.ReceiveChannel, bool) {})
			sel.Select(r.ctx)
			if err := r.ctx.Err(); err != nil {
				return nil, err
			}
			r.running--
			ready = append(ready, a)
		}
		for {
			var a host.Answer
			if !r.results.ReceiveAsync(&a) {
				break
			}
			r.running--
			ready = append(ready, a)
		}
		send, rest := splitAnswers(ready)
		var err error
		if seg, err = r.resume(send, drop); err != nil {
			return nil, err
		}
		for _, a := range send {
			delete(r.pending, a.ID)
		}
		ready, drop = rest, nil
	}
}

// maxAnswerBytes bounds the answers one resume carries, below the
// sidecar's 1 MiB request limit; the others go with the next resume.
const maxAnswerBytes = 768 << 10

// splitAnswers returns the answers to send now (at least one) and those
// to keep for the next resume.
func splitAnswers(ready []host.Answer) (send, rest []host.Answer) {
	total := 0
	for i, a := range ready {
		b, _ := json.Marshal(a.Payload)
		total += len(b)
		if i > 0 && total > maxAnswerBytes {
			return ready[:i], ready[i:]
		}
	}
	return ready, nil
}

// call starts answering a call: a tool activity, or a decision first.
func (r *run) call(k host.PendingCall) {
	spec := r.caps[k.Capability]
	p := &pendingCall{call: k, awaiting: spec.Approval != nil}
	r.pending[k.ID] = p
	r.running++
	workflow.Go(r.ctx, func(ctx workflow.Context) {
		a := host.Answer{ID: k.ID, Payload: r.answer(ctx, spec, p)}
		r.results.Send(ctx, a)
	})
}

func (r *run) answer(ctx workflow.Context, spec Capability, p *pendingCall) host.Payload {
	k := p.call
	if a := spec.Approval; a != nil {
		timeout := a.Timeout
		if timeout <= 0 {
			timeout = 24 * time.Hour
		}
		ok, err := workflow.AwaitWithTimeout(ctx, timeout, func() bool { return p.decision != nil })
		p.awaiting = false
		switch {
		case err != nil:
			return host.Cancel()
		case !ok:
			return host.Throw(host.CallError{Name: ErrNameApprovalTimeout, Code: CodeApprovalTimeout,
				Message: fmt.Sprintf("%s was not decided within %v", k.Capability, timeout)})
		case !p.decision.Approve:
			msg := p.decision.Reason
			if msg == "" {
				msg = k.Capability + " was not approved"
			}
			return host.Throw(host.CallError{Name: ErrNameApprovalDenied, Code: CodeApprovalDenied, Message: msg})
		case a.DecisionOnly:
			if v := p.decision.Value; v != nil {
				return host.Return(*v)
			}
			return host.Return(value.Bool(true))
		}
	}
	queue := spec.TaskQueue
	if queue == "" {
		queue = r.in.Queue
	}
	ao := workflow.ActivityOptions{
		ActivityID:             fmt.Sprintf("%s/%d", r.id, k.ID),
		TaskQueue:              queue,
		StartToCloseTimeout:    spec.StartToClose,
		ScheduleToCloseTimeout: spec.ScheduleToClose,
		HeartbeatTimeout:       spec.Heartbeat,
		RetryPolicy:            spec.Retry,
	}
	if ao.StartToCloseTimeout <= 0 {
		ao.StartToCloseTimeout = time.Minute
	}
	switch {
	case ao.HeartbeatTimeout == 0:
		ao.HeartbeatTimeout = 10 * time.Second
	case ao.HeartbeatTimeout < 0:
		ao.HeartbeatTimeout = 0
	}
	var out host.Payload
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, ao), ToolActivity(k.Capability),
		ToolCall{Execution: r.id, CallID: k.ID, Capability: k.Capability, Args: k.Args}).Get(ctx, &out)
	var te *temporal.TimeoutError
	switch {
	case err == nil:
		return out
	case ctx.Err() != nil:
		return host.Cancel()
	case errors.As(err, &te):
		return host.Throw(host.CallError{Name: ErrNameToolFailed, Code: CodeToolTimeout,
			Message: fmt.Sprintf("%s (call %d) timed out", k.Capability, k.ID)})
	}
	return host.Throw(host.CallError{Name: ErrNameToolFailed, Code: CodeToolFailed,
		Message: fmt.Sprintf("%s (call %d) failed", k.Capability, k.ID)})
}

func (r *run) segmentOptions(queue string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           queue,
		StartToCloseTimeout: r.opts.SegmentTimeout,
		HeartbeatTimeout:    r.opts.SegmentHeartbeat,
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, BackoffCoefficient: 2,
			MaximumInterval: 10 * time.Second, MaximumAttempts: r.opts.SegmentAttempts},
	}
}

func (r *run) start() (*Segment, error) {
	in := StartInput{Execution: r.id, ProgramID: r.in.ProgramID, Source: r.in.Source, Inputs: r.in.Inputs,
		Capabilities: r.names, Limits: r.in.Limits}
	if in.Inputs == nil {
		in.Inputs = map[string]value.Value{}
	}
	var seg Segment
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(r.ctx, r.segmentOptions(r.in.Queue)), StartActivity, in).Get(r.ctx, &seg)
	if err != nil {
		return nil, r.segmentError(err)
	}
	return &seg, nil
}

// resume runs the next segment: first on the worker that parked the
// execution, if it takes it within HotWait, else on any worker.
func (r *run) resume(answers []host.Answer, drop []string) (*Segment, error) {
	in := ResumeInput{Execution: r.id, SnapshotID: r.st.SnapshotID, SidecarVersion: r.st.SidecarVersion,
		Capabilities: r.names, Limits: r.in.Limits, Answers: answers, Drop: drop}
	var seg Segment
	if r.opts.HotWait > 0 && r.st.WorkerQueue != "" {
		ao := r.segmentOptions(r.st.WorkerQueue)
		ao.ScheduleToStartTimeout = r.opts.HotWait
		ao.RetryPolicy = &temporal.RetryPolicy{MaximumAttempts: 1}
		err := workflow.ExecuteActivity(workflow.WithActivityOptions(r.ctx, ao), ResumeActivity, in).Get(r.ctx, &seg)
		var ae *temporal.ApplicationError
		switch {
		case err == nil:
			return &seg, nil
		case r.ctx.Err() != nil:
			return nil, r.ctx.Err()
		case errors.As(err, &ae) && (ae.Type() == ErrTypeVersion || ae.Type() == ErrTypeSnapshot):
			return nil, r.segmentError(err)
		}
		// The worker is gone, busy past HotWait, or failed under the
		// segment: any worker resumes it from the blob store.
		r.noteError(err)
	}
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(r.ctx, r.segmentOptions(r.in.Queue)), ResumeActivity, in).Get(r.ctx, &seg)
	if err != nil {
		return nil, r.segmentError(err)
	}
	return &seg, nil
}

// segmentError is how a segment that failed for good ends the workflow.
func (r *run) segmentError(err error) error {
	if r.ctx.Err() != nil {
		return r.ctx.Err()
	}
	r.noteError(err)
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) && (ae.Type() == ErrTypeVersion || ae.Type() == ErrTypeSnapshot || ae.Type() == ErrTypeGuest) {
		return temporal.NewNonRetryableApplicationError(ae.Message(), ae.Type(), nil)
	}
	return err
}

func (r *run) noteError(err error) {
	var te *temporal.TimeoutError
	var ae *temporal.ApplicationError
	switch {
	case errors.As(err, &te) && te.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START:
		r.lastErr = "segment not taken by worker " + r.st.WorkerQueue + " in time; resumed elsewhere"
	case errors.As(err, &ae):
		r.lastErr = ae.Message()
	default:
		r.lastErr = err.Error()
	}
	r.attributes()
}

func (r *run) attributes() {
	if !r.opts.SearchAttributes {
		return
	}
	_ = workflow.UpsertTypedSearchAttributes(r.ctx, StepAttribute.ValueSet(int64(r.st.Step)),
		PendingCallsAttribute.ValueSet(int64(len(r.pending))), LastErrorAttribute.ValueSet(r.lastErr))
}

func (r *run) continueAsNew() bool {
	info := workflow.GetInfo(r.ctx)
	return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() >= r.opts.MaxHistoryEvents
}

// continued waits for every running call to return (nothing is left in
// flight across runs), then continues as new with the answers.
func (r *run) continued(ready []host.Answer, drop []string) error {
	for r.running > 0 {
		var a host.Answer
		sel := workflow.NewSelector(r.ctx)
		sel.AddReceive(r.results, func(c workflow.ReceiveChannel, _ bool) { c.Receive(r.ctx, &a) })
		sel.AddReceive(r.ctx.Done(), func(workflow.ReceiveChannel, bool) {})
		sel.Select(r.ctx)
		if err := r.ctx.Err(); err != nil {
			return err
		}
		r.running--
		ready = append(ready, a)
	}
	if err := workflow.Await(r.ctx, func() bool { return workflow.AllHandlersFinished(r.ctx) }); err != nil {
		return err
	}
	next := r.in
	next.Inputs, next.Source, next.ProgramID = nil, "", ""
	st := r.st
	st.Answers = ready
	if len(drop) > 0 {
		// The new run's first resume deletes them.
		st.Drop = drop
	}
	next.State = &st
	return workflow.NewContinueAsNewError(r.ctx, WorkflowName, next)
}

// forget deletes an ended execution's snapshots (best effort: a bucket
// lifecycle rule catches what this misses).
func (r *run) forget(ids []string) {
	ids = slices.DeleteFunc(ids, func(s string) bool { return s == "" })
	if len(ids) == 0 {
		return
	}
	ao := workflow.ActivityOptions{TaskQueue: r.in.Queue, StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3}}
	_ = workflow.ExecuteActivity(workflow.WithActivityOptions(r.ctx, ao), ForgetActivity, ids).Get(r.ctx, nil)
}
