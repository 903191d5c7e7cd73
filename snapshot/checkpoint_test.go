package snapshot

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// checkpointJournal is a version 6 journal: a checkpoint at call 3,
// its answer, then call 4 and the suspension on it.
func checkpointJournal(t testing.TB, seal *Sealer) (*Builder, []byte) {
	t.Helper()
	h := Header{Program: []byte("p"), Capabilities: []string{"cap"}, Seed: 1, ClockMillis: 2}
	c := Pending{Capability: "cap", Args: []value.Value{value.Number(3)}, Meter: Meter{Instructions: 30, Allocations: 3}}.call(3)
	l := defaultLimits
	cp := &Checkpoint{Carry: 5, Rand: []byte("pcg:0123456789abcdef"), Image: []byte{1, 2, 3}}
	b, first, id := NewCheckpointBuilder(h, seal, []HostCall{*c}, Meter{Instructions: 31, Allocations: 3}, &l, cp)
	if ID(first) != id {
		t.Fatal("the checkpoint's id is not the hash of its bytes")
	}
	answerLast(b, Outcome{Value: value.String("three")})
	raw, _ := suspendOn(b, Pending{Capability: "cap", Meter: Meter{Instructions: 40, Allocations: 4}})
	return b, raw
}

// A checkpoint stands for the journal up to its suspension: the decoded
// snapshot begins with its call and suspension, numbers the calls after
// it from there, and encodes back to the same bytes.
func TestCheckpointJournal(t *testing.T) {
	_, raw := checkpointJournal(t, nil)
	s, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != VersionCheckpoint || s.Checkpoint == nil || s.Base != 2 || s.Made() != 4 || len(s.Calls) != 2 || len(s.Suspensions) != 2 {
		t.Fatalf("decoded %+v", s)
	}
	if cp := s.Checkpoint; cp.Carry != 5 || string(cp.Rand) != "pcg:0123456789abcdef" || !bytes.Equal(cp.Image, []byte{1, 2, 3}) {
		t.Fatalf("checkpoint %+v", cp)
	}
	if s.Call(2) != nil || s.Call(3).Capability != "cap" || s.Call(4).ID != 4 || s.Call(5) != nil {
		t.Fatal("Call by id")
	}
	first := s.Suspensions[0]
	if first.Focus != 3 || first.Made != 3 || first.Meter != (Meter{31, 3}) || *first.Limits != defaultLimits || len(first.Answers) != 1 {
		t.Fatalf("the checkpoint's suspension %+v", first)
	}
	if out := s.Outstanding(); len(out) != 1 || out[0].ID != 4 || s.FocusCall().ID != 4 {
		t.Fatalf("outstanding %+v", out)
	}
	if !bytes.Equal(Encode(s), raw) {
		t.Fatal("Encode(Decode(b)) is not b")
	}
}

// A journal checkpoints again from itself, sealed or not, and continues
// after that; a journal of a format without checkpoints refuses.
func TestCheckpointAgain(t *testing.T) {
	for _, seal := range []*Sealer{nil, mustSealer(t, sealKey)} {
		b, _ := checkpointJournal(t, seal)
		c := Pending{Capability: "cap", Meter: Meter{Instructions: 40, Allocations: 4}}.call(4)
		l := defaultLimits
		nb, raw, id, err := b.Checkpoint([]HostCall{*c}, Meter{Instructions: 41, Allocations: 4}, &l, &Checkpoint{Image: []byte{9}})
		if err != nil || ID(raw) != id {
			t.Fatal(err)
		}
		answerLast(nb, Outcome{Value: value.Null()})
		raw, _ = suspendOn(nb, Pending{Capability: "cap", Meter: Meter{Instructions: 50, Allocations: 5}})
		s, err := Load(raw, seal)
		if err != nil {
			t.Fatal(err)
		}
		if s.Base != 3 || s.Made() != 5 || !bytes.Equal(s.Checkpoint.Image, []byte{9}) || s.Header.Capabilities[0] != "cap" {
			t.Fatalf("sealed %v: %+v", seal != nil, s)
		}
		// Continued from its bytes, it checkpoints the same way.
		cb := ContinueBuilder(raw, s, seal)
		if cb.Tail() == 0 || cb.Head() == 0 || cb.Head() > len(raw)-cb.Tail() {
			t.Fatalf("head %d, tail %d of %d bytes", cb.Head(), cb.Tail(), len(raw))
		}
		c5 := Pending{Capability: "cap"}.call(5)
		if _, _, _, err := cb.Checkpoint([]HostCall{*c5}, Meter{}, &l, &Checkpoint{Image: []byte{1}}); err != nil {
			t.Fatal(err)
		}
	}
	old := NewBuilder(Header{Program: []byte("p")}, nil, VersionInserted)
	l := defaultLimits
	if _, _, _, err := old.Checkpoint([]HostCall{*Pending{Capability: "cap"}.call(1)}, Meter{}, &l, &Checkpoint{Image: []byte{1}}); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("a version 2 journal checkpointed: %v", err)
	}
}

// Damaged checkpoints fail closed at the checkpoint, and every prefix of
// a checkpoint journal is refused without a panic.
func TestCheckpointDamage(t *testing.T) {
	_, raw := checkpointJournal(t, nil)
	s, _ := Decode(raw)
	head := len(appendHeader(nil, s.Header, VersionCheckpoint))
	// Only the prefix that ends with the checkpoint is a snapshot: the
	// suspension it stands for.
	sp := &s.Suspensions[0]
	end := head + len(appendCheckpoint(nil, s.Calls[:1], sp.Meter, sp.Limits, s.Checkpoint))
	for cut := range raw {
		if _, err := Decode(raw[:cut]); (err == nil) != (cut == end) {
			t.Fatalf("a prefix of %d bytes: %v", cut, err)
		}
	}
	// A version 6 header with a version 5 journal after it.
	b := NewBuilder(s.Header, nil, Version)
	v5, _ := suspendOn(b, Pending{Capability: "cap"})
	v6 := bytes.Clone(v5)
	v6[2+len(Magic)] = VersionCheckpoint
	if _, err := Decode(v6); !errors.Is(err, ErrCheckpoint) {
		t.Fatalf("no checkpoint: %v", err)
	}
	c := s.Calls[0]
	l := defaultLimits
	for _, bad := range []struct {
		name string
		cp   Checkpoint
		id   uint64
	}{
		{"empty image", Checkpoint{}, 3},
		{"random state too long", Checkpoint{Rand: make([]byte, 65), Image: []byte{1}}, 3},
		{"call zero", Checkpoint{Image: []byte{1}}, 0},
	} {
		c.ID = bad.id
		item := appendCheckpoint(nil, []HostCall{c}, Meter{}, &l, &bad.cp)
		_, err := Decode(append(bytes.Clone(raw[:head]), item...))
		var fe *FormatError
		if !errors.As(err, &fe) || !errors.Is(err, ErrCheckpoint) || fe.Offset < head {
			t.Errorf("%s: %v", bad.name, err)
		}
	}
	// A checkpoint at the last call number but one leaves a number for
	// one call after it, not two.
	c.ID = math.MaxUint64 - 1
	top := append(bytes.Clone(raw[:head]), appendCheckpoint(nil, []HostCall{c}, Meter{}, &l, s.Checkpoint)...)
	if _, err := Decode(top); err != nil {
		t.Fatalf("the checkpoint alone: %v", err)
	}
	top = append(top, appendAnswer(nil, &Answer{CallID: c.ID, Outcome: Outcome{Value: value.Null()}})...)
	call := appendCall(nil, &HostCall{Capability: "cap", Args: []value.Value{}})
	top = append(top, call...)
	if _, err := Decode(append(bytes.Clone(top), appendSuspend(nil, math.MaxUint64, Meter{}, nil)...)); err != nil {
		t.Fatalf("the call numbered last: %v", err)
	}
	if _, err := Decode(append(top, call...)); !errors.Is(err, ErrCall) {
		t.Errorf("a call numbered past the last: %v", err)
	}
	if !reflect.DeepEqual(s.Checkpoint.Rand, []byte("pcg:0123456789abcdef")) {
		t.Fatal("decoding again changed the snapshot")
	}
}

// A checkpoint at rest (version 7) holds the calls outstanding, the last
// made: calls 3 and 4 here. The decoded snapshot numbers them from its
// base, answers the first, then has call 5 made and the suspension on
// call 4; it encodes back to the same bytes, every prefix but the
// snapshots' is refused, and lists that do not fit are.
func TestCheckpointAtRest(t *testing.T) {
	h := Header{Program: []byte("p"), Capabilities: []string{"cap"}, Seed: 1, ClockMillis: 2}
	calls := []HostCall{
		{ID: 3, Capability: "cap", Args: []value.Value{value.Number(3)}, Meter: Meter{Instructions: 30, Allocations: 3}},
		{ID: 4, Capability: "cap", Args: []value.Value{value.String("four")}, Meter: Meter{Instructions: 33, Allocations: 3}},
	}
	l := defaultLimits
	cp := &Checkpoint{Carry: 5, Rand: []byte("pcg:0123456789abcdef"), Image: []byte{1, 2, 3}}
	for _, seal := range []*Sealer{nil, mustSealer(t, sealKey)} {
		b, first, id := NewCheckpointBuilder(h, seal, calls, Meter{Instructions: 35, Allocations: 3}, &l, cp)
		if ID(first) != id {
			t.Fatal("the checkpoint's id is not the hash of its bytes")
		}
		b.Answer(&Answer{CallID: 3, Outcome: Outcome{Value: value.String("three")}})
		b.Call(&HostCall{ID: 5, Capability: "cap", Args: []value.Value{}, Meter: Meter{Instructions: 40, Allocations: 4}})
		raw, _ := b.Suspend(4, Meter{Instructions: 41, Allocations: 4}, &l)
		s, err := Load(raw, seal)
		if err != nil {
			t.Fatal(err)
		}
		if s.Version != VersionRestCheckpoint || s.Base != 2 || s.Made() != 5 || len(s.Suspensions) != 2 {
			t.Fatalf("decoded %+v", s)
		}
		got := s.CheckpointCalls()
		if len(got) != 2 || got[0].ID != 3 || got[1].ID != 4 || got[0].Sync || got[1].Sync || got[1].Capability != "cap" {
			t.Fatalf("the checkpoint's calls %+v", got)
		}
		if sp := s.Suspensions[0]; sp.Focus != 3 || sp.Made != 4 || sp.Meter != (Meter{35, 3}) || len(sp.Answers) != 1 {
			t.Fatalf("the checkpoint's suspension %+v", sp)
		}
		if out := s.Outstanding(); len(out) != 2 || out[0].ID != 4 || out[1].ID != 5 || s.FocusCall().ID != 4 {
			t.Fatalf("outstanding %+v", out)
		}
		if seal != nil {
			continue
		}
		if !bytes.Equal(Encode(s), raw) {
			t.Fatal("Encode(Decode(b)) is not b")
		}
		head := len(appendHeader(nil, h, VersionRestCheckpoint))
		end := head + len(appendCheckpoint(nil, calls, Meter{35, 3}, &l, cp))
		for cut := range raw {
			if _, err := Decode(raw[:cut]); (err == nil) != (cut == end) {
				t.Fatalf("a prefix of %d bytes: %v", cut, err)
			}
		}
		// More calls outstanding than were made, and none.
		for _, bad := range [][]HostCall{
			{{ID: 1, Capability: "cap"}, {ID: 1, Capability: "cap"}},
			{},
		} {
			item := []byte{0x89, 0x08, 0x01}
			if len(bad) > 0 {
				item = appendCheckpoint(nil, bad, Meter{}, &l, cp)
			} else {
				item = append(item, 0x80)
			}
			_, err := Decode(append(bytes.Clone(raw[:head]), item...))
			if !errors.Is(err, ErrCheckpoint) {
				t.Errorf("%d calls: %v", len(bad), err)
			}
		}
	}
}
