package frame

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sync"
)

// LineReader reads '\n'-terminated lines (JSONL).
type LineReader struct {
	br     *bufio.Reader
	limit  int
	buf    []byte // accumulates lines longer than the bufio buffer; reused
	err    error  // sticky, as for BinaryReader
	failed []byte // the start of the line that failed, as far as it was read
}

// NewLineReader returns a reader of lines from r.
func NewLineReader(r io.Reader) *LineReader {
	return newLineReader(r, defaultBufSize, MaxRequestSize)
}

// newLineReader lets tests shrink the buffer and the limit so that fuzzing
// can reach the size checks with small inputs.
func newLineReader(r io.Reader, bufSize, limit int) *LineReader {
	return &LineReader{br: bufio.NewReaderSize(r, bufSize), limit: limit}
}

// Next returns the next non-blank line, without its '\n' and without one
// trailing '\r'. Lines made only of ASCII whitespace (space, \t, \r, \v, \f)
// are skipped. A final line not terminated by '\n' is returned as a line.
//
// The returned slice may alias internal buffers and is only valid until the
// next call to Next.
//
// The limit applies to the bytes before '\n', including any '\r'. A longer
// line yields an error wrapping ErrLineTooLarge as soon as the excess is
// seen, without reading the rest of it, so at most the limit plus the bufio
// buffer is ever held. Next returns io.EOF once the input is exhausted.
// After any error, Next returns the same error again.
func (r *LineReader) Next() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	for {
		line, err := r.readLine()
		if err != nil {
			r.err = err
			return nil, err
		}
		if !isBlank(line) {
			return line, nil
		}
	}
}

// Partial returns, after Next failed, the start of the line it failed on,
// as far as it was read (a line over the limit: its first limit+1 bytes),
// for a recording of the session.
func (r *LineReader) Partial() []byte { return r.failed }

// tooLarge records the first limit+1 bytes of a line over the limit.
func (r *LineReader) tooLarge(avail []byte) error {
	r.failed = append([]byte(nil), r.buf...)
	r.failed = append(r.failed, avail[:min(len(avail), r.limit+1-len(r.failed))]...)
	return fmt.Errorf("%w: more than %d bytes", ErrLineTooLarge, r.limit)
}

// readLine returns one line with '\n' and a trailing '\r' removed. It looks
// at whatever is buffered after every read, so a line over the limit fails
// as soon as its excess has arrived, even if the host then stops writing.
func (r *LineReader) readLine() ([]byte, error) {
	r.buf = r.buf[:0]
	for {
		if _, err := r.br.Peek(1); err != nil {
			if err != io.EOF {
				return nil, fmt.Errorf("read request: %w", err)
			}
			if len(r.buf) == 0 {
				return nil, io.EOF
			}
			// A partial last line at EOF is still a line.
			return trimCR(r.buf), nil
		}
		avail, _ := r.br.Peek(r.br.Buffered())
		if i := bytes.IndexByte(avail, '\n'); i >= 0 {
			if len(r.buf)+i > r.limit {
				return nil, r.tooLarge(avail)
			}
			line := avail[:i]
			if len(r.buf) > 0 {
				n := len(r.buf)
				r.buf = grow(r.buf, n+i, r.limit)
				copy(r.buf[n:], line)
				line = r.buf
			}
			// Common case: the line fit in bufio's buffer and is returned
			// without a copy; it stays valid until the next read.
			_, _ = r.br.Discard(i + 1)
			return trimCR(line), nil
		}
		if len(r.buf)+len(avail) > r.limit {
			return nil, r.tooLarge(avail)
		}
		n := len(r.buf)
		r.buf = grow(r.buf, n+len(avail), r.limit)
		copy(r.buf[n:], avail)
		_, _ = r.br.Discard(len(avail))
	}
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

func isBlank(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\v', '\f':
		default:
			return false
		}
	}
	return true
}

// LineWriter writes '\n'-terminated lines (JSONL). It is safe for concurrent
// use: each Write emits one whole line.
type LineWriter struct {
	mu      sync.Mutex
	w       io.Writer
	scratch []byte // a line assembled for one write
}

// NewLineWriter returns a writer of lines to w.
func NewLineWriter(w io.Writer) *LineWriter {
	return &LineWriter{w: w}
}

// Write writes line followed by '\n' and flushes. A line containing '\n' is
// rejected with ErrNewlineInLine because the reader would see several lines.
func (w *LineWriter) Write(line []byte) error {
	if bytes.IndexByte(line, '\n') >= 0 {
		return ErrNewlineInLine
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := writeWhole(w.w, &w.scratch, line, newline); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	return nil
}

var newline = []byte{'\n'}
