package host

import (
	"encoding/json"
	"fmt"
	"time"

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
	InstructionBudget       *uint64 `json:"instruction_budget,omitempty"`
	HeapLimitBytes          *uint64 `json:"heap_limit_bytes,omitempty"`
	AllocationBudget        *uint64 `json:"allocation_budget,omitempty"`
	CallDepthLimit          *uint64 `json:"call_depth_limit,omitempty"`
	MaxOutstandingHostCalls *uint64 `json:"max_outstanding_host_calls,omitempty"`
	// WallTime bounds each start or resume segment (the wall_time_ms
	// extension, rounded up to a millisecond); 0 means no wall-time
	// limit. It is the only limit that is not deterministic.
	WallTime time.Duration `json:"-"`
}

// Limit returns a pointer to n, for the fields of Limits.
func Limit(n uint64) *uint64 { return &n }

func (l Limits) MarshalJSON() ([]byte, error) {
	type plain Limits // without this method
	w := struct {
		plain
		WallTimeMS uint64 `json:"wall_time_ms,omitempty"`
	}{plain: plain(l)}
	if l.WallTime < 0 {
		return nil, fmt.Errorf("Limits.WallTime is negative")
	}
	if l.WallTime > 0 {
		w.WallTimeMS = uint64((l.WallTime + time.Millisecond - 1) / time.Millisecond)
	}
	return json.Marshal(w)
}

// Policy is what a resume from snapshot bytes re-asserts: the capabilities
// the execution may still call and the limits it runs under from here on.
type Policy struct {
	Capabilities []string
	Limits       Limits
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
type ResumeRequest struct {
	SnapshotID string
	Snapshot   []byte
	PolicyID   string
	Policy     *Policy
	Key        Key
	SealKey    SealKey
	Payload    Payload
	Delivery   Delivery
	Profile    bool
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
}

// Suspension is an execution parked on a capability call.
type Suspension struct {
	Capability string
	Args       []value.Value
	SnapshotID string // hex SHA-256 of the full snapshot bytes
	PolicyID   string // the policy in force
	// Snapshot holds the full snapshot bytes, or with DeliverDelta and a
	// non-empty BaseID only the bytes appended to the snapshot BaseID, or
	// nothing with DeliverNone.
	Snapshot []byte
	BaseID   string
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
