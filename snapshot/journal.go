// Package snapshot owns the snapshot byte format: a deterministic replay
// journal of one execution, its ids, and the host's HMAC authentication.
package snapshot

import (
	"fmt"
	"sort"

	"github.com/mustard-sidecar/mustard-sidecar/internal/detcbor"
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

	// The realm's shape beyond its capabilities, fixed at start: how the
	// program is entered and whether it has a collecting console.
	Entry   Entry
	Console Console
}

// SortedInputs returns inputs in the order a header keeps them: sorted by
// key, the canonical order that makes equal inputs equal bytes.
func SortedInputs(m []value.Member) []value.Member {
	out := append([]value.Member(nil), m...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Console is the console mode a header records, by its number: the
// journal stores the policy's console mode (off 0, collect 1) as it is.
type Console uint8

const (
	ConsoleOff     Console = 0
	ConsoleCollect Console = 1
)

// Entry is how an execution enters its program.
type Entry uint8

const (
	// EntryScript: the program's completion value is the result.
	EntryScript Entry = iota
	// EntryCall: the completion value is a function, called with the
	// inputs object; what it returns (awaited) is the result.
	EntryCall
)

// String is the entry's wire name.
func (e Entry) String() string {
	if e == EntryCall {
		return "call"
	}
	return "script"
}

// ParseEntry reads an entry's wire name.
func ParseEntry(s string) (Entry, error) {
	switch s {
	case "script":
		return EntryScript, nil
	case "call":
		return EntryCall, nil
	}
	return 0, fmt.Errorf("unknown entry `%s`", s)
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

	// enc, when set, is Value's encoding, checked but not yet decoded,
	// and Value is unset. Load leaves a journal's answers so, for the
	// replay to import each as it reaches it, and a resume's answer
	// arrives so (EncodedOutcome): for structured data a Value tree
	// takes many times the size of its encoding.
	enc   []byte
	owned bool // enc is the outcome's own memory: strings may share it
}

// EncodedOutcome is the outcome of a call that returned the value encoded
// in enc, which must be a value's binary form (value.TranscodeJSON's) that
// the outcome may keep: the engine imports it from these bytes and the
// journal records them as they are.
func EncodedOutcome(enc []byte) Outcome { return Outcome{enc: enc, owned: true} }

// Encoded returns the value's encoding when the outcome carries it so
// (Load's answers, EncodedOutcome; Value is then unset), and whether the
// encoding is the outcome's own memory (see value.NewEncoded).
func (o Outcome) Encoded() (enc []byte, owned bool) { return o.enc, o.owned }

// Decoded returns the outcome with its value decoded, for one that
// carries its encoding; any other is returned as it is.
func (o Outcome) Decoded() (Outcome, error) {
	if o.enc == nil {
		return o, nil
	}
	decode := value.DecodeCBOR
	if o.owned {
		decode = value.DecodeCBOROwned
	}
	v, rest, err := decode(o.enc)
	if err != nil || len(rest) != 0 {
		// Load checked the encoding, and TranscodeJSON wrote it: only a
		// change to the value package's rules between the two could get
		// here.
		return Outcome{}, ErrOutcome
	}
	return Outcome{Value: v}, nil
}

// Meter is the execution's cumulative metering at a suspension. Replay
// recharges deterministically, so these figures must match on every run.
type Meter struct {
	Instructions uint64
	Allocations  uint64
}

// HostCall is one capability call the guest made, as the journal records
// it. Calls are numbered from 1 in the order they were made.
type HostCall struct {
	ID         uint64
	Capability string
	Args       []value.Value // unset where Load read the call (Decoded builds them)
	ArgsDigest [32]byte      // SHA-256 of the CBOR-encoded argument array (Decode)
	Meter      Meter         // the execution's metering when the call was made
	// Sync is a call made in plain top-level code: the guest waits for
	// its answer. Every other call returned a promise and was queued.
	Sync bool

	// argsEnc is the CBOR-encoded argument array as the snapshot holds
	// it, where Load read the call: a replay only compares the arguments
	// it makes again with it (SameArgs), so Load neither builds them nor
	// hashes them.
	argsEnc []byte
}

// Decoded returns the call with its arguments built and their digest
// made, as Decode reads a call, for one Load read; any other is
// returned as it is.
func (c HostCall) Decoded() (HostCall, error) {
	if c.argsEnc == nil {
		return c, nil
	}
	// Decode's own reading: each argument a value of its own, so that
	// the array around them adds no level of nesting.
	d := &decoder{Reader: detcbor.NewReader(c.argsEnc)}
	if err := d.args(&c); err != nil || d.Len() != 0 {
		return HostCall{}, ErrCallArgs // Load checked them: see Outcome.Decoded
	}
	c.argsEnc = nil
	return c, nil
}

// Answer is the host's answer to one call.
type Answer struct {
	CallID  uint64
	Outcome Outcome
}

// Limits are the limits a journal records for a segment: the
// deterministic ones a replay runs the segment under again (the policy's
// limits without the wall time and the log bound).
type Limits struct {
	InstructionBudget       uint64
	HeapLimitBytes          uint64
	AllocationBudget        uint64
	CallDepthLimit          uint64
	MaxOutstandingHostCalls uint64
}

// Suspension ends one segment of an execution: the guest had nothing left
// to run (or waits in a synchronous call) and calls were outstanding.
type Suspension struct {
	// Focus is the call a one-at-a-time step presents: a synchronous call
	// the guest waits in, or else the oldest outstanding call.
	Focus  uint64
	Made   uint64 // calls made by then
	Meter  Meter
	Limits *Limits // what the segment ran under; nil if not recorded
	// Answers are what the resume that ended this suspension delivered, in
	// the order it applied them; none for the snapshot's last suspension.
	Answers []Answer
}

// Snapshot is a decoded snapshot.
type Snapshot struct {
	Header Header
	// Version is the format version the bytes were written in. Version 1
	// journals come from executions in which every call was synchronous,
	// and replay runs them that way.
	Version     uint64
	Calls       []HostCall   // every call made, in call order (after Base)
	Suspensions []Suspension // in order; the last is the one the snapshot is at

	// Checkpoint, in version 6, is the heap image the journal begins
	// from: the execution as it was at Suspensions[0], waiting in
	// Calls[0]. Base is the number of calls made before Calls[0] (zero
	// without a checkpoint), which the image holds the effects of.
	Checkpoint *Checkpoint
	Base       uint64

	records    uint64 // sealed records, for continuing a sealed journal
	head, tail int    // the plain journal's header and the items after it (and after a checkpoint)
	plainHead  []byte // a sealed journal's header item, for a checkpoint to carry again
	compressed bool   // some record is compressed (its bytes depend on the build)
}

// Checkpoint is what a version 6 snapshot keeps of its execution up to
// its first suspension instead of a journal of it: the guest's heap and
// the interpreter's state as an image (internal/goja's MustardWriteImage),
// and the engine's state beside it. The suspension and the call it waits
// in are the snapshot's Suspensions[0] and Calls[0].
type Checkpoint struct {
	Carry uint64 // built-in work not yet a whole instruction
	Rand  []byte // the random generator's state
	Image []byte
}

// CheckpointCalls are the calls outstanding at the snapshot's
// checkpoint (nil without one), the first of its calls.
func (s *Snapshot) CheckpointCalls() []HostCall {
	if s.Checkpoint == nil || len(s.Suspensions) == 0 {
		return nil
	}
	return s.Calls[:s.Suspensions[0].Made-s.Base]
}

// Made is the number of calls the execution has made.
func (s *Snapshot) Made() uint64 { return s.Base + uint64(len(s.Calls)) }

// Call returns the call with this id, nil if the snapshot does not hold
// it (never made, or made before its checkpoint's call).
func (s *Snapshot) Call(id uint64) *HostCall {
	if id <= s.Base || id > s.Made() {
		return nil
	}
	return &s.Calls[id-s.Base-1]
}

// Last is the suspension the snapshot is at.
func (s *Snapshot) Last() *Suspension { return &s.Suspensions[len(s.Suspensions)-1] }

// Outstanding returns the calls not answered yet, in call order.
func (s *Snapshot) Outstanding() []HostCall {
	answered := make([]bool, len(s.Calls)) // by call id - Base - 1; decoded ids are in range
	for _, sp := range s.Suspensions {
		for _, a := range sp.Answers {
			if a.CallID > s.Base && a.CallID <= s.Made() {
				answered[a.CallID-s.Base-1] = true
			}
		}
	}
	var out []HostCall
	for i, c := range s.Calls {
		if !answered[i] {
			out = append(out, c)
		}
	}
	return out
}

// FocusCall returns the call the snapshot's one-at-a-time step presents.
func (s *Snapshot) FocusCall() *HostCall { return s.Call(s.Last().Focus) }
