package protocol

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/cache"
)

// A stage's first chunk, handed over, becomes the stage: the bytes are in
// memory once. A chunk the caller keeps is copied, and later chunks are
// appended to either.
func TestStageAdoptsAnOwnedFirstChunk(t *testing.T) {
	for _, owned := range []bool{true, false} {
		budget := cache.NewBudget(1 << 20)
		st := newStages(1<<16, budget)
		first := bytes.Repeat([]byte{'a'}, 1000)
		if _, err := st.add("s", 0, first, owned); err != nil {
			t.Fatal(err)
		}
		staged := st.m["s"]
		if shared := &staged[0] == &first[0]; shared != owned {
			t.Errorf("owned %v: the stage shares the chunk: %v", owned, shared)
		}
		if st.held != int64(cap(staged)) {
			t.Errorf("owned %v: %d bytes reserved for a stage of capacity %d", owned, st.held, cap(staged))
		}
		if !owned {
			first[0] = 'z' // the caller's bytes are its own again
		}
		if n, err := st.add("s", 1000, []byte("bc"), owned); err != nil || n != 1002 {
			t.Fatalf("owned %v: second chunk: %d, %v", owned, n, err)
		}
		got, ok := st.take("s")
		if want := append(bytes.Repeat([]byte{'a'}, 1000), "bc"...); !ok || !bytes.Equal(got, want) {
			t.Errorf("owned %v: staged %q...", owned, got[:4])
		}
		if st.held != 0 || budget.Reserved() != 0 {
			t.Errorf("owned %v: %d held and %d in the budget after take", owned, st.held, budget.Reserved())
		}
	}
}

// A handed-over chunk whose memory is larger than the stage bound is
// copied, so what a stage holds stays within the bound.
func TestStageCopiesAnOversizedOwnedChunk(t *testing.T) {
	st := newStages(1<<10, cache.NewBudget(1<<20))
	chunk := make([]byte, 10, 1<<12)
	if _, err := st.add("s", 0, chunk, true); err != nil {
		t.Fatal(err)
	}
	if staged := st.m["s"]; &staged[0] == &chunk[0] || int64(cap(staged)) > st.max {
		t.Errorf("stage of capacity %d shares an oversized chunk", cap(staged))
	}
}

// Growing a large stage collects garbage first: the copy then holds the
// old bytes and the new beside the live heap only, not beside garbage the
// collector has not reached yet.
func TestStageGrowthCollectsFirst(t *testing.T) {
	// Only a collection asked for counts: none is set off by allocating.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	st := newStages(64<<20, cache.NewBudget(128<<20))
	if _, err := st.add("s", 0, make([]byte, collectBeforeGrowth), false); err != nil {
		t.Fatal(err)
	}
	numGC := func() uint32 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.NumGC
	}
	before := numGC()
	if _, err := st.add("s", collectBeforeGrowth, []byte("x"), false); err != nil {
		t.Fatal(err)
	}
	if after := numGC(); after == before {
		t.Error("the stage grew past its capacity without a collection first")
	}
}
