package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// snapCP is a suspended checkpoint with snapshot bytes snap.
func snapCP(calls int, snap []byte) *Checkpoint {
	return &Checkpoint{ProgramID: "p", Calls: calls, SnapshotID: wire.SHA256Hex(snap), Snapshot: snap, Capability: "f",
		Args: []value.Value{value.Number(float64(calls))}}
}

// journals returns the journal files of id in dir.
func journals(t *testing.T, dir, id string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, id+".*.journal"))
	require.NoError(t, err)
	return names
}

// oneJournal returns the one journal file of id.
func oneJournal(t *testing.T, dir, id string) string {
	t.Helper()
	names := journals(t, dir, id)
	require.Len(t, names, 1, "one journal file")
	return names[0]
}

func requireLoads(t *testing.T, s Store, id string, want *Checkpoint) {
	t.Helper()
	got, ok, err := s.Load(context.Background(), id)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, want.Calls, got.Calls)
	require.Equal(t, want.SnapshotID, got.SnapshotID)
	require.Equal(t, want.Snapshot, got.Snapshot)
}

// A step that extends the snapshot appends to the one journal file; a
// snapshot that does not is written to a new file, the old one removed;
// saving the same snapshot again (with an answer) writes no snapshot.
func TestDirStoreAppendsStepsToOneJournal(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := NewDirStore(dir)
	require.NoError(t, err)
	s1 := []byte("header|call-1|")
	cp1 := snapCP(0, s1)
	require.NoError(t, s.Save(ctx, "x", cp1))
	j := oneJournal(t, dir, "x")
	fi1, err := os.Stat(j)
	require.NoError(t, err)

	prev := cp1
	for i := range 20 {
		snap := append(slices.Clone(prev.Snapshot), []byte("answer|call|")...)
		cp := snapCP(i+1, snap)
		require.NoError(t, s.Append(ctx, "x", cp, prev.SnapshotID, len(prev.Snapshot)))
		fi, err := os.Stat(oneJournal(t, dir, "x"))
		require.NoError(t, err)
		require.True(t, os.SameFile(fi1, fi), "step %d appended to the same file", i)
		require.Equal(t, int64(len(snap)), fi.Size())
		requireLoads(t, s, "x", cp)
		prev = cp
	}

	// Saved again with an answer: the journal stays as it is.
	ans := host.Return(value.Number(7))
	withAnswer := *prev
	withAnswer.Answer = &ans
	require.NoError(t, s.Save(ctx, "x", &withAnswer))
	fi, err := os.Stat(oneJournal(t, dir, "x"))
	require.NoError(t, err)
	require.True(t, os.SameFile(fi1, fi))
	got, _, err := s.Load(ctx, "x")
	require.NoError(t, err)
	require.Equal(t, ans.String(), got.Answer.String())

	// A base the store does not hold: saved whole, in a new file.
	other := snapCP(30, []byte("another history"))
	require.NoError(t, s.Append(ctx, "x", other, wire.SHA256Hex([]byte("nope")), 3))
	fi, err = os.Stat(oneJournal(t, dir, "x"))
	require.NoError(t, err)
	require.False(t, os.SameFile(fi1, fi), "a new journal file")
	requireLoads(t, s, "x", other)

	// Done: the journal goes.
	require.NoError(t, s.Save(ctx, "x", &Checkpoint{ProgramID: "p", Calls: 31, Done: true, Result: value.Number(1)}))
	require.Empty(t, journals(t, dir, "x"))
	require.NoError(t, s.Delete(ctx, "x"))
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, left)
}

// What a crash can leave: bytes past the record's length (an append torn,
// or a record write lost after the append) are ignored and cut off by the
// next append; a journal shorter than its record, a changed byte, a
// missing journal or a torn record are reported clearly, without the
// directory's path.
func TestDirStoreSurvivesTornAppendsAndLostRecords(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (*DirStore, string, *Checkpoint) {
		dir := t.TempDir()
		s, err := NewDirStore(dir)
		require.NoError(t, err)
		base := snapCP(0, []byte("header|call-1|"))
		require.NoError(t, s.Save(ctx, "x", base))
		cp := snapCP(1, []byte("header|call-1|answer-1|call-2|"))
		require.NoError(t, s.Append(ctx, "x", cp, base.SnapshotID, len(base.Snapshot)))
		return s, dir, cp
	}
	appendBytes := func(t *testing.T, path string, b []byte) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = f.Write(b)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}

	t.Run("torn append", func(t *testing.T) {
		s, dir, cp := setup(t)
		j := oneJournal(t, dir, "x")
		appendBytes(t, j, []byte("answer-2|ca")) // the crash came mid-append
		requireLoads(t, s, "x", cp)
		next := snapCP(2, append(slices.Clone(cp.Snapshot), "answer-2|call-3|"...))
		require.NoError(t, s.Append(ctx, "x", next, cp.SnapshotID, len(cp.Snapshot)))
		requireLoads(t, s, "x", next)
		b, err := os.ReadFile(oneJournal(t, dir, "x"))
		require.NoError(t, err)
		require.Equal(t, next.Snapshot, b, "the torn bytes were cut off")
	})

	t.Run("record lost after the append", func(t *testing.T) {
		s, dir, cp := setup(t)
		rec, err := os.ReadFile(filepath.Join(dir, "x.json"))
		require.NoError(t, err)
		lost := snapCP(2, append(slices.Clone(cp.Snapshot), "answer-2|call-3|"...))
		require.NoError(t, s.Append(ctx, "x", lost, cp.SnapshotID, len(cp.Snapshot)))
		// The crash came before the record was renamed into place.
		require.NoError(t, os.WriteFile(filepath.Join(dir, "x.json"), rec, 0o600))
		requireLoads(t, s, "x", cp)
		// Continued from there, another answer this time.
		next := snapCP(2, append(slices.Clone(cp.Snapshot), "answer-2b|call-3|"...))
		require.NoError(t, s.Append(ctx, "x", next, cp.SnapshotID, len(cp.Snapshot)))
		requireLoads(t, s, "x", next)
	})

	t.Run("journal shorter than its record", func(t *testing.T) {
		s, dir, cp := setup(t)
		j := oneJournal(t, dir, "x")
		require.NoError(t, os.Truncate(j, int64(len(cp.Snapshot)-3)))
		_, _, err := s.Load(ctx, "x")
		require.EqualError(t, err, "DirStore: the snapshot file of x is truncated: it holds fewer bytes than its record names")
		// A step from the stored snapshot rewrites it whole.
		next := snapCP(2, append(slices.Clone(cp.Snapshot), "answer-2|call-3|"...))
		require.NoError(t, s.Append(ctx, "x", next, cp.SnapshotID, len(cp.Snapshot)))
		requireLoads(t, s, "x", next)
		require.Len(t, journals(t, dir, "x"), 1)
	})

	t.Run("changed byte", func(t *testing.T) {
		s, dir, cp := setup(t)
		j := oneJournal(t, dir, "x")
		b, err := os.ReadFile(j)
		require.NoError(t, err)
		b[3] ^= 1
		require.NoError(t, os.WriteFile(j, b, 0o600))
		_, _, err = s.Load(ctx, "x")
		require.EqualError(t, err, "DirStore: the snapshot file of x is corrupt")
		_ = cp
	})

	t.Run("journal missing", func(t *testing.T) {
		s, dir, _ := setup(t)
		require.NoError(t, os.Remove(oneJournal(t, dir, "x")))
		_, _, err := s.Load(ctx, "x")
		require.EqualError(t, err, "DirStore: the snapshot file of x is missing")
	})

	t.Run("torn record", func(t *testing.T) {
		s, dir, _ := setup(t)
		rec := filepath.Join(dir, "x.json")
		b, err := os.ReadFile(rec)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(rec, b[:len(b)/2], 0o600))
		_, _, err = s.Load(ctx, "x")
		require.ErrorContains(t, err, "DirStore: the record of x is not a checkpoint")
		require.NotContains(t, err.Error(), dir)
	})
}

// A directory written before the journal (the snapshot in
// <id>.<snapshot_id>.snapshot, a record without journal) still loads; the
// next save moves it to a journal file.
func TestDirStoreReadsDirectoriesWrittenBeforeTheJournal(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	snap := []byte("legacy snapshot bytes")
	id := wire.SHA256Hex(snap)
	// The record as the previous layout wrote it.
	rec, err := json.Marshal(map[string]any{"program_id": "p", "calls": 3, "snapshot_id": id, "capability": "f",
		"args": []value.Value{value.Number(1)}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "old.json"), rec, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "old."+id+".snapshot"), snap, 0o600))
	s, err := NewDirStore(dir)
	require.NoError(t, err)
	got, ok, err := s.Load(ctx, "old")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, snap, got.Snapshot)
	require.Equal(t, 3, got.Calls)

	next := snapCP(4, append(slices.Clone(snap), " and a step"...))
	require.NoError(t, s.Append(ctx, "old", next, id, len(snap)))
	requireLoads(t, s, "old", next)
	names, err := filepath.Glob(filepath.Join(dir, "old.*.*"))
	require.NoError(t, err)
	require.Len(t, names, 1, "the old snapshot file is gone")
	require.Equal(t, ".journal", filepath.Ext(names[0]))
}

// appendRecorder is an AppendStore over a MemoryStore that records how
// each checkpoint with a snapshot was saved, and keeps a copy of every
// snapshot it was given.
type appendRecorder struct {
	MemoryStore
	mu     sync.Mutex
	saves  []string // "save <len>" or "append <baseLen> <len>"
	given  [][]byte // the snapshots as given
	copies [][]byte // copies made when given
}

func (s *appendRecorder) note(what string, cp *Checkpoint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cp.Snapshot != nil {
		s.saves = append(s.saves, what)
		s.given = append(s.given, cp.Snapshot)
		s.copies = append(s.copies, bytes.Clone(cp.Snapshot))
	}
}

func (s *appendRecorder) Save(ctx context.Context, id string, cp *Checkpoint) error {
	s.note("save", cp)
	return s.MemoryStore.Save(ctx, id, cp)
}

func (s *appendRecorder) Append(ctx context.Context, id string, cp *Checkpoint, baseID string, baseLen int) error {
	prev, ok, _ := s.MemoryStore.Load(ctx, id)
	if !ok || prev.SnapshotID != baseID || len(prev.Snapshot) != baseLen ||
		!bytes.Equal(prev.Snapshot, cp.Snapshot[:baseLen]) {
		return errors.New("Append named a base that is not the stored snapshot")
	}
	s.note("append", cp)
	return s.MemoryStore.Save(ctx, id, cp)
}

// The Runner saves each step that extends the stored snapshot through the
// append path, naming the stored snapshot as the base, plain and sealed;
// and no snapshot a Store was given changes afterwards (the Runner grows
// its own buffer).
func TestRunnerSavesStepsThroughTheAppendPath(t *testing.T) {
	for _, sealed := range []bool{false, true} {
		name := "plain"
		if sealed {
			name = "sealed"
		}
		t.Run(name, func(t *testing.T) {
			forEachMode(t, func(t *testing.T, mode host.HostCalls) {
				noLeaks(t)
				ctx := context.Background()
				pool := newPool(t, 1)
				prog, err := pool.Compile(ctx, `let s = 0; for (let i = 0; i < 12; i++) s += f(i); s;`)
				require.NoError(t, err)
				store := &appendRecorder{}
				r := &Runner{Pool: pool, Store: store, Key: testKey, HostCalls: mode}
				if sealed {
					r.SealKey = testSealKey
				}
				v, err := r.Run(ctx, Execution{ID: "steps", Program: prog, Capabilities: map[string]Capability{
					"f": func(_ context.Context, c Call) (value.Value, error) { return value.Number(float64(c.Seq)), nil },
				}})
				require.NoError(t, err)
				require.Equal(t, 66.0, v.Num)
				appends := 0
				for _, s := range store.saves {
					if s == "append" {
						appends++
					}
				}
				require.Equal(t, "save", store.saves[0], "the start's snapshot is saved whole")
				require.Equal(t, 11, appends, "each of the 11 resumes that suspended appended: %v", store.saves)
				for i := range store.given {
					require.Equal(t, store.copies[i], store.given[i], "snapshot %d changed after it was saved", i)
				}
			})
		})
	}
}

// The Runner's journal checks a delta against the snapshot id it claims
// and the base it names.
func TestSnapJournalChecksDeltas(t *testing.T) {
	base := []byte("base bytes|")
	full := []byte("base bytes|delta")
	var j snapJournal
	_, err := j.extend(&host.Suspension{SnapshotID: wire.SHA256Hex(full), BaseID: wire.SHA256Hex([]byte("other")), Snapshot: []byte("delta")},
		base, wire.SHA256Hex(base))
	require.ErrorContains(t, err, "the base bytes are not snapshot")
	_, err = j.extend(&host.Suspension{SnapshotID: wire.SHA256Hex(full), BaseID: wire.SHA256Hex(base), Snapshot: []byte("delte")},
		base, wire.SHA256Hex(base))
	require.ErrorIs(t, err, host.ErrProtocol)
	got, err := j.extend(&host.Suspension{SnapshotID: wire.SHA256Hex(full), BaseID: wire.SHA256Hex(base), Snapshot: []byte("delta")},
		base, wire.SHA256Hex(base))
	require.NoError(t, err)
	require.Equal(t, full, got)
	require.Equal(t, len(got), cap(got))
	next := []byte("base bytes|delta+more")
	got2, err := j.extend(&host.Suspension{SnapshotID: wire.SHA256Hex(next), BaseID: wire.SHA256Hex(full), Snapshot: []byte("+more")},
		got, wire.SHA256Hex(full))
	require.NoError(t, err)
	require.Equal(t, next, got2)
	require.Equal(t, full, got, "the earlier bytes did not change")
	_, err = j.extend(&host.Suspension{SnapshotID: wire.SHA256Hex(base), BaseID: wire.SHA256Hex([]byte("x")), Snapshot: nil}, nil, "")
	require.ErrorContains(t, err, "the base bytes are not snapshot")
}

// A history that grows by large deltas takes new memory a logarithmic
// number of times, and every snapshot handed out keeps its bytes.
func TestSnapJournalGrowsByDoubling(t *testing.T) {
	var j snapJournal
	snap := []byte("base")
	prev := snap
	var handed [][]byte
	grown := 0
	for i := range 48 {
		delta := bytes.Repeat([]byte{byte('a' + i%26)}, 20_000)
		full := append(bytes.Clone(prev), delta...)
		before := cap(j.buf)
		got, err := j.extend(&host.Suspension{SnapshotID: wire.SHA256Hex(full), BaseID: wire.SHA256Hex(prev), Snapshot: delta},
			prev, wire.SHA256Hex(prev))
		require.NoError(t, err)
		require.Equal(t, full, got)
		if cap(j.buf) != before {
			grown++
		}
		handed = append(handed, got)
		prev = got
	}
	require.LessOrEqual(t, grown, 8, "new memory for each of 48 deltas of 20 KB")
	for i, h := range handed {
		require.Equal(t, 4+20_000*(i+1), len(h))
		require.Equal(t, byte('a'+i%26), h[len(h)-1], "snapshot %d changed", i)
	}
}

// A host that went down mid-step leaves its DirStore as a crash would:
// the record of step k, the journal appended past it (the step after it
// was appended, its record never written), and half an append after
// that. A new host continues the execution from step k, plain and sealed,
// to the same result; every journal write of a Run goes to one file.
func TestRunnerContinuesAfterATornAppendAndALostRecord(t *testing.T) {
	for _, sealed := range []bool{false, true} {
		name := "plain"
		if sealed {
			name = "sealed"
		}
		t.Run(name, func(t *testing.T) {
			forEachMode(t, func(t *testing.T, mode host.HostCalls) {
				noLeaks(t)
				ctx := context.Background()
				dir := t.TempDir()
				src := `let s = 0; for (let i = 0; i < 6; i++) s += f(i); s;`
				stop := errors.New("host going down")
				var asked []int
				run := func(stopAt int) (value.Value, error) {
					pool := newPool(t, 1)
					defer pool.Close()
					store, err := NewDirStore(dir)
					require.NoError(t, err)
					prog, err := pool.Compile(ctx, src)
					require.NoError(t, err)
					r := &Runner{Pool: pool, Store: store, Key: testKey, HostCalls: mode}
					if sealed {
						r.SealKey = testSealKey
					}
					type seen struct {
						journal string
						size    int64
					}
					var saw []seen
					defer func() {
						// Every step of this Run appended to the same file
						// (past what the first found there, which a crash
						// may have left: the first append cuts it off).
						for i := 1; i < len(saw); i++ {
							require.Equal(t, saw[0].journal, saw[i].journal, "call %d", i)
							if i > 1 {
								require.Greater(t, saw[i].size, saw[i-1].size, "call %d", i)
							}
						}
					}()
					return r.Run(ctx, Execution{ID: "long", Program: prog, Capabilities: map[string]Capability{
						"f": func(_ context.Context, c Call) (value.Value, error) {
							names, _ := filepath.Glob(filepath.Join(dir, "long.*.journal"))
							var s seen
							if len(names) == 1 {
								s.journal = names[0]
								if fi, err := os.Stat(names[0]); err == nil {
									s.size = fi.Size()
								}
							}
							saw = append(saw, s)
							if c.Seq == stopAt {
								return value.Value{}, stop
							}
							asked = append(asked, c.Seq)
							return value.Number(float64(10 * (c.Seq + 1))), nil
						},
					}})
				}
				_, err := run(2)
				require.ErrorIs(t, err, stop)
				rec := filepath.Join(dir, "long.json")
				recK, err := os.ReadFile(rec)
				require.NoError(t, err)
				_, err = run(4)
				require.ErrorIs(t, err, stop)
				// The record of calls 2 and 3 was lost; half of an append
				// after them made it to the disk.
				require.NoError(t, os.WriteFile(rec, recK, 0o600))
				f, err := os.OpenFile(oneJournal(t, dir, "long"), os.O_WRONLY|os.O_APPEND, 0)
				require.NoError(t, err)
				_, err = f.Write([]byte{0x82, 0x01, 0x18})
				require.NoError(t, err)
				require.NoError(t, f.Close())

				v, err := run(-1)
				require.NoError(t, err)
				require.Equal(t, 210.0, v.Num)
				require.Equal(t, []int{0, 1, 2, 3, 2, 3, 4, 5}, asked, "calls 2 and 3, whose record was lost, asked again")
				names, err := filepath.Glob(filepath.Join(dir, "*"))
				require.NoError(t, err)
				require.Equal(t, []string{rec}, names, "only the record left")
			})
		})
	}
}
