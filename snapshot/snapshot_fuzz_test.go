package snapshot

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"github.com/mustard-sidecar/mustard-sidecar/internal/detcbor"
	"reflect"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Seeds in testdata/fuzz/FuzzDecode are the snapshots of the transcripts in
// corpus/transcripts and forged variants of them (go run
// ./corpus/cmd/gen-transcripts -seeds).

// FuzzDecode feeds Decode arbitrary bytes. Decode runs only on
// authenticated bytes, but a host key can leak: it must still fail closed.
func FuzzDecode(f *testing.F) {
	b := NewBuilder(Header{Program: []byte("p"), Capabilities: []string{"cap"}, Seed: 1, ClockMillis: -1}, nil)
	b.Suspend(Pending{Capability: "cap", Args: []value.Value{value.Number(1)}, Meter: Meter{Instructions: 3, Allocations: 4}})
	b.Answer(Outcome{Error: &HostError{Name: "E", Message: "m"}})
	seed, _ := b.Suspend(Pending{Capability: "cap", Meter: Meter{Instructions: 5, Allocations: 6}})
	f.Add(seed)
	// A compressed answer.
	b.Answer(Outcome{Value: value.String(strings.Repeat("a compressible tool result; ", 100))})
	seed, _ = b.Suspend(Pending{Capability: "cap", Meter: Meter{Instructions: 7, Allocations: 8}})
	f.Add(seed)
	f.Fuzz(func(t *testing.T, b []byte) {
		orig := bytes.Clone(b)
		s, err := Decode(b)
		if !bytes.Equal(b, orig) {
			t.Fatal("Decode modified its input")
		}
		if err != nil {
			if s != nil {
				t.Fatalf("Decode returned a snapshot with error %v", err)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "snapshot ") || strings.ContainsAny(msg, "*[]{}%") {
				t.Fatalf("Decode error %q is not one of the fixed snapshot messages", msg)
			}
			return
		}
		again, err := Decode(b)
		if err != nil || !reflect.DeepEqual(s, again) {
			t.Fatalf("Decode is not deterministic: %v", err)
		}
		checkValues(t, s)
		if msg := reencode(b, s); msg != "" {
			t.Fatalf("accepted bytes are not what the Builder writes for the decoded snapshot: %s\n%x", msg, b)
		}
	})
}

// checkValues: every value in an accepted snapshot is one a host could
// have sent or a guest produced.
func checkValues(t *testing.T, s *Snapshot) {
	t.Helper()
	check := func(what string, v value.Value) {
		if err := v.Validate(); err != nil {
			t.Fatalf("accepted snapshot has an invalid %s: %v", what, err)
		}
	}
	check("inputs object", value.Object(s.Header.Inputs...))
	for _, a := range s.Pending.Args {
		check("pending argument", a)
	}
	for _, c := range s.Calls {
		if c.Outcome.Error == nil {
			check("outcome value", c.Outcome.Value)
		} else if d := c.Outcome.Error.Details; d != nil {
			check("outcome details", *d)
		}
	}
}

// reencode rebuilds the encoding of s item by item and compares it with b,
// so the format has exactly one encoding per journal, compressed answers
// aside (any zstd frame of the value is accepted, so that snapshots of
// every build resume in every other). It returns "" or what differs.
func reencode(b []byte, s *Snapshot) string {
	rest, ok := bytes.CutPrefix(b, appendHeader(nil, s.Header))
	if !ok {
		return "header"
	}
	for i, c := range s.Calls {
		head := appendCallHead(nil, c.Capability, c.Limits != nil)
		if rest, ok = bytes.CutPrefix(rest, head); !ok {
			return "call head"
		}
		_, after, err := value.DecodeCBOR(rest)
		if err != nil {
			return "call arguments"
		}
		if sha256.Sum256(rest[:len(rest)-len(after)]) != c.ArgsDigest {
			return "call argument digest"
		}
		rest = after
		if rest, ok = bytes.CutPrefix(rest, appendCallTail(nil, c.Meter, c.Limits)); !ok {
			return "call meter"
		}
		// An outcome may be compressed by another build's settings, or
		// written plain: what must hold is that it reads back as itself.
		d := &decoder{Reader: detcbor.NewReader(rest)}
		o, err := d.outcome()
		if err != nil || !reflect.DeepEqual(o, c.Outcome) {
			return fmt.Sprintf("outcome of call %d", i+1)
		}
		if plain, ok := bytes.CutPrefix(rest, appendOutcome(nil, c.Outcome)); ok && len(plain) != d.Len() {
			return fmt.Sprintf("outcome of call %d has two lengths", i+1)
		}
		rest = d.Rest()
	}
	if !bytes.Equal(rest, appendPending(nil, s.Pending)) {
		return "pending call"
	}
	return ""
}
