package host

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

var testSealKey = func() SealKey {
	k, err := NewSealKey([]byte("seal-key-for-tests-0123456789abcdef"))
	if err != nil {
		panic(err)
	}
	return k
}()

// Distinctive strings a guest gets as an input and as answers: sealed
// bytes must not show them, plain bytes do.
const (
	secretInput  = "ZEBRA-INPUT-7Q3X"
	secretAnswer = "OKAPI-ANSWER-K9W2"
)

const sealSource = `
const a = lookup(secret);
const b = lookup(a.note);
[secret, a.note, b.note].join("|");
`

// lookupAnswer is the answer to the call with sequence number seq.
func lookupAnswer(seq int) value.Value {
	return MustValueOf(map[string]any{"note": secretAnswer + "-" + string(rune('a'+seq))})
}

const sealResult = secretInput + "|" + secretAnswer + "-a|" + secretAnswer + "-b"

// requireSealRefusal checks that err is the sidecar's refusal with the
// contract's phrase.
func requireSealRefusal(t *testing.T, err error, phrase string) {
	t.Helper()
	var se *Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, "resume", se.Method)
	require.Equal(t, phrase, se.Message)
	require.Equal(t, "", se.Kind(), "a request refusal, not a guest failure")
}

// Must hold: an execution started with a seal key suspends and completes
// exactly as a plain one, hot and from bytes in a new process; its
// snapshot bytes never show the guest's input or the host's answers,
// which plain bytes do; a resume without the key, with another key, or
// with a key for plain bytes is refused with the contract's phrase and
// leaves the execution resumable.
func TestClientSealsSnapshots(t *testing.T) {
	otherKey, err := NewSealKey(bytes.Repeat([]byte{'o'}, 40))
	require.NoError(t, err)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			noLeaks(t)
			ctx := context.Background()
			c := newClient(t, Config{Cmd: sidecarCmd(t), JSONL: tr.jsonl})
			pong, err := c.Ping(ctx)
			require.NoError(t, err)
			require.True(t, pong.Has("sealed_snapshots"), "%v", pong.Features)

			prog, err := c.Compile(ctx, sealSource)
			require.NoError(t, err)
			caps := []string{"lookup"}
			inputs := map[string]value.Value{"secret": value.String(secretInput)}
			start := func(seal SealKey) *Suspension {
				st, err := c.Start(ctx, StartRequest{Program: prog, Inputs: inputs, Capabilities: caps, SealKey: seal})
				require.NoError(t, err)
				require.NotNil(t, st.Suspended)
				return st.Suspended
			}
			hot := func(s *Suspension, seal SealKey, seq int) (*Step, error) {
				return c.Resume(ctx, ResumeRequest{SnapshotID: s.SnapshotID, PolicyID: s.PolicyID, Key: testKey,
					SealKey: seal, Payload: Return(lookupAnswer(seq))})
			}

			plain := start(SealKey{})
			require.Contains(t, string(plain.Snapshot), secretInput, "plain bytes show the input")
			st, err := hot(plain, SealKey{}, 0)
			require.NoError(t, err)
			plain2 := st.Suspended
			require.Contains(t, string(plain2.Snapshot), secretAnswer+"-a", "plain bytes show the answer")

			sealed := start(testSealKey)
			require.NotContains(t, string(sealed.Snapshot), secretInput)
			require.True(t, value.Equal(value.Array(plain.Args...), value.Array(sealed.Args...)), "sealing changes no step")
			require.NotEqual(t, plain.SnapshotID, sealed.SnapshotID)

			// Hot, refused: the execution stays parked.
			_, err = hot(sealed, SealKey{}, 0)
			requireSealRefusal(t, err, "snapshot is sealed and no seal key was given")
			_, err = hot(sealed, otherKey, 0)
			requireSealRefusal(t, err, "snapshot was sealed under another seal key")
			_, err = hot(plain2, testSealKey, 1)
			requireSealRefusal(t, err, "snapshot is not sealed but a seal key was given")

			// Hot, with the key.
			st, err = hot(sealed, testSealKey, 0)
			require.NoError(t, err)
			sealed2 := st.Suspended
			require.NotNil(t, sealed2)
			require.Equal(t, "lookup", sealed2.Capability)
			require.True(t, value.Equal(value.Array(plain2.Args...), value.Array(sealed2.Args...)))
			for _, s := range []string{secretInput, secretAnswer} {
				require.NotContains(t, string(sealed2.Snapshot), s)
			}
			st, err = hot(sealed2, testSealKey, 1)
			require.NoError(t, err)
			require.Nil(t, st.Suspended)
			require.Equal(t, sealResult, st.Value.Str)

			// Cold: a new process gets the sealed bytes and the full policy.
			require.NoError(t, c.Close())
			c2 := newClient(t, Config{Cmd: sidecarCmd(t), JSONL: tr.jsonl})
			cold := func(snap []byte, seal SealKey, seq int) (*Step, error) {
				return c2.Resume(ctx, ResumeRequest{Snapshot: snap, Policy: &Policy{Capabilities: caps}, Key: testKey,
					SealKey: seal, Payload: Return(lookupAnswer(seq))})
			}
			_, err = cold(sealed2.Snapshot, SealKey{}, 1)
			requireSealRefusal(t, err, "snapshot is sealed and no seal key was given")
			_, err = cold(sealed2.Snapshot, otherKey, 1)
			requireSealRefusal(t, err, "snapshot was sealed under another seal key")
			_, err = cold(plain2.Snapshot, testSealKey, 1)
			requireSealRefusal(t, err, "snapshot is not sealed but a seal key was given")

			st, err = cold(sealed2.Snapshot, testSealKey, 1)
			require.NoError(t, err)
			require.Nil(t, st.Suspended)
			require.Equal(t, sealResult, st.Value.Str)
			st, err = cold(sealed.Snapshot, testSealKey, 0)
			require.NoError(t, err)
			require.NotNil(t, st.Suspended)
			require.Equal(t, sealed2.SnapshotID, st.Suspended.SnapshotID, "a sealed journal is deterministic")
		})
	}
}

const sealLoopSource = `
let note = secret;
const seen = [secret];
for (let i = 0; i < 4; i++) { note = lookup(note).note; seen.push(note); }
seen.join("|");
`

const sealLoopResult = secretInput + "|" + secretAnswer + "-a|" + secretAnswer + "-b|" + secretAnswer + "-c|" + secretAnswer + "-d"

// requireSealed checks that snap is sealed bytes showing neither the
// guest's input nor any answer.
func requireSealed(t *testing.T, snap []byte) {
	t.Helper()
	require.NotEmpty(t, snap)
	require.Contains(t, string(snap), "mustard-sealed-snapshot")
	require.NotContains(t, string(snap), secretInput)
	require.NotContains(t, string(snap), secretAnswer)
	require.NotContains(t, string(snap), "lookup", "nor the capability's name")
}

// Must hold: a Runner with a SealKey stores only sealed snapshots; when
// the process holding the execution is killed mid-way, the execution
// continues on another process from the stored sealed bytes and
// completes with the result of an undisturbed run, each call asked once.
func TestRunnerSealsExecutionsAndContinuesThemAfterAKill(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	pool := newPool(t, 2)
	prog, err := pool.Compile(ctx, sealLoopSource)
	require.NoError(t, err)
	store := &MemoryStore{}
	r := &Runner{Pool: pool, Store: store, Key: testKey, SealKey: testSealKey}
	var hot []bool
	var home *Client
	r.observe = func(c *Client, h bool) {
		hot = append(hot, h)
		home = c
	}
	var asked []int
	killed := 0
	v, err := r.Run(ctx, Execution{ID: "sealed", Program: prog,
		Inputs: map[string]value.Value{"secret": value.String(secretInput)},
		Capabilities: map[string]Capability{"lookup": func(_ context.Context, c Call) (value.Value, error) {
			asked = append(asked, c.Seq)
			cp, ok, err := store.Load(ctx, "sealed")
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, c.Seq, cp.Calls)
			requireSealed(t, cp.Snapshot)
			if c.Seq == 2 {
				killed = home.Pid()
				home.Kill()
				<-home.Done()
			}
			return lookupAnswer(c.Seq), nil
		}}})
	require.NoError(t, err)
	require.Equal(t, sealLoopResult, v.Str)
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
	otherKey, err := GenerateSealKey()
	require.NoError(t, err)
	var asked []int
	stop := errors.New("host going down")
	run := func(id string, seal SealKey, stopAt int) (value.Value, error) {
		pool := newPool(t, 1)
		defer pool.Close()
		store, err := NewDirStore(dir)
		require.NoError(t, err)
		prog, err := pool.Compile(ctx, sealLoopSource)
		require.NoError(t, err)
		return (&Runner{Pool: pool, Store: store, Key: testKey, SealKey: seal}).Run(ctx, Execution{ID: id, Program: prog,
			Inputs: map[string]value.Value{"secret": value.String(secretInput)},
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
	requireSealed(t, b)

	// The checkpoint is sealed too: without the key, or with another,
	// it does not open, and nothing is asked.
	for _, c := range []struct {
		seal   SealKey
		phrase string
	}{
		{SealKey{}, `execution "s": sealed checkpoint cannot be opened: it was stored sealed, and Runner.SealKey is not set`},
		{otherKey, `execution "s": sealed checkpoint cannot be opened: another seal key, or altered bytes`},
	} {
		_, err = run("s", c.seal, -1)
		require.ErrorIs(t, err, ErrSealedCheckpoint)
		require.EqualError(t, err, c.phrase)
	}
	require.Equal(t, []int{0, 1}, asked)

	v, err := run("s", testSealKey, -1)
	require.NoError(t, err)
	require.Equal(t, sealLoopResult, v.Str)
	require.Equal(t, []int{0, 1, 2, 3}, asked)

	// A plain execution does not continue under a seal key.
	asked = nil
	_, err = run("p", SealKey{}, 1)
	require.ErrorIs(t, err, stop)
	_, err = run("p", testSealKey, -1)
	requireSealRefusal(t, err, "snapshot is not sealed but a seal key was given")
	v, err = run("p", SealKey{}, -1)
	require.NoError(t, err)
	require.Equal(t, sealLoopResult, v.Str)
	require.Equal(t, []int{0, 1, 2, 3}, asked)
}

// Must hold: a sealed snapshot too large for one request goes to a new
// process in staged chunks, with the seal key in the policy, and the
// staged bytes are refused without it like sent ones.
func TestClientResumesLargeSealedSnapshotsThroughStages(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	c := newClient(t, Config{Cmd: sidecarCmd(t)})
	prog, err := c.Compile(ctx, `let n = 0; for (let i = 0; i < 3; i++) n += get(i).length; n;`)
	require.NoError(t, err)
	caps := []string{"get"}
	limits := Limits{HeapLimitBytes: Limit(64 << 20), AllocationBudget: Limit(1 << 30)}
	st, err := c.Start(ctx, StartRequest{Program: prog, Capabilities: caps, Limits: limits, SealKey: testSealKey})
	require.NoError(t, err)
	b := make([]byte, 600<<10)
	for i := range 2 {
		_, _ = rand.Read(b)
		s := st.Suspended
		st, err = c.Resume(ctx, ResumeRequest{SnapshotID: s.SnapshotID, PolicyID: s.PolicyID, Key: testKey,
			SealKey: testSealKey, Payload: Return(value.String(base64.StdEncoding.EncodeToString(b)))})
		require.NoError(t, err, "resume %d", i)
	}
	snap := st.Suspended.Snapshot
	require.Greater(t, len(snap), 1<<20)
	require.Contains(t, string(snap), "mustard-sealed-snapshot")

	c2 := newClient(t, Config{Cmd: sidecarCmd(t)})
	cold := func(seal SealKey) (*Step, error) {
		return c2.Resume(ctx, ResumeRequest{Snapshot: snap, Policy: &Policy{Capabilities: caps, Limits: limits},
			Key: testKey, SealKey: seal, Payload: Return(value.String("xyz"))})
	}
	_, err = cold(SealKey{})
	requireSealRefusal(t, err, "snapshot is sealed and no seal key was given")
	require.EqualValues(t, 1, c2.uploads.Load(), "the refused resume staged the snapshot")
	st, err = cold(testSealKey)
	require.NoError(t, err)
	require.EqualValues(t, 2, c2.uploads.Load(), "staged again: a stage is dropped by the resume that names it")
	require.Nil(t, st.Suspended)
	require.Equal(t, float64(2*base64.StdEncoding.EncodedLen(len(b))+3), st.Value.Num)
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

// Must hold: with a SealKey, nothing of an execution is stored in
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
	for _, mode := range []HostCalls{HostCallsBatch, HostCallsOne} {
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
		Args: []value.Value{value.String(secretInput)}}
	sealed, err := s.seal("x", cp)
	require.NoError(t, err)
	require.NotContains(t, string(sealed.Sealed), secretInput)
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
	other, err := newCheckpointSealer(func() SealKey { k, _ := GenerateSealKey(); return k }())
	require.NoError(t, err)
	_, err = other.open("x", sealed)
	require.ErrorIs(t, err, ErrSealedCheckpoint, "another key")
}

// The Key guards the wire, not the Store: a Runner with a new Key (a
// host restarted with GenerateKey) continues what one with another Key
// stored, each call asked once. What binds stored executions to a key is
// the SealKey: the same restart with a new seal key is refused, and the
// checkpoint stays for the right one.
func TestRunnerTrustsItsStoreWhateverItsKey(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode HostCalls) {
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
		newKey := func() Key { k, err := GenerateKey(); require.NoError(t, err); return k }
		newSeal := func() SealKey { k, err := GenerateSealKey(); require.NoError(t, err); return k }

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
