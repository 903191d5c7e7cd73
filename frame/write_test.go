package frame

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeCounter records each Write it gets.
type writeCounter struct {
	bytes.Buffer
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// A response up to maxCoalesce reaches the OS in one write, so a host
// blocked reading it wakes once; a larger one in two, not copied. Either
// way the bytes are the frame or the line.
func TestWritersWriteWholeResponses(t *testing.T) {
	for _, c := range []struct {
		header, payload int
		writes          int
	}{
		{10, 0, 1},
		{300, 5000, 1}, // over the old 4 KiB buffer
		{200, maxCoalesce - prefixLen - 200, 1},
		{200, maxCoalesce - prefixLen - 199, 2},
		{100, 3 << 20, 2},
	} {
		header := bytes.Repeat([]byte("h"), c.header)
		payload := bytes.Repeat([]byte("p"), c.payload)
		var out writeCounter
		w := NewBinaryWriter(&out)
		require.NoError(t, w.Write(header, payload))
		require.Equal(t, c.writes, out.writes, "binary %d+%d", c.header, c.payload)
		require.Equal(t, Encode(header, payload), out.Bytes())
	}
	for _, c := range []struct{ n, writes int }{{10, 1}, {5000, 1}, {maxCoalesce - 1, 1}, {maxCoalesce, 2}} {
		line := bytes.Repeat([]byte("l"), c.n)
		var out writeCounter
		w := NewLineWriter(&out)
		require.NoError(t, w.Write(line))
		require.Equal(t, c.writes, out.writes, "line %d", c.n)
		require.Equal(t, append(line, '\n'), out.Bytes())
	}
}

// Append writes a frame into the memory it is given when it fits, the
// bytes Encode makes, and after what the slice already holds.
func TestAppendIntoGivenMemory(t *testing.T) {
	header, payload := []byte(`{"id":1}`), bytes.Repeat([]byte("p"), 300)
	want := []byte{8, 0, 0, 0, 44, 1, 0, 0}
	want = append(append(want, header...), payload...)
	require.Equal(t, want, Encode(header, payload))
	require.Equal(t, len(want), Size(header, payload))
	dst := make([]byte, len(want))
	out := Append(dst[:0], header, payload)
	require.Equal(t, want, out)
	require.Equal(t, &dst[0], &out[0], "written in place")
	require.Equal(t, append([]byte("x"), want...), Append([]byte("x"), header, payload))
}
