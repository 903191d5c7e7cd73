package snapshot

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/mustard-sidecar/mustard-sidecar/internal/detcbor"
	"github.com/mustard-sidecar/mustard-sidecar/internal/sampletext"
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
		b := NewBuilder(Header{Program: []byte("p"), Capabilities: []string{"cap"}}, nil, Version)
		suspendOn(b, Pending{Capability: "cap"})
		answerLast(b, Outcome{Error: &e})
		raw, _ := suspendOn(b, Pending{Capability: "cap"})
		s, err := Decode(raw)
		if err != nil {
			t.Fatalf("%q: %v", e.Name, err)
		}
		got := answerOf(s, 1).Error
		if got.Name != e.Name || got.Message != e.Message || (e.Code != nil) != (got.Code != nil) || e.Code != nil && *got.Code != *e.Code {
			t.Fatalf("round trip: got %+v, want %+v", *got, e)
		}
	}
	// Valid UTF-8 written as a byte string is not canonical: rejected.
	b := NewBuilder(Header{Program: []byte("p"), Capabilities: []string{"cap"}}, nil, Version)
	suspendOn(b, Pending{Capability: "cap"})
	answerLast(b, Outcome{Error: &HostError{Name: "E", Message: "m"}})
	raw, _ := suspendOn(b, Pending{Capability: "cap"})
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
	b := NewBuilder(Header{Program: []byte("p"), Capabilities: []string{"cap"}}, nil, Version)
	suspendOn(b, Pending{Capability: "cap"})
	answerLast(b, Outcome{Value: v})
	raw, _ := suspendOn(b, Pending{Capability: "cap"})
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
		if !reflect.DeepEqual(answerOf(s, 1).Value, c.v) {
			t.Fatalf("%s: value changed", c.name)
		}
		if got := len(raw) < len(c.v.AppendCBOR(nil)); got != c.compressed {
			t.Fatalf("%s: %d snapshot bytes for a %d-byte value", c.name, len(raw), len(c.v.AppendCBOR(nil)))
		}
	}
}

// A compressed record that is a bomb (a size it does not decompress to, or
// past MaxRecordBytes) or not zstd fails closed without taking the memory
// it claims. A record another build wrote (other compressor settings, or
// plain where this build compresses) decodes to the same journal.
func TestCompressedRecordsFailClosed(t *testing.T) {
	header := func() []byte {
		b := newBuilder(Header{Program: []byte("p"), Capabilities: []string{"cap"}}, nil, 1)
		raw, _ := suspendOn(b, Pending{Capability: "cap"})
		return raw
	}
	pending := pendingItem(Pending{Capability: "cap"})
	record := func(tag, size uint64, z []byte) []byte {
		b := header()
		b = detcbor.AppendHead(b, detcbor.MajorArray, 3)
		b = detcbor.AppendHead(b, detcbor.MajorUint, tag)
		b = detcbor.AppendHead(b, detcbor.MajorUint, size)
		b = detcbor.AppendBytes(b, z)
		return append(b, pending...)
	}
	enc := value.String(strings.Repeat("bomb ", 400000)).AppendCBOR(nil) // 2 MB
	z := zstdEncoder.EncodeAll(enc, nil)
	for _, c := range []struct {
		name string
		raw  []byte
	}{
		{"claims less than it holds", record(tagCompressedValue, 2048, z)},
		{"claims more than it holds", record(tagCompressedValue, uint64(len(enc))+1, z)},
		{"claims past the record bound", record(tagCompressedValue, MaxRecordBytes+1, z)},
		{"not zstd", record(tagCompressedValue, 2048, []byte("not a zstd frame at all"))},
		{"holds trailing bytes after the value", record(tagCompressedValue, uint64(len(enc))+1, zstdEncoder.EncodeAll(append(bytes.Clone(enc), 0xf6), nil))},
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
	// The honest record decodes, and so do other builds' encodings of it.
	want, err := Decode(record(tagCompressedValue, uint64(len(enc)), z))
	if err != nil {
		t.Fatalf("the encoder's own record: %v", err)
	}
	for name, raw := range map[string][]byte{
		"compressed at another level": record(tagCompressedValue, uint64(len(enc)), zstdBest(enc)),
		"written plain": func() []byte {
			b := header()
			b = detcbor.AppendHead(b, detcbor.MajorArray, 2)
			b = detcbor.AppendHead(b, detcbor.MajorUint, tagValue)
			b = append(b, enc...)
			return append(b, pending...)
		}(),
	} {
		got, err := Decode(raw)
		if err == nil {
			got.compressed = want.compressed
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

func zstdBest(b []byte) []byte {
	e, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderConcurrency(1))
	return e.EncodeAll(b, nil)
}

// Every decoding failure is one of the exported errors, wrapped with the
// offset of the item that failed.
func TestDecodeErrorsSayWhere(t *testing.T) {
	h := Header{Program: []byte("prog"), Capabilities: []string{"cap"}}
	header := appendHeader(nil, h, 1)
	call := pendingItem(Pending{Capability: "cap", Args: []value.Value{value.String("a")}})
	good := append(append(append([]byte(nil), header...), call...), appendOutcome(nil, Outcome{Value: value.Null()})...)
	good = append(good, call...)
	if _, err := Decode(good); err != nil {
		t.Fatal(err)
	}
	versionAt := len(detcbor.AppendText(detcbor.AppendHead(nil, detcbor.MajorArray, 7), Magic))
	outcomeAt := len(header) + len(call)
	for _, c := range []struct {
		name string
		in   []byte
		want error
		at   int
	}{
		{"empty", nil, ErrNotSnapshot, 0},
		{"other magic", bytes.Replace(good, []byte(Magic), []byte("mustard-snapshoT"), 1), ErrNotSnapshot, 1},
		{"future version", append(append(good[:versionAt:versionAt], VersionRestCheckpoint+1), good[versionAt+1:]...), ErrVersion, versionAt},
		{"call args not an array", cat(header, bytes.Replace(call, []byte{0x81, 0x41, 'a'}, []byte{0x41, 'a', 0xf6}, 1)), ErrCallArgs, len(header) + 6},
		{"truncated call", cat(header, call[:len(call)-1]), ErrCall, len(header) + len(call) - 2},
		{"bad outcome tag", cat(header, call, []byte{0x82, 0x09, 0xf6}), ErrOutcome, outcomeAt},
	} {
		_, err := Decode(c.in)
		var fe *FormatError
		if !errors.As(err, &fe) || !errors.Is(err, c.want) {
			t.Fatalf("%s: got %v, want %v", c.name, err, c.want)
		}
		if fe.Offset != c.at {
			t.Errorf("%s: offset %d, want %d (%v)", c.name, fe.Offset, c.at, err)
		}
	}
	_, err := Decode(append(append(good[:versionAt:versionAt], 8), good[versionAt+1:]...))
	if want := "snapshot bytes rejected at byte 18: unsupported format version 8 (this sidecar reads versions 1 to 7)"; err.Error() != want {
		t.Fatalf("version error %q, want %q", err, want)
	}
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// The digest a decoded call carries is ArgsDigest of its arguments: the
// decoder hashes the bytes as they stand, and the encoding is canonical.
func TestArgsDigestOfDecodedCalls(t *testing.T) {
	args := []value.Value{value.String("x\xed\xa0\x80"), value.Number(math.Copysign(0, -1)), value.Array(value.Hole(), value.Undefined()),
		value.Object(value.Member{Key: "k", Value: value.Bool(true)})}
	b := NewBuilder(Header{Program: []byte("p"), Capabilities: []string{"cap"}}, nil, Version)
	suspendOn(b, Pending{Capability: "cap", Args: args})
	answerLast(b, Outcome{Value: value.Null()})
	raw, _ := suspendOn(b, Pending{Capability: "cap"})
	s, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if s.Calls[0].ArgsDigest != ArgsDigest(args) || ArgsDigest(args) == ArgsDigest(nil) {
		t.Fatal("decoded digest differs from ArgsDigest")
	}
}

// An answer's record is [2, value] or, when compression pays,
// [4, size, zstd(value)], whatever precedes it in the buffer: written from
// scratch here and compared byte for byte.
func TestOutcomeRecordLayout(t *testing.T) {
	text := strings.Repeat("the quick brown fox jumps over the lazy dog; ", 100)
	noise := make([]byte, 4096)
	for i := range noise {
		noise[i] = byte(i*7919>>3) ^ byte(i*104729>>5)
	}
	large := sampletext.JSONLike(rand.New(rand.NewPCG(3, 4)), 300_000)
	for _, v := range []value.Value{value.String("short"), value.String(text), value.String(string(noise)),
		value.Array(value.String(text[:2000]), value.Number(1)), value.String(large[:50_000]), value.String(large)} {
		enc := v.AppendCBOR(nil)
		var want []byte
		if z, ok := compressed(nil, enc); ok {
			want = detcbor.AppendHead(want, detcbor.MajorArray, 3)
			want = detcbor.AppendHead(want, detcbor.MajorUint, tagCompressedValue)
			want = detcbor.AppendHead(want, detcbor.MajorUint, uint64(len(enc)))
			want = detcbor.AppendBytes(want, z)
		} else {
			want = detcbor.AppendHead(want, detcbor.MajorArray, 2)
			want = detcbor.AppendHead(want, detcbor.MajorUint, tagValue)
			want = append(want, enc...)
		}
		prefix := []byte("journal so far")
		got := appendOutcome(append([]byte(nil), prefix...), Outcome{Value: v})
		if !bytes.HasPrefix(got, prefix) || !bytes.Equal(got[len(prefix):], want) {
			t.Fatalf("%d-byte value: record %x…, want %x…", len(enc), got[len(prefix):min(len(got), len(prefix)+16)], want[:min(len(want), 16)])
		}
	}
}

// A suspension that ran under the previous one's limits writes null for
// them, and only then: the first suspension has no previous one, and the
// same limits written in full would be a second encoding of the journal.
func TestSuspensionLimitsNullOnlyWhenRepeated(t *testing.T) {
	h := Header{Program: []byte("p"), Capabilities: []string{"cap"}}
	l := defaultLimits
	call := func(id uint64) []byte { return appendCall(nil, &HostCall{ID: id, Capability: "cap", Sync: true}) }
	answer := appendAnswer(nil, &Answer{CallID: 1, Outcome: Outcome{Value: value.Null()}})
	head := appendHeader(nil, h, Version)
	good := cat(head, call(1), appendSuspend(nil, 1, Meter{}, &l), answer, call(2), appendSuspend(nil, 2, Meter{}, nil))
	s, err := Decode(good)
	if err != nil {
		t.Fatal(err)
	}
	if *s.Suspensions[1].Limits != l || !bytes.Equal(Encode(s), good) {
		t.Fatal("a null limits item does not stand for the previous limits")
	}
	for name, b := range map[string][]byte{
		"first suspension null": cat(head, call(1), appendSuspend(nil, 1, Meter{}, nil)),
		"same limits in full":   cat(head, call(1), appendSuspend(nil, 1, Meter{}, &l), answer, call(2), appendSuspend(nil, 2, Meter{}, &l)),
	} {
		if _, err := Decode(b); !errors.Is(err, ErrSuspend) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A header with an entry or a console round-trips as an array of 8; the
// default header keeps its 7 items, and shapes that cannot be written
// (an unknown value, both defaults spelled out, an older version) fail.
func TestHeaderShape(t *testing.T) {
	for _, h := range []Header{
		{Program: []byte("p"), Entry: EntryCall},
		{Program: []byte("p"), Console: ConsoleCollect},
		{Program: []byte("p"), Entry: EntryCall, Console: ConsoleCollect},
	} {
		b := appendHeader(nil, h, Version)
		if b[0] != 0x88 {
			t.Fatalf("%+v: header head %x, want an array of 8", h, b[0])
		}
		s, err := Decode(cat(b, appendCall(nil, &HostCall{ID: 1, Capability: "c", Sync: true}), appendSuspend(nil, 1, Meter{}, &Limits{})))
		if err != nil {
			t.Fatal(err)
		}
		if s.Header.Entry != h.Entry || s.Header.Console != h.Console {
			t.Fatalf("decoded %+v, want %+v", s.Header, h)
		}
	}
	if b := appendHeader(nil, Header{Program: []byte("p")}, Version); b[0] != 0x87 {
		t.Fatalf("default header head %x, want an array of 7", b[0])
	}
	tail := cat(appendCall(nil, &HostCall{ID: 1, Capability: "c", Sync: true}), appendSuspend(nil, 1, Meter{}, &Limits{}))
	shaped := func(version uint64, entry, console uint64) []byte {
		b := appendHeader(nil, Header{Program: []byte("p")}, version)
		b[0] = 0x88
		b = append(b, 0x82, byte(entry), byte(console))
		return cat(b, tail)
	}
	for name, b := range map[string][]byte{
		"both defaults":   shaped(Version, 0, 0),
		"unknown entry":   shaped(Version, 2, 0),
		"unknown console": shaped(Version, 0, 2),
		"older version":   shaped(VersionInserted, 1, 0),
	} {
		if _, err := Decode(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// The journal's buffer doubles when a large answer outgrows it, and what
// it returned before stays as it was: every snapshot a prefix of the
// next, sealed or not.
func TestJournalGrowsWithoutTouchingEarlierSnapshots(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	for _, seal := range []*Sealer{nil, mustSealer(t, key)} {
		r := rand.New(rand.NewPCG(11, 12))
		b := NewBuilder(Header{Program: []byte("p"), Capabilities: []string{"cap"}}, seal, Version)
		raw, _ := suspendOn(b, Pending{Capability: "cap"})
		var snaps, copies [][]byte
		grew := 0
		for i := range 12 {
			before := cap(b.buf)
			answerLast(b, Outcome{Value: value.String(sampletext.JSONLike(r, 20_000+i*30_000))})
			if cap(b.buf) != before {
				grew++
				if cap(b.buf) < 2*before {
					t.Fatalf("the journal grew from %d to %d for an answer, less than double", before, cap(b.buf))
				}
			}
			raw, _ = suspendOn(b, Pending{Capability: "cap"})
			snaps, copies = append(snaps, raw), append(copies, bytes.Clone(raw))
		}
		for i := range snaps {
			if !bytes.Equal(snaps[i], copies[i]) || !bytes.HasPrefix(raw, snaps[i]) {
				t.Fatalf("snapshot %d changed after it was returned, or is not a prefix of the last", i)
			}
		}
		if grew == 0 {
			t.Fatal("the journal never grew: the test proves nothing")
		}
	}
}

// A journal that grows by large items (a page passed on from call to call)
// takes new memory a logarithmic number of times: append alone grows a
// large slice by a quarter, copying the whole journal every few calls.
func TestBuilderGrowsByDoubling(t *testing.T) {
	page := value.String(strings.Repeat("a page of text passed on; ", 2000))
	b := NewBuilder(Header{Program: []byte("p"), Capabilities: []string{"cap"}}, nil, Version)
	grown := 0
	for i := range 64 {
		before := cap(b.buf)
		suspendOn(b, Pending{Capability: "cap", Args: []value.Value{page}})
		answerLast(b, Outcome{Value: value.Number(float64(i))})
		if cap(b.buf) != before {
			grown++
		}
	}
	// 64 items of 52 KB, 3.3 MB: 2^14 bytes to 2^22 by doubling.
	if grown > 10 {
		t.Fatalf("the journal took new memory %d times for 64 large items", grown)
	}
	if len(b.buf) < 64*52_000 || cap(b.buf) > 2*len(b.buf)+2*b.largest {
		t.Fatalf("journal of %d bytes in %d of memory", len(b.buf), cap(b.buf))
	}
}
