package mustardtemporal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

// A payload an earlier release's codec encrypted (testdata/codec-v1.json)
// decodes to what it held, and a new payload has the same form: the key
// id in the metadata, nonce(24) || XChaCha20-Poly1305 ciphertext in Data.
func TestCodecReadsPayloadsEarlierReleasesWrote(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "codec-v1.json"))
	require.NoError(t, err)
	var g struct {
		Key           string `json:"key"`
		Encoding      string `json:"encoding"`
		KeyID         []byte `json:"key_id"`
		Data          []byte `json:"data"`
		PlainEncoding string `json:"plain_encoding"`
		PlainData     string `json:"plain_data"`
	}
	require.NoError(t, json.Unmarshal(raw, &g))
	c, err := NewCodec([]byte(g.Key))
	require.NoError(t, err)
	out, err := c.Decode([]*commonpb.Payload{{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(g.Encoding),
		metaKeyID: g.KeyID}, Data: g.Data}})
	require.NoError(t, err)
	require.Equal(t, g.PlainEncoding, string(out[0].Metadata[converter.MetadataEncoding]))
	require.Equal(t, g.PlainData, string(out[0].Data))

	enc, err := c.Encode(out)
	require.NoError(t, err)
	require.Equal(t, g.KeyID, enc[0].Metadata[metaKeyID])
	require.Len(t, enc[0].Data, len(g.Data), "same envelope, same size")
	back, err := c.Decode(enc)
	require.NoError(t, err)
	require.Equal(t, g.PlainData, string(back[0].Data))
}
