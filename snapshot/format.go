package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"math"
	"sync"
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/internal/detcbor"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Format: a CBOR sequence (RFC 8742) of items. Versions 5, 4, 3 and 2
// have one layout and differ in what the meter readings count: versions 5,
// 4 and 3 journal programs the interpreter meters (program format version
// 3: every instruction executed), version 2 programs metered by calls
// inserted into their text (program format versions 1 and 2: function
// entries and loop iterations). Version 5 readings are this release's
// metering; version 4 ones were written by release 0.3.0 and version 3
// ones by release 0.2.0, which charged less of the work of some built-ins,
// and a replay takes them as recorded (engine). A journal's execution
// continues in its version, and a sidecar refuses a journal whose version
// does not match its program's.
//
//	header  ["mustard-snapshot", 5, 4, 3 or 2, program: bytes, inputs: Object,
//	         capabilities: [text...], seed: uint, clock_ms: int, shape?]
//	        shape: [entry, console], only in versions 5 and 4, and only
//	        when either differs from its default
//	then one item per event of the execution, in the order they happened:
//	call    [5, capability: text, args: Array, instructions: uint,
//	         allocations: uint, sync: bool]
//	        a capability call (ids are 1, 2, ... in item order); the meter
//	        is the execution's when the call was made
//	suspend [6, focus: uint, instructions: uint, allocations: uint,
//	         limits: [instruction_budget, heap_limit_bytes, allocation_budget,
//	                  call_depth_limit, max_outstanding_host_calls] | null]
//	        the end of a segment, under the limits it ran under (null: the
//	        same as the previous segment's; never in the first); focus is
//	        the call a one-at-a-time step presents
//	answer  [7, call_id: uint, outcome]
//	        what a resume delivered, in the order it applied them; the
//	        answers between two suspend items are one resume's
//	outcome [2, value] | [3, name: text, message: text, code: text|null, details: [] or [value]]
//	        | [4, size: uint, zstd: bytes] (a large value, compressed: compress.go)
//
// Version 6 is version 5 with a checkpoint in place of the journal's
// beginning: the item after the header is
//
//	checkpoint [8, made: uint, capability: text, args: Array,
//	            call_instructions: uint, call_allocations: uint,
//	            instructions: uint, allocations: uint, limits,
//	            carry: uint, rand: bytes, image: bytes]
//	        the execution suspended in its synchronous call number made
//	        (to capability with args, made at the call meter), the only
//	        call outstanding, at the meter, having run under limits (as a
//	        suspend item's, never null); carry, rand and image are the
//	        engine's and the interpreter's state (Checkpoint)
//
// and what follows is version 5's items: the answers to that suspension,
// the calls after it (numbered from made + 1), and so on. An execution
// writes a checkpoint at a suspension whose journal has grown large, if
// its state can be written (engine); a snapshot with one does not extend
// the execution's earlier snapshots.
//
// Version 7 is version 6 with the execution at rest in the checkpoint:
// its async code waits for the calls it made last, nothing running until
// one is answered. Its checkpoint item is
//
//	checkpoint [8, made: uint, calls: [[capability: text, args: Array,
//	            call_instructions: uint, call_allocations: uint], ...],
//	            instructions: uint, allocations: uint, limits,
//	            carry: uint, rand: bytes, image: bytes]
//	        the calls outstanding, asynchronous (each returned a promise),
//	        are the last len(calls) made, numbered up to made; the
//	        suspension's focus is the first of them
//
// A snapshot ends with the suspend item it is suspended at, and each
// snapshot of an execution is a prefix of the next one plus new items, so
// producing snapshot k+1 appends and hashes only what happened since.
//
// Version 1 (read, and continued in its own format) journals executions in
// which every call was synchronous: the same header with version 1, then
// per completed call its pending item followed by its outcome item, then
// the pending item the execution is suspended on:
//
//	pending [1, capability: text, args: Array, instructions: uint, allocations: uint,
//	         limits: [...]] (5 items in journals written before limits were recorded)
//	outcome as above
const (
	Magic = "mustard-snapshot"
	// Version is the format of executions of current programs;
	// VersionInserted that of programs metered by inserted calls;
	// VersionRelease020 and VersionRelease030 those of current programs'
	// executions journaled by releases 0.2.0 and 0.3.0, under their
	// metering.
	Version           = 5
	VersionInserted   = 2
	VersionRelease020 = 3
	VersionRelease030 = 4
	// VersionCheckpoint is the format of a current program's execution
	// whose journal begins with a checkpoint; its meter readings are
	// Version's. VersionRestCheckpoint is the same with the checkpoint's
	// execution at rest: its call is asynchronous, and nothing runs until
	// it is answered.
	VersionCheckpoint     = 6
	VersionRestCheckpoint = 7

	tagPending      = 1 // version 1
	tagValue        = 2
	tagError        = 3
	tagCall         = 5
	tagSuspend      = 6
	tagAnswer       = 7
	tagCheckpoint   = 8
	maxCapabilities = 1024
)

// Counted reports whether a journal of format version v is of a program the
// interpreter meters.
func Counted(v uint64) bool { return v == Version || HasCheckpoint(v) || EarlierMetering(v) }

// HasCheckpoint reports whether a journal of format version v begins
// with a checkpoint.
func HasCheckpoint(v uint64) bool { return v == VersionCheckpoint || v == VersionRestCheckpoint }

// checkpointVersion is the format version of a journal beginning with a
// checkpoint at the calls outstanding: one synchronous call, or
// asynchronous ones at rest.
func checkpointVersion(calls []HostCall) uint64 {
	if len(calls) == 1 && calls[0].Sync {
		return VersionCheckpoint
	}
	return VersionRestCheckpoint
}

// EarlierMetering reports whether a journal of format version v holds meter
// readings an earlier release's metering took, which a replay takes as
// recorded: its calls, their arguments and their order still decide.
func EarlierMetering(v uint64) bool { return v == VersionRelease020 || v == VersionRelease030 }

// shapedVersion reports whether a header of format version v may carry the
// execution's shape (entry and console), which release 0.3.0 added.
func shapedVersion(v uint64) bool {
	return v == Version || HasCheckpoint(v) || v == VersionRelease030
}

// ID is the snapshot id: lowercase hex SHA-256 of the bytes.
func ID(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// appendHeader writes the header: an array of 7, or of 8 when the realm
// has a shape beyond the default (entry call, a collecting console), whose
// last item is [entry, console]. A default header is written as it was
// before either existed.
func appendHeader(b []byte, h Header, version uint64) []byte {
	shaped := h.Entry != EntryScript || h.Console != ConsoleOff
	if shaped {
		b = detcbor.AppendHead(b, detcbor.MajorArray, 8)
	} else {
		b = detcbor.AppendHead(b, detcbor.MajorArray, 7)
	}
	b = detcbor.AppendText(b, Magic)
	b = detcbor.AppendHead(b, detcbor.MajorUint, version)
	b = detcbor.AppendBytes(b, h.Program)
	b = value.Object(h.Inputs...).AppendCBOR(b)
	b = detcbor.AppendHead(b, detcbor.MajorArray, uint64(len(h.Capabilities)))
	for _, c := range h.Capabilities {
		b = detcbor.AppendText(b, c)
	}
	b = detcbor.AppendHead(b, detcbor.MajorUint, h.Seed)
	b = detcbor.AppendInt(b, h.ClockMillis)
	if shaped {
		b = detcbor.AppendHead(b, detcbor.MajorArray, 2)
		b = detcbor.AppendHead(b, detcbor.MajorUint, uint64(h.Entry))
		b = detcbor.AppendHead(b, detcbor.MajorUint, uint64(h.Console))
	}
	return b
}

// appendPending writes a version 1 pending item.
func appendPending(b []byte, c *HostCall, l *Limits) []byte {
	n := uint64(5)
	if l != nil {
		n = 6
	}
	b = detcbor.AppendHead(b, detcbor.MajorArray, n)
	b = detcbor.AppendHead(b, detcbor.MajorUint, tagPending)
	b = detcbor.AppendText(b, c.Capability)
	b = c.appendArgs(b)
	b = appendMeter(b, c.Meter)
	if l != nil {
		b = appendLimits(b, l)
	}
	return b
}

// appendArgs writes the call's argument array: as Load kept it, or
// encoded from Args.
func (c *HostCall) appendArgs(b []byte) []byte {
	if c.argsEnc != nil {
		return append(b, c.argsEnc...)
	}
	return value.Array(c.Args...).AppendCBOR(b)
}

func appendCall(b []byte, c *HostCall) []byte {
	b = detcbor.AppendHead(b, detcbor.MajorArray, 6)
	b = detcbor.AppendHead(b, detcbor.MajorUint, tagCall)
	b = detcbor.AppendText(b, c.Capability)
	b = c.appendArgs(b)
	b = appendMeter(b, c.Meter)
	if c.Sync {
		return append(b, detcbor.True)
	}
	return append(b, detcbor.False)
}

// appendSuspend writes a suspend item; l is nil when the segment ran
// under the previous segment's limits.
func appendSuspend(b []byte, focus uint64, m Meter, l *Limits) []byte {
	b = detcbor.AppendHead(b, detcbor.MajorArray, 5)
	b = detcbor.AppendHead(b, detcbor.MajorUint, tagSuspend)
	b = detcbor.AppendHead(b, detcbor.MajorUint, focus)
	b = appendMeter(b, m)
	if l == nil {
		return append(b, detcbor.Null)
	}
	return appendLimits(b, l)
}

// appendCheckpoint writes a checkpoint item: calls are the calls
// outstanding (the last of them the last made), at suspension meter m
// under limits l; version 6's item holds its one synchronous call,
// version 7's a list.
func appendCheckpoint(b []byte, calls []HostCall, m Meter, l *Limits, cp *Checkpoint) []byte {
	if checkpointVersion(calls) == VersionRestCheckpoint {
		b = detcbor.AppendHead(b, detcbor.MajorArray, 9)
		b = detcbor.AppendHead(b, detcbor.MajorUint, tagCheckpoint)
		b = detcbor.AppendHead(b, detcbor.MajorUint, calls[len(calls)-1].ID)
		b = detcbor.AppendHead(b, detcbor.MajorArray, uint64(len(calls)))
		for i := range calls {
			b = detcbor.AppendHead(b, detcbor.MajorArray, 4)
			b = calls[i].appendCheckpointCall(b)
		}
		return appendCheckpointState(b, m, l, cp)
	}
	c := &calls[0]
	b = detcbor.AppendHead(b, detcbor.MajorArray, 12)
	b = detcbor.AppendHead(b, detcbor.MajorUint, tagCheckpoint)
	b = detcbor.AppendHead(b, detcbor.MajorUint, c.ID)
	b = c.appendCheckpointCall(b)
	return appendCheckpointState(b, m, l, cp)
}

// appendCheckpointCall writes a call of a checkpoint item: its
// capability, arguments and meter (its id follows from the item's).
func (c *HostCall) appendCheckpointCall(b []byte) []byte {
	b = detcbor.AppendText(b, c.Capability)
	b = c.appendArgs(b)
	return appendMeter(b, c.Meter)
}

// appendCheckpointState writes what ends both checkpoint items: the
// suspension's meter and limits, and the execution's state.
func appendCheckpointState(b []byte, m Meter, l *Limits, cp *Checkpoint) []byte {
	b = appendMeter(b, m)
	b = appendLimits(b, l)
	b = detcbor.AppendHead(b, detcbor.MajorUint, cp.Carry)
	b = detcbor.AppendBytes(b, cp.Rand)
	return detcbor.AppendBytes(b, cp.Image)
}

func appendAnswer(b []byte, a *Answer) []byte {
	b = detcbor.AppendHead(b, detcbor.MajorArray, 3)
	b = detcbor.AppendHead(b, detcbor.MajorUint, tagAnswer)
	b = detcbor.AppendHead(b, detcbor.MajorUint, a.CallID)
	return appendOutcome(b, a.Outcome)
}

func appendMeter(b []byte, m Meter) []byte {
	b = detcbor.AppendHead(b, detcbor.MajorUint, m.Instructions)
	return detcbor.AppendHead(b, detcbor.MajorUint, m.Allocations)
}

func appendLimits(b []byte, l *Limits) []byte {
	b = detcbor.AppendHead(b, detcbor.MajorArray, 5)
	for _, v := range []uint64{l.InstructionBudget, l.HeapLimitBytes, l.AllocationBudget, l.CallDepthLimit, l.MaxOutstandingHostCalls} {
		b = detcbor.AppendHead(b, detcbor.MajorUint, v)
	}
	return b
}

func appendOutcome(b []byte, o Outcome) []byte {
	if o.Error == nil {
		// The value is encoded into scratch and compressed from there when
		// that pays, so the journal grows by what the record takes, not
		// by the whole value first: a 50 KB answer that compresses to
		// 19 KB would otherwise make the journal's buffer (and every
		// parked or cached snapshot that shares it) outgrow itself.
		sp := scratch.Get().(*recordScratch)
		defer scratch.Put(sp)
		enc := o.enc // an answer that arrived as its encoding
		if enc == nil {
			enc = o.Value.AppendCBOR(sp.enc[:0])
			sp.enc = enc
		}
		z, ok := compressed(sp.z[:0], enc)
		sp.z = z
		if !ok {
			b = growFor(b, len(enc)+2)
			b = detcbor.AppendHead(b, detcbor.MajorArray, 2)
			b = detcbor.AppendHead(b, detcbor.MajorUint, tagValue)
			return append(b, enc...)
		}
		b = growFor(b, len(z)+3*9)
		b = detcbor.AppendHead(b, detcbor.MajorArray, 3)
		b = detcbor.AppendHead(b, detcbor.MajorUint, tagCompressedValue)
		b = detcbor.AppendHead(b, detcbor.MajorUint, uint64(len(enc)))
		return detcbor.AppendBytes(b, z)
	}
	e := o.Error
	b = detcbor.AppendHead(b, detcbor.MajorArray, 5)
	b = detcbor.AppendHead(b, detcbor.MajorUint, tagError)
	b = appendGuestText(b, e.Name)
	b = appendGuestText(b, e.Message)
	if e.Code != nil {
		b = appendGuestText(b, *e.Code)
	} else {
		b = append(b, detcbor.Null)
	}
	if e.Details != nil {
		b = detcbor.AppendHead(b, detcbor.MajorArray, 1)
		return e.Details.AppendCBOR(b)
	}
	return detcbor.AppendHead(b, detcbor.MajorArray, 0)
}

// growFor returns b with room for n more bytes. A journal's buffer
// doubles when it must grow: append grows a large slice by a quarter, so
// a journal of a few large answers was copied whole at nearly every step
// (a fifth of a 1 MB answer's round trip). The old array is left as it
// is: the snapshots already returned share it.
func growFor(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	grown := make([]byte, len(b), max(2*cap(b), len(b)+n))
	copy(grown, b)
	return grown
}

// recordScratch is where an answer is encoded and compressed before it
// takes its place in the journal.
type recordScratch struct{ enc, z []byte }

var scratch = sync.Pool{New: func() any { return new(recordScratch) }}

// appendGuestText writes a host error's string: a text item when it is
// UTF-8, otherwise (an unpaired surrogate) a byte string of its WTF-8, as
// value strings are. Snapshots with only text items decode as before.
func appendGuestText(b []byte, s string) []byte {
	if utf8.ValidString(s) {
		return detcbor.AppendText(b, s)
	}
	return detcbor.AppendBytes(b, []byte(s))
}

// Builder produces the snapshots of one live execution incrementally: its
// buffer only grows, and the running hash always covers all of it. A
// sealed builder appends each journal item as a sealed record.
type Builder struct {
	buf []byte
	h   hash.Hash

	seal    *Sealer
	records uint64 // sealed records written
	item    []byte // scratch for the journal item being sealed
	largest int    // the largest item appended so far, plain

	// A version 1 journal writes a call and its suspension as one pending
	// item: Call keeps the call until Suspend.
	version uint64
	v1Call  *HostCall
	calls   uint64 // calls appended

	// head is the size of the plain header item (at the start of buf
	// when unsealed), tail that of the plain items after it (and after
	// a checkpoint): what a checkpoint would let go of. Both are sizes
	// of the plain journal, so that a journal continued from its bytes,
	// sealed or not, counts what the live one counted. A sealed journal
	// keeps its header's plain item for a checkpoint to carry again.
	head, tail int
	plainHead  []byte

	// The limits of the last suspension appended, which the next one
	// does not repeat when it ran under the same.
	limits    Limits
	hasLimits bool
}

// NewBuilder starts the journal of a fresh execution in format version
// (Version, or VersionInserted for a program metered by inserted calls),
// sealed under seal unless it is nil.
func NewBuilder(h Header, seal *Sealer, version uint64) *Builder {
	return newBuilder(h, seal, version)
}

func newBuilder(h Header, seal *Sealer, version uint64) *Builder {
	b := &Builder{buf: make([]byte, 0, 256+len(h.Program)), h: sha256.New(), seal: seal, version: version}
	if seal != nil {
		b.buf = seal.appendEnvelope(b.buf)
		b.h.Write(b.buf)
	}
	if seal == nil {
		b.buf = appendHeader(b.buf, h, version)
		b.h.Write(b.buf)
		b.head = len(b.buf)
	} else {
		b.plainHead = appendHeader(nil, h, version)
		b.sealItem(b.plainHead)
		b.item = nil // the scratch of later items, which plainHead is not
		b.head = len(b.plainHead)
	}
	return b
}

// NewCheckpointBuilder starts a journal of an execution at a suspension
// with calls outstanding, the last made last (its id is the number of
// calls made), at meter m under limits l, from the checkpoint cp, and
// returns it with the snapshot's bytes and id: version 6 if the
// execution waits in its one synchronous call, 7 if it is at rest
// waiting for asynchronous ones, the last made.
func NewCheckpointBuilder(h Header, seal *Sealer, calls []HostCall, m Meter, l *Limits, cp *Checkpoint) (*Builder, []byte, string) {
	v := checkpointVersion(calls)
	return startCheckpoint(appendHeader(nil, h, v), seal, v, calls, m, l, cp)
}

// ErrNoCheckpoint is a checkpoint of a journal whose format has none.
var ErrNoCheckpoint = errors.New("this journal's format version has no checkpoints")

// Checkpoint starts the journal of b's execution again from a checkpoint,
// as NewCheckpointBuilder, under b's header and seal. Only journals of
// versions Version, VersionCheckpoint and VersionRestCheckpoint have
// checkpoints.
func (b *Builder) Checkpoint(calls []HostCall, m Meter, l *Limits, cp *Checkpoint) (*Builder, []byte, string, error) {
	head := b.plainHead
	if b.seal == nil {
		head = b.buf[:b.head]
	}
	// The header's version is its second item, after the array's head
	// and the magic text (a byte each for both versions).
	at := 2 + len(Magic)
	if len(head) <= at || head[at] != byte(b.version) || b.version != Version && !HasCheckpoint(b.version) {
		return nil, nil, "", ErrNoCheckpoint
	}
	v := checkpointVersion(calls)
	head = append([]byte(nil), head...)
	head[at] = byte(v)
	nb, raw, id := startCheckpoint(head, b.seal, v, calls, m, l, cp)
	nb.largest = b.largest // the items to come are like those before
	return nb, raw, id, nil
}

func startCheckpoint(head []byte, seal *Sealer, v uint64, calls []HostCall, m Meter, l *Limits, cp *Checkpoint) (*Builder, []byte, string) {
	b := &Builder{h: sha256.New(), seal: seal, version: v, calls: calls[len(calls)-1].ID, head: len(head)}
	if seal != nil {
		b.buf = seal.appendEnvelope(b.buf)
		b.h.Write(b.buf)
		b.plainHead = head
		b.sealItem(head)
		b.item = nil // the scratch of later items, which plainHead is not
	} else {
		b.buf = append(make([]byte, 0, len(head)+len(cp.Image)+256), head...)
		b.h.Write(b.buf)
	}
	b.limits, b.hasLimits = *l, true
	b.add(func(buf []byte) []byte { return appendCheckpoint(buf, calls, m, l, cp) })
	b.tail = 0 // the checkpoint replaces, it is not replaced
	n := len(b.buf)
	return b, b.buf[:n:n], hex.EncodeToString(b.h.Sum(nil))
}

// ContinueBuilder continues the journal of snapshot bytes s was loaded
// from (with the same seal, if any), in the format version they were
// written in.
func ContinueBuilder(raw []byte, s *Snapshot, seal *Sealer) *Builder {
	return ContinueBuilderFrom(raw, s, seal, Digest{})
}

// ContinueBuilderFrom is ContinueBuilder given the Digest of raw (taken
// over: it must not be used again), which spares hashing raw a second
// time. A zero Digest hashes it.
func ContinueBuilderFrom(raw []byte, s *Snapshot, seal *Sealer, d Digest) *Builder {
	b := &Builder{buf: append([]byte(nil), raw...), h: d.h, seal: seal, records: s.records, version: s.Version,
		calls: s.Made()}
	if l := s.Last().Limits; l != nil {
		b.limits, b.hasLimits = *l, true
	}
	// The plain journal's sizes, as Decode read them (sealing adds to
	// every record).
	b.head, b.tail, b.plainHead = s.head, s.tail, s.plainHead
	if b.h == nil {
		b.h = sha256.New()
		b.h.Write(b.buf)
	}
	return b
}

// Digest is the SHA-256 of snapshot bytes: their id, and the state a
// builder continuing them starts from.
type Digest struct{ h hash.Hash }

// NewDigest hashes raw.
func NewDigest(raw []byte) Digest {
	h := sha256.New()
	h.Write(raw)
	return Digest{h}
}

// ID is the id of the bytes hashed (ID(raw)).
func (d Digest) ID() string { return hex.EncodeToString(d.h.Sum(nil)) }

// Tail is the size of the journal since the header, or since the
// checkpoint it begins with: what a new checkpoint would replace. It
// counts the plain journal (a sealed one's records are larger).
func (b *Builder) Tail() int { return b.tail }

// Head is the size of the snapshot's header, which every snapshot that
// does not extend the last carries again (in the plain journal).
func (b *Builder) Head() int { return b.head }

// Sealer is the builder's seal, or nil.
func (b *Builder) Sealer() *Sealer { return b.seal }

// Size is the memory the builder holds: the journal so far, with the room
// it has to grow (the snapshots it returned share it), and its scratch.
func (b *Builder) Size() int { return cap(b.buf) + cap(b.item) + cap(b.plainHead) }

// sealItem appends a journal item as the next sealed record and extends
// the running hash over it.
func (b *Builder) sealItem(item []byte) {
	b.buf = growFor(b.buf, len(item)+sealOverhead+9)
	start := len(b.buf)
	b.buf = b.seal.appendRecord(b.buf, b.records, b.h.Sum(nil), item)
	b.records++
	b.item = item
	b.h.Write(b.buf[start:])
}

// add appends one journal item that appendItem writes. The unsealed path
// appends in place, without a copy: it is the hot path of every
// suspension.
func (b *Builder) add(appendItem func([]byte) []byte) {
	if b.seal != nil {
		item := appendItem(b.item[:0])
		b.tail += len(item)
		b.sealItem(item)
		return
	}
	// Room for an item as large as the largest so far, doubling the
	// buffer when it has not: append alone grows a large journal by a
	// quarter, copying all of it every few calls that pass a page on.
	b.buf = growFor(b.buf, b.largest)
	start := len(b.buf)
	b.buf = appendItem(b.buf)
	n := len(b.buf) - start
	b.tail += n
	b.largest = max(b.largest, n)
	b.h.Write(b.buf[start:])
}

// Call appends a call the guest made.
func (b *Builder) Call(c *HostCall) {
	b.calls++
	if b.version == 1 {
		b.v1Call = c
		return
	}
	b.add(func(buf []byte) []byte { return appendCall(buf, c) })
}

// Suspend appends the end of a segment (focus: the call a one-at-a-time
// step presents; l: the limits the segment ran under, as a journal
// records them, never nil) and returns the
// snapshot bytes and id. The bytes are never modified afterwards.
func (b *Builder) Suspend(focus uint64, m Meter, l *Limits) ([]byte, string) {
	if b.version == 1 {
		// Every call of a version 1 execution suspends it at once.
		c := b.v1Call
		b.v1Call = nil
		b.add(func(buf []byte) []byte { return appendPending(buf, c, l) })
	} else {
		same := b.hasLimits && b.limits == *l
		b.limits, b.hasLimits = *l, true
		if same {
			l = nil
		}
		b.add(func(buf []byte) []byte { return appendSuspend(buf, focus, m, l) })
	}
	n := len(b.buf)
	return b.buf[:n:n], hex.EncodeToString(b.h.Sum(nil))
}

// Answer appends an answer a resume delivered.
func (b *Builder) Answer(a *Answer) {
	if b.version == 1 {
		b.add(func(buf []byte) []byte { return appendOutcome(buf, a.Outcome) })
		return
	}
	b.add(func(buf []byte) []byte { return appendAnswer(buf, a) })
}

// ArgsDigest is the SHA-256 of a call's arguments encoded as an array:
// what Decode gives for each call it reads.
func ArgsDigest(args []value.Value) [32]byte {
	return argsDigest(value.Array(args...).AppendCBOR(nil))
}

// SameArgs reports whether enc, a call's arguments encoded as an array
// (value.Array(args...).AppendCBOR), are the arguments c was made with:
// the bytes Load kept, or else the digest Decode made. The encoding is
// canonical, so equal arguments have equal bytes.
func (c *HostCall) SameArgs(enc []byte) bool {
	if c.argsEnc != nil {
		return bytes.Equal(c.argsEnc, enc)
	}
	return c.ArgsDigest == argsDigest(enc)
}

// argsDigest hashes an encoded argument array. Decode hashes the bytes as
// they stand; the encoding is canonical, so that equals ArgsDigest of the
// decoded arguments (TestArgsDigestOfDecodedCalls).
func argsDigest(enc []byte) [32]byte { return sha256.Sum256(enc) }

// Decoding errors. Decode returns them wrapped in a *FormatError that says
// at which byte the snapshot stopped making sense.
var (
	ErrNotSnapshot  = errors.New("not a snapshot")
	ErrVersion      = errors.New("unsupported format version")
	ErrHeader       = errors.New("malformed header")
	ErrInputs       = errors.New("malformed inputs")
	ErrCapabilities = errors.New("malformed capabilities")
	ErrCall         = errors.New("malformed call")
	ErrCallArgs     = errors.New("malformed call arguments")
	ErrCallLimits   = errors.New("malformed call limits")
	ErrOutcome      = errors.New("malformed outcome")
	ErrDecompress   = errors.New("compressed outcome does not decompress to its size")
	ErrSuspend      = errors.New("malformed suspension")
	ErrAnswer       = errors.New("malformed answer")
	ErrUnsuspended  = errors.New("journal does not end suspended")
	ErrCheckpoint   = errors.New("malformed checkpoint")
)

// FormatError is a snapshot that fails to decode.
type FormatError struct {
	Offset int   // from the start of the snapshot bytes
	Err    error // one of the Err values above
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("snapshot bytes rejected at byte %d: %v", e.Offset, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }

// decoder reads one snapshot; at marks the start of the item being read,
// which is where a failure is reported.
type decoder struct {
	*detcbor.Reader
	at         int
	compressed bool // a compressed record was read
	lazy       bool // answers are checked, not decoded (Load)

	// The compressed records read so far, decompressed once the journal
	// has been read through (inflate.go).
	deferred []pendingRecord
}

func (d *decoder) fail(err error) error { return &FormatError{Offset: d.at, Err: err} }

// mark starts a new item.
func (d *decoder) mark() { d.at = d.Offset() }

// value decodes one value item.
func (d *decoder) value() (value.Value, []byte, error) {
	rest := d.Rest()
	v, after, err := value.DecodeCBOR(rest)
	if err != nil {
		return value.Value{}, nil, err
	}
	enc := rest[:len(rest)-len(after)]
	d.Skip(len(enc))
	return v, enc, nil
}

// checked checks one value item as value reads it, without building it,
// and returns its encoding.
func (d *decoder) checked() ([]byte, error) {
	rest := d.Rest()
	after, err := value.CheckCBOR(rest)
	if err != nil {
		return nil, err
	}
	enc := rest[:len(rest)-len(after)]
	d.Skip(len(enc))
	return enc, nil
}

// Decode parses snapshot bytes. It must only be called after the bytes were
// authenticated; it still fails closed on anything malformed, with a
// *FormatError.
func Decode(b []byte) (*Snapshot, error) { return decode(b, false) }

// decode is Decode; lazy leaves answers encoded (Outcome.Decoded).
func decode(b []byte, lazy bool) (*Snapshot, error) {
	d := &decoder{Reader: detcbor.NewReader(b), lazy: lazy}
	s := &Snapshot{}
	items, err := d.Expect(detcbor.MajorArray)
	if err != nil || items != 7 && items != 8 {
		return nil, d.fail(ErrNotSnapshot)
	}
	d.mark()
	if magic, err := d.Text(); err != nil || magic != Magic {
		return nil, d.fail(ErrNotSnapshot)
	}
	d.mark()
	if v, err := d.Uint(); err != nil {
		return nil, d.fail(ErrHeader)
	} else if v < 1 || v > VersionRestCheckpoint {
		return nil, d.fail(fmt.Errorf("%w %d (this sidecar reads versions 1 to %d)", ErrVersion, v, VersionRestCheckpoint))
	} else {
		s.Version = v
	}
	d.mark()
	prog, err := d.Raw(detcbor.MajorBytes)
	if err != nil {
		return nil, d.fail(ErrHeader)
	}
	s.Header.Program = prog
	d.mark()
	inputs, _, err := d.value()
	if err != nil || inputs.Kind != value.KindObject {
		return nil, d.fail(ErrInputs)
	}
	s.Header.Inputs = inputs.Members
	d.mark()
	n, err := d.Expect(detcbor.MajorArray)
	if err != nil || n > maxCapabilities {
		return nil, d.fail(ErrCapabilities)
	}
	for i := uint64(0); i < n; i++ {
		c, err := d.Text()
		if err != nil || !utf8.ValidString(c) {
			return nil, d.fail(ErrCapabilities)
		}
		s.Header.Capabilities = append(s.Header.Capabilities, c)
	}
	d.mark()
	if s.Header.Seed, err = d.Uint(); err != nil {
		return nil, d.fail(ErrHeader)
	}
	if s.Header.ClockMillis, err = d.Int(); err != nil {
		return nil, d.fail(ErrHeader)
	}
	if items == 8 {
		if err := d.shape(s); err != nil {
			return nil, err
		}
	}
	s.head = d.Offset()
	if s.Version == 1 {
		err = d.journalV1(s)
	} else {
		err = d.journal(s)
	}
	s.compressed = d.compressed
	if err = d.inflate(s, err); err != nil {
		return nil, err
	}
	return s, nil
}

// shape reads a header's [entry, console], which only executions of
// current programs have, each a known value other than both defaults.
func (d *decoder) shape(s *Snapshot) error {
	d.mark()
	if !shapedVersion(s.Version) {
		return d.fail(ErrHeader)
	}
	if err := d.Array(2); err != nil {
		return d.fail(ErrHeader)
	}
	entry, err := d.Uint()
	if err != nil || entry > uint64(EntryCall) {
		return d.fail(ErrHeader)
	}
	console, err := d.Uint()
	if err != nil || console > uint64(ConsoleCollect) || entry == 0 && console == 0 {
		return d.fail(ErrHeader)
	}
	s.Header.Entry, s.Header.Console = Entry(entry), Console(console)
	return nil
}

// journalV1 reads a version 1 journal into calls and suspensions: each
// call suspended the execution at once and was answered by the next
// resume.
func (d *decoder) journalV1(s *Snapshot) error {
	for {
		c, l, err := d.pending()
		if err != nil {
			return err
		}
		c.ID, c.Sync = uint64(len(s.Calls)+1), true
		s.Calls = append(s.Calls, c)
		s.Suspensions = append(s.Suspensions, Suspension{Focus: c.ID, Made: c.ID, Meter: c.Meter, Limits: l})
		if d.Len() == 0 {
			return nil
		}
		o, err := d.outcome()
		if err != nil {
			return err
		}
		s.Last().Answers = []Answer{{CallID: c.ID, Outcome: o}}
		d.place(s)
	}
}

// journal reads a version 2 journal. Everything replay relies on is
// checked here: answers only to calls made and not yet answered, only
// right after a suspension; a suspension only with its focus outstanding;
// the journal ends at a suspension.
func (d *decoder) journal(s *Snapshot) error {
	var answered []bool // by call id - s.Base - 1
	outstanding := 0
	resuming := false // after a suspend item, before the next call or suspend
	if HasCheckpoint(s.Version) {
		if err := d.checkpoint(s); err != nil {
			return err
		}
		outstanding, resuming = len(s.Calls), true
		answered = make([]bool, outstanding)
	}
	s.tail = d.Len()
	for d.Len() > 0 {
		d.mark()
		n, err := d.Expect(detcbor.MajorArray)
		if err != nil {
			return d.fail(ErrCall)
		}
		tag, err := d.Uint()
		if err != nil {
			return d.fail(ErrCall)
		}
		if resuming && tag != tagAnswer && len(s.Last().Answers) == 0 {
			return d.fail(ErrAnswer) // a resume that delivered nothing
		}
		switch {
		case tag == tagCall && n == 6:
			c, err := d.call()
			if err != nil {
				return err
			}
			if s.Made() == math.MaxUint64 {
				return d.fail(ErrCall) // a checkpoint's number left no room for it
			}
			c.ID = s.Made() + 1
			s.Calls = append(s.Calls, c)
			answered = append(answered, false)
			outstanding++
			resuming = false
		case tag == tagSuspend && n == 5:
			sp := Suspension{Made: s.Made()}
			if sp.Focus, err = d.Uint(); err != nil || sp.Focus <= s.Base || sp.Focus > s.Made() || answered[sp.Focus-s.Base-1] {
				return d.fail(ErrSuspend)
			}
			if sp.Meter, err = d.meter(); err != nil {
				return d.fail(ErrSuspend)
			}
			if d.Null() {
				if len(s.Suspensions) == 0 {
					return d.fail(ErrSuspend) // nothing to be the same as
				}
				sp.Limits = s.Last().Limits
			} else if sp.Limits, err = d.limits(); err != nil {
				return err
			} else if len(s.Suspensions) > 0 && *s.Last().Limits == *sp.Limits {
				return d.fail(ErrSuspend) // the same limits again are written null: one encoding per journal
			}
			s.Suspensions = append(s.Suspensions, sp)
			resuming = true
		case tag == tagAnswer && n == 3 && resuming:
			id, err := d.Uint()
			if err != nil || id <= s.Base || id > s.Made() || answered[id-s.Base-1] {
				return d.fail(ErrAnswer)
			}
			o, err := d.outcome()
			if err != nil {
				return err
			}
			answered[id-s.Base-1] = true
			outstanding--
			sp := s.Last()
			sp.Answers = append(sp.Answers, Answer{CallID: id, Outcome: o})
			d.place(s)
		default:
			return d.fail(ErrCall)
		}
	}
	if len(s.Suspensions) == 0 || !resuming || len(s.Last().Answers) > 0 || outstanding == 0 {
		return d.fail(ErrUnsuspended)
	}
	return nil
}

// maxRandState bounds a checkpoint's random generator state (PCG's is 20
// bytes).
const maxRandState = 64

// checkpointCall reads what appendCheckpointCall wrote.
func (d *decoder) checkpointCall(c *HostCall) error {
	var err error
	if c.Capability, err = d.Text(); err != nil || !utf8.ValidString(c.Capability) {
		return d.fail(ErrCheckpoint)
	}
	if err := d.args(c); err != nil {
		return err
	}
	d.mark()
	if c.Meter, err = d.meter(); err != nil {
		return d.fail(ErrCheckpoint)
	}
	return nil
}

// checkpoint reads a version 6 or 7 journal's checkpoint item into the
// snapshot's first calls (the one the execution waits in, or those it
// waits for at rest), its first suspension and its Checkpoint.
func (d *decoder) checkpoint(s *Snapshot) error {
	d.mark()
	rest := s.Version == VersionRestCheckpoint
	items := uint64(12)
	if rest {
		items = 9
	}
	if n, err := d.Expect(detcbor.MajorArray); err != nil || n != items {
		return d.fail(ErrCheckpoint)
	}
	if tag, err := d.Uint(); err != nil || tag != tagCheckpoint {
		return d.fail(ErrCheckpoint)
	}
	made, err := d.Uint()
	if err != nil || made == 0 || made == math.MaxUint64 {
		return d.fail(ErrCheckpoint)
	}
	if rest {
		// The calls outstanding, the last made: numbered up to made.
		d.mark()
		k, err := d.Expect(detcbor.MajorArray)
		if err != nil || k == 0 || k > made || k > uint64(d.Len()) {
			return d.fail(ErrCheckpoint)
		}
		s.Base = made - k
		for i := range k {
			d.mark()
			if n, err := d.Expect(detcbor.MajorArray); err != nil || n != 4 {
				return d.fail(ErrCheckpoint)
			}
			c := HostCall{ID: s.Base + i + 1}
			if err := d.checkpointCall(&c); err != nil {
				return err
			}
			s.Calls = append(s.Calls, c)
		}
	} else {
		c := HostCall{ID: made, Sync: true}
		if err := d.checkpointCall(&c); err != nil {
			return err
		}
		s.Base = made - 1
		s.Calls = append(s.Calls, c)
	}
	d.mark()
	sp := Suspension{Focus: s.Base + 1, Made: made}
	if sp.Meter, err = d.meter(); err != nil {
		return d.fail(ErrCheckpoint)
	}
	if sp.Limits, err = d.limits(); err != nil {
		return err
	}
	d.mark()
	cp := &Checkpoint{}
	if cp.Carry, err = d.Uint(); err != nil {
		return d.fail(ErrCheckpoint)
	}
	if cp.Rand, err = d.Raw(detcbor.MajorBytes); err != nil || len(cp.Rand) > maxRandState {
		return d.fail(ErrCheckpoint)
	}
	if cp.Image, err = d.Raw(detcbor.MajorBytes); err != nil || len(cp.Image) == 0 {
		return d.fail(ErrCheckpoint)
	}
	s.Checkpoint = cp
	s.Suspensions = append(s.Suspensions, sp)
	return nil
}

// call reads a version 2 call item after its tag.
func (d *decoder) call() (HostCall, error) {
	var c HostCall
	var err error
	if c.Capability, err = d.Text(); err != nil || !utf8.ValidString(c.Capability) {
		return c, d.fail(ErrCall)
	}
	if err := d.args(&c); err != nil {
		return c, err
	}
	d.mark()
	if c.Meter, err = d.meter(); err != nil {
		return c, d.fail(ErrCall)
	}
	if c.Sync, err = d.Bool(); err != nil {
		return c, d.fail(ErrCall)
	}
	return c, nil
}

// args reads a call's argument array. Each argument is a value of its
// own, as it crossed the boundary: nested up to value.MaxDepth levels,
// which the array around them must not push past the limit.
func (d *decoder) args(c *HostCall) error {
	d.mark()
	start := d.Offset()
	n, err := d.Expect(detcbor.MajorArray)
	if err != nil || n > uint64(d.Len()) {
		return d.fail(ErrCallArgs)
	}
	if d.lazy {
		// A replay compares the arguments it makes again with these
		// bytes (HostCall.SameArgs): they are checked as the decoder
		// would read them, and kept.
		for range n {
			if _, err := d.checked(); err != nil {
				return d.fail(ErrCallArgs)
			}
		}
		c.argsEnc = d.Consumed(start)
		return nil
	}
	c.Args = make([]value.Value, n)
	for i := range c.Args {
		v, _, err := d.value() // a top-level Hole is refused there
		if err != nil {
			return d.fail(ErrCallArgs)
		}
		c.Args[i] = v
	}
	c.ArgsDigest = argsDigest(d.Consumed(start))
	return nil
}

func (d *decoder) meter() (m Meter, err error) {
	if m.Instructions, err = d.Uint(); err != nil {
		return m, err
	}
	m.Allocations, err = d.Uint()
	return m, err
}

func (d *decoder) limits() (*Limits, error) {
	d.mark()
	if err := d.Array(5); err != nil {
		return nil, d.fail(ErrCallLimits)
	}
	var l Limits
	for _, f := range []*uint64{&l.InstructionBudget, &l.HeapLimitBytes, &l.AllocationBudget, &l.CallDepthLimit, &l.MaxOutstandingHostCalls} {
		var err error
		if *f, err = d.Uint(); err != nil {
			return nil, d.fail(ErrCallLimits)
		}
	}
	return &l, nil
}

// pending reads a version 1 pending item.
func (d *decoder) pending() (HostCall, *Limits, error) {
	var c HostCall
	d.mark()
	items, err := d.Expect(detcbor.MajorArray)
	if err != nil || items != 5 && items != 6 {
		return c, nil, d.fail(ErrCall)
	}
	if tag, err := d.Uint(); err != nil || tag != tagPending {
		return c, nil, d.fail(ErrCall)
	}
	if c.Capability, err = d.Text(); err != nil || !utf8.ValidString(c.Capability) {
		return c, nil, d.fail(ErrCall)
	}
	if err := d.args(&c); err != nil {
		return c, nil, err
	}
	d.mark()
	if c.Meter, err = d.meter(); err != nil {
		return c, nil, d.fail(ErrCall)
	}
	if items == 6 {
		l, err := d.limits()
		return c, l, err
	}
	return c, nil, nil
}

func (d *decoder) outcome() (Outcome, error) {
	var o Outcome
	d.mark()
	n, err := d.Expect(detcbor.MajorArray)
	if err != nil {
		return o, d.fail(ErrOutcome)
	}
	tag, err := d.Uint()
	if err != nil {
		return o, d.fail(ErrOutcome)
	}
	switch {
	case tag == tagValue && n == 2:
		d.mark()
		if d.lazy {
			if o.enc, err = d.checked(); err != nil {
				return o, d.fail(ErrOutcome)
			}
			return o, nil
		}
		v, _, err := d.value()
		if err != nil {
			return o, d.fail(ErrOutcome)
		}
		o.Value = v
		return o, nil
	case tag == tagCompressedValue && n == 3:
		size, err := d.Uint()
		if err != nil {
			return o, d.fail(ErrOutcome)
		}
		z, err := d.Raw(detcbor.MajorBytes)
		if err != nil {
			return o, d.fail(ErrOutcome)
		}
		if size < compressMin || size > MaxRecordBytes {
			return o, d.fail(ErrDecompress) // before anything is taken for it
		}
		d.compressed = true
		d.deferRecord(z, size)
		return o, nil
	case tag == tagError && n == 5:
		e := &HostError{}
		if e.Name, err = d.guestText(); err != nil {
			return o, d.fail(ErrOutcome)
		}
		if e.Message, err = d.guestText(); err != nil {
			return o, d.fail(ErrOutcome)
		}
		if !d.Null() {
			code, err := d.guestText()
			if err != nil {
				return o, d.fail(ErrOutcome)
			}
			e.Code = &code
		}
		k, err := d.Expect(detcbor.MajorArray)
		if err != nil || k > 1 {
			return o, d.fail(ErrOutcome)
		}
		if k == 1 {
			dv, _, err := d.value()
			if err != nil {
				return o, d.fail(ErrOutcome)
			}
			e.Details = &dv
		}
		o.Error = e
		return o, nil
	}
	return o, d.fail(ErrOutcome)
}

// guestText reads what appendGuestText wrote.
func (d *decoder) guestText() (string, error) {
	if m, ok := d.Peek(); ok && m == detcbor.MajorBytes {
		p, err := d.Raw(detcbor.MajorBytes)
		if err != nil || !value.ValidWTF8(string(p)) || utf8.Valid(p) {
			return "", ErrOutcome
		}
		return string(p), nil
	}
	s, err := d.Text()
	if err != nil || !utf8.ValidString(s) {
		return "", ErrOutcome
	}
	return s, nil
}

// Encode writes a decoded snapshot back into bytes, in its own format
// version (unsealed): Encode(Decode(b)) is b for unsealed bytes.
func Encode(s *Snapshot) []byte {
	var b *Builder
	var raw []byte
	next, first := 0, 0
	if cp := s.Checkpoint; cp != nil {
		sp := &s.Suspensions[0]
		calls := s.CheckpointCalls()
		b, raw, _ = NewCheckpointBuilder(s.Header, nil, calls, sp.Meter, sp.Limits, cp)
		for j := range sp.Answers {
			b.Answer(&sp.Answers[j])
		}
		next, first = len(calls), 1
	} else {
		b = newBuilder(s.Header, nil, s.Version)
	}
	for i := first; i < len(s.Suspensions); i++ {
		sp := &s.Suspensions[i]
		for ; next < len(s.Calls) && s.Calls[next].ID <= sp.Made; next++ {
			b.Call(&s.Calls[next])
		}
		l := sp.Limits
		if l == nil && s.Version != 1 {
			// Decode gives every suspension of a later version its limits.
			l = &Limits{}
		}
		raw, _ = b.Suspend(sp.Focus, sp.Meter, l)
		for j := range sp.Answers {
			b.Answer(&sp.Answers[j])
		}
	}
	return raw
}
