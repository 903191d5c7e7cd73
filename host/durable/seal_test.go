package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"

	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

var testSealKey = func() host.SealKey {
	k, err := host.NewSealKey([]byte(hosttest.SealKeyBytes))
	if err != nil {
		panic(err)
	}
	return k
}()

// lookupAnswer is the answer to the call with sequence number seq.
func lookupAnswer(seq int) value.Value {
	return host.MustValueOf(map[string]any{"note": hosttest.LookupNote(seq)})
}

// requireSealRefusal checks that err is the sidecar's refusal with the
// contract's phrase.
func requireSealRefusal(t *testing.T, err error, phrase string) {
	t.Helper()
	var se *host.Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, "resume", se.Method)
	require.Equal(t, phrase, se.Message)
	require.Equal(t, "", se.Kind(), "a request refusal, not a guest failure")
}

// Must hold: a Runner with a host.SealKey stores only sealed snapshots; when
// the process holding the execution is killed mid-way, the execution
// continues on another process from the stored sealed bytes and
// completes with the result of an undisturbed run, each call asked once.
func TestRunnerSealsExecutionsAndContinuesThemAfterAKill(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	pool := newPool(t, 2)
	prog, err := pool.Compile(ctx, hosttest.SealLoopSource)
	require.NoError(t, err)
	store := &MemoryStore{}
	r := &Runner{Pool: pool, Store: store, Key: testKey, SealKey: testSealKey}
	var hot []bool
	var home *host.Client
	r.observe = func(c *host.Client, h bool) {
		hot = append(hot, h)
		home = c
	}
	var asked []int
	killed := 0
	v, err := r.Run(ctx, Execution{ID: "sealed", Program: prog,
		Inputs: map[string]value.Value{"secret": value.String(hosttest.SecretInput)},
		Capabilities: map[string]Capability{"lookup": func(_ context.Context, c Call) (value.Value, error) {
			asked = append(asked, c.Seq)
			cp, ok, err := store.Load(ctx, "sealed")
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, c.Seq, cp.Calls)
			hosttest.RequireSealed(t, cp.Snapshot)
			if c.Seq == 2 {
				killed = home.Pid()
				home.Kill()
				<-home.Done()
			}
			return lookupAnswer(c.Seq), nil
		}}})
	require.NoError(t, err)
	require.Equal(t, hosttest.SealLoopResult, v.Str)
	require.Equal(t, []int{0, 1, 2, 3}, asked)
	require.Equal(t, []bool{true, true, false, true}, hot, "the resume after the kill was cold, from the stored bytes")
	require.NotZero(t, killed)
	require.NotEqual(t, killed, home.Pid(), "continued on another process")
}

// Must hold: sealed executions stored in a directory continue in a new
// host only with the key they were started with. Without it, or with
// another, Run fails with the sidecar's phrase, names the execution,
// and keeps the checkpoint with the answer it holds; a Runner with a key does not
// continue a plain execution either. The snapshot files hold neither the
// input nor the answers.
func TestRunnerContinuesSealedExecutionsOnlyWithTheirKey(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	dir := t.TempDir()
	otherKey, err := host.GenerateSealKey()
	require.NoError(t, err)
	var asked []int
	stop := errors.New("host going down")
	run := func(id string, seal host.SealKey, stopAt int) (value.Value, error) {
		pool := newPool(t, 1)
		defer pool.Close()
		store, err := NewDirStore(dir)
		require.NoError(t, err)
		prog, err := pool.Compile(ctx, hosttest.SealLoopSource)
		require.NoError(t, err)
		return (&Runner{Pool: pool, Store: store, Key: testKey, SealKey: seal}).Run(ctx, Execution{ID: id, Program: prog,
			Inputs: map[string]value.Value{"secret": value.String(hosttest.SecretInput)},
			Capabilities: map[string]Capability{"lookup": func(_ context.Context, c Call) (value.Value, error) {
				if c.Seq == stopAt {
					return value.Value{}, stop
				}
				asked = append(asked, c.Seq)
				return lookupAnswer(c.Seq), nil
			}}})
	}
	_, err = run("s", testSealKey, 2)
	require.ErrorIs(t, err, stop)
	snaps, err := filepath.Glob(filepath.Join(dir, "s.*.journal"))
	require.NoError(t, err)
	require.Len(t, snaps, 1)
	b, err := os.ReadFile(snaps[0])
	require.NoError(t, err)
	hosttest.RequireSealed(t, b)

	// The checkpoint is sealed too: without the key, or with another,
	// it does not open, and nothing is asked.
	for _, c := range []struct {
		seal   host.SealKey
		phrase string
	}{
		{host.SealKey{}, `execution "s": sealed checkpoint cannot be opened: it was stored sealed, and Runner.SealKey is not set`},
		{otherKey, `execution "s": sealed checkpoint cannot be opened: another seal key, or altered bytes`},
	} {
		_, err = run("s", c.seal, -1)
		require.ErrorIs(t, err, ErrSealedCheckpoint)
		require.EqualError(t, err, c.phrase)
	}
	require.Equal(t, []int{0, 1}, asked)

	v, err := run("s", testSealKey, -1)
	require.NoError(t, err)
	require.Equal(t, hosttest.SealLoopResult, v.Str)
	require.Equal(t, []int{0, 1, 2, 3}, asked)

	// A plain execution does not continue under a seal key.
	asked = nil
	_, err = run("p", host.SealKey{}, 1)
	require.ErrorIs(t, err, stop)
	_, err = run("p", testSealKey, -1)
	requireSealRefusal(t, err, "snapshot is not sealed but a seal key was given")
	v, err = run("p", host.SealKey{}, -1)
	require.NoError(t, err)
	require.Equal(t, hosttest.SealLoopResult, v.Str)
	require.Equal(t, []int{0, 1, 2, 3}, asked)
}

// dirHolds reports which of the markers occur, byte for byte, in any file
// under dir.
func dirHolds(t *testing.T, dir string, markers ...string) []string {
	t.Helper()
	var found []string
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		for _, m := range markers {
			if bytes.Contains(b, []byte(m)) {
				found = append(found, e.Name()+": "+m)
			}
		}
	}
	return found
}

// Must hold: with a host.SealKey, nothing of an execution is stored in
// plaintext: a DirStore directory, read byte by byte after every step and
// at the end, holds none of the markers in the inputs, the capability
// arguments, the answers and the result, in either mode; a plain Runner
// stores all of them. A new Runner with the key continues the execution
// from the sealed checkpoint; a checkpoint that a previous version stored
// with its sealed snapshot but plaintext fields still loads, and is
// sealed once saved again.
func TestRunnerStoresNothingOfASealedExecutionInPlaintext(t *testing.T) {
	const (
		inMarker     = "INPUT-MARKER-4Z7"
		argMarker    = "ARG-MARKER-Q2P"
		answerMarker = "ANSWER-MARKER-J8K"
		resultMarker = "RESULT-MARKER-V5N"
	)
	markers := []string{inMarker, argMarker, answerMarker, resultMarker}
	source := `
const a = lookup(secret + "|ARG-" + "MARKER-Q2P");
const b = lookup(a.slice(0, 4));
"RESULT-" + "MARKER-V5N:" + a + ":" + b;`
	for _, mode := range []host.HostCalls{host.HostCallsBatch, host.HostCallsOne} {
		t.Run(string(mode), func(t *testing.T) {
			noLeaks(t)
			ctx := context.Background()
			pool := newPool(t, 1)
			prog, err := pool.Compile(ctx, source)
			require.NoError(t, err)
			exec := func(id string, stopAt int, check func()) Execution {
				return Execution{ID: id, Program: prog, Inputs: map[string]value.Value{"secret": value.String(inMarker)},
					Capabilities: map[string]Capability{"lookup": func(_ context.Context, c Call) (value.Value, error) {
						check()
						if c.Seq == stopAt {
							return value.Value{}, errors.New("host going down")
						}
						return value.String(answerMarker + "-" + c.Args[0].Str), nil
					}}}
			}
			want := resultMarker + ":" + answerMarker + "-" + inMarker + "|" + argMarker + ":" + answerMarker + "-ANSW"

			// Plain: everything is there to read.
			plainDir := t.TempDir()
			plainStore, err := NewDirStore(plainDir)
			require.NoError(t, err)
			plain := &Runner{Pool: pool, Store: plainStore, Key: testKey, HostCalls: mode}
			v, err := plain.Run(ctx, exec("p", -1, func() {}))
			require.NoError(t, err)
			require.Equal(t, want, v.Str)
			if got := dirHolds(t, plainDir, resultMarker); len(got) == 0 {
				ents, _ := os.ReadDir(plainDir)
				for _, e := range ents {
					b, _ := os.ReadFile(filepath.Join(plainDir, e.Name()))
					t.Logf("%s: %.300s", e.Name(), b)
				}
				t.Fatal("a plain store keeps the result readable")
			}

			// Sealed: nothing, at any step.
			dir := t.TempDir()
			store, err := NewDirStore(dir)
			require.NoError(t, err)
			newRunner := func() *Runner {
				return &Runner{Pool: pool, Store: store, Key: testKey, SealKey: testSealKey, HostCalls: mode}
			}
			checks := 0
			clean := func() {
				checks++
				require.Empty(t, dirHolds(t, dir, markers...))
			}
			_, err = newRunner().Run(ctx, exec("s", 1, clean))
			require.EqualError(t, err, "capability lookup: host going down")
			clean()
			cp, ok, err := store.Load(ctx, "s")
			require.NoError(t, err)
			require.True(t, ok)
			require.NotNil(t, cp.Sealed)
			require.Empty(t, cp.Args)

			v, err = newRunner().Run(ctx, exec("s", -1, clean))
			require.NoError(t, err)
			require.Equal(t, want, v.Str)
			clean()
			require.GreaterOrEqual(t, checks, 5)
			v, err = newRunner().Run(ctx, exec("s", -1, func() { t.Error("a completed execution asks nothing") }))
			require.NoError(t, err)
			require.Equal(t, want, v.Str, "the sealed result loads")

			// A previous version's checkpoint: sealed snapshot, plaintext
			// fields. It loads, continues, and is sealed once saved.
			_, err = newRunner().Run(ctx, exec("old", 0, func() {}))
			require.Error(t, err)
			opened, _, err := newRunner().store().Load(ctx, "old")
			require.NoError(t, err)
			require.NoError(t, store.Save(ctx, "old", opened))
			require.NotEmpty(t, dirHolds(t, dir, argMarker), "stored as a previous version did")
			v, err = newRunner().Run(ctx, exec("old", -1, func() {}))
			require.NoError(t, err)
			require.Equal(t, want, v.Str)
			require.Empty(t, dirHolds(t, dir, markers...))
		})
	}
}

// A sealed checkpoint opens only as the execution and step it was sealed
// for, and only under its key.
func TestSealedCheckpointsAreBoundToExecutionAndStep(t *testing.T) {
	s, err := newCheckpointSealer(testSealKey)
	require.NoError(t, err)
	cp := &Checkpoint{ProgramID: "p", Calls: 3, SnapshotID: "abc", Capability: "lookup",
		Args: []value.Value{value.String(hosttest.SecretInput)}}
	sealed, err := s.seal("x", cp)
	require.NoError(t, err)
	require.NotContains(t, string(sealed.Sealed), hosttest.SecretInput)
	require.Empty(t, sealed.Args)
	opened, err := s.open("x", sealed)
	require.NoError(t, err)
	require.Equal(t, cp.Args, opened.Args)
	require.Equal(t, "lookup", opened.Capability)

	moved := *sealed
	_, err = s.open("y", &moved)
	require.ErrorIs(t, err, ErrSealedCheckpoint, "another execution")
	moved.Calls = 4
	_, err = s.open("x", &moved)
	require.ErrorIs(t, err, ErrSealedCheckpoint, "another step")
	moved = *sealed
	moved.Sealed = bytes.Clone(sealed.Sealed)
	moved.Sealed[len(moved.Sealed)-1] ^= 1
	_, err = s.open("x", &moved)
	require.ErrorIs(t, err, ErrSealedCheckpoint, "altered bytes")
	other, err := newCheckpointSealer(func() host.SealKey { k, _ := host.GenerateSealKey(); return k }())
	require.NoError(t, err)
	_, err = other.open("x", sealed)
	require.ErrorIs(t, err, ErrSealedCheckpoint, "another key")
}

// The host.Key guards the wire, not the Store: a Runner with a new host.Key (a
// host restarted with host.GenerateKey) continues what one with another host.Key
// stored, each call asked once. What binds stored executions to a key is
// the SealKey: the same restart with a new seal key is refused, and the
// checkpoint stays for the right one.
func TestRunnerTrustsItsStoreWhateverItsKey(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode host.HostCalls) {
		ctx := context.Background()
		pool := newPool(t, 1)
		store, err := NewDirStore(t.TempDir())
		require.NoError(t, err)
		prog, err := pool.Compile(ctx, `f(1) + f(2)`)
		require.NoError(t, err)
		asked := map[uint64]int{}
		stop := errors.New("host going down")
		caps := func(stopAt uint64) map[string]Capability {
			return map[string]Capability{"f": func(_ context.Context, c Call) (value.Value, error) {
				if c.ID == stopAt {
					return value.Value{}, stop
				}
				asked[c.ID]++
				return value.Number(float64(c.ID * 10)), nil
			}}
		}
		newKey := func() host.Key { k, err := host.GenerateKey(); require.NoError(t, err); return k }
		newSeal := func() host.SealKey { k, err := host.GenerateSealKey(); require.NoError(t, err); return k }

		_, err = (&Runner{Pool: pool, Store: store, Key: newKey(), HostCalls: mode}).Run(ctx,
			Execution{ID: "plain", Program: prog, Capabilities: caps(2)})
		require.ErrorIs(t, err, stop)
		v, err := (&Runner{Pool: pool, Store: store, Key: newKey(), HostCalls: mode}).Run(ctx,
			Execution{ID: "plain", Program: prog, Capabilities: caps(0)})
		require.NoError(t, err, "another Key continues a stored execution")
		require.Equal(t, 30.0, v.Num)
		require.Equal(t, map[uint64]int{1: 1, 2: 1}, asked)

		seal := newSeal()
		_, err = (&Runner{Pool: pool, Store: store, Key: newKey(), SealKey: seal, HostCalls: mode}).Run(ctx,
			Execution{ID: "sealed", Program: prog, Capabilities: caps(2)})
		require.ErrorIs(t, err, stop)
		_, err = (&Runner{Pool: pool, Store: store, Key: newKey(), SealKey: newSeal(), HostCalls: mode}).Run(ctx,
			Execution{ID: "sealed", Program: prog, Capabilities: caps(0)})
		require.ErrorIs(t, err, ErrSealedCheckpoint, "another seal key is refused")
		v, err = (&Runner{Pool: pool, Store: store, Key: newKey(), SealKey: seal, HostCalls: mode}).Run(ctx,
			Execution{ID: "sealed", Program: prog, Capabilities: caps(0)})
		require.NoError(t, err, "the seal key it was started with continues it, whatever the Key")
		require.Equal(t, 30.0, v.Num)
	})
}

// A checkpoint sealed by an earlier release (AES-256-GCM, in a DirStore
// directory under testdata) still opens with its seal key; saved again,
// it is sealed in the envelope sealed snapshots use, and opens as well.
func TestCheckpointsSealedByEarlierReleasesStillOpen(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("testdata", "sealed-checkpoint-v1")
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600))
	}
	ds, err := NewDirStore(dir)
	require.NoError(t, err)
	s, err := newCheckpointSealer(testSealKey)
	require.NoError(t, err)
	store := &sealingStore{Store: ds, s: s}
	ctx := context.Background()

	check := func(cp *Checkpoint) {
		t.Helper()
		require.Nil(t, cp.Sealed)
		require.Equal(t, "prog-v1", cp.ProgramID)
		require.Equal(t, "lookup", cp.Capability)
		require.Equal(t, `{"Array":[{"String":"ARG-MARKER-v1"}]}`, wireText(t, value.Array(cp.Args...)))
		require.Len(t, cp.Outstanding, 1)
		require.EqualValues(t, 2, cp.Outstanding[0].ID)
		answer, ok := cp.Outstanding[0].Answer.Value()
		require.True(t, ok)
		require.Equal(t, `{"String":"ANSWER-MARKER-v1"}`, wireText(t, answer))
	}
	cp, ok, err := store.Load(ctx, "exec-v1")
	require.NoError(t, err)
	require.True(t, ok)
	check(cp)

	other, err := host.NewSealKey([]byte("another-seal-key-0123456789abcdefgh"))
	require.NoError(t, err)
	os2, err := newCheckpointSealer(other)
	require.NoError(t, err)
	_, _, err = (&sealingStore{Store: ds, s: os2}).Load(ctx, "exec-v1")
	require.ErrorIs(t, err, ErrSealedCheckpoint)
	require.ErrorContains(t, err, "another seal key, or altered bytes")

	require.NoError(t, store.Save(ctx, "exec-v1", cp))
	raw, ok, err := ds.Load(ctx, "exec-v1")
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, bytes.HasPrefix(raw.Sealed, []byte(checkpointSealMagic)), "saved in the shared envelope")
	require.NotContains(t, string(raw.Sealed), "MARKER")
	cp, ok, err = store.Load(ctx, "exec-v1")
	require.NoError(t, err)
	require.True(t, ok)
	check(cp)
	_, _, err = (&sealingStore{Store: ds, s: os2}).Load(ctx, "exec-v1")
	require.ErrorIs(t, err, ErrSealedCheckpoint)
}
