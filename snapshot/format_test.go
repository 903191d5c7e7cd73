package snapshot

import (
	"bytes"
	"testing"
)

// A host error's strings keep unpaired surrogates (WTF-8) through the
// journal; one string has one encoding, so ids stay deterministic.
func TestHostErrorStringsRoundTrip(t *testing.T) {
	code := "\xed\xbf\xbf" // U+DFFF, unpaired
	for _, e := range []HostError{
		{Name: "TypeError", Message: "plain UTF-8 é"},
		{Name: "\xed\xa0\x80", Message: "x\xed\xb0\x80", Code: &code},
	} {
		b := NewBuilder(Header{Program: []byte("p"), Capabilities: []string{"cap"}})
		b.Suspend(Pending{Capability: "cap"})
		b.Answer(Outcome{Error: &e})
		raw, _ := b.Suspend(Pending{Capability: "cap"})
		s, err := Decode(raw)
		if err != nil {
			t.Fatalf("%q: %v", e.Name, err)
		}
		got := s.Calls[0].Outcome.Error
		if got.Name != e.Name || got.Message != e.Message || (e.Code != nil) != (got.Code != nil) || e.Code != nil && *got.Code != *e.Code {
			t.Fatalf("round trip: got %+v, want %+v", *got, e)
		}
	}
	// Valid UTF-8 written as a byte string is not canonical: rejected.
	b := NewBuilder(Header{Program: []byte("p"), Capabilities: []string{"cap"}})
	b.Suspend(Pending{Capability: "cap"})
	b.Answer(Outcome{Error: &HostError{Name: "E", Message: "m"}})
	raw, _ := b.Suspend(Pending{Capability: "cap"})
	forged := bytes.Replace(raw, []byte{0x61, 'E'}, []byte{0x41, 'E'}, 1) // text "E" -> bytes "E"
	if bytes.Equal(forged, raw) {
		t.Fatal("test did not find the name item")
	}
	if _, err := Decode(forged); err == nil {
		t.Fatal("a UTF-8 name as a byte string was accepted")
	}
}
