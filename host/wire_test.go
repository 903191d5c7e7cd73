package host

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// A request's header, with its guest values spliced in as this package
// wrote them, says what encoding/json says for the same request: the
// same members with the same values, in both transports.
func TestMarshalHeaderSaysWhatEncodingJSONSays(t *testing.T) {
	big := Return(value.String(strings.Repeat(`<b>"quoted" & \ é `, 2000) + "\u2028\x01"))
	bigJSON, err := big.MarshalJSON()
	require.NoError(t, err)
	small, err := Throw(CallError{Name: "RangeError", Message: "no", Code: "E1"}).MarshalJSON()
	require.NoError(t, err)
	inputs, err := marshalInputs(map[string]value.Value{"b": value.Number(1), "a<": value.String("x&y"), "": value.Array()})
	require.NoError(t, err)
	budget := uint64(100)
	auth := authFor(testKey, SealKey{}, strings.Repeat("ab", 32))
	reqs := map[string]*request{
		"resume":        {Method: "resume", SnapshotID: strings.Repeat("ab", 32), PolicyID: "p", Auth: &auth, Payload: bigJSON, SnapshotDelivery: DeliverDelta},
		"resume staged": {Method: "resume", PayloadStageID: "host-1", Policy: &wirePolicy{Capabilities: []string{"a"}, SnapshotID: "s", wireAuth: auth}},
		"batch": {Method: "resume", SnapshotID: "s", Answers: []wireAnswer{
			{CallID: 1, Payload: bigJSON}, {CallID: 2, PayloadStageID: "host-2"}, {CallID: 3, Payload: small}}},
		"start": {Method: "start", ProgramID: "p", Profile: true, Options: &wireOptions{Inputs: inputs,
			Capabilities: []string{"fetch"}, Limits: Limits{InstructionBudget: &budget}, Console: "capture"}},
		"start no inputs": {Method: "start", ProgramID: "p", ProgramStageID: "host-3",
			Options: &wireOptions{InputsStageID: "host-4", Capabilities: []string{}}},
		"ping": {Method: "ping"},
	}
	for name, req := range reqs {
		req.ProtocolVersion, req.ID = protocolVersion, 7
		want, err := json.Marshal(req)
		require.NoError(t, err, name)
		for _, jsonl := range []bool{false, true} {
			out, err := encodeRequest(req, []byte("raw"), rawSnapshot, jsonl)
			require.NoError(t, err, name)
			var hdr []byte
			if jsonl {
				require.Equal(t, byte('\n'), out[len(out)-1], name)
				hdr = out[:len(out)-1]
			} else {
				n := binary.LittleEndian.Uint32(out)
				require.Equal(t, uint32(3), binary.LittleEndian.Uint32(out[4:]), name)
				hdr = out[8 : 8+n]
				require.Equal(t, "raw", string(out[8+n:]), name)
			}
			require.True(t, json.Valid(hdr), "%s: %s", name, hdr)
			var got, exp map[string]any
			require.NoError(t, json.Unmarshal(hdr, &got), name)
			require.NoError(t, json.Unmarshal(want, &exp), name)
			if jsonl {
				delete(got, "snapshot_base64")
			}
			require.Equal(t, exp, got, name)
		}
	}
}

// A value that cannot cross the boundary fails the request that carries
// it, named by the request, before anything is written.
func TestInvalidValuesFailTheirRequest(t *testing.T) {
	bad := value.String("\xed\xa0\x80\xed\xb0\x80") // a surrogate pair as WTF-8: not well-formed
	ctx := context.Background()
	c := newClient(t, Config{Cmd: sidecarCmd(t)})
	prog, err := c.Compile(ctx, `fetch(x)`)
	require.NoError(t, err)
	_, err = c.Start(ctx, StartRequest{Program: prog, Capabilities: []string{"fetch"}, Inputs: map[string]value.Value{"x": bad}})
	require.ErrorContains(t, err, "start request: ")
	st, err := c.Start(ctx, StartRequest{Program: prog, Capabilities: []string{"fetch"}, Inputs: map[string]value.Value{"x": value.Number(1)}})
	require.NoError(t, err)
	s := st.Suspended
	_, err = c.Resume(ctx, ResumeRequest{SnapshotID: s.SnapshotID, PolicyID: s.PolicyID, Key: testKey, Payload: Return(bad)})
	require.ErrorContains(t, err, "resume request: ")
	_, err = c.Resume(ctx, ResumeRequest{SnapshotID: s.SnapshotID, PolicyID: s.PolicyID, Key: testKey,
		Answers: []Answer{{ID: 1, Payload: Return(bad)}}})
	require.ErrorContains(t, err, "resume request: ")
	// Nothing was sent: the execution still waits for its answer.
	st, err = c.Resume(ctx, ResumeRequest{SnapshotID: s.SnapshotID, PolicyID: s.PolicyID, Key: testKey, Payload: Return(value.Number(2))})
	require.NoError(t, err)
	require.True(t, value.Equal(value.Number(2), st.Value), "%s", st.Value.AppendJSON(nil))
}
