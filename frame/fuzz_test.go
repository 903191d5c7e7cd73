package frame

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// fuzzConfigs pairs the real limits with tiny ones so that fuzz inputs of a
// few bytes reach the size checks and the bufio.ErrBufferFull path.
var fuzzConfigs = []struct {
	name           string
	bufSize, limit int
	oneByte        bool
}{
	{"default", defaultBufSize, MaxRequestSize, false},
	{"small", 16, 24, false},
	{"small-onebyte", 16, 24, true},
	{"tiny", 16, 5, false},
}

func fuzzSource(data []byte, oneByte bool) io.Reader {
	if oneByte {
		return iotest.OneByteReader(bytes.NewReader(data))
	}
	return bytes.NewReader(data)
}

// modelBinary decodes data the obvious way and returns the frame count, the
// bytes those frames span and the sentinel the reader should end with.
func modelBinary(data []byte, limit int) (frames, end int, err error) {
	off := 0
	for {
		rest := len(data) - off
		switch {
		case rest == 0:
			return frames, off, io.EOF
		case rest < prefixLen:
			return frames, off, ErrTruncated
		}
		hl := binary.LittleEndian.Uint32(data[off:])
		pl := binary.LittleEndian.Uint32(data[off+4:])
		total := uint64(hl) + uint64(pl)
		if total > uint64(limit) {
			return frames, off, ErrFrameTooLarge
		}
		if uint64(rest-prefixLen) < total {
			return frames, off, ErrTruncated
		}
		off += prefixLen + int(total)
		frames++
	}
}

func FuzzBinaryReader(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, cfg := range fuzzConfigs {
			r := newBinaryReader(fuzzSource(data, cfg.oneByte), cfg.bufSize, cfg.limit)
			var out bytes.Buffer
			w := NewBinaryWriter(&out)
			n := 0
			var err error
			// A frame in three is read with Next, one with NextOwned (and
			// kept), one with NextInto a buffer it reuses (its payload kept).
			var owned []Frame
			var ownedWant [][]byte
			var dst []byte
			for {
				var fr Frame
				switch n % 3 {
				case 0:
					fr, err = r.Next()
				case 1:
					fr, err = r.NextOwned()
					if err == nil {
						owned = append(owned, fr)
						ownedWant = append(ownedWant, concat(fr.Header, fr.Payload))
					}
				default:
					fr, err = r.NextInto(dst)
					if err == nil {
						dst = fr.Header
						owned = append(owned, Frame{Payload: fr.Payload})
						ownedWant = append(ownedWant, bytes.Clone(fr.Payload))
					}
				}
				if err != nil {
					break
				}
				n++
				if len(fr.Header)+len(fr.Payload) > cfg.limit {
					t.Fatalf("%s: frame of %d+%d bytes exceeds limit %d",
						cfg.name, len(fr.Header), len(fr.Payload), cfg.limit)
				}
				if werr := w.Write(fr.Header, fr.Payload); werr != nil {
					t.Fatalf("%s: write: %v", cfg.name, werr)
				}
				if n > len(data)/prefixLen {
					t.Fatalf("%s: more frames than the input can hold", cfg.name)
				}
			}
			for i, fr := range owned {
				if !bytes.Equal(concat(fr.Header, fr.Payload), ownedWant[i]) {
					t.Fatalf("%s: owned frame %d changed under later reads", cfg.name, i)
				}
			}
			if !bytes.HasPrefix(data, out.Bytes()) {
				t.Fatalf("%s: re-encoded frames are not a prefix of the input", cfg.name)
			}
			wantN, wantEnd, wantErr := modelBinary(data, cfg.limit)
			if n != wantN || out.Len() != wantEnd {
				t.Fatalf("%s: read %d frames spanning %d bytes, want %d spanning %d",
					cfg.name, n, out.Len(), wantN, wantEnd)
			}
			if wantErr == io.EOF {
				if err != io.EOF {
					t.Fatalf("%s: got %v, want io.EOF", cfg.name, err)
				}
			} else if !errors.Is(err, wantErr) {
				t.Fatalf("%s: got %v, want %v", cfg.name, err, wantErr)
			}

			// Partial reproduces the failure: the same error, read from the
			// partial bytes alone.
			if err != io.EOF {
				part := r.Partial()
				if !bytes.Equal(part, data[wantEnd:min(len(data), wantEnd+len(part))]) {
					t.Fatalf("%s: Partial %q is not the input after the last frame", cfg.name, part)
				}
				_, again := newBinaryReader(bytes.NewReader(part), cfg.bufSize, cfg.limit).Next()
				if again == nil || again.Error() != err.Error() {
					t.Fatalf("%s: Partial %q gives %v, want %v", cfg.name, part, again, err)
				}
			}
		}
	})
}

// modelLines splits data the obvious way and returns the expected lines and
// final sentinel.
func modelLines(data []byte, limit int) ([][]byte, error) {
	var lines [][]byte
	segs := bytes.Split(data, []byte{'\n'})
	if len(segs[len(segs)-1]) == 0 {
		segs = segs[:len(segs)-1] // data ended with '\n' or was empty
	}
	for _, s := range segs {
		if len(s) > limit {
			return lines, ErrLineTooLarge
		}
		s = bytes.TrimSuffix(s, []byte{'\r'})
		if len(bytes.Trim(s, " \t\r\v\f")) == 0 {
			continue
		}
		lines = append(lines, s)
	}
	return lines, io.EOF
}

func FuzzLineReader(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, cfg := range fuzzConfigs {
			r := newLineReader(fuzzSource(data, cfg.oneByte), cfg.bufSize, cfg.limit)
			var got [][]byte
			var err error
			for {
				var l []byte
				l, err = r.Next()
				if err != nil {
					break
				}
				if len(l) > cfg.limit {
					t.Fatalf("%s: line of %d bytes exceeds limit %d", cfg.name, len(l), cfg.limit)
				}
				if bytes.IndexByte(l, '\n') >= 0 {
					t.Fatalf("%s: line contains a newline", cfg.name)
				}
				if isBlank(l) {
					t.Fatalf("%s: blank line returned", cfg.name)
				}
				got = append(got, bytes.Clone(l))
				if len(got) > len(data) {
					t.Fatalf("%s: more lines than input bytes", cfg.name)
				}
			}
			want, wantErr := modelLines(data, cfg.limit)
			if len(got) != len(want) {
				t.Fatalf("%s: got %d lines, want %d", cfg.name, len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("%s: line %d = %q, want %q", cfg.name, i, got[i], want[i])
				}
			}
			if wantErr == io.EOF {
				if err != io.EOF {
					t.Fatalf("%s: got %v, want io.EOF", cfg.name, err)
				}
			} else if !errors.Is(err, wantErr) {
				t.Fatalf("%s: got %v, want %v", cfg.name, err, wantErr)
			}

			// Partial reproduces a line over the limit: its first limit+1
			// bytes alone fail the same way.
			if err != io.EOF {
				part := r.Partial()
				if len(part) != cfg.limit+1 || !bytes.Contains(data, part) {
					t.Fatalf("%s: Partial %q is not the start of the line over the limit", cfg.name, part)
				}
				_, again := newLineReader(bytes.NewReader(part), cfg.bufSize, cfg.limit).Next()
				if again == nil || again.Error() != err.Error() {
					t.Fatalf("%s: Partial %q gives %v, want %v", cfg.name, part, again, err)
				}
			}

			// Writing the lines back and rereading them is lossless.
			var out bytes.Buffer
			w := NewLineWriter(&out)
			for _, l := range got {
				if werr := w.Write(l); werr != nil {
					t.Fatalf("%s: write: %v", cfg.name, werr)
				}
			}
			rr := newLineReader(&out, cfg.bufSize, cfg.limit)
			for i, l := range got {
				back, rerr := rr.Next()
				// A line ending in "\r" (from "x\r\r\n") loses that '\r' on
				// the way back: the reader strips one trailing '\r'.
				if rerr != nil || !bytes.Equal(back, bytes.TrimSuffix(l, []byte{'\r'})) {
					t.Fatalf("%s: round trip line %d: %q, %v; want %q", cfg.name, i, back, rerr, l)
				}
			}
		}
	})
}
