package snapshot

import (
	"bytes"
	"fmt"
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
	b := NewBuilder(Header{Program: []byte("p"), Capabilities: []string{"cap"}, Seed: 1, ClockMillis: -1}, nil, Version)
	suspendOn(b, Pending{Capability: "cap", Args: []value.Value{value.Number(1)}, Meter: Meter{Instructions: 3, Allocations: 4}})
	answerLast(b, Outcome{Error: &HostError{Name: "E", Message: "m"}})
	seed, _ := suspendOn(b, Pending{Capability: "cap", Meter: Meter{Instructions: 5, Allocations: 6}})
	f.Add(seed)
	// A compressed answer.
	answerLast(b, Outcome{Value: value.String(strings.Repeat("a compressible tool result; ", 100))})
	seed, _ = suspendOn(b, Pending{Capability: "cap", Meter: Meter{Instructions: 7, Allocations: 8}})
	f.Add(seed)
	// A checkpoint and the journal after it.
	_, seed = checkpointJournal(f, nil)
	f.Add(seed)
	// A checkpoint at rest with two calls outstanding, and the journal
	// after it.
	l := defaultLimits
	rb, _, _ := NewCheckpointBuilder(Header{Program: []byte("p"), Capabilities: []string{"cap"}}, nil, []HostCall{
		{ID: 3, Capability: "cap", Args: []value.Value{value.Number(3)}},
		{ID: 4, Capability: "cap", Args: []value.Value{}},
	}, Meter{Instructions: 9, Allocations: 1}, &l, &Checkpoint{Rand: []byte("pcg:0123456789abcdef"), Image: []byte{0, 2, 9, 1, 9, 2}})
	rb.Answer(&Answer{CallID: 4, Outcome: Outcome{Value: value.String("four")}})
	seed, _ = rb.Suspend(3, Meter{Instructions: 12, Allocations: 2}, &l)
	f.Add(seed)
	f.Fuzz(func(t *testing.T, b []byte) {
		orig := bytes.Clone(b)
		s, err := Decode(b)
		if !bytes.Equal(b, orig) {
			t.Fatal("Decode modified its input")
		}
		// Load, which leaves answers encoded, accepts and refuses the
		// same plain bytes with the same error, and its answers decode to
		// Decode's. (Sealed bytes need a seal key to load.)
		if !IsSealed(b) {
			loaded, lerr := Load(b, nil)
			if fmt.Sprint(lerr) != fmt.Sprint(err) {
				t.Fatalf("Load error %v, Decode %v", lerr, err)
			}
			if err == nil && !reflect.DeepEqual(decodeAnswers(t, loaded), s) {
				t.Fatal("Load's answers decode to other values than Decode's")
			}
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
	for _, c := range s.Calls {
		for _, a := range c.Args {
			check("call argument", a)
		}
	}
	for _, sp := range s.Suspensions {
		for _, a := range sp.Answers {
			if a.Outcome.Error == nil {
				check("outcome value", a.Outcome.Value)
			} else if d := a.Outcome.Error.Details; d != nil {
				check("outcome details", *d)
			}
		}
	}
}

// reencode encodes s again and compares it with b, so the format has
// exactly one encoding per journal, compressed answers aside (any zstd
// frame of the value is accepted, so that snapshots of every build resume
// in every other: then the encoding must read back as the same journal).
// It returns "" or what differs.
func reencode(b []byte, s *Snapshot) string {
	enc := Encode(s)
	if bytes.Equal(enc, b) {
		return ""
	}
	if !s.compressed {
		return "encoding"
	}
	again, err := Decode(enc)
	if err != nil {
		return "encoding does not decode"
	}
	again.compressed = s.compressed
	if !reflect.DeepEqual(again, s) {
		return "encoding reads back as another journal"
	}
	return ""
}
