package frame

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readAllFrames reads until an error, copying each frame because the reader
// reuses its buffer.
func readAllFrames(t *testing.T, r *BinaryReader) ([]Frame, error) {
	t.Helper()
	var frames []Frame
	for {
		f, err := r.Next()
		if err != nil {
			return frames, err
		}
		frames = append(frames, Frame{
			Header:  append([]byte{}, f.Header...),
			Payload: append([]byte{}, f.Payload...),
		})
	}
}

func TestBinaryReader(t *testing.T) {
	hdr := []byte(`{"id":1,"method":"run"}`)
	pay := []byte("\x00\x01payload\xff")
	big := MaxRequestSize - 100

	tests := []struct {
		name    string
		in      []byte
		want    []Frame
		wantErr error // io.EOF for a clean end
	}{
		{name: "empty input", in: nil, wantErr: io.EOF},
		{name: "one frame", in: encode(hdr, pay), want: []Frame{{hdr, pay}}, wantErr: io.EOF},
		{
			name:    "back to back",
			in:      concat(encode(hdr, pay), encode([]byte("{}"), nil), encode(hdr, []byte("x"))),
			want:    []Frame{{hdr, pay}, {[]byte("{}"), []byte{}}, {hdr, []byte("x")}},
			wantErr: io.EOF,
		},
		{name: "zero header and payload", in: prefix(0, 0), want: []Frame{{[]byte{}, []byte{}}}, wantErr: io.EOF},
		{name: "zero header", in: encode(nil, pay), want: []Frame{{[]byte{}, pay}}, wantErr: io.EOF},
		{name: "zero payload", in: encode(hdr, nil), want: []Frame{{hdr, []byte{}}}, wantErr: io.EOF},
		{
			name:    "exactly the limit",
			in:      encode(rep('h', 100), rep('p', big)),
			want:    []Frame{{rep('h', 100), rep('p', big)}},
			wantErr: io.EOF,
		},
		{
			name:    "header alone at the limit",
			in:      encode(rep('h', MaxRequestSize), nil),
			want:    []Frame{{rep('h', MaxRequestSize), []byte{}}},
			wantErr: io.EOF,
		},
		{name: "limit plus one", in: encode(rep('h', 101), rep('p', big)), wantErr: ErrFrameTooLarge},
		{name: "header alone limit plus one", in: prefix(MaxRequestSize+1, 0), wantErr: ErrFrameTooLarge},
		{name: "payload alone limit plus one", in: prefix(0, MaxRequestSize+1), wantErr: ErrFrameTooLarge},
		{name: "u32 sum overflow", in: prefix(math.MaxUint32, 1), wantErr: ErrFrameTooLarge},
		{name: "u32 sum overflow reversed", in: prefix(1, math.MaxUint32), wantErr: ErrFrameTooLarge},
		{name: "both max", in: prefix(math.MaxUint32, math.MaxUint32), wantErr: ErrFrameTooLarge},
		{
			name:    "too large after good frame",
			in:      concat(encode(hdr, pay), prefix(MaxRequestSize, 1)),
			want:    []Frame{{hdr, pay}},
			wantErr: ErrFrameTooLarge,
		},
		{name: "truncated prefix 1 byte", in: []byte{5}, wantErr: ErrTruncated},
		{name: "truncated prefix 7 bytes", in: prefix(1, 1)[:7], wantErr: ErrTruncated},
		{name: "truncated header", in: encode(hdr, pay)[:prefixLen+3], wantErr: ErrTruncated},
		{name: "truncated before header", in: prefix(4, 0), wantErr: ErrTruncated},
		{name: "truncated payload", in: encode(hdr, pay)[:prefixLen+len(hdr)+2], wantErr: ErrTruncated},
		{name: "truncated before payload", in: encode(hdr, pay)[:prefixLen+len(hdr)], wantErr: ErrTruncated},
		{
			name:    "truncated after good frame",
			in:      concat(encode(hdr, pay), []byte{1, 0, 0}),
			want:    []Frame{{hdr, pay}},
			wantErr: ErrTruncated,
		},
	}
	for _, tc := range tests {
		for _, rk := range readerKinds {
			t.Run(tc.name+"/"+rk.name, func(t *testing.T) {
				if len(tc.in) > 1<<16 && slowReader(rk.name) {
					t.Skip("large input with slow reader")
				}
				r := NewBinaryReader(rk.wrap(tc.in))
				got, err := readAllFrames(t, r)
				require.Equal(t, len(tc.want), len(got), "frame count")
				for i := range tc.want {
					// Compare lengths first so a failure does not print 1 MiB.
					require.Equal(t, len(tc.want[i].Header), len(got[i].Header), "frame %d header len", i)
					require.Equal(t, len(tc.want[i].Payload), len(got[i].Payload), "frame %d payload len", i)
					require.True(t, bytes.Equal(tc.want[i].Header, got[i].Header), "frame %d header", i)
					require.True(t, bytes.Equal(tc.want[i].Payload, got[i].Payload), "frame %d payload", i)
				}
				if tc.wantErr == io.EOF {
					require.Equal(t, io.EOF, err, "clean end must be io.EOF itself")
				} else {
					require.ErrorIs(t, err, tc.wantErr)
				}
				// Errors are sticky.
				_, again := r.Next()
				assert.Equal(t, err, again)
			})
		}
	}
}

func TestBinaryReaderErrorMessages(t *testing.T) {
	_, err := NewBinaryReader(bytes.NewReader(prefix(math.MaxUint32, 1))).Next()
	require.ErrorIs(t, err, ErrFrameTooLarge)
	assert.Contains(t, err.Error(), "request frame exceeds maximum size")

	_, err = NewBinaryReader(bytes.NewReader([]byte{1, 2, 3})).Next()
	require.ErrorIs(t, err, ErrTruncated)
	assert.Regexp(t, `^invalid request header: truncated frame`, err.Error())

	_, err = NewBinaryReader(bytes.NewReader(prefix(10, 10)[:8])).Next()
	require.ErrorIs(t, err, ErrTruncated)
	assert.Regexp(t, `^invalid request header: `, err.Error())

	assert.Equal(t, "request frame exceeds maximum size", ErrFrameTooLarge.Error())
	assert.Equal(t, "invalid request header: truncated frame", ErrTruncated.Error())
}

func TestBinaryReaderIOError(t *testing.T) {
	tests := []struct {
		name string
		r    io.Reader
	}{
		{"at start", iotest.ErrReader(errBoom)},
		{"in prefix", io.MultiReader(bytes.NewReader([]byte{1, 2}), iotest.ErrReader(errBoom))},
		{"in body", io.MultiReader(bytes.NewReader(prefix(4, 4)), iotest.ErrReader(errBoom))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewBinaryReader(tc.r).Next()
			require.ErrorIs(t, err, errBoom)
			assert.NotErrorIs(t, err, ErrTruncated)
			assert.NotErrorIs(t, err, io.EOF)
		})
	}
}

// An oversized frame must be rejected from its prefix: no body is read
// beyond what bufio prefetches, and no body buffer is allocated.
func TestBinaryReaderTooLargeDoesNotReadBody(t *testing.T) {
	cr := &countingReader{r: io.MultiReader(bytes.NewReader(prefix(MaxRequestSize, 1)), endless('x'))}
	r := NewBinaryReader(cr)
	_, err := r.Next()
	require.ErrorIs(t, err, ErrFrameTooLarge)
	assert.LessOrEqual(t, cr.n, int64(defaultBufSize))
	assert.Zero(t, cap(r.buf))
}

func TestBinaryReaderHeaderDoesNotAliasPayload(t *testing.T) {
	r := NewBinaryReader(bytes.NewReader(encode([]byte("ab"), []byte("cd"))))
	f, err := r.Next()
	require.NoError(t, err)
	_ = append(f.Header, 'X')
	assert.Equal(t, []byte("cd"), f.Payload)
}

func TestBinaryReaderReusesBuffer(t *testing.T) {
	frame := encode(rep('h', 200), rep('p', 300))
	r := NewBinaryReader(bytes.NewReader(bytes.Repeat(frame, 110)))
	_, err := r.Next()
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := r.Next(); err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
}

func TestBinaryReaderNextOwned(t *testing.T) {
	r := NewBinaryReader(bytes.NewReader(concat(encode([]byte("ab"), []byte("cd")), encode([]byte("ef"), []byte("gh")), encode([]byte("ij"), nil))))
	first, err := r.NextOwned()
	require.NoError(t, err)
	_ = append(first.Header, 'X')
	// Neither a later owned frame nor a shared one reuses its memory.
	second, err := r.NextOwned()
	require.NoError(t, err)
	third, err := r.Next()
	require.NoError(t, err)
	assert.Equal(t, []byte("ab"), first.Header)
	assert.Equal(t, []byte("cd"), first.Payload)
	assert.Equal(t, []byte("ef"), second.Header)
	assert.Equal(t, []byte("gh"), second.Payload)
	assert.Equal(t, []byte("ij"), third.Header)
	_, err = r.NextOwned()
	assert.Equal(t, io.EOF, err)
}

func TestBinaryReaderNextInto(t *testing.T) {
	r := NewBinaryReader(bytes.NewReader(concat(
		encode([]byte("ab"), []byte("cd")),
		encode([]byte("efgh"), nil),
		encode(rep('h', 100), []byte("ij")),
		encode(nil, nil))))
	dst := make([]byte, 0, 8)
	first, err := r.NextInto(dst)
	require.NoError(t, err)
	assert.Equal(t, []byte("ab"), first.Header)
	assert.Equal(t, []byte("cd"), first.Payload)
	assert.Same(t, &dst[:1][0], &first.Header[0], "a header that fits is read into dst")
	assert.Equal(t, 8, cap(first.Header), "the header keeps its buffer's capacity")

	// The buffer handed back is read into again; the payload kept is not.
	second, err := r.NextInto(first.Header)
	require.NoError(t, err)
	assert.Equal(t, []byte("efgh"), second.Header)
	assert.Same(t, &dst[:1][0], &second.Header[0])
	assert.NotNil(t, second.Payload)
	assert.Empty(t, second.Payload)
	assert.Equal(t, []byte("cd"), first.Payload)

	// A header larger than dst gets a buffer of its own.
	third, err := r.NextInto(second.Header)
	require.NoError(t, err)
	assert.Equal(t, rep('h', 100), third.Header)
	assert.Equal(t, []byte("ij"), third.Payload)
	assert.Equal(t, []byte("efgh"), dst[:4], "dst is left as it was")
	assert.GreaterOrEqual(t, cap(third.Header), 100)

	fourth, err := r.NextInto(nil)
	require.NoError(t, err)
	assert.Empty(t, fourth.Header)
	assert.Empty(t, fourth.Payload)
	_, err = r.NextInto(third.Header)
	assert.Equal(t, io.EOF, err)
}

func TestBinaryReaderNextIntoKeepsWhatFailed(t *testing.T) {
	in := concat(encode([]byte("ab"), []byte("cd")), encode([]byte("header"), []byte("payload")))
	for cut := len(encode([]byte("ab"), []byte("cd"))) + prefixLen; cut < len(in); cut++ {
		r := NewBinaryReader(bytes.NewReader(in[:cut]))
		_, err := r.NextInto(nil)
		require.NoError(t, err)
		_, err = r.NextInto(make([]byte, 0, 64))
		require.ErrorIs(t, err, ErrTruncated, "cut at %d", cut)
		assert.Equal(t, in[len(encode([]byte("ab"), []byte("cd"))):cut], r.Partial(), "cut at %d", cut)
	}
}

func TestBinaryReaderBufferCappedAtLimit(t *testing.T) {
	in := concat(encode(nil, rep('a', 600_000)), encode(nil, rep('b', MaxRequestSize)))
	r := NewBinaryReader(bytes.NewReader(in))
	for range 2 {
		_, err := r.Next()
		require.NoError(t, err)
	}
	assert.LessOrEqual(t, cap(r.buf), MaxRequestSize)
}

func TestBinaryWriter(t *testing.T) {
	tests := []struct {
		name            string
		header, payload []byte
	}{
		{"both", []byte(`{"id":1}`), []byte("data")},
		{"empty", nil, nil},
		{"header only", []byte(`{}`), nil},
		{"payload only", nil, []byte{0, 1, 2}},
		{"larger than bufio buffer", rep('h', 5000), rep('p', 9000)},
		// Responses are not size limited.
		{"larger than request limit", []byte(`{}`), rep('p', MaxRequestSize+1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			w := NewBinaryWriter(&out)
			require.NoError(t, w.Write(tc.header, tc.payload))
			// Flushed: everything is visible without further calls.
			require.True(t, bytes.Equal(encode(tc.header, tc.payload), out.Bytes()))
		})
	}
}

func TestBinaryRoundTrip(t *testing.T) {
	frames := []Frame{
		{[]byte(`{"id":1}`), []byte("a")},
		{[]byte{}, []byte{}},
		{rep('h', 5000), rep('p', 70_000)},
		{[]byte(`{"id":2}`), []byte{}},
	}
	var buf bytes.Buffer
	w := NewBinaryWriter(&buf)
	for _, f := range frames {
		require.NoError(t, w.Write(f.Header, f.Payload))
	}
	for _, rk := range readerKinds {
		t.Run(rk.name, func(t *testing.T) {
			got, err := readAllFrames(t, NewBinaryReader(rk.wrap(buf.Bytes())))
			require.Equal(t, io.EOF, err)
			require.Equal(t, frames, got)
		})
	}
}

func TestBinaryWriterError(t *testing.T) {
	err := NewBinaryWriter(failWriter{}).Write([]byte("{}"), nil)
	require.ErrorIs(t, err, errBoom)
}

func TestPartLen(t *testing.T) {
	n, err := partLen("header", math.MaxUint32)
	require.NoError(t, err)
	assert.Equal(t, uint32(math.MaxUint32), n)
	if strconv.IntSize == 32 {
		t.Skip("int cannot exceed 4 GiB")
	}
	big := math.MaxUint32
	_, err = partLen("header", big+1)
	require.ErrorIs(t, err, ErrResponseTooLarge)
	assert.Contains(t, err.Error(), "header")
}

// Concurrent writers must not interleave frames.
func TestBinaryWriterConcurrent(t *testing.T) {
	var buf bytes.Buffer
	w := NewBinaryWriter(&buf)
	const goroutines, perG = 8, 50
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				h := fmt.Appendf(nil, `{"g":%d,"i":%d}`, g, i)
				if err := w.Write(h, rep(byte('a'+g), 3000+i)); err != nil {
					panic(err)
				}
			}
		})
	}
	wg.Wait()
	got, err := readAllFrames(t, NewBinaryReader(&buf))
	require.Equal(t, io.EOF, err)
	require.Len(t, got, goroutines*perG)
	for _, f := range got {
		var g, i int
		_, serr := fmt.Sscanf(string(f.Header), `{"g":%d,"i":%d}`, &g, &i)
		require.NoError(t, serr)
		require.True(t, bytes.Equal(rep(byte('a'+g), 3000+i), f.Payload))
	}
}

func TestErrorsDistinct(t *testing.T) {
	all := []error{ErrFrameTooLarge, ErrLineTooLarge, ErrTruncated, ErrResponseTooLarge, ErrNewlineInLine}
	for i, a := range all {
		for j, b := range all {
			assert.Equal(t, i == j, errors.Is(a, b), "%v vs %v", a, b)
		}
	}
}
