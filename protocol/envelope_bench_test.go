package protocol

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/sampletext"
)

// BenchmarkEnvelope reads the envelope of a resume answering with 50 KB of
// text: a header that is mostly one long string dense with escapes. The
// answer is transcoded on the way (validPayload).
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

// BenchmarkBatchAnswers reads a batch resume answering four calls with
// 50 KB of text each: the header's validation and the answers' decoding.
func BenchmarkBatchAnswers(b *testing.B) {
	answer := sampletext.JSONLike(rand.New(rand.NewPCG(1, 2)), 50_000)
	var answers []any
	for i := 1; i <= 4; i++ {
		answers = append(answers, map[string]any{"call_id": i,
			"payload": map[string]any{"type": "value", "value": map[string]any{"String": answer}}})
	}
	header, err := json.Marshal(map[string]any{"protocol_version": 2, "id": 3, "method": "resume", "snapshot_id": "ab", "policy_id": "cd",
		"answers": answers})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(header)))
	for b.Loop() {
		f, _, _, err := envelope(header, true)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := (stagedSet{}).answers(f, "answers"); err != nil {
			b.Fatal(err)
		}
	}
}
