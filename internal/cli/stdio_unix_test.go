//go:build unix

package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/frame"
)

// pipe returns a pipe's raw descriptors, as a host hands them to the
// sidecar (not yet known to Go's poller).
func pipe(t *testing.T) (r, w int) {
	t.Helper()
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	syscall.CloseOnExec(p[0])
	syscall.CloseOnExec(p[1])
	return p[0], p[1]
}

// polledPipe returns the read end of a pipe as requestInput makes stdin,
// and its write end as a plain file.
func polledPipe(t *testing.T) (*pollFile, *os.File) {
	t.Helper()
	r, w := pipe(t)
	in := pollable(r, "test-in")
	if in == nil {
		t.Fatal("a pipe was not taken by the poller")
	}
	wf := os.NewFile(uintptr(w), "test-in-w")
	t.Cleanup(func() { _ = in.f.Close(); _ = wf.Close() })
	return in, wf
}

func TestPolledInputFrameSplitAcrossWrites(t *testing.T) {
	in, w := polledPipe(t)
	var out bytes.Buffer
	done := served(in, &out)
	msg := append(ping(1), ping(2)...)
	for _, part := range [][]byte{msg[:3], msg[3:12], msg[12:40], msg[40:]} {
		if _, err := w.Write(part); err != nil {
			t.Fatal(err)
		}
	}
	_ = w.Close()
	if err := wait(t, done); err != nil {
		t.Fatal(err)
	}
	if got := responses(t, out.Bytes()); len(got) != 2 || got[1]["id"] != 2.0 {
		t.Fatalf("responses: %v", got)
	}
}

func TestPolledInputEOFMidFrame(t *testing.T) {
	in, w := polledPipe(t)
	var out bytes.Buffer
	done := served(in, &out)
	if _, err := w.Write(append(ping(1), ping(2)[:20]...)); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	if err := wait(t, done); !errors.Is(err, frame.ErrTruncated) {
		t.Fatalf("error %v, want a truncated frame", err)
	}
	if got := responses(t, out.Bytes()); len(got) != 1 {
		t.Fatalf("responses: %v", got)
	}
}

// TestRawWriterWaitsForRoom writes more than a pipe holds, so that the
// writer finds no room and waits, while the other end reads slowly.
func TestRawWriterWaitsForRoom(t *testing.T) {
	r, w := pipe(t)
	rf := os.NewFile(uintptr(r), "test-out-r")
	wf := os.NewFile(uintptr(w), "test-out-w")
	defer rf.Close()
	out := responseOutput(wf)
	rw, ok := out.(*rawWriter)
	if !ok {
		t.Fatalf("a pipe is written as %T", out)
	}
	want := make([]byte, 3<<20)
	for i := range want {
		want[i] = byte(i * 7)
	}
	got := make(chan []byte, 1)
	go func() {
		var b []byte
		buf := make([]byte, 1000)
		for {
			n, err := rf.Read(buf)
			b = append(b, buf[:n]...)
			if err != nil {
				got <- b
				return
			}
		}
	}()
	n, err := rw.Write(want)
	if err != nil || n != len(want) {
		t.Fatalf("wrote %d of %d: %v", n, len(want), err)
	}
	_ = rw.f.Close()
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("read %d bytes, not what was written", len(b))
	}
}

func TestRawWriterBrokenPipe(t *testing.T) {
	r, w := pipe(t)
	_ = syscall.Close(r)
	wf := os.NewFile(uintptr(w), "test-out-w")
	defer wf.Close()
	out := responseOutput(wf)
	if _, err := out.Write([]byte("x")); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("error %v, want EPIPE", err)
	}
}

func TestPollableLeavesFilesAlone(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "in")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if p := pollable(int(f.Fd()), "file"); p != nil {
		t.Fatal("a regular file was put in non-blocking mode")
	}
	if _, ok := responseOutput(f).(*os.File); !ok {
		t.Fatal("a regular file is not written as it is")
	}
	var _ io.Reader = (*pollFile)(nil)
}
