package bench

import (
	"bytes"
	"encoding/base64"
	"io"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/frame"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// loopReader yields the same bytes forever, so readers can be measured
// without refilling a buffer.
type loopReader struct {
	b []byte
	i int
}

func (r *loopReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.b[r.i:])
		n += c
		r.i = (r.i + c) % len(r.b)
	}
	return n, nil
}

// benchFrame is a raw resume: a ~700-byte header and a 4 KiB snapshot.
func benchFrame() (header, payload []byte) {
	header = rawResumeRequest(123456, "9af93cb34189af6fa17b8d9887eb6f9a213dca3bb63a83947f65a0032408669a", []string{"get_ticket", "get_customer"}, coldAnswer(7))
	return header, bytes.Repeat([]byte{0xa5, 0x17, 0x00, 0xff}, 1024)
}

func BenchmarkFrameBinaryDecode(b *testing.B) {
	h, p := benchFrame()
	var buf bytes.Buffer
	if err := frame.NewBinaryWriter(&buf).Write(h, p); err != nil {
		b.Fatal(err)
	}
	r := frame.NewBinaryReader(&loopReader{b: buf.Bytes()})
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		f, err := r.Next()
		if err != nil || len(f.Payload) != len(p) {
			b.Fatal(err)
		}
	}
}

func BenchmarkFrameBinaryEncode(b *testing.B) {
	h, p := benchFrame()
	w := frame.NewBinaryWriter(io.Discard)
	b.SetBytes(int64(8 + len(h) + len(p)))
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Write(h, p); err != nil {
			b.Fatal(err)
		}
	}
}

// The JSONL form of the same request carries the snapshot as base64.
func benchLine() []byte {
	h, p := benchFrame()
	return append(append(h[:len(h)-1:len(h)-1], `,"snapshot_base64":"`...), base64.StdEncoding.EncodeToString(p)+`"}`...)
}

func BenchmarkFrameLineDecode(b *testing.B) {
	line := benchLine()
	r := frame.NewLineReader(&loopReader{b: append(line, '\n')})
	b.SetBytes(int64(len(line) + 1))
	b.ReportAllocs()
	for b.Loop() {
		l, err := r.Next()
		if err != nil || len(l) != len(line) {
			b.Fatal(err)
		}
	}
}

func BenchmarkFrameLineEncode(b *testing.B) {
	line := benchLine()
	w := frame.NewLineWriter(io.Discard)
	b.SetBytes(int64(len(line) + 1))
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Write(line); err != nil {
			b.Fatal(err)
		}
	}
}

// realisticValue is what a get_ticket fan-out returns: the 16 ticket
// objects of the triage workload (strings, numbers, nested arrays, null).
func realisticValue(b *testing.B) value.Value {
	ws, err := LoadWorkloads()
	if err != nil {
		b.Fatal(err)
	}
	var arr []byte
	for _, w := range ws {
		for _, c := range w.Calls {
			if c.Capability != "get_ticket" {
				continue
			}
			if arr == nil {
				arr = []byte{'['}
			} else {
				arr = append(arr, ',')
			}
			arr = append(arr, c.Answer...)
		}
	}
	s, err := Structured(append(arr, ']'))
	if err != nil {
		b.Fatal(err)
	}
	v, err := value.ParseJSON(s)
	if err != nil {
		b.Fatal(err)
	}
	return v
}

func BenchmarkValueParseJSON(b *testing.B) {
	in := realisticValue(b).AppendJSON(nil)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := value.ParseJSON(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValueAppendJSON(b *testing.B) {
	v := realisticValue(b)
	buf := v.AppendJSON(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = v.AppendJSON(buf[:0])
	}
}

func BenchmarkValueAppendCBOR(b *testing.B) {
	v := realisticValue(b)
	buf := v.AppendCBOR(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = v.AppendCBOR(buf[:0])
	}
}

func BenchmarkValueDecodeCBOR(b *testing.B) {
	in := realisticValue(b).AppendCBOR(nil)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := value.DecodeCBOR(in); err != nil {
			b.Fatal(err)
		}
	}
}
