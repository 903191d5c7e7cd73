package snapshot

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/sampletext"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// decodeAnswers decodes, in place, every answer and every call's
// arguments Load left encoded, and returns s.
func decodeAnswers(t *testing.T, s *Snapshot) *Snapshot {
	t.Helper()
	for i := range s.Calls {
		c, err := s.Calls[i].Decoded()
		if err != nil {
			t.Fatal(err)
		}
		s.Calls[i] = c
	}
	for i := range s.Suspensions {
		for j := range s.Suspensions[i].Answers {
			o, err := s.Suspensions[i].Answers[j].Outcome.Decoded()
			if err != nil {
				t.Fatal(err)
			}
			s.Suspensions[i].Answers[j].Outcome = o
		}
	}
	return s
}

// Load leaves every value answer and every call's arguments encoded,
// plain records and compressed ones alike; decoded, they are what Decode
// gives, and the snapshot encodes to the same bytes either way.
func TestLoadLeavesAnswersEncoded(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	records, err := value.FromGo(sampletext.Records(r, 20_000))
	if err != nil {
		t.Fatal(err)
	}
	answers := []Outcome{
		{Value: value.Number(1)},
		{Value: value.String(sampletext.JSONLike(r, 30_000))}, // compressed
		{Value: records},                                      // compressed
		{Error: &HostError{Name: "E", Message: "m"}},
		{Value: value.Object(value.Member{Key: "k", Value: value.Array(value.Null(), value.Bool(true))})},
	}
	b := NewBuilder(Header{Program: []byte("p"), Capabilities: []string{"cap"}}, nil, Version)
	suspendOn(b, Pending{Capability: "cap"})
	var raw []byte
	for _, o := range answers {
		answerLast(b, o)
		raw, _ = suspendOn(b, Pending{Capability: "cap"})
	}
	loaded, err := Load(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !loaded.compressed {
		t.Fatal("no record was compressed")
	}
	values := 0
	for i := range loaded.Suspensions {
		for _, a := range loaded.Suspensions[i].Answers {
			if a.Outcome.Error != nil {
				continue
			}
			values++
			if a.Outcome.enc == nil || !reflect.DeepEqual(a.Outcome.Value, value.Value{}) {
				t.Errorf("answer to call %d was decoded by Load", a.CallID)
			}
		}
	}
	if values != 4 {
		t.Fatalf("%d value answers, want 4", values)
	}
	for _, c := range loaded.Calls {
		if c.Args != nil || c.argsEnc == nil || c.ArgsDigest != ([32]byte{}) {
			t.Errorf("call %d's arguments were decoded or hashed by Load", c.ID)
		}
	}
	if got := Encode(loaded); string(got) != string(raw) {
		t.Error("a loaded snapshot encodes to other bytes")
	}
	if !reflect.DeepEqual(decodeAnswers(t, loaded), want) {
		t.Error("decoded answers differ from Decode's")
	}
}

// A loaded call's arguments decode as Decode reads them: each argument a
// value of its own, so one nested as deep as a value may be still
// decodes (the array around the arguments adds no level), and a hole
// inside an argument array is kept.
func TestLoadedCallsDecodeAsDecodeReadsThem(t *testing.T) {
	deep := value.Number(1)
	for range value.MaxDepth {
		deep = value.Array(deep)
	}
	holes := value.Array(value.Number(1), value.Hole(), value.Number(3))
	b := NewBuilder(Header{Program: []byte("p"), Capabilities: []string{"cap"}, Seed: 1, ClockMillis: 1}, nil, Version)
	suspendOn(b, Pending{Capability: "cap", Args: []value.Value{deep, holes}})
	answerLast(b, Outcome{Value: value.Number(2)})
	raw, _ := suspendOn(b, Pending{Capability: "cap"})
	want, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(decodeAnswers(t, loaded), want) {
		t.Fatal("a loaded call decodes to other arguments than Decode's")
	}
	if !reflect.DeepEqual(want.Calls[0].Args, []value.Value{deep, holes}) {
		t.Fatal("Decode did not read the arguments as made")
	}
}
