package snapshot

import (
	"bytes"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/mustard-sidecar/mustard-sidecar/value"
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

// journalWith returns a one-call journal whose call was answered with v.
func journalWith(v value.Value) []byte {
	b := NewBuilder(Header{Program: []byte("p"), Capabilities: []string{"cap"}})
	b.Suspend(Pending{Capability: "cap"})
	b.Answer(Outcome{Value: v})
	raw, _ := b.Suspend(Pending{Capability: "cap"})
	return raw
}

// Large answers are journaled compressed, small or incompressible ones
// plain; both round trip, and a snapshot is still a prefix of the next.
func TestCompressedAnswers(t *testing.T) {
	text := strings.Repeat("the quick brown fox jumps over the lazy dog; ", 2000)
	for _, c := range []struct {
		name       string
		v          value.Value
		compressed bool
	}{
		{"small", value.String("short"), false},
		{"large text", value.String(text), true},
		{"large array", value.Array(value.String(text[:3000]), value.Number(1)), true},
	} {
		raw := journalWith(c.v)
		s, err := Decode(raw)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(s.Calls[0].Outcome.Value, c.v) {
			t.Fatalf("%s: value changed", c.name)
		}
		if got := len(raw) < len(c.v.AppendCBOR(nil)); got != c.compressed {
			t.Fatalf("%s: %d snapshot bytes for a %d-byte value", c.name, len(raw), len(c.v.AppendCBOR(nil)))
		}
	}
}

// A compressed record is accepted only as the encoder writes it: a bomb
// (a size it does not decompress to, or past MaxRecordBytes) and a value
// written plain that should be compressed fail closed.
func TestCompressedRecordsFailClosed(t *testing.T) {
	header := func() []byte {
		b := NewBuilder(Header{Program: []byte("p"), Capabilities: []string{"cap"}})
		raw, _ := b.Suspend(Pending{Capability: "cap"})
		return raw
	}
	pending := appendPending(nil, Pending{Capability: "cap"})
	record := func(tag, size uint64, z []byte) []byte {
		b := header()
		b = appendHead(b, majorArray, 3)
		b = appendHead(b, majorUint, tag)
		b = appendHead(b, majorUint, size)
		b = appendBytes(b, z)
		return append(b, pending...)
	}
	enc := value.String(strings.Repeat("bomb ", 400000)).AppendCBOR(nil) // 2 MB
	z := encoder.EncodeAll(enc, nil)
	for _, c := range []struct {
		name string
		raw  []byte
	}{
		{"claims less than it holds", record(tagCompressedValue, 2048, z)},
		{"claims more than it holds", record(tagCompressedValue, uint64(len(enc))+1, z)},
		{"claims past the record bound", record(tagCompressedValue, MaxRecordBytes+1, z)},
		{"not zstd", record(tagCompressedValue, 2048, []byte("not a zstd frame at all"))},
		{"plain, should be compressed", func() []byte {
			b := header()
			b = appendHead(b, majorArray, 2)
			b = appendHead(b, majorUint, tagValue)
			b = append(b, enc...)
			return append(b, pending...)
		}()},
		{"compressed differently", record(tagCompressedValue, uint64(len(enc)), zstdBest(enc))},
	} {
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := Decode(c.raw); err == nil {
			t.Fatalf("%s: accepted", c.name)
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if grown := after.TotalAlloc - before.TotalAlloc; grown > 64<<20 {
			t.Fatalf("%s: decoding allocated %d bytes", c.name, grown)
		}
	}
	// The honest record decodes.
	if _, err := Decode(record(tagCompressedValue, uint64(len(enc)), z)); err != nil {
		t.Fatalf("the encoder's own record: %v", err)
	}
}

func zstdBest(b []byte) []byte {
	e, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderConcurrency(1))
	return e.EncodeAll(b, nil)
}
