package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"unicode/utf8"

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
	b = appendHead(b, majorArray, 7)
	b = appendText(b, Magic)
	b = appendHead(b, majorUint, Version)
	b = appendBytes(b, h.Program)
	b = value.Object(h.Inputs...).AppendCBOR(b)
	b = appendHead(b, majorArray, uint64(len(h.Capabilities)))
	for _, c := range h.Capabilities {
		b = appendText(b, c)
	}
	b = appendHead(b, majorUint, h.Seed)
	return appendInt(b, h.ClockMillis)
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
	b = appendHead(b, majorArray, n)
	b = appendHead(b, majorUint, tagPending)
	return appendText(b, capability)
}

// appendCallTail writes a pending item after its arguments.
func appendCallTail(b []byte, m Meter, l *policy.Limits) []byte {
	b = appendHead(b, majorUint, m.Instructions)
	b = appendHead(b, majorUint, m.Allocations)
	if l != nil {
		b = appendHead(b, majorArray, 5)
		for _, v := range []uint64{l.InstructionBudget, l.HeapLimitBytes, l.AllocationBudget, l.CallDepthLimit, l.MaxOutstandingHostCalls} {
			b = appendHead(b, majorUint, v)
		}
	}
	return b
}

func appendOutcome(b []byte, o Outcome) []byte {
	if o.Error == nil {
		enc := o.Value.AppendCBOR(nil)
		if z := compressed(enc); z != nil {
			b = appendHead(b, majorArray, 3)
			b = appendHead(b, majorUint, tagCompressedValue)
			b = appendHead(b, majorUint, uint64(len(enc)))
			return appendBytes(b, z)
		}
		b = appendHead(b, majorArray, 2)
		b = appendHead(b, majorUint, tagValue)
		return append(b, enc...)
	}
	e := o.Error
	b = appendHead(b, majorArray, 5)
	b = appendHead(b, majorUint, tagError)
	b = appendGuestText(b, e.Name)
	b = appendGuestText(b, e.Message)
	if e.Code != nil {
		b = appendGuestText(b, *e.Code)
	} else {
		b = append(b, cborNull)
	}
	if e.Details != nil {
		b = appendHead(b, majorArray, 1)
		return e.Details.AppendCBOR(b)
	}
	return appendHead(b, majorArray, 0)
}

// appendGuestText writes a host error's string: a text item when it is
// UTF-8, otherwise (an unpaired surrogate) a byte string of its WTF-8, as
// value strings are. Snapshots with only text items decode as before.
func appendGuestText(b []byte, s string) []byte {
	if utf8.ValidString(s) {
		return appendText(b, s)
	}
	return appendBytes(b, []byte(s))
}

// guestText reads what appendGuestText wrote.
func (r *reader) guestText() (string, error) {
	if len(r.b) > 0 && r.b[0]>>5 == majorBytes {
		p, err := r.raw(majorBytes)
		if err != nil || !value.ValidWTF8(string(p)) || utf8.Valid(p) {
			return "", errMalformed
		}
		return string(p), nil
	}
	s, err := r.text()
	if err != nil || !utf8.ValidString(s) {
		return "", errMalformed
	}
	return s, nil
}

// Builder produces the snapshots of one live execution incrementally: its
// buffer only grows, and the running hash always covers all of it.
type Builder struct {
	buf []byte
	h   hash.Hash
}

// NewBuilder starts the journal of a fresh execution.
func NewBuilder(h Header) *Builder {
	b := &Builder{buf: appendHeader(make([]byte, 0, 256+len(h.Program)), h), h: sha256.New()}
	b.h.Write(b.buf)
	return b
}

// ContinueBuilder continues the journal of snapshot bytes already decoded.
func ContinueBuilder(raw []byte) *Builder {
	b := &Builder{buf: append([]byte(nil), raw...), h: sha256.New()}
	b.h.Write(b.buf)
	return b
}

// Suspend appends the pending call and returns the snapshot bytes and id.
// The bytes are never modified afterwards.
func (b *Builder) Suspend(p Pending) ([]byte, string) {
	start := len(b.buf)
	b.buf = appendPending(b.buf, p)
	b.h.Write(b.buf[start:])
	n := len(b.buf)
	return b.buf[:n:n], hex.EncodeToString(b.h.Sum(nil))
}

// Answer appends the outcome of the pending call.
func (b *Builder) Answer(o Outcome) {
	start := len(b.buf)
	b.buf = appendOutcome(b.buf, o)
	b.h.Write(b.buf[start:])
}

// Decode parses snapshot bytes. It must only be called after the bytes were
// authenticated; it still fails closed on anything malformed.
func Decode(b []byte) (*Snapshot, error) {
	r := &reader{b: b}
	s := &Snapshot{}
	if err := r.array(7); err != nil {
		return nil, fail("not a snapshot")
	}
	if magic, err := r.text(); err != nil || magic != Magic {
		return nil, fail("not a snapshot")
	}
	if v, err := r.uint(); err != nil || v != Version {
		return nil, fail(fmt.Sprintf("unsupported snapshot format version (expected %d)", Version))
	}
	prog, err := r.raw(majorBytes)
	if err != nil {
		return nil, fail("malformed header")
	}
	s.Header.Program = prog
	inputs, rest, err := value.DecodeCBOR(r.b)
	if err != nil || inputs.Kind != value.KindObject {
		return nil, fail("malformed inputs")
	}
	r.b = rest
	s.Header.Inputs = inputs.Members
	n, err := r.expect(majorArray)
	if err != nil || n > maxCapabilities {
		return nil, fail("malformed capabilities")
	}
	for i := uint64(0); i < n; i++ {
		c, err := r.text()
		if err != nil || !utf8.ValidString(c) {
			return nil, fail("malformed capabilities")
		}
		s.Header.Capabilities = append(s.Header.Capabilities, c)
	}
	if s.Header.Seed, err = r.uint(); err != nil {
		return nil, fail("malformed header")
	}
	if s.Header.ClockMillis, err = r.int(); err != nil {
		return nil, fail("malformed header")
	}
	for {
		p, digest, err := r.pending()
		if err != nil {
			return nil, err
		}
		if len(r.b) == 0 {
			s.Pending = p
			return s, nil
		}
		o, err := r.outcome()
		if err != nil {
			return nil, err
		}
		s.Calls = append(s.Calls, Call{Capability: p.Capability, ArgsDigest: digest, Meter: p.Meter, Limits: p.Limits, Outcome: o})
	}
}

func fail(msg string) error { return fmt.Errorf("snapshot %s", msg) }

func (r *reader) pending() (Pending, [32]byte, error) {
	var p Pending
	items, err := r.expect(majorArray)
	if err != nil || items != 5 && items != 6 {
		return p, [32]byte{}, fail("malformed call")
	}
	if tag, err := r.uint(); err != nil || tag != tagPending {
		return p, [32]byte{}, fail("malformed call")
	}
	if p.Capability, err = r.text(); err != nil || !utf8.ValidString(p.Capability) {
		return p, [32]byte{}, fail("malformed call")
	}
	before := r.b
	args, rest, err := value.DecodeCBOR(r.b)
	if err != nil || args.Kind != value.KindArray {
		return p, [32]byte{}, fail("malformed call arguments")
	}
	digest := sha256.Sum256(before[:len(before)-len(rest)])
	r.b = rest
	p.Args = args.Elems
	if p.Meter.Instructions, err = r.uint(); err != nil {
		return p, digest, fail("malformed call")
	}
	if p.Meter.Allocations, err = r.uint(); err != nil {
		return p, digest, fail("malformed call")
	}
	if items == 6 {
		if err := r.array(5); err != nil {
			return p, digest, fail("malformed call limits")
		}
		var l policy.Limits
		for _, f := range []*uint64{&l.InstructionBudget, &l.HeapLimitBytes, &l.AllocationBudget, &l.CallDepthLimit, &l.MaxOutstandingHostCalls} {
			if *f, err = r.uint(); err != nil {
				return p, digest, fail("malformed call limits")
			}
		}
		p.Limits = &l
	}
	return p, digest, nil
}

func (r *reader) outcome() (Outcome, error) {
	var o Outcome
	n, err := r.expect(majorArray)
	if err != nil {
		return o, fail("malformed outcome")
	}
	tag, err := r.uint()
	if err != nil {
		return o, fail("malformed outcome")
	}
	switch {
	case tag == tagValue && n == 2:
		v, rest, err := value.DecodeCBOR(r.b)
		if err != nil {
			return o, fail("malformed outcome value")
		}
		if compressed(r.b[:len(r.b)-len(rest)]) != nil {
			return o, fail("outcome value should be compressed")
		}
		r.b = rest
		o.Value = v
		return o, nil
	case tag == tagCompressedValue && n == 3:
		size, err := r.uint()
		if err != nil {
			return o, fail("malformed compressed outcome")
		}
		z, err := r.raw(majorBytes)
		if err != nil {
			return o, fail("malformed compressed outcome")
		}
		enc, ok := decompress(z, size)
		if !ok {
			return o, fail("compressed outcome does not decompress to its size")
		}
		v, rest, err := value.DecodeCBOR(enc)
		if err != nil || len(rest) != 0 {
			return o, fail("malformed outcome value")
		}
		if string(compressed(enc)) != string(z) {
			return o, fail("compressed outcome is not in canonical form")
		}
		o.Value = v
		return o, nil
	case tag == tagError && n == 5:
		e := &HostError{}
		if e.Name, err = r.guestText(); err != nil {
			return o, fail("malformed outcome")
		}
		if e.Message, err = r.guestText(); err != nil {
			return o, fail("malformed outcome")
		}
		if !r.isNull() {
			code, err := r.guestText()
			if err != nil {
				return o, fail("malformed outcome")
			}
			e.Code = &code
		}
		k, err := r.expect(majorArray)
		if err != nil || k > 1 {
			return o, fail("malformed outcome")
		}
		if k == 1 {
			d, rest, err := value.DecodeCBOR(r.b)
			if err != nil {
				return o, fail("malformed outcome details")
			}
			r.b = rest
			e.Details = &d
		}
		o.Error = e
		return o, nil
	}
	return o, fail("malformed outcome")
}
