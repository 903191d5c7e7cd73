package protocol

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/sampletext"
)

// BenchmarkEnvelope reads the envelope of a resume answering with 50 KB of
// text: a header that is mostly one long string dense with escapes.
func BenchmarkEnvelope(b *testing.B) {
	answer := sampletext.JSONLike(rand.New(rand.NewPCG(1, 2)), 50_000)
	header, err := json.Marshal(map[string]any{"protocol_version": 2, "id": 3, "method": "resume", "snapshot_id": "ab", "policy_id": "cd",
		"payload": map[string]any{"type": "value", "value": map[string]any{"String": answer}}})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(header)))
	for b.Loop() {
		if _, _, _, err := envelope(header, true); err != nil {
			b.Fatal(err)
		}
	}
}
