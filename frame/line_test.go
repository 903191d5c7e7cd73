package frame

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readAllLines reads until an error, copying each line because the reader
// reuses its buffers.
func readAllLines(t *testing.T, r *LineReader) ([]string, error) {
	t.Helper()
	var lines []string
	for {
		l, err := r.Next()
		if err != nil {
			return lines, err
		}
		lines = append(lines, string(l))
	}
}

func TestLineReader(t *testing.T) {
	atLimit := strings.Repeat("a", MaxRequestSize)
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr error // io.EOF for a clean end
	}{
		{name: "empty input", in: "", wantErr: io.EOF},
		{name: "one line", in: "{\"id\":1}\n", want: []string{`{"id":1}`}, wantErr: io.EOF},
		{name: "several lines", in: "a\nb\nc\n", want: []string{"a", "b", "c"}, wantErr: io.EOF},
		{name: "crlf", in: "a\r\nb\r\n", want: []string{"a", "b"}, wantErr: io.EOF},
		{name: "only one cr stripped", in: "a\r\r\n", want: []string{"a\r"}, wantErr: io.EOF},
		{name: "inner cr kept", in: "a\rb\n", want: []string{"a\rb"}, wantErr: io.EOF},
		{name: "final line without newline", in: "a\nb", want: []string{"a", "b"}, wantErr: io.EOF},
		{name: "final line cr without newline", in: "a\r", want: []string{"a"}, wantErr: io.EOF},
		{
			name:    "blank lines skipped",
			in:      "\n\n \n\t\n\r\n \t\v\f\r\n{}\n\n",
			want:    []string{"{}"},
			wantErr: io.EOF,
		},
		{name: "only blank lines", in: "\n \n\r\n\t", wantErr: io.EOF},
		{name: "whitespace final line", in: "a\n  \r", want: []string{"a"}, wantErr: io.EOF},
		{name: "surrounding spaces kept", in: "  {} \t\n", want: []string{"  {} \t"}, wantErr: io.EOF},
		{name: "non-ascii space is not blank", in: "\u00a0\n", want: []string{"\u00a0"}, wantErr: io.EOF},
		{name: "nul and invalid utf8 pass through", in: "\x00\xff\n", want: []string{"\x00\xff"}, wantErr: io.EOF},
		{
			name:    "long line then short",
			in:      strings.Repeat("x", 10_000) + "\ny\n",
			want:    []string{strings.Repeat("x", 10_000), "y"},
			wantErr: io.EOF,
		},
		{
			name:    "long crlf line",
			in:      strings.Repeat("x", 4095) + "\r\n" + strings.Repeat("z", 8191) + "\r",
			want:    []string{strings.Repeat("x", 4095), strings.Repeat("z", 8191)},
			wantErr: io.EOF,
		},
		{name: "exactly the limit", in: atLimit + "\n", want: []string{atLimit}, wantErr: io.EOF},
		{name: "exactly the limit at EOF", in: atLimit, want: []string{atLimit}, wantErr: io.EOF},
		{name: "exactly the limit twice", in: atLimit + "\n" + atLimit + "\n", want: []string{atLimit, atLimit}, wantErr: io.EOF},
		{name: "limit plus one", in: atLimit + "a\n", wantErr: ErrLineTooLarge},
		{name: "limit plus one at EOF", in: atLimit + "a", wantErr: ErrLineTooLarge},
		// The limit counts every byte before '\n', a trailing '\r' included.
		{name: "limit plus cr", in: atLimit + "\r\n", wantErr: ErrLineTooLarge},
		{name: "limit minus one plus cr", in: atLimit[1:] + "\r\n", want: []string{atLimit[1:]}, wantErr: io.EOF},
		{name: "blank line over the limit", in: strings.Repeat(" ", MaxRequestSize+1) + "\n", wantErr: ErrLineTooLarge},
		{
			name:    "too large after good line",
			in:      "{}\n" + atLimit + "a\n{}\n",
			want:    []string{"{}"},
			wantErr: ErrLineTooLarge,
		},
	}
	for _, tc := range tests {
		for _, rk := range readerKinds {
			t.Run(tc.name+"/"+rk.name, func(t *testing.T) {
				if len(tc.in) > 1<<16 && slowReader(rk.name) {
					t.Skip("large input with slow reader")
				}
				r := NewLineReader(rk.wrap([]byte(tc.in)))
				got, err := readAllLines(t, r)
				require.Equal(t, len(tc.want), len(got), "line count")
				for i := range tc.want {
					require.Equal(t, len(tc.want[i]), len(got[i]), "line %d len", i)
					require.True(t, tc.want[i] == got[i], "line %d: %q", i, truncate(got[i]))
				}
				if tc.wantErr == io.EOF {
					require.Equal(t, io.EOF, err, "clean end must be io.EOF itself")
				} else {
					require.ErrorIs(t, err, tc.wantErr)
				}
				_, again := r.Next()
				assert.Equal(t, err, again)
			})
		}
	}
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

func TestLineReaderErrorMessage(t *testing.T) {
	_, err := NewLineReader(strings.NewReader(strings.Repeat("a", MaxRequestSize+1))).Next()
	require.ErrorIs(t, err, ErrLineTooLarge)
	assert.Contains(t, err.Error(), "request line exceeds maximum size")
	assert.Equal(t, "request line exceeds maximum size", ErrLineTooLarge.Error())
}

func TestLineReaderIOError(t *testing.T) {
	tests := []struct {
		name string
		r    io.Reader
	}{
		{"at start", iotest.ErrReader(errBoom)},
		{"mid line", io.MultiReader(strings.NewReader("{\"a\":"), iotest.ErrReader(errBoom))},
		{"mid long line", io.MultiReader(strings.NewReader(strings.Repeat("x", 9000)), iotest.ErrReader(errBoom))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewLineReader(tc.r).Next()
			require.ErrorIs(t, err, errBoom)
			assert.NotErrorIs(t, err, io.EOF)
		})
	}
}

// A hostile endless line must be rejected once it passes the limit, having
// consumed at most the limit plus one bufio buffer.
func TestLineReaderHugeLineBoundedRead(t *testing.T) {
	for _, c := range []byte{'a', ' '} {
		t.Run(fmt.Sprintf("%q", c), func(t *testing.T) {
			cr := &countingReader{r: endless(c)}
			r := NewLineReader(cr)
			_, err := r.Next()
			require.ErrorIs(t, err, ErrLineTooLarge)
			assert.LessOrEqual(t, cr.n, int64(MaxRequestSize+defaultBufSize))
			assert.LessOrEqual(t, cap(r.buf), MaxRequestSize)
		})
	}
}

func TestLineReaderReusesBuffer(t *testing.T) {
	for _, n := range []int{200, 10_000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			line := append(rep('x', n), '\n')
			r := NewLineReader(bytes.NewReader(bytes.Repeat(line, 110)))
			_, err := r.Next()
			require.NoError(t, err)
			allocs := testing.AllocsPerRun(100, func() {
				if _, err := r.Next(); err != nil {
					panic(err)
				}
			})
			assert.Zero(t, allocs)
		})
	}
}

func TestLineWriter(t *testing.T) {
	tests := []struct {
		name string
		line string
	}{
		{"json", `{"id":1,"result":null}`},
		{"empty", ""},
		{"larger than bufio buffer", strings.Repeat("r", 9000)},
		{"larger than request limit", strings.Repeat("r", MaxRequestSize+1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, NewLineWriter(&out).Write([]byte(tc.line)))
			require.True(t, tc.line+"\n" == out.String())
		})
	}
}

func TestLineWriterRejectsNewline(t *testing.T) {
	var out bytes.Buffer
	err := NewLineWriter(&out).Write([]byte("{\n}"))
	require.ErrorIs(t, err, ErrNewlineInLine)
	assert.Zero(t, out.Len())
}

func TestLineWriterError(t *testing.T) {
	err := NewLineWriter(failWriter{}).Write([]byte("{}"))
	require.ErrorIs(t, err, errBoom)
}

func TestLineRoundTrip(t *testing.T) {
	lines := []string{`{"id":1}`, `{"id":2,"s":"a\nb"}`, strings.Repeat("z", 70_000), `{}`}
	var buf bytes.Buffer
	w := NewLineWriter(&buf)
	for _, l := range lines {
		require.NoError(t, w.Write([]byte(l)))
	}
	for _, rk := range readerKinds {
		t.Run(rk.name, func(t *testing.T) {
			got, err := readAllLines(t, NewLineReader(rk.wrap(buf.Bytes())))
			require.Equal(t, io.EOF, err)
			require.Equal(t, lines, got)
		})
	}
}

func TestLineWriterConcurrent(t *testing.T) {
	var buf bytes.Buffer
	w := NewLineWriter(&buf)
	const goroutines, perG = 8, 50
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				l := fmt.Appendf(nil, `{"g":%d,"i":%d,"pad":"%s"}`, g, i, rep(byte('a'+g), 3000+i))
				if err := w.Write(l); err != nil {
					panic(err)
				}
			}
		})
	}
	wg.Wait()
	got, err := readAllLines(t, NewLineReader(&buf))
	require.Equal(t, io.EOF, err)
	require.Len(t, got, goroutines*perG)
	for _, l := range got {
		var g, i int
		_, serr := fmt.Sscanf(l, `{"g":%d,"i":%d,`, &g, &i)
		require.NoError(t, serr)
		require.Equal(t, fmt.Sprintf(`{"g":%d,"i":%d,"pad":"%s"}`, g, i, rep(byte('a'+g), 3000+i)), l)
	}
}
