package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// A replay checks each call it makes again against the journal's, its
// arguments included: a journal whose first call was made with other
// arguments diverges at that call, whether Load read it (the arguments'
// bytes compared) or Decode (their digests), and the unchanged journal
// replays to the end either way.
func TestReplayComparesEachCallsArguments(t *testing.T) {
	p, err := Compile(`const a = cap({ n: 1, tags: ['x', 'y'] }); const b = cap(a + 1); [a, b]`)
	require.NoError(t, err)
	limits := policy.DefaultLimits()
	h := snapshot.Header{Program: p.Bytes, Capabilities: []string{"cap"}, Seed: 1, ClockMillis: 1}
	x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: limits})
	require.True(t, step.Suspended(), "%v", step.Err)
	x, step = x.Resume(Payload{Outcome: snapshot.Outcome{Value: value.Number(10)}}, limits)
	require.True(t, step.Suspended(), "%v", step.Err)
	raw := step.Snapshot
	x.Abandon()

	forged, err := snapshot.Decode(raw)
	require.NoError(t, err)
	forged.Calls[0].Args = []value.Value{value.Object(value.M("n", value.Number(2)), value.M("tags", value.Array(value.String("x"), value.String("y"))))}
	other := snapshot.Encode(forged)

	answer := []Answer{{CallID: 2, Payload: Payload{Outcome: snapshot.Outcome{Value: value.Number(20)}}}}
	for _, c := range []struct {
		name string
		read func([]byte) (*snapshot.Snapshot, error)
	}{
		{"Load", func(b []byte) (*snapshot.Snapshot, error) { return snapshot.Load(b, nil) }},
		{"Decode", snapshot.Decode},
	} {
		t.Run(c.name, func(t *testing.T) {
			j, err := c.read(raw)
			require.NoError(t, err)
			_, step := testRuntime.Start(Config{Program: p, Header: j.Header, Limits: limits, Journal: j, Answers: answer})
			require.NoError(t, step.Err)
			require.True(t, step.Done)
			require.Equal(t, value.Array(value.Number(10), value.Number(20)), step.Value)

			j, err = c.read(other)
			require.NoError(t, err)
			_, step = testRuntime.Start(Config{Program: p, Header: j.Header, Limits: limits, Journal: j, Answers: answer})
			require.Error(t, step.Err)
			var e *Error
			require.ErrorAs(t, step.Err, &e)
			require.Equal(t, KindSerialization, e.Kind)
			require.Equal(t, "snapshot replay diverged: host call 1 does not match the journal", e.Message)
		})
	}
}
