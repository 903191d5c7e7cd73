package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/version"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Program is a compiled guest program: the artifact compile returns and
// its id (hex SHA-256 of Bytes). Programs are deterministic for a source
// and a sidecar version, so one compiled in one process starts in any
// other process of the same version.
type Program struct {
	ID    string
	Bytes []byte
}

// Limits are an execution's limits. A nil field means the sidecar's
// default (see docs/limits.md); zero is a real value meaning none allowed.
// Limit(n) makes a field:
//
//	host.Limits{InstructionBudget: host.Limit(50_000_000)}
type Limits struct {
	InstructionBudget       *uint64
	HeapLimitBytes          *uint64
	AllocationBudget        *uint64
	CallDepthLimit          *uint64
	MaxOutstandingHostCalls *uint64
	// MaxLogBytes bounds the UTF-8 bytes of the log lines one step
	// carries (the console extension; the sidecar's default is 262144).
	// Lines past it are dropped and counted in a last "warn" line.
	MaxLogBytes *uint64
	// WallTime bounds each start or resume segment (the wall_time_ms
	// extension, rounded up to a millisecond); 0 means no wall-time
	// limit. It is the only limit that is not deterministic.
	WallTime time.Duration
}

// Limit returns a pointer to n, for the fields of Limits.
func Limit(n uint64) *uint64 { return &n }

// MarshalJSON writes l in its wire form (wire.Limits, which names the
// members once for both ends): WallTime as wall_time_ms.
func (l Limits) MarshalJSON() ([]byte, error) {
	if l.WallTime < 0 {
		return nil, fmt.Errorf("Limits.WallTime is negative")
	}
	w := wire.Limits{InstructionBudget: l.InstructionBudget, HeapLimitBytes: l.HeapLimitBytes,
		AllocationBudget: l.AllocationBudget, CallDepthLimit: l.CallDepthLimit,
		MaxOutstandingHostCalls: l.MaxOutstandingHostCalls, MaxLogBytes: l.MaxLogBytes}
	if l.WallTime > 0 {
		w.WallTimeMS = Limit(uint64((l.WallTime + time.Millisecond - 1) / time.Millisecond))
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads the wire form, refusing a member it does not name;
// wall_time_ms becomes WallTime.
func (l *Limits) UnmarshalJSON(b []byte) error {
	var w wire.Limits
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&w); err != nil {
		return err
	}
	*l = Limits{InstructionBudget: w.InstructionBudget, HeapLimitBytes: w.HeapLimitBytes,
		AllocationBudget: w.AllocationBudget, CallDepthLimit: w.CallDepthLimit,
		MaxOutstandingHostCalls: w.MaxOutstandingHostCalls, MaxLogBytes: w.MaxLogBytes}
	if w.WallTimeMS != nil {
		l.WallTime = time.Duration(*w.WallTimeMS) * time.Millisecond
	}
	return nil
}

// Policy is what a resume from snapshot bytes re-asserts: the capabilities
// the execution may still call, the limits it runs under from here on, and
// how it presents its calls.
type Policy struct {
	Capabilities []string
	Limits       Limits
	// HostCalls is the mode of the resumed execution, as for
	// StartRequest.HostCalls: HostCallsBatch to answer by call id
	// (ResumeRequest.Answers); empty or HostCallsOne for one call per
	// step. A snapshot resumes in either mode.
	HostCalls HostCalls
	// Console is the console mode of the resumed execution, as for
	// StartRequest.Console; it is part of the policy, so a raw resume
	// re-asserts the mode the execution was started with.
	Console Console
}

// HostCalls selects how a suspended execution presents its capability
// calls (the batched host calls extension). A guest's calls in async code
// are queued and run on (see docs/guest-language.md, "Capability calls");
// the mode says how many of them the host sees at once.
type HostCalls string

const (
	// HostCallsOne presents one call per suspended step, the synchronous
	// call the guest waits in or else the oldest queued one, answered by
	// ResumeRequest.Payload: the protocol without the extension. It is
	// what an empty HostCalls means in a StartRequest, a Policy and a
	// durable.Checkpoint.
	HostCallsOne HostCalls = "one"
	// HostCallsBatch presents every outstanding call at once
	// (Suspension.Calls, each with its call id), answered by any
	// non-empty subset of ResumeRequest.Answers. It is what an empty
	// durable.Runner.HostCalls means: the Runner runs the calls concurrently.
	HostCallsBatch HostCalls = "batch"
)

// wire is the host_calls field to send: nothing for one call per step,
// so that a sidecar without the extension sees the plain protocol; any
// other value as it is, for the sidecar to accept or refuse.
func (m HostCalls) wire() string {
	if m == HostCallsOne {
		return ""
	}
	return string(m)
}

// Delivery selects how a suspended step carries its snapshot bytes
// (the snapshot_delivery extension).
type Delivery string

const (
	// DeliverFull sends the whole snapshot with every suspension (the
	// default, and all a sidecar without the extension knows).
	DeliverFull Delivery = ""
	// DeliverDelta sends, for a resume, only the bytes appended to the
	// snapshot that was resumed (Suspension.BaseID names it); a start
	// still comes in full. Suspension.Extend rebuilds the full bytes.
	DeliverDelta Delivery = "delta"
	// DeliverNone sends no bytes; Client.FetchSnapshot gets them while
	// the process still holds them.
	DeliverNone Delivery = "none"
)

// StartRequest starts an execution of a compiled program.
type StartRequest struct {
	Program      Program
	Inputs       map[string]value.Value // each becomes a global of the guest
	Capabilities []string               // each becomes a global function
	Limits       Limits
	Delivery     Delivery
	Profile      bool // ask for Step.Profile
	// SealKey, if set, seals every snapshot of the execution (the sealed
	// snapshots extension): its bytes hide the program, inputs, calls and
	// answers. Every resume of it must then give the same
	// ResumeRequest.SealKey.
	SealKey SealKey
	// HostCalls is the execution's mode: empty or HostCallsOne for one
	// call per suspended step (answered by ResumeRequest.Payload),
	// HostCallsBatch for every outstanding call at once
	// (Suspension.Calls, answered by ResumeRequest.Answers). A raw
	// resume re-asserts it in Policy.HostCalls; a cached resume keeps
	// the mode of its PolicyID.
	HostCalls HostCalls
	// Console is the execution's console mode (the console extension):
	// empty or ConsoleOff gives the guest a console only for the
	// console.* capabilities it is granted; ConsoleCollect gives it every
	// console method, and each Step (or a failed start or resume's
	// *Error) carries the lines the guest wrote in Logs. A raw resume
	// re-asserts it in Policy.Console; a cached resume keeps the mode of
	// its PolicyID.
	Console Console
	// Entry is how the program runs (the entry_call extension): empty or
	// EntryScript runs it as a script whose completion value is the
	// result; EntryCall calls the function the program evaluates to with
	// the inputs object, and its (awaited) return value is the result.
	// It is fixed at the start and kept in the snapshot.
	Entry Entry
}

// ResumeRequest answers a suspended capability call.
//
// Name the snapshot by SnapshotID alone to resume one the process holds
// (the fast path: it continues a parked execution without replay), or give
// its bytes in Snapshot to resume it in any process, for example a new one
// after a crash; snapshots too large for one request are uploaded in
// chunks first. Name the policy by PolicyID (one the process holds) or
// give it in full in Policy (required after a restart). Key must be the
// key the host signs with. SealKey must be the key the execution was
// started with (StartRequest.SealKey), and zero if it was not sealed; the
// sidecar refuses a missing, different or unexpected seal key with an
// *Error ("snapshot is sealed and no seal key was given", "snapshot was
// sealed under another seal key", "snapshot is not sealed but a seal key
// was given") before the guest runs, and the execution stays resumable.
//
// In one-call mode Payload answers the call the snapshot is suspended on.
// In batch mode (HostCallsBatch) Answers answers any non-empty subset of
// its Suspension.Calls by id, and Payload is not sent; the sidecar
// refuses an id that is not outstanding ("unknown call_id N"), one given
// twice or already answered ("call_id N answered twice"), and answers in
// one-call mode or a payload in batch mode ("resume payload does not
// match host_calls <mode>"), all with an *Error that changes nothing.
type ResumeRequest struct {
	SnapshotID string
	Snapshot   []byte
	PolicyID   string
	Policy     *Policy
	Key        Key
	SealKey    SealKey
	Payload    Payload
	// Answers, if not empty, answers calls by id (batch mode), applied
	// in the order given before guest code runs again; calls left out
	// stay outstanding and are listed again in the next step.
	Answers  []Answer
	Delivery Delivery
	Profile  bool
}

// Answer is the answer to one outstanding call of a batch-mode execution.
type Answer struct {
	ID      uint64 // PendingCall.ID
	Payload Payload
}

// Step is what a start or resume ended with: completion with Value, or a
// suspension on a capability call.
type Step struct {
	// Suspended is nil when the execution completed.
	Suspended *Suspension
	// Value is the execution's result when it completed.
	Value value.Value
	// Profile is set when the request asked for it.
	Profile *Profile
	// Logs are the lines the guest wrote with console during this step
	// (the console extension; ConsoleCollect), in order, and nothing
	// earlier: a resume, hot or cold, returns only the lines of its own
	// segment. Nil when there were none.
	Logs []LogLine
}

// Suspension is an execution parked on capability calls.
type Suspension struct {
	// Capability and Args are the call the execution waits on; in batch
	// mode they repeat Calls[0].
	Capability string
	Args       []value.Value
	// Calls lists, in batch mode, every outstanding call not yet
	// answered, in call order (at least one); it is nil in one-call mode.
	Calls      []PendingCall
	SnapshotID string // hex SHA-256 of the full snapshot bytes
	PolicyID   string // the policy in force
	// Snapshot holds the full snapshot bytes, or with DeliverDelta and a
	// non-empty BaseID only the bytes appended to the snapshot BaseID, or
	// nothing with DeliverNone.
	Snapshot []byte
	BaseID   string
}

// PendingCall is one outstanding capability call of a batch-mode
// execution.
type PendingCall struct {
	// ID is the call's call_id: 1 for the execution's first call, then
	// 2, 3, ... in the order the guest made them, the same hot and cold.
	ID         uint64
	Capability string
	Args       []value.Value
}

// Extend returns the full snapshot bytes of a delta suspension, given the
// bytes of the snapshot it extends (for a full delivery, Snapshot itself).
// It checks that the result hashes to SnapshotID.
func (s *Suspension) Extend(base []byte) ([]byte, error) {
	full := s.Snapshot
	if s.BaseID != "" {
		if sha256Hex(base) != s.BaseID {
			return nil, fmt.Errorf("the base bytes are not snapshot %s", short(s.BaseID))
		}
		full = make([]byte, 0, len(base)+len(s.Snapshot))
		full = append(append(full, base...), s.Snapshot...)
	}
	if sha256Hex(full) != s.SnapshotID {
		return nil, fmt.Errorf("%w: snapshot bytes do not hash to snapshot_id %s", ErrProtocol, short(s.SnapshotID))
	}
	return full, nil
}

// Profile is the timing a start or resume reports with Profile set.
type Profile struct {
	ExecutionNS       uint64 `json:"execution_ns"`
	ResponsePrepareNS uint64 `json:"response_prepare_ns"`
	Instructions      uint64 `json:"instructions"`
}

// Pong is the sidecar's answer to Ping (the ping extension).
type Pong struct {
	SidecarVersion   string   `json:"sidecar_version"`
	ProtocolVersions []int    `json:"protocol_versions"`
	Transport        string   `json:"transport"`
	Features         []string `json:"features"`
	DefaultLimits    Limits   `json:"default_limits"`
	MaxRequestBytes  int64    `json:"max_request_bytes"`
}

// Stats is the sidecar's answer to Stats (the stats extension): what the
// session holds now, in its memory budget's terms (docs/limits.md, "The
// memory budget"), and counters since the process began.
type Stats struct {
	MemoryBudgetBytes   int64 `json:"memory_budget_bytes"`
	MemoryUsedBytes     int64 `json:"memory_used_bytes"`     // cached and parked entries, as weighed
	MemoryReservedBytes int64 `json:"memory_reserved_bytes"` // staged bytes and work under way
	ParkedExecutions    int64 `json:"parked_executions"`     // live executions a resume continues hot
	CachedPrograms      int64 `json:"cached_programs"`
	CachedSnapshots     int64 `json:"cached_snapshots"`
	CachedPolicies      int64 `json:"cached_policies"`
	StagedBytes         int64 `json:"staged_bytes"`
	Compiles            int64 `json:"compiles"`    // sources compiled, not found in the cache
	HotResumes          int64 `json:"hot_resumes"` // resumes that continued a parked execution
	Replays             int64 `json:"replays"`     // resumes that replayed a journal
	// EvictedExecutions counts parked executions let go before their
	// resume: each such resume replays. Evictions counts every entry the
	// memory budget evicted.
	EvictedExecutions int64 `json:"evicted_executions"`
	Evictions         int64 `json:"evictions"`
}

// MatchesHost reports whether the sidecar is the release this host package
// belongs to (its SidecarVersion is Version()). A sidecar of another
// release speaks the same protocol version, but its snapshots may not
// replay the same way (docs/protocol.md, "Upgrades"): a host that finds a
// mismatch should resume cold only snapshots that sidecar wrote, or drain.
func (p *Pong) MatchesHost() bool { return p.SidecarVersion == version.Version }

// Version is the release of this module, which the host package is part
// of; a sidecar built from the same release reports it in ping and in
// --version.
func Version() string { return version.Version }

// Has reports whether the sidecar announced feature.
func (p *Pong) Has(feature string) bool {
	for _, f := range p.Features {
		if f == feature {
			return true
		}
	}
	return false
}

func short(id string) string {
	if len(id) > 16 {
		return id[:16] + "…"
	}
	return id
}
