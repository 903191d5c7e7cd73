package host

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

const pairSource = `
async function main() {
  const [a, b] = await Promise.all([fetch_data(1), fetch_data(2)]);
  const c = await fetch_data(a + b);
  return [a, b, c];
}
main();
`

// requireCalls checks a batch step's listing: ids and first arguments.
func requireCalls(t *testing.T, s *Suspension, ids []uint64, firstArgs []float64) {
	t.Helper()
	require.Len(t, s.Calls, len(ids))
	for i, k := range s.Calls {
		require.Equal(t, ids[i], k.ID)
		require.Equal(t, "fetch_data", k.Capability)
		require.Equal(t, firstArgs[i], k.Args[0].Num)
	}
	require.Equal(t, s.Calls[0].Capability, s.Capability, "capability repeats calls[0]")
	require.True(t, value.Equal(value.Array(s.Calls[0].Args...), value.Array(s.Args...)), "args repeat calls[0]")
}

// Must hold: a batch-mode execution lists every outstanding call with its
// id; a resume answers any subset, hot by ids or cold from the bytes with
// the mode in the policy, and both reach the same step; ids that are not
// outstanding are refused and change nothing; the default mode is
// unchanged.
func TestClientBatchMode(t *testing.T) {
	for _, tr := range hosttest.Transports {
		t.Run(tr.Name, func(t *testing.T) {
			noLeaks(t)
			ctx := context.Background()
			c := newClient(t, Config{Cmd: sidecarCmd(t), JSONL: tr.JSONL})
			pong, err := c.Ping(ctx)
			require.NoError(t, err)
			require.True(t, pong.Has("batch_calls"), "%v", pong.Features)
			prog, err := c.Compile(ctx, pairSource)
			require.NoError(t, err)
			caps := []string{"fetch_data"}

			one, err := c.Start(ctx, StartRequest{Program: prog, Capabilities: caps})
			require.NoError(t, err)
			require.Nil(t, one.Suspended.Calls, "one call per step by default")
			require.Equal(t, 1.0, one.Suspended.Args[0].Num)

			st, err := c.Start(ctx, StartRequest{Program: prog, Capabilities: caps, HostCalls: HostCallsBatch})
			require.NoError(t, err)
			first := st.Suspended
			requireCalls(t, first, []uint64{1, 2}, []float64{1, 2})
			require.NotEqual(t, one.Suspended.PolicyID, first.PolicyID, "the mode is part of the policy")

			answer := func(id uint64, n float64) Answer { return Answer{ID: id, Payload: Return(value.Number(n))} }
			st, err = c.Resume(ctx, ResumeRequest{SnapshotID: first.SnapshotID, PolicyID: first.PolicyID, Key: testKey,
				Answers: []Answer{answer(2, 20)}, Delivery: DeliverDelta})
			require.NoError(t, err)
			second := st.Suspended
			requireCalls(t, second, []uint64{1}, []float64{1})
			secondBytes, err := second.Extend(first.Snapshot)
			require.NoError(t, err)

			for _, bad := range []struct {
				answers []Answer
				msg     string
			}{
				{[]Answer{answer(9, 1)}, "unknown call_id 9"},
				{[]Answer{answer(2, 1)}, "call_id 2 answered twice"},
				{[]Answer{answer(1, 1), answer(1, 2)}, "call_id 1 answered twice"},
			} {
				_, err = c.Resume(ctx, ResumeRequest{SnapshotID: second.SnapshotID, PolicyID: second.PolicyID, Key: testKey, Answers: bad.answers})
				var se *Error
				require.ErrorAs(t, err, &se)
				require.Equal(t, bad.msg, se.Message)
			}
			_, err = c.Resume(ctx, ResumeRequest{SnapshotID: second.SnapshotID, PolicyID: second.PolicyID, Key: testKey, Payload: Return(value.Number(1))})
			require.EqualError(t, err, "resume payload does not match host_calls batch")

			st, err = c.Resume(ctx, ResumeRequest{SnapshotID: second.SnapshotID, PolicyID: second.PolicyID, Key: testKey,
				Answers: []Answer{answer(1, 10)}})
			require.NoError(t, err)
			third := st.Suspended
			requireCalls(t, third, []uint64{3}, []float64{30})

			// Cold, in a new process: the bytes, with the mode in the policy.
			c2 := newClient(t, Config{Cmd: sidecarCmd(t), JSONL: tr.JSONL})
			policy := &Policy{Capabilities: caps, HostCalls: HostCallsBatch}
			st, err = c2.Resume(ctx, ResumeRequest{Snapshot: secondBytes, Policy: policy, Key: testKey, Answers: []Answer{answer(1, 10)}})
			require.NoError(t, err)
			require.Equal(t, third.SnapshotID, st.Suspended.SnapshotID, "hot and cold agree")
			require.Equal(t, third.PolicyID, st.Suspended.PolicyID)
			requireCalls(t, st.Suspended, []uint64{3}, []float64{30})
			st, err = c2.Resume(ctx, ResumeRequest{SnapshotID: st.Suspended.SnapshotID, PolicyID: st.Suspended.PolicyID, Key: testKey,
				Answers: []Answer{{ID: 3, Payload: Throw(CallError{Name: "NotFound", Message: "no 30"})}}})
			require.EqualError(t, err, "Runtime: NotFound: no 30")
			require.Nil(t, st)

			// The same bytes in one-call mode present the oldest call.
			st, err = c2.Resume(ctx, ResumeRequest{Snapshot: secondBytes, Policy: &Policy{Capabilities: caps}, Key: testKey,
				Payload: Return(value.Number(10))})
			require.NoError(t, err)
			require.Nil(t, st.Suspended.Calls)
			require.Equal(t, 30.0, st.Suspended.Args[0].Num)
		})
	}
}
