// Package snapshot owns the snapshot byte format: a deterministic replay
// journal of one execution, its ids, and the host's HMAC authentication.
package snapshot

import (
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Header is what an execution starts from: everything a fresh process needs
// to re-run it identically.
type Header struct {
	Program      []byte         // program artifact bytes
	Inputs       []value.Member // sorted by key
	Capabilities []string       // the realm's capability globals, sorted
	Seed         uint64         // Math.random seed
	ClockMillis  int64          // Date.now() for the whole execution
}

// HostError is an error payload a host answered a capability call with.
type HostError struct {
	Name    string
	Message string
	Code    *string
	Details *value.Value
}

// Outcome is how a host answered a capability call.
type Outcome struct {
	Error *HostError // nil: the call returned Value
	Value value.Value
}

// Meter is the execution's cumulative metering at a suspension. Replay
// recharges deterministically, so these figures must match on every run.
type Meter struct {
	Instructions uint64
	Allocations  uint64
}

// Call is a completed capability call.
type Call struct {
	Capability string
	ArgsDigest [32]byte // SHA-256 of the CBOR-encoded argument array
	Meter      Meter
	Limits     *policy.Limits // what the segment that made the call ran under; nil if not recorded
	Outcome    Outcome
}

// Pending is the capability call an execution is suspended on.
type Pending struct {
	Capability string
	Args       []value.Value
	Meter      Meter
	// Limits are those the segment that made the call ran under, so that a
	// replay runs the journaled past exactly as it ran; nil in journals
	// written before they were recorded.
	Limits *policy.Limits
}

// Snapshot is a decoded snapshot.
type Snapshot struct {
	Header  Header
	Calls   []Call
	Pending Pending

	records uint64 // sealed records, for continuing a sealed journal
}
