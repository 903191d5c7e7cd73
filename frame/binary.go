package frame

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"sync"
)

// BinaryReader reads length-prefixed binary frames.
type BinaryReader struct {
	br     *bufio.Reader
	limit  int
	prefix [prefixLen]byte
	buf    []byte // holds header and payload back to back; reused across frames
	err    error  // sticky: once framing is lost nothing later can be trusted
	failed []byte // the bytes of the frame that failed, as far as they were read
}

// NewBinaryReader returns a reader of binary frames from r.
func NewBinaryReader(r io.Reader) *BinaryReader {
	return newBinaryReader(r, defaultBufSize, MaxRequestSize)
}

// newBinaryReader lets tests shrink the buffer and the limit so that fuzzing
// can reach the size checks with small inputs.
func newBinaryReader(r io.Reader, bufSize, limit int) *BinaryReader {
	return &BinaryReader{br: bufio.NewReaderSize(r, bufSize), limit: limit}
}

// Next returns the next frame.
//
// Header and Payload alias an internal buffer and are only valid until the
// next call to Next; copy them to keep them. Header has its capacity clipped,
// so appending to it does not overwrite Payload.
//
// Next returns io.EOF when the stream ends exactly at a frame boundary, an
// error wrapping ErrTruncated when it ends inside a frame, and one wrapping
// ErrFrameTooLarge when the declared sizes exceed the limit; the bodies of
// an oversized frame are not read. After any error, Next returns the same
// error again.
func (r *BinaryReader) Next() (Frame, error) { return r.read(intoShared, nil) }

// NextOwned is Next, except that the frame is read into memory of its own,
// which the caller keeps: a server that reads the next request while it
// serves one needs that, and copying a large frame out of the shared
// buffer cost as much as reading it. Header's capacity is clipped as with
// Next.
func (r *BinaryReader) NextOwned() (Frame, error) { return r.read(intoOwn, nil) }

// NextInto is NextOwned, except that the header is read into dst's memory
// when it has room (into a new buffer when it has not): a server that is
// done with a request's header once it has served it hands the buffer back
// for a later request, where a new one for each would take a large
// answer's pages from the allocator every time. The payload is read into
// memory of its own, which the caller keeps. Header's capacity is its
// buffer's, so the header is what to hand back: dst, or the larger buffer
// that took its place.
func (r *BinaryReader) NextInto(dst []byte) (Frame, error) { return r.read(intoDst, dst) }

// Where a frame is read to.
type into int

const (
	intoShared into = iota // r.buf, reused by the next frame
	intoOwn                // memory of its own
	intoDst                // the header into the caller's buffer, the payload into memory of its own
)

func (r *BinaryReader) read(to into, dst []byte) (Frame, error) {
	if r.err != nil {
		return Frame{}, r.err
	}
	f, err := r.next(to, dst)
	if err != nil {
		r.err = err
		return Frame{}, err
	}
	return f, nil
}

// Partial returns, after Next failed, the bytes of the frame it failed
// on, as far as they were read (none for io.EOF): enough to reproduce the
// failure, for a recording of the session.
func (r *BinaryReader) Partial() []byte { return r.failed }

func (r *BinaryReader) next(to into, dst []byte) (Frame, error) {
	n, err := io.ReadFull(r.br, r.prefix[:])
	if err != nil {
		if err == io.EOF {
			return Frame{}, io.EOF
		}
		r.failed = append([]byte(nil), r.prefix[:n]...)
		return Frame{}, readErr(err, "prefix", n, prefixLen)
	}
	hl := binary.LittleEndian.Uint32(r.prefix[0:4])
	pl := binary.LittleEndian.Uint32(r.prefix[4:8])
	// 64-bit sum: two u32 values cannot overflow it, on any platform.
	total := uint64(hl) + uint64(pl)
	if total > uint64(r.limit) {
		r.failed = append([]byte(nil), r.prefix[:]...)
		return Frame{}, fmt.Errorf("%w: header %d + payload %d bytes > %d",
			ErrFrameTooLarge, hl, pl, r.limit)
	}
	if to == intoDst {
		return r.nextInto(dst[:0], int(hl), int(pl))
	}
	var buf []byte
	if to == intoOwn {
		buf = make([]byte, total)
	} else {
		r.buf = grow(r.buf[:0], int(total), r.limit)
		buf = r.buf
	}
	if n, err := io.ReadFull(r.br, buf); err != nil {
		r.failed = append(append([]byte(nil), r.prefix[:]...), buf[:n]...)
		return Frame{}, readErr(err, "body", n, int(total))
	}
	h := int(hl)
	return Frame{Header: buf[:h:h], Payload: buf[h:]}, nil
}

// nextInto reads the header and payload of a frame whose prefix has been
// read: the header into dst, the payload into memory of its own.
func (r *BinaryReader) nextInto(dst []byte, hl, pl int) (Frame, error) {
	header := grow(dst, hl, r.limit)
	var payload []byte
	if pl > 0 {
		payload = make([]byte, pl)
	}
	if n, err := io.ReadFull(r.br, header); err != nil {
		r.failed = append(append([]byte(nil), r.prefix[:]...), header[:n]...)
		return Frame{}, readErr(err, "body", n, hl+pl)
	}
	if n, err := io.ReadFull(r.br, payload); err != nil {
		r.failed = append(append(append([]byte(nil), r.prefix[:]...), header...), payload[:n]...)
		return Frame{}, readErr(err, "body", hl+n, hl+pl)
	}
	if payload == nil {
		payload = header[hl:hl:hl]
	}
	return Frame{Header: header, Payload: payload}, nil
}

// Encode returns one frame's bytes: prefix, header, payload.
func Encode(header, payload []byte) []byte {
	return Append(make([]byte, 0, Size(header, payload)), header, payload)
}

// Size is the length of the frame of header and payload.
func Size(header, payload []byte) int { return prefixLen + len(header) + len(payload) }

// Append appends one frame's bytes to b: into b's own memory when its
// capacity holds them.
func Append(b, header, payload []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(header)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	return append(append(b, header...), payload...)
}

// readErr maps an EOF inside a frame to ErrTruncated and wraps other I/O
// errors.
func readErr(err error, part string, got, want int) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%w: EOF after %d of %d %s bytes", ErrTruncated, got, want, part)
	}
	return fmt.Errorf("read request: %w", err)
}

// BinaryWriter writes length-prefixed binary frames. It is safe for
// concurrent use: each Write emits one whole frame.
type BinaryWriter struct {
	mu      sync.Mutex
	w       io.Writer
	prefix  [prefixLen]byte
	scratch []byte // a frame assembled for one write
}

// NewBinaryWriter returns a writer of binary frames to w.
func NewBinaryWriter(w io.Writer) *BinaryWriter {
	return &BinaryWriter{w: w}
}

// Write writes one frame at once (in one write up to maxCoalesce), so the
// host sees the whole response when it wakes. Parts longer than a u32 can
// describe are rejected with ErrResponseTooLarge rather than sent with a
// wrapped length.
func (w *BinaryWriter) Write(header, payload []byte) error {
	hl, err := partLen("header", len(header))
	if err != nil {
		return err
	}
	pl, err := partLen("payload", len(payload))
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	binary.LittleEndian.PutUint32(w.prefix[0:4], hl)
	binary.LittleEndian.PutUint32(w.prefix[4:8], pl)
	if Size(header, payload) <= maxCoalesce {
		err = writeWhole(w.w, &w.scratch, w.prefix[:], header, payload)
	} else {
		// Prefix and header together, then the payload as it is.
		if err = writeWhole(w.w, &w.scratch, w.prefix[:], header); err == nil {
			_, err = w.w.Write(payload)
		}
	}
	if err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	return nil
}
