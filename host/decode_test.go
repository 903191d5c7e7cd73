package host

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// Responses as the sidecar writes them and as any JSON writer may: space
// between tokens, escaped keys, members this client does not read, null
// where encoding/json takes it as none, repeated keys.
var decodeCorpus = []string{
	`{"kind":"step","step":{"type":"completed","value":{"String":"` + strings.Repeat(`a \"b\" \\ \n é \u00e9 \ud83d\ude00 `, 40) + `"}}}`,
	`{"kind":"step","step":{"type":"suspended","capability":"fetch_page","args":[{"Number":{"Finite":1.5}},{"String":"x"},"Undefined","Null",{"Bool":true},{"Array":["Hole",{"Object":{"k":{"String":"v"}}}]}]},"snapshot_id":"ab","policy_id":"cd","snapshot_base_id":"ef"}`,
	` { "kind" : "step" , "step" : { "type" : "suspended" , "args" : [ ] , "logs" : [ {"level":"log","text":"hi"} ] , "snapshot_base64" : "AAEC" } , "snapshot_id" : "x" } `,
	`{"\u006bind":"step","step":{"t\u0079pe":"suspended","args":null,"calls":[{"call_id":1,"capability":"a","args":[{"String":"1"}]},{"call_id":2,"capability":"b","args":null,"extra":{"x":[1,2,{"y":null}]}}]}}`,
	`{"kind":"step","kind":"other","step":{"type":"completed","value":{"String":"1"},"value":{"String":"2"},"unknown":[true,false,null,-1.5e3,"s"]},"more":{}}`,
	`{"kind":"step","step":{"type":"suspended","args":[{"String":"` + strings.Repeat("x", 9000) + `"}],"calls":null}}`,
	`{}`,
	`{"kind":"step","step":{}}`,
}

var headerCorpus = []string{
	`{"protocol_version":2,"id":7,"ok":true,"result":{"kind":"step","step":{"type":"completed","value":{"String":"` + strings.Repeat("y", 100) + `"}}}}`,
	`{"protocol_version":2,"id":8,"ok":false,"error":"Runtime: boom \"quoted\"","error_code":"runtime","logs":[{"level":"error","text":"x"}],"profile":null}`,
	` {"id":9 , "ok":true , "result":[1,2] , "protocol_version":2 , "other":{"a":"b"}} `,
}

// The fast decoder reads from any valid response what encoding/json reads.
func TestFastDecodeReadsWhatEncodingJSONReads(t *testing.T) {
	for _, in := range decodeCorpus {
		var want, got wireStep
		require.NoError(t, json.Unmarshal([]byte(in), &want), in)
		require.NoError(t, decodeStepFast([]byte(in), &got), in)
		require.Equal(t, mustJSON(t, want), mustJSON(t, got), in)
	}
	for _, in := range headerCorpus {
		var want, got response
		require.NoError(t, json.Unmarshal([]byte(in), &want), in)
		require.NoError(t, decodeHeaderFast([]byte(in), &got), in)
		require.Equal(t, mustJSON(t, want), mustJSON(t, got), in)
	}
}

// What is not JSON fails, in the fast decoder as in encoding/json: each
// corpus entry cut short, and each with bytes changed at random. Whatever
// the fast decoder accepts is valid JSON, and reads as encoding/json
// reads it.
func TestFastDecodeRefusesWhatIsNotJSON(t *testing.T) {
	for _, in := range []string{
		`{"kind":"step" "step":{}}`, `{"kind":"step",}`, `{"kind" "step"}`, `{"kind":"step"}x`, `{"kind":"step"`,
		`{"step":{"type":"suspended","args":[{"String":"x"} {"String":"y"}]}}`, `{"step":{"args":[{"String":"x"},]}}`,
		`{"step":{"args":[{"Strin":"x"}]}}`, `{"step":{"args":[{"String":"\x01"}]}}`, `{"x":tru}`, `{"x":[1,2}`, `{"x":"\q"}`,
		`["kind"]`, ``, `{"step":{"args":[{"String":"` + "\xff" + `"}]}}`,
	} {
		var res wireStep
		require.Error(t, decodeStepFast([]byte(in), &res), in)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, in := range append(decodeCorpus, headerCorpus...) {
		for n := range len(in) {
			if json.Valid([]byte(in[:n])) {
				continue // only the trailing space cut
			}
			var res wireStep
			require.Error(t, decodeStepFast([]byte(in[:n]), &res), "%q", in[:n])
		}
		for range 300 {
			b := []byte(in)
			// No capitals: encoding/json matches keys regardless of case.
			const alphabet = `{}[]",:\ 0ae+-.ntfu"`
			for range 1 + r.IntN(3) {
				b[r.IntN(len(b))] = alphabet[r.IntN(len(alphabet))]
			}
			var got wireStep
			if decodeStepFast(b, &got) == nil {
				require.True(t, json.Valid(b), "accepted %q", b)
				var want wireStep
				if json.Unmarshal(b, &want) == nil {
					require.Equal(t, mustJSON(t, want), mustJSON(t, got), "%q", b)
				}
			}
			var gotHeader response
			if decodeHeaderFast(b, &gotHeader) == nil {
				// The result is checked where it is read (decodeStep,
				// or encoding/json for the other kinds).
				require.True(t, json.Valid(withoutResult(b, gotHeader.Result)), "accepted %q", b)
				if !json.Valid(b) {
					continue
				}
				var want response
				if json.Unmarshal(b, &want) == nil {
					require.Equal(t, mustJSON(t, want), mustJSON(t, gotHeader), "%q", b)
				}
			}
		}
	}
}

// withoutResult is header b with its result, a part of b, as null.
func withoutResult(b, result []byte) []byte {
	if result == nil {
		return b
	}
	at := cap(b) - cap(result)
	return append(append(append([]byte(nil), b[:at]...), "null"...), b[at+len(result):]...)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// A binary response is read whole however its bytes arrive, across the
// sizes where its buffer doubles, and one that ends early fails.
func TestResponseReaderReadsFramesWhole(t *testing.T) {
	for _, n := range []int{0, 1, 64<<10 - 8, 64 << 10, 64<<10 + 1, 200_000} {
		header := []byte(`{"id":1}`)
		payload := make([]byte, n)
		for i := range payload {
			payload[i] = byte(i * 7)
		}
		frame := binary.LittleEndian.AppendUint32(nil, uint32(len(header)))
		frame = binary.LittleEndian.AppendUint32(frame, uint32(n))
		frame = append(append(frame, header...), payload...)
		for _, src := range []io.Reader{bytes.NewReader(frame), iotest.HalfReader(bytes.NewReader(frame))} {
			r := &responseReader{br: bufio.NewReaderSize(src, 4096), limit: 1 << 20}
			m, err := r.next()
			require.NoError(t, err, n)
			require.Equal(t, header, m.header)
			require.True(t, bytes.Equal(payload, m.payload), "payload of %d bytes", n)
		}
		r := &responseReader{br: bufio.NewReaderSize(bytes.NewReader(frame[:len(frame)-1]), 4096), limit: 1 << 20}
		_, err := r.next()
		require.ErrorIs(t, err, ErrProtocol, n)
	}
}
