package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/internal/detcbor"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Format: a CBOR sequence (RFC 8742) of items:
//
//	header  ["mustard-snapshot", Version, program: bytes, inputs: Object,
//	         capabilities: [text...], seed: uint, clock_ms: int]
//	then, per completed call, its pending item followed by its outcome item,
//	then the pending item the execution is suspended on:
//	pending [1, capability: text, args: Array, instructions: uint, allocations: uint,
//	         limits: [instruction_budget, heap_limit_bytes, allocation_budget,
//	                  call_depth_limit, max_outstanding_host_calls]]
//	         (the limits the segment that made the call ran under; journals
//	         written before they were recorded have 5 items and still decode)
//	outcome [2, value] | [3, name: text, message: text, code: text|null, details: [] or [value]]
//	        | [4, size: uint, zstd: bytes] (a large value, compressed: compress.go)
//
// Each snapshot of an execution is therefore a prefix of the next one plus
// new items, so producing snapshot k+1 appends and hashes only the new call.
const (
	Magic   = "mustard-snapshot"
	Version = 1

	tagPending      = 1
	tagValue        = 2
	tagError        = 3
	maxCapabilities = 1024
)

// ID is the snapshot id: lowercase hex SHA-256 of the bytes.
func ID(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func appendHeader(b []byte, h Header) []byte {
	b = detcbor.AppendHead(b, detcbor.MajorArray, 7)
	b = detcbor.AppendText(b, Magic)
	b = detcbor.AppendHead(b, detcbor.MajorUint, Version)
	b = detcbor.AppendBytes(b, h.Program)
	b = value.Object(h.Inputs...).AppendCBOR(b)
	b = detcbor.AppendHead(b, detcbor.MajorArray, uint64(len(h.Capabilities)))
	for _, c := range h.Capabilities {
		b = detcbor.AppendText(b, c)
	}
	b = detcbor.AppendHead(b, detcbor.MajorUint, h.Seed)
	return detcbor.AppendInt(b, h.ClockMillis)
}

func appendPending(b []byte, p Pending) []byte {
	b = appendCallHead(b, p.Capability, p.Limits != nil)
	b = value.Array(p.Args...).AppendCBOR(b)
	return appendCallTail(b, p.Meter, p.Limits)
}

// appendCallHead writes a pending item up to its arguments.
func appendCallHead(b []byte, capability string, limits bool) []byte {
	n := uint64(5)
	if limits {
		n = 6
	}
	b = detcbor.AppendHead(b, detcbor.MajorArray, n)
	b = detcbor.AppendHead(b, detcbor.MajorUint, tagPending)
	return detcbor.AppendText(b, capability)
}

// appendCallTail writes a pending item after its arguments.
func appendCallTail(b []byte, m Meter, l *policy.Limits) []byte {
	b = detcbor.AppendHead(b, detcbor.MajorUint, m.Instructions)
	b = detcbor.AppendHead(b, detcbor.MajorUint, m.Allocations)
	if l != nil {
		b = detcbor.AppendHead(b, detcbor.MajorArray, 5)
		for _, v := range []uint64{l.InstructionBudget, l.HeapLimitBytes, l.AllocationBudget, l.CallDepthLimit, l.MaxOutstandingHostCalls} {
			b = detcbor.AppendHead(b, detcbor.MajorUint, v)
		}
	}
	return b
}

func appendOutcome(b []byte, o Outcome) []byte {
	if o.Error == nil {
		// The value is encoded in place, as in a plain record, and moved
		// into a compressed one only when that pays: a small answer costs
		// no buffer of its own and no copy.
		start := len(b)
		b = detcbor.AppendHead(b, detcbor.MajorArray, 2)
		b = detcbor.AppendHead(b, detcbor.MajorUint, tagValue)
		at := len(b)
		b = o.Value.AppendCBOR(b)
		if z := compressed(b[at:]); z != nil {
			size := uint64(len(b) - at)
			b = detcbor.AppendHead(b[:start], detcbor.MajorArray, 3)
			b = detcbor.AppendHead(b, detcbor.MajorUint, tagCompressedValue)
			b = detcbor.AppendHead(b, detcbor.MajorUint, size)
			return detcbor.AppendBytes(b, z)
		}
		return b
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
}

// NewBuilder starts the journal of a fresh execution, sealed under seal
// unless it is nil.
func NewBuilder(h Header, seal *Sealer) *Builder {
	b := &Builder{buf: make([]byte, 0, 256+len(h.Program)), h: sha256.New(), seal: seal}
	if seal != nil {
		b.buf = seal.appendEnvelope(b.buf)
		b.h.Write(b.buf)
	}
	if seal == nil {
		b.buf = appendHeader(b.buf, h)
		b.h.Write(b.buf)
	} else {
		b.sealItem(appendHeader(nil, h))
	}
	return b
}

// ContinueBuilder continues the journal of snapshot bytes s was loaded
// from (with the same seal, if any).
func ContinueBuilder(raw []byte, s *Snapshot, seal *Sealer) *Builder {
	b := &Builder{buf: append([]byte(nil), raw...), h: sha256.New(), seal: seal, records: s.records}
	b.h.Write(b.buf)
	return b
}

// Sealer is the builder's seal, or nil.
func (b *Builder) Sealer() *Sealer { return b.seal }

// sealItem appends a journal item as the next sealed record and extends
// the running hash over it.
func (b *Builder) sealItem(item []byte) {
	start := len(b.buf)
	b.buf = b.seal.appendRecord(b.buf, b.records, b.h.Sum(nil), item)
	b.records++
	b.item = item
	b.h.Write(b.buf[start:])
}

// The unsealed paths append in place, without a copy: they are the hot
// path of every suspension.

// Suspend appends the pending call and returns the snapshot bytes and id.
// The bytes are never modified afterwards.
func (b *Builder) Suspend(p Pending) ([]byte, string) {
	if b.seal != nil {
		b.sealItem(appendPending(b.item[:0], p))
	} else {
		start := len(b.buf)
		b.buf = appendPending(b.buf, p)
		b.h.Write(b.buf[start:])
	}
	n := len(b.buf)
	return b.buf[:n:n], hex.EncodeToString(b.h.Sum(nil))
}

// Answer appends the outcome of the pending call.
func (b *Builder) Answer(o Outcome) {
	if b.seal != nil {
		b.sealItem(appendOutcome(b.item[:0], o))
		return
	}
	start := len(b.buf)
	b.buf = appendOutcome(b.buf, o)
	b.h.Write(b.buf[start:])
}

// ArgsDigest is what the journal keeps of a completed call's arguments: the
// SHA-256 of their encoding as an array. Replay compares a re-made call's
// digest with it.
func ArgsDigest(args []value.Value) [32]byte {
	return argsDigest(value.Array(args...).AppendCBOR(nil))
}

// argsDigest hashes an encoded argument array. Decode hashes the bytes as
// they stand; the encoding is canonical, so that equals ArgsDigest of the
// decoded arguments (TestArgsDigestOfDecodedCalls).
func argsDigest(enc []byte) [32]byte { return sha256.Sum256(enc) }

// Decoding errors. Decode returns them wrapped in a *FormatError that says
// at which byte the snapshot stopped making sense.
var (
	ErrNotSnapshot     = errors.New("not a snapshot")
	ErrVersion         = errors.New("unsupported format version")
	ErrHeader          = errors.New("malformed header")
	ErrInputs          = errors.New("malformed inputs")
	ErrCapabilities    = errors.New("malformed capabilities")
	ErrCall            = errors.New("malformed call")
	ErrCallArgs        = errors.New("malformed call arguments")
	ErrCallLimits      = errors.New("malformed call limits")
	ErrOutcome         = errors.New("malformed outcome")
	ErrDecompress      = errors.New("compressed outcome does not decompress to its size")
	ErrTrailingOutcome = errors.New("outcome after the last call")
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
	at int
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

// Decode parses snapshot bytes. It must only be called after the bytes were
// authenticated; it still fails closed on anything malformed, with a
// *FormatError.
func Decode(b []byte) (*Snapshot, error) {
	d := &decoder{Reader: detcbor.NewReader(b)}
	s := &Snapshot{}
	if err := d.Array(7); err != nil {
		return nil, d.fail(ErrNotSnapshot)
	}
	d.mark()
	if magic, err := d.Text(); err != nil || magic != Magic {
		return nil, d.fail(ErrNotSnapshot)
	}
	d.mark()
	if v, err := d.Uint(); err != nil {
		return nil, d.fail(ErrHeader)
	} else if v != Version {
		return nil, d.fail(fmt.Errorf("%w %d (this sidecar reads version %d)", ErrVersion, v, Version))
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
	for {
		p, digest, err := d.pending()
		if err != nil {
			return nil, err
		}
		if d.Len() == 0 {
			s.Pending = p
			return s, nil
		}
		o, err := d.outcome()
		if err != nil {
			return nil, err
		}
		s.Calls = append(s.Calls, Call{Capability: p.Capability, ArgsDigest: digest, Meter: p.Meter, Limits: p.Limits, Outcome: o})
	}
}

func (d *decoder) pending() (Pending, [32]byte, error) {
	var p Pending
	d.mark()
	items, err := d.Expect(detcbor.MajorArray)
	if err != nil || items != 5 && items != 6 {
		return p, [32]byte{}, d.fail(ErrCall)
	}
	if tag, err := d.Uint(); err != nil || tag != tagPending {
		return p, [32]byte{}, d.fail(ErrCall)
	}
	if p.Capability, err = d.Text(); err != nil || !utf8.ValidString(p.Capability) {
		return p, [32]byte{}, d.fail(ErrCall)
	}
	d.mark()
	args, enc, err := d.value()
	if err != nil || args.Kind != value.KindArray {
		return p, [32]byte{}, d.fail(ErrCallArgs)
	}
	digest := argsDigest(enc)
	p.Args = args.Elems
	d.mark()
	if p.Meter.Instructions, err = d.Uint(); err != nil {
		return p, digest, d.fail(ErrCall)
	}
	if p.Meter.Allocations, err = d.Uint(); err != nil {
		return p, digest, d.fail(ErrCall)
	}
	if items == 6 {
		d.mark()
		if err := d.Array(5); err != nil {
			return p, digest, d.fail(ErrCallLimits)
		}
		var l policy.Limits
		for _, f := range []*uint64{&l.InstructionBudget, &l.HeapLimitBytes, &l.AllocationBudget, &l.CallDepthLimit, &l.MaxOutstandingHostCalls} {
			if *f, err = d.Uint(); err != nil {
				return p, digest, d.fail(ErrCallLimits)
			}
		}
		p.Limits = &l
	}
	return p, digest, nil
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
		enc, ok := decompress(z, size)
		if !ok {
			return o, d.fail(ErrDecompress)
		}
		v, rest, err := value.DecodeCBOR(enc)
		if err != nil || len(rest) != 0 {
			return o, d.fail(ErrOutcome)
		}
		o.Value = v
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
