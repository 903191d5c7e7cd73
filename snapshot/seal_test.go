package snapshot

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

var (
	// The key of the corpus's sealed transcript, so FuzzOpen's seeds
	// (derived from it) open.
	sealKey  = []byte("corpus seal key: 32 bytes long!!")
	otherKey = []byte("another seal key, also 32 bytes.")
)

func mustSealer(t testing.TB, key []byte) *Sealer {
	t.Helper()
	s, err := NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sealedJournal runs the same journal through a sealed and a plain builder
// and returns every snapshot of both.
func sealedJournal(t testing.TB, seal *Sealer) (sealed, plain [][]byte) {
	h := Header{Program: []byte("program SECRET-PROGRAM"), Inputs: []value.Member{value.M("q", value.String("SECRET-INPUT"))}, Capabilities: []string{"fetch"}, Seed: 9, ClockMillis: 1}
	bs, bp := NewBuilder(h, seal, Version), NewBuilder(h, nil, Version)
	code := "SECRET-CODE"
	for i, o := range []Outcome{
		{Value: value.String("SECRET-ANSWER")},
		{Error: &HostError{Name: "SECRET-NAME", Message: "SECRET-MESSAGE", Code: &code}},
		{Value: value.String(strings.Repeat("SECRET-LARGE ", 200))}, // journaled compressed
	} {
		p := Pending{Capability: "fetch", Args: []value.Value{value.String("SECRET-ARG"), value.Number(float64(i))}, Meter: Meter{Instructions: uint64(i)}}
		s, _ := suspendOn(bs, p)
		q, _ := suspendOn(bp, p)
		sealed, plain = append(sealed, s), append(plain, q)
		answerLast(bs, o)
		answerLast(bp, o)
	}
	s, _ := suspendOn(bs, Pending{Capability: "fetch"})
	q, _ := suspendOn(bp, Pending{Capability: "fetch"})
	return append(sealed, s), append(plain, q)
}

// A sealed journal opens to exactly the plain journal, each snapshot
// extends the one before, and the same journal seals to the same bytes.
func TestSealedJournalOpensToThePlainOne(t *testing.T) {
	seal := mustSealer(t, sealKey)
	sealed, plain := sealedJournal(t, seal)
	again, _ := sealedJournal(t, mustSealer(t, sealKey))
	for i := range sealed {
		if !bytes.Equal(sealed[i], again[i]) {
			t.Fatalf("snapshot %d: sealing is not deterministic", i)
		}
		if i > 0 && !bytes.HasPrefix(sealed[i], sealed[i-1]) {
			t.Fatalf("snapshot %d does not extend snapshot %d", i, i-1)
		}
		if !IsSealed(sealed[i]) || IsSealed(plain[i]) {
			t.Fatal("IsSealed")
		}
		got, records, err := seal.Open(sealed[i])
		if err != nil {
			t.Fatalf("snapshot %d: %v", i, err)
		}
		if !bytes.Equal(got, plain[i]) || records != uint64(3*i+3) {
			t.Fatalf("snapshot %d opens to other bytes (%d records)", i, records)
		}
		s, err := Load(sealed[i], seal)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Decode(plain[i])
		want.records, want.plainHead = s.records, s.plainHead // what only a sealed journal keeps
		if !bytes.Equal(s.plainHead, plain[i][:s.head]) {
			t.Fatalf("snapshot %d keeps another header", i)
		}
		if !reflect.DeepEqual(decodeAnswers(t, s), want) {
			t.Fatalf("snapshot %d loads to another journal", i)
		}
		// Continuing a loaded sealed journal gives what the live builder
		// gave.
		if i+1 < len(sealed) {
			b := ContinueBuilder(sealed[i], s, seal)
			c, _ := Decode(plain[i+1])
			answerLast(b, *answerOf(c, uint64(i+1)))
			n := c.Calls[i+1]
			next, _ := suspendOn(b, Pending{Capability: n.Capability, Args: n.Args, Meter: n.Meter})
			if !bytes.Equal(next, sealed[i+1]) {
				t.Fatalf("continuing snapshot %d gives other bytes", i)
			}
		}
	}
}

// Sealed bytes reveal nothing of the program, inputs, arguments or answers.
func TestSealedBytesHoldNoPlaintext(t *testing.T) {
	sealed, plain := sealedJournal(t, mustSealer(t, sealKey))
	last := sealed[len(sealed)-1]
	if !bytes.Contains(plain[len(plain)-1], []byte("SECRET-INPUT")) {
		t.Fatal("the plain journal should hold the input (test is blind)")
	}
	for _, s := range []string{"SECRET", "fetch", "program", "mustard-snapshot"} {
		if bytes.Contains(last, []byte(s)) {
			t.Fatalf("sealed snapshot contains %q", s)
		}
	}
}

// Every single-byte change, and every truncation that is not a record
// boundary, is rejected; so is the wrong key.
func TestSealedSnapshotRejectsAnyChange(t *testing.T) {
	seal := mustSealer(t, sealKey)
	sealed, _ := sealedJournal(t, seal)
	b := sealed[2]
	for i := range b {
		for _, x := range []byte{0x01, 0x80} {
			c := bytes.Clone(b)
			c[i] ^= x
			if _, err := Load(c, seal); err == nil {
				t.Fatalf("flipping bit %#x of byte %d was accepted", x, i)
			}
		}
	}
	// A cut between records leaves an earlier journal state, which the
	// token over the exact bytes decides on; any other cut fails.
	env := len(seal.appendEnvelope(nil))
	boundary := map[int]bool{}
	at := env
	for _, r := range splitRecords(t, b[env:]) {
		at += len(r)
		boundary[at] = true
	}
	for n := 1; n < len(b); n++ {
		if _, _, err := seal.Open(b[:n]); (err == nil) != boundary[n] {
			t.Fatalf("cut at %d: %v (record boundary: %v)", n, err, boundary[n])
		}
	}
	_, err := Load(b, mustSealer(t, otherKey))
	if !errors.Is(err, ErrSealKey) {
		t.Fatalf("wrong key: %v", err)
	}
	if _, err := Load(b, nil); !errors.Is(err, ErrSealedNeedsKey) {
		t.Fatalf("no key: %v", err)
	}
	_, plain := sealedJournal(t, nil)
	if _, err := Load(plain[0], seal); !errors.Is(err, ErrNotSealed) {
		t.Fatalf("key for plain bytes: %v", err)
	}
	if _, err := NewSealer(sealKey[:31]); !errors.Is(err, ErrSealKeyTooShort) {
		t.Fatalf("short key: %v", err)
	}
}

// A record moved to another place (swapped, or spliced in from another
// execution's snapshot under the same key) fails its authentication.
func TestSealedRecordsAreBoundToTheirPlace(t *testing.T) {
	seal := mustSealer(t, sealKey)
	sealed, _ := sealedJournal(t, seal)
	env := seal.appendEnvelope(nil)
	records := splitRecords(t, sealed[len(sealed)-1][len(env):])
	swapped := cat(append([][]byte{env, records[0], records[2], records[1]}, records[3:]...)...)
	if _, err := Load(swapped, seal); !errors.Is(err, ErrSealedRecord) {
		t.Fatalf("swapped records: %v", err)
	}
	h := Header{Program: []byte("other"), Capabilities: []string{"fetch"}}
	other, _ := suspendOn(NewBuilder(h, seal, Version), Pending{Capability: "fetch"})
	otherRecords := splitRecords(t, other[len(env):])
	spliced := cat(env, otherRecords[0], records[1])
	if _, err := Load(spliced, seal); !errors.Is(err, ErrSealedRecord) {
		t.Fatalf("spliced record: %v", err)
	}
}

func splitRecords(t *testing.T, b []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for len(b) > 0 {
		n := recordLen(b)
		if n <= 0 || n > len(b) {
			t.Fatal("cannot split records")
		}
		out, b = append(out, b[:n]), b[n:]
	}
	return out
}

// recordLen is the length of the byte-string item at the front of b.
func recordLen(b []byte) int {
	switch ai := b[0] & 31; {
	case ai < 24:
		return 1 + int(ai)
	case ai == 24:
		return 2 + int(b[1])
	case ai == 25:
		return 3 + int(b[1])<<8 | int(b[2])
	}
	return -1
}

// FuzzOpen feeds Load arbitrary bytes under a fixed key: sealed bytes are
// opened only after the token authenticated them, but they must fail
// closed whatever they hold, and accept only what a Sealer writes.
func FuzzOpen(f *testing.F) {
	seal := mustSealer(f, sealKey)
	sealed, _ := sealedJournal(f, seal)
	for _, s := range sealed {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		orig := bytes.Clone(b)
		s, err := Load(b, seal)
		if !bytes.Equal(b, orig) {
			t.Fatal("Load modified its input")
		}
		if err != nil {
			if s != nil {
				t.Fatal("Load returned a snapshot with an error")
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "snapshot ") {
				t.Fatalf("error %q is not one of the fixed snapshot messages", msg)
			}
			return
		}
		checkValues(t, s)
		// Accepted bytes are exactly what continuing the journal writes.
		plain, records, err := seal.Open(b)
		if err != nil || records != s.records {
			t.Fatal("Open disagrees with Load")
		}
		if msg := reencode(plain, s); msg != "" {
			t.Fatalf("accepted journal is not canonical: %s", msg)
		}
	})
}
