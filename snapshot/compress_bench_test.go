package snapshot

import (
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"

	"github.com/mustard-sidecar/mustard-sidecar/internal/sampletext"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// BenchmarkCompressAnswer compares the codecs considered for journaled
// answers on a 50 KB JSON-like answer: time per answer, and the ratio as
// a metric (compressed / plain).
func BenchmarkCompressAnswer(b *testing.B) {
	enc := value.String(sampletext.JSONLike(rand.New(rand.NewPCG(1, 2)), 50_000)).AppendCBOR(nil)
	zstdAt := func(l zstd.EncoderLevel) func([]byte) []byte {
		e, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(l), zstd.WithEncoderCRC(false), zstd.WithSingleSegment(true), zstd.WithZeroFrames(true))
		return func(p []byte) []byte { return e.EncodeAll(p, nil) }
	}
	for _, c := range []struct {
		name string
		f    func([]byte) []byte
	}{
		{"zstd-fastest", zstdAt(zstd.SpeedFastest)},
		{"zstd-default", zstdAt(zstd.SpeedDefault)},
		{"zstd-better", zstdAt(zstd.SpeedBetterCompression)},
		{"s2", func(p []byte) []byte { return s2.Encode(nil, p) }},
		{"s2-better", func(p []byte) []byte { return s2.EncodeBetter(nil, p) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			var n int
			b.SetBytes(int64(len(enc)))
			for b.Loop() {
				n = len(c.f(enc))
			}
			b.ReportMetric(float64(n)/float64(len(enc)), "ratio")
		})
	}
	z := zstdAt(zstd.SpeedDefault)(enc)
	b.Run("zstd-decode", func(b *testing.B) {
		b.SetBytes(int64(len(enc)))
		for b.Loop() {
			if _, ok := decompress(z, uint64(len(enc))); !ok {
				b.Fatal("decompress")
			}
		}
	})
}
