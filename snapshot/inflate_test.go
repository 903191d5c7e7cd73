package snapshot

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/detcbor"
	"github.com/mustard-sidecar/mustard-sidecar/internal/sampletext"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// largeJournal is a version 2 journal of n answers of size bytes each,
// compressed: past inflateParallelMin when n*size is.
func largeJournal(n, size int) ([]byte, []string) {
	r := rand.New(rand.NewPCG(9, 10))
	b := NewBuilder(Header{Program: []byte("p"), Capabilities: []string{"cap"}}, nil, Version)
	raw, _ := suspendOn(b, Pending{Capability: "cap"})
	answers := make([]string, n)
	for i := range answers {
		answers[i] = sampletext.JSONLike(r, size)
		answerLast(b, Outcome{Value: value.String(answers[i])})
		raw, _ = suspendOn(b, Pending{Capability: "cap"})
	}
	return raw, answers
}

// A journal decodes to the same snapshot whether its records are
// decompressed on one CPU or on several.
func TestLargeJournalDecodesAlikeOnAnyCPUs(t *testing.T) {
	raw, answers := largeJournal(24, 40_000)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first *Snapshot
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		s, err := Decode(raw)
		if err != nil {
			t.Fatalf("%d CPUs: %v", procs, err)
		}
		for i, a := range answers {
			if got := answerOf(s, uint64(i+1)); got == nil || got.Value.Kind != value.KindString || got.Value.Str != a {
				t.Fatalf("%d CPUs: answer %d is not the one journaled", procs, i+1)
			}
		}
		if first == nil {
			first = s
		} else if !reflect.DeepEqual(first, s) {
			t.Fatalf("%d CPUs: decoded differently", procs)
		}
	}
}

// A bad snapshot gets the error of its first bad byte, as when records
// were decompressed as they were read: a bad record before a structural
// error, the earliest of several bad records, whichever CPU got to it.
func TestInflateReportsTheFirstError(t *testing.T) {
	raw, _ := largeJournal(24, 40_000)
	s, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	// Where each record's zstd bytes sit: overwriting their magic number
	// fails that record alone.
	var zAt []int
	for i := range 24 {
		enc := value.String(answerOf(s, uint64(i+1)).Value.Str).AppendCBOR(nil)
		z, _ := compressed(nil, enc)
		at := bytes.Index(raw, z)
		if at < 0 {
			t.Fatalf("record %d not found", i+1)
		}
		zAt = append(zAt, at)
	}
	recordAt := func(i int) int { // the record's first byte: [4, size, z]
		head := detcbor.AppendHead(nil, detcbor.MajorUint, tagCompressedValue)
		return bytes.LastIndex(raw[:zAt[i]], append(detcbor.AppendHead(nil, detcbor.MajorArray, 3), head...))
	}
	corrupt := func(b []byte, i int) []byte {
		b = bytes.Clone(b)
		copy(b[zAt[i]:], "nope") // no longer a zstd frame's magic number
		return b
	}
	check := func(name string, b []byte, wantAt int, want error) {
		t.Helper()
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
		for _, procs := range []int{1, 2} {
			runtime.GOMAXPROCS(procs)
			for range 5 {
				_, err := Decode(b)
				var fe *FormatError
				if !errors.As(err, &fe) || fe.Offset != wantAt || !errors.Is(err, want) {
					t.Fatalf("%s on %d CPUs: %v, want %v at %d", name, procs, err, want, wantAt)
				}
			}
		}
	}
	check("one bad record", corrupt(raw, 10), recordAt(10), ErrDecompress)
	check("two bad records", corrupt(corrupt(raw, 20), 7), recordAt(7), ErrDecompress)
	// A truncated journal: its last item is cut short, past every record.
	cut := raw[:len(raw)-3]
	if _, err := Decode(cut); err == nil {
		t.Fatal("a truncated journal decoded")
	}
	check("a bad record before a truncation", corrupt(cut, 3), recordAt(3), ErrDecompress)
}
