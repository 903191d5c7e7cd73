package mustardtemporal

import (
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Names under which the workflow, its activities, its update and its
// queries are registered.
const (
	WorkflowName = "mustard.Execution"

	StartActivity  = "mustard.Start"
	ResumeActivity = "mustard.Resume"
	// ForgetActivity is run by executions started before the segment
	// that ends an execution deleted its snapshot itself.
	ForgetActivity = "mustard.Forget"

	// DecideUpdate is the update that decides a call waiting for
	// approval (argument: a Decision).
	DecideUpdate = "mustard.decide"
	// StatusQuery returns a Status.
	StatusQuery = "mustard.status"
)

// ToolActivity is the activity type that runs capability name.
func ToolActivity(name string) string { return "mustard.tool." + name }

// Execution is the input of the workflow: one guest execution, from its
// start (Program or Source, Inputs) or, after continue-as-new, from its
// State.
type Execution struct {
	// ProgramID names a compiled program the workers find in the blob
	// store (see StoreProgram); or Source is compiled by the worker that
	// runs the first segment.
	ProgramID string `json:",omitempty"`
	Source    string `json:",omitempty"`
	Inputs    map[string]value.Value
	// Capabilities are granted to the guest; each is run as an activity
	// (or decided by an update) as its Capability says.
	Capabilities []Capability
	Limits       Limits
	// Queue is the task queue of the sidecar workers.
	Queue string
	// Options tune the workflow; the zero value is the defaults.
	Options Options
	// State is set when the execution continues as new, and by nothing
	// else.
	State *State `json:",omitempty"`
}

// Capability is a capability the guest may call, and how the workflow
// answers it: by an activity of type ToolActivity(Name) on TaskQueue,
// after an approval when Approval is set, or by the approval alone.
type Capability struct {
	Name string
	// TaskQueue of the tool workers; empty means Execution.Queue.
	TaskQueue string `json:",omitempty"`
	// StartToClose bounds one attempt; 0 means one minute.
	StartToClose time.Duration `json:",omitempty"`
	// ScheduleToClose bounds all attempts together; 0 means no bound
	// beyond the retry policy.
	ScheduleToClose time.Duration `json:",omitempty"`
	// Heartbeat, if set, is the heartbeat timeout: the activity then
	// heartbeats by itself while the tool runs, so that a cancelled
	// workflow cancels the tool's ctx. 0 means 10 seconds; negative
	// means none.
	Heartbeat time.Duration `json:",omitempty"`
	// Retry is the activity's retry policy; nil means Temporal's default
	// (retry without limit, exponential backoff), bounded by
	// ScheduleToClose.
	Retry *temporal.RetryPolicy `json:",omitempty"`
	// Approval, if set, makes each call wait for a Decision (the
	// DecideUpdate) before anything runs.
	Approval *Approval `json:",omitempty"`
}

// Approval says that a capability's calls need a human decision.
type Approval struct {
	// Timeout bounds the wait; 0 means 24 hours. A call not decided in
	// time throws an ApprovalTimeout error in the guest.
	Timeout time.Duration `json:",omitempty"`
	// DecisionOnly answers the call with the decision itself
	// (Decision.Value, or true) instead of running the tool once it is
	// approved.
	DecisionOnly bool `json:",omitempty"`
}

// Decision decides a call waiting for approval.
type Decision struct {
	CallID  uint64
	Approve bool
	// Reason is the message of the error a refusal throws in the guest.
	Reason string `json:",omitempty"`
	// Value answers an approved DecisionOnly call (nil means true).
	Value *value.Value `json:",omitempty"`
}

// Errors the guest sees for calls that were not answered by their tool:
// CallErrors with these names and codes, catchable by guest code.
const (
	ErrNameApprovalDenied  = "ApprovalDenied"
	ErrNameApprovalTimeout = "ApprovalTimeout"
	ErrNameToolFailed      = "ToolFailed"

	CodeApprovalDenied  = "approval_denied"
	CodeApprovalTimeout = "approval_timeout"
	CodeToolFailed      = "tool_failed"
	CodeToolTimeout     = "tool_timeout"
)

// Error types (temporal.ApplicationError.Type) the workflow fails with.
const (
	// ErrTypeGuest: the guest failed (uncaught exception, limit, ...);
	// the message is the sidecar's ("Runtime: TypeError: ...").
	ErrTypeGuest = "MustardGuestError"
	// ErrTypeVersion: no worker of a sidecar version that can read the
	// execution's snapshots took it.
	ErrTypeVersion = "MustardSidecarVersion"
	// ErrTypeSnapshot: a snapshot was refused (tampered, wrong seal key,
	// missing from the blob store).
	ErrTypeSnapshot = "MustardSnapshot"
)

// Options tune the workflow.
type Options struct {
	// HotWait is the schedule-to-start timeout of a segment sent to the
	// worker that holds the parked execution; after it the segment runs
	// cold on any worker. A hot segment is normally taken within
	// milliseconds; HotWait is what a step waits when that worker is
	// gone or has all its processes busy. 0 means 300 ms; negative
	// disables hot resumes.
	HotWait time.Duration `json:",omitempty"`
	// SegmentTimeout bounds one segment (start-to-close); 0 means 5
	// minutes. Limits.WallTime bounds the guest's own time per segment.
	SegmentTimeout time.Duration `json:",omitempty"`
	// SegmentHeartbeat is the heartbeat timeout of a segment, which
	// heartbeats while the guest runs: a cancelled workflow reaches the
	// guest within about this long. 0 means one second.
	SegmentHeartbeat time.Duration `json:",omitempty"`
	// SegmentAttempts bounds the attempts of a cold segment (a worker or
	// its sidecar dying under it); 0 means 10.
	SegmentAttempts int32 `json:",omitempty"`
	// MaxHistoryEvents is the history length after which the execution
	// continues as new (it also does when Temporal suggests it); 0 means
	// 10,000.
	MaxHistoryEvents int `json:",omitempty"`
	// SearchAttributes, if set, keeps the search attributes
	// MustardStep, MustardPendingCalls (Int) and MustardLastError
	// (Keyword) up to date; they must be registered on the namespace.
	SearchAttributes bool `json:",omitempty"`
}

// Limits are an execution's limits: host.Limits, as Temporal's payloads
// carry them, with Go's field names (WallTime in nanoseconds). host.Limits'
// own JSON is the sidecar's wire form, which workflow histories do not use.
type Limits host.Limits

// Host returns l as host.Limits.
func (l Limits) Host() host.Limits { return host.Limits(l) }

// State is what the workflow carries from one run to the next when it
// continues as new: references, not bytes. The snapshot itself is in the
// blob store; Answers are the answers that came in and have not been
// given to the guest yet (history holds them encrypted, through the
// Codec).
type State struct {
	ProgramID      string
	SnapshotID     string
	Step           int
	WorkerQueue    string `json:",omitempty"`
	SidecarVersion string
	Answers        []host.Answer `json:",omitempty"`
	// Drop names snapshots the execution moved past, which its next
	// segment deletes.
	Drop []string `json:",omitempty"`
}

// Status is what StatusQuery returns.
type Status struct {
	Step           int
	SnapshotID     string
	SidecarVersion string
	WorkerQueue    string
	// Pending lists the calls not yet answered; AwaitingDecision are
	// those waiting for a Decision, with their arguments.
	Pending          []uint64
	AwaitingDecision []host.PendingCall
	LastError        string `json:",omitempty"`
}

// StartInput is the input of StartActivity.
type StartInput struct {
	Execution    string
	ProgramID    string `json:",omitempty"`
	Source       string `json:",omitempty"`
	Inputs       map[string]value.Value
	Capabilities []string
	Limits       Limits
}

// ResumeInput is the input of ResumeActivity.
type ResumeInput struct {
	Execution      string
	SnapshotID     string
	SidecarVersion string
	Capabilities   []string
	Limits         Limits
	Answers        []host.Answer
	// Drop names snapshots the execution has moved past, for the worker
	// to delete from the blob store.
	Drop []string `json:",omitempty"`
}

// Segment is the result of StartActivity and ResumeActivity: the
// execution completed (Done, with Value or Failure), or it is suspended
// on Calls with its snapshot stored under SnapshotID.
type Segment struct {
	Done    bool
	Value   *value.Value `json:",omitempty"`
	Failure string       `json:",omitempty"`

	ProgramID      string
	SnapshotID     string             `json:",omitempty"`
	Calls          []host.PendingCall `json:",omitempty"`
	WorkerQueue    string
	SidecarVersion string
	Hot            bool
}

// ToolCall is the input of a tool activity.
type ToolCall struct {
	Execution  string
	CallID     uint64
	Capability string
	Args       []value.Value
}
