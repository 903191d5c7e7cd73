package detcbor

import (
	"errors"
	"math"
	"testing"

	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

// Heads at every width boundary decode to what was written, match the
// reference encoder byte for byte, and use the shortest form.
func TestHeadRoundTrip(t *testing.T) {
	for _, n := range []uint64{0, 23, 24, 255, 256, math.MaxUint16, math.MaxUint16 + 1, math.MaxUint32, math.MaxUint32 + 1, math.MaxUint64} {
		for _, major := range []byte{MajorUint, MajorNint, MajorBytes, MajorText, MajorArray, MajorMap, MajorTag} {
			b := AppendHead(nil, major, n)
			m, got, next, err := ReadHead(b, 0)
			require.NoError(t, err)
			require.Equal(t, major, m)
			require.Equal(t, n, got)
			require.Equal(t, len(b), next)
		}
		want, err := cbor.Marshal(n)
		require.NoError(t, err)
		require.Equal(t, want, AppendUint(nil, n), "uint %d", n)
	}
	for _, v := range []int64{0, -1, -24, -25, math.MinInt64, math.MaxInt64} {
		want, err := cbor.Marshal(v)
		require.NoError(t, err)
		require.Equal(t, want, AppendInt(nil, v), "int %d", v)
		got, err := NewReader(want).Int()
		require.NoError(t, err)
		require.Equal(t, v, got)
	}
}

func TestReadHeadRejects(t *testing.T) {
	for _, c := range []struct {
		in     []byte
		err    error
		offset int
	}{
		{nil, ErrTruncated, 0},
		{[]byte{0x18}, ErrTruncated, 1},
		{[]byte{0x19, 0x01}, ErrTruncated, 2},
		{[]byte{0x18, 0x17}, ErrNonShortest, 0},
		{[]byte{0x19, 0x00, 0xff}, ErrNonShortest, 0},
		{[]byte{0x1a, 0x00, 0x00, 0xff, 0xff}, ErrNonShortest, 0},
		{[]byte{0x1b, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}, ErrNonShortest, 0},
		{[]byte{0x5f}, ErrIndefinite, 0},
		{[]byte{0x1c}, ErrReserved, 0},
	} {
		_, _, _, err := ReadHead(c.in, 0)
		require.ErrorIs(t, err, c.err, "% x", c.in)
		var e *Error
		require.True(t, errors.As(err, &e))
		require.Equal(t, c.offset, e.Offset, "% x", c.in)
	}
	// Float bits are not lengths: a half-width float is not "non-shortest".
	_, _, _, err := ReadHead([]byte{0xf9, 0x00, 0x01}, 0)
	require.NoError(t, err)
}

func TestReaderOffsetsAndTypes(t *testing.T) {
	b := AppendHead(nil, MajorArray, 3)
	b = AppendText(b, "ab")
	b = AppendBytes(b, []byte{1, 2, 3})
	b = append(b, Null)
	r := NewReader(b)
	require.NoError(t, r.Array(3))
	_, err := r.Uint()
	require.ErrorIs(t, err, ErrType)
	require.Equal(t, 1, r.Offset(), "a failed read consumes nothing")
	s, err := r.Text()
	require.NoError(t, err)
	require.Equal(t, "ab", s)
	p, err := r.Raw(MajorBytes)
	require.NoError(t, err)
	require.Equal(t, []byte{1, 2, 3}, p)
	require.True(t, r.Null())
	require.Zero(t, r.Len())

	// A string longer than the data is truncation, reported at the end.
	_, err = NewReader([]byte{0x45, 1, 2}).Raw(MajorBytes)
	var e *Error
	require.True(t, errors.As(err, &e))
	require.ErrorIs(t, err, ErrTruncated)
	require.Equal(t, 3, e.Offset)
	require.EqualError(t, err, "unexpected end of data at byte 3")

	err = NewReader(AppendHead(nil, MajorArray, 2)).Array(3)
	require.ErrorIs(t, err, ErrLength)
	_, err = NewReader(AppendHead(nil, MajorNint, math.MaxUint64)).Int()
	require.ErrorIs(t, err, ErrRange)
}

// Any input: ReadHead never panics, and what it accepts re-encodes to the
// same bytes (one encoding per head).
func FuzzReadHead(f *testing.F) {
	f.Add([]byte{0x18, 0x18})
	f.Add([]byte{0x9b, 0, 0, 0, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		major, n, next, err := ReadHead(b, 0)
		if err != nil {
			return
		}
		if major == MajorSimple {
			return
		}
		if got := AppendHead(nil, major, n); string(got) != string(b[:next]) {
			t.Fatalf("% x re-encodes as % x", b[:next], got)
		}
	})
}
