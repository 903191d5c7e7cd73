package host

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

var testSealKey = func() SealKey {
	k, err := NewSealKey([]byte(hosttest.SealKeyBytes))
	if err != nil {
		panic(err)
	}
	return k
}()

// lookupAnswer is the answer to the call with sequence number seq.
func lookupAnswer(seq int) value.Value {
	return MustValueOf(map[string]any{"note": hosttest.LookupNote(seq)})
}

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
	for _, tr := range hosttest.Transports {
		t.Run(tr.Name, func(t *testing.T) {
			noLeaks(t)
			ctx := context.Background()
			c := newClient(t, Config{Cmd: sidecarCmd(t), JSONL: tr.JSONL})
			pong, err := c.Ping(ctx)
			require.NoError(t, err)
			require.True(t, pong.Has("sealed_snapshots"), "%v", pong.Features)

			prog, err := c.Compile(ctx, hosttest.SealSource)
			require.NoError(t, err)
			caps := []string{"lookup"}
			inputs := map[string]value.Value{"secret": value.String(hosttest.SecretInput)}
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
			require.Contains(t, string(plain.Snapshot), hosttest.SecretInput, "plain bytes show the input")
			st, err := hot(plain, SealKey{}, 0)
			require.NoError(t, err)
			plain2 := st.Suspended
			require.Contains(t, string(plain2.Snapshot), hosttest.SecretAnswer+"-a", "plain bytes show the answer")

			sealed := start(testSealKey)
			require.NotContains(t, string(sealed.Snapshot), hosttest.SecretInput)
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
			for _, s := range []string{hosttest.SecretInput, hosttest.SecretAnswer} {
				require.NotContains(t, string(sealed2.Snapshot), s)
			}
			st, err = hot(sealed2, testSealKey, 1)
			require.NoError(t, err)
			require.Nil(t, st.Suspended)
			require.Equal(t, hosttest.SealResult, st.Value.Str)

			// Cold: a new process gets the sealed bytes and the full policy.
			require.NoError(t, c.Close())
			c2 := newClient(t, Config{Cmd: sidecarCmd(t), JSONL: tr.JSONL})
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
			require.Equal(t, hosttest.SealResult, st.Value.Str)
			st, err = cold(sealed.Snapshot, testSealKey, 0)
			require.NoError(t, err)
			require.NotNil(t, st.Suspended)
			require.Equal(t, sealed2.SnapshotID, st.Suspended.SnapshotID, "a sealed journal is deterministic")
		})
	}
}

// Must hold: a sealed snapshot too large for one request goes to a new
// process in staged chunks, with the seal key in the policy, and the
// staged bytes are refused without it like sent ones.
func TestClientResumesLargeSealedSnapshotsThroughStages(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	c := newClient(t, Config{Cmd: sidecarCmd(t)})
	// The guest keeps its answers, so its snapshots grow as their
	// journal does (a checkpoint's image would be larger).
	prog, err := c.Compile(ctx, `let n = 0; const kept = []; for (let i = 0; i < 3; i++) { const r = get(i); kept.push(r); n += r.length; } n;`)
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
