// Package frame reads requests from and writes responses to the host stream.
//
// Two transports exist. Binary (the default) frames each message as
//
//	u32 LE header_len | u32 LE payload_len | header | payload
//
// and JSONL puts one message per '\n'-terminated line. The package only
// moves bytes: it knows nothing about the JSON inside headers or lines.
//
// Requests are limited to MaxRequestSize. Exceeding the limit, or a stream
// that ends in the middle of a frame, is fatal: the reader returns an error
// and keeps returning it, because the stream position can no longer be
// trusted. Responses are not size limited.
package frame

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// MaxRequestSize is the largest request accepted: header_len + payload_len
// for binary frames, the bytes before '\n' for JSONL lines.
const MaxRequestSize = wire.MaxRequestBytes

// prefixLen is the size of the binary length prefix.
const prefixLen = 8

// defaultBufSize is the bufio buffer size used by readers.
const defaultBufSize = 4096

// maxCoalesce is the largest response the writers assemble in memory and
// hand the OS in one write. Written in pieces, a response of a few KB woke
// a host blocked reading it once per piece: a context switch each, and on a
// machine whose CPUs wake each other slowly, tens of microseconds each.
// Larger responses are written in two pieces (prefix and header, then
// payload; or the line, then its newline) rather than copied.
const maxCoalesce = 256 << 10

// writeWhole writes bufs to w, in one write when together they fit in
// maxCoalesce (assembled in *scratch), else one write each.
func writeWhole(w io.Writer, scratch *[]byte, bufs ...[]byte) error {
	n := 0
	for _, b := range bufs {
		n += len(b)
	}
	if n <= maxCoalesce {
		out := (*scratch)[:0]
		for _, b := range bufs {
			out = append(out, b...)
		}
		*scratch = out
		_, err := w.Write(out)
		return err
	}
	for _, b := range bufs {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

var (
	// ErrFrameTooLarge reports a binary frame whose declared
	// header_len + payload_len exceeds MaxRequestSize.
	ErrFrameTooLarge = errors.New("request frame exceeds maximum size")

	// ErrLineTooLarge reports a JSONL line longer than MaxRequestSize.
	ErrLineTooLarge = errors.New("request line exceeds maximum size")

	// ErrTruncated reports a stream that ended inside a binary frame.
	ErrTruncated = errors.New("invalid request header: truncated frame")

	// ErrResponseTooLarge reports a binary response part whose length does
	// not fit the u32 length field.
	ErrResponseTooLarge = errors.New("response part exceeds u32 length")

	// ErrNewlineInLine reports a JSONL response containing '\n', which
	// would split it into several lines on the wire.
	ErrNewlineInLine = errors.New("response line contains a newline")
)

// Frame is one binary message.
type Frame struct {
	Header  []byte
	Payload []byte
}

// grow returns b resized to n bytes, keeping its contents. Capacity is capped
// at limit (n must not exceed it) so that a hostile peer cannot make a reader
// hold more memory than one maximal request.
func grow(b []byte, n, limit int) []byte {
	if n <= cap(b) {
		return b[:n]
	}
	c := 2 * cap(b)
	if c < n {
		c = n
	}
	if c > limit {
		c = limit
	}
	nb := make([]byte, n, c)
	copy(nb, b)
	return nb
}

// partLen converts a response part length to its u32 wire form. Taking an
// int keeps the >4 GiB branch testable without allocating 4 GiB.
func partLen(what string, n int) (uint32, error) {
	if uint64(n) > math.MaxUint32 {
		return 0, fmt.Errorf("%w: %s is %d bytes", ErrResponseTooLarge, what, n)
	}
	return uint32(n), nil
}
