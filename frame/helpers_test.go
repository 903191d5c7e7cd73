package frame

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// prefix returns a binary length prefix.
func prefix(hl, pl uint32) []byte {
	b := make([]byte, prefixLen)
	binary.LittleEndian.PutUint32(b[0:4], hl)
	binary.LittleEndian.PutUint32(b[4:8], pl)
	return b
}

// encode returns one complete binary frame.
func encode(header, payload []byte) []byte {
	b := prefix(uint32(len(header)), uint32(len(payload)))
	b = append(b, header...)
	return append(b, payload...)
}

func concat(parts ...[]byte) []byte {
	return bytes.Join(parts, nil)
}

func rep(c byte, n int) []byte {
	return bytes.Repeat([]byte{c}, n)
}

// readerKinds wraps the input in readers that split or merge reads
// differently, to catch code that assumes one Read returns everything.
var readerKinds = []struct {
	name string
	wrap func([]byte) io.Reader
}{
	{"plain", func(b []byte) io.Reader { return bytes.NewReader(b) }},
	{"onebyte", func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) }},
	{"half", func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) }},
	{"dataerr", func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) }},
	{"onebyte-dataerr", func(b []byte) io.Reader {
		return iotest.DataErrReader(iotest.OneByteReader(bytes.NewReader(b)))
	}},
}

// slowReader reports whether inputs of a MiB through the reader kind are
// left to the long suites: with -short every kind but plain; otherwise the
// one-byte kinds (a million reads each under the race detector) in the
// default run. The one-byte kinds meet the limits on small inputs with
// small limits in fuzzConfigs' seeds.
func slowReader(kind string) bool {
	if testing.Short() {
		return kind != "plain"
	}
	return !longtest.Enabled() && strings.HasPrefix(kind, "onebyte")
}

// countingReader counts the bytes handed out by the underlying reader.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// endless yields the same byte forever.
type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

var errBoom = errors.New("boom")

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errBoom }
