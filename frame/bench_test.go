package frame

import (
	"bytes"
	"testing"
)

// benchHeader is a typical ~200-byte request header.
var benchHeader = []byte(`{"id":123456,"method":"run","params":{"script":"main.js","entry":"handler","deadline_ms":5000,"memory_limit":67108864,"trace":false,"capabilities":["http.fetch","kv.get","kv.put"],"payload_encoding":"cbor"}}`)

var benchPayload = bytes.Repeat([]byte{0xa5}, 64)

// The writer and reader share one bytes.Buffer: each frame is drained
// before the next is written, so the buffer's storage is reused and the
// figures reflect the framing code only.

func BenchmarkBinaryReadWrite(b *testing.B) {
	var buf bytes.Buffer
	w := NewBinaryWriter(&buf)
	r := NewBinaryReader(&buf)
	b.SetBytes(int64(prefixLen + len(benchHeader) + len(benchPayload)))
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Write(benchHeader, benchPayload); err != nil {
			b.Fatal(err)
		}
		f, err := r.Next()
		if err != nil {
			b.Fatal(err)
		}
		if len(f.Header) != len(benchHeader) {
			b.Fatal("short header")
		}
	}
}

func BenchmarkLineReadWrite(b *testing.B) {
	var buf bytes.Buffer
	w := NewLineWriter(&buf)
	r := NewLineReader(&buf)
	b.SetBytes(int64(len(benchHeader) + 1))
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Write(benchHeader); err != nil {
			b.Fatal(err)
		}
		l, err := r.Next()
		if err != nil {
			b.Fatal(err)
		}
		if len(l) != len(benchHeader) {
			b.Fatal("short line")
		}
	}
}
