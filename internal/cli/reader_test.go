package cli

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
	"unsafe"

	"github.com/mustard-sidecar/mustard-sidecar/frame"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// The reader's own tests: requests read on the serving goroutine, read
// ahead while a run is long (and only then, and at most readAhead), frames
// split across reads, EOF inside a frame, the ticker dozing and waking,
// and stop. The reader is driven directly (running(true) stands for a run
// being served); its input is a pipe, so a request reaches it only when
// the test writes it.

// testReader is a reader over a binary pipe the test writes.
type testReader struct {
	*reader
	w *io.PipeWriter
	// reads receives one value per read of the source completed (a
	// request, EOF or an error), before the reader sees its result.
	reads chan struct{}
}

func newTestReader(t *testing.T) *testReader {
	t.Helper()
	pr, pw := io.Pipe()
	src, _ := transport(protocol.Binary, pr, io.Discard)
	reads := make(chan struct{}, 64)
	next := src.next
	src.next = func(buf []byte) ([]byte, []byte, error) {
		h, p, err := next(buf)
		reads <- struct{}{}
		return h, p, err
	}
	s := protocol.NewSession(protocol.Options{})
	t.Cleanup(s.Close)
	return &testReader{reader: newReader(s, src), w: pw, reads: reads}
}

// write writes parts in order on its own goroutine (a pipe write returns
// only once it is read); the returned channel is closed once all are
// read. A write error other than the pipe's closing fails the test.
func (tr *testReader) write(t *testing.T, parts ...[]byte) <-chan struct{} {
	t.Helper()
	written := make(chan struct{})
	failed := make(chan error, 1)
	go func() {
		for _, b := range parts {
			if _, err := tr.w.Write(b); err != nil {
				failed <- err
				return
			}
		}
		close(written)
	}()
	t.Cleanup(func() {
		select {
		case err := <-failed:
			if !errors.Is(err, io.ErrClosedPipe) {
				t.Errorf("writing the input: %v", err)
			}
		default:
		}
	})
	return written
}

// end closes the input and stops the reader.
func (tr *testReader) end(t *testing.T) {
	t.Helper()
	tr.w.Close()
	stopped := make(chan struct{})
	go func() { tr.stop(); close(stopped) }()
	within(t, stopped, "stop")
}

// within waits for done, failing the test if it takes longer than hang.
func within(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(hang):
		t.Fatalf("%s did not return", what)
	}
}

// await waits, holding tr.mu, until cond holds; cond is re-checked at
// each broadcast of tr.cond.
func (tr *testReader) await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		tr.mu.Lock()
		for !cond() {
			tr.cond.Wait()
		}
		tr.mu.Unlock()
		close(done)
	}()
	within(t, done, "waiting for "+what)
}

// locked runs f holding tr.mu.
func (tr *testReader) locked(f func()) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	f()
}

// nextWithin is next, bounded by hang.
func (tr *testReader) nextWithin(t *testing.T) inbound {
	t.Helper()
	got := make(chan inbound, 1)
	go func() { got <- tr.next() }()
	select {
	case it := <-got:
		return it
	case <-time.After(hang):
		t.Fatal("next did not return")
		return inbound{}
	}
}

// wantPing checks that it is the ping request with the given id, as read.
func wantPing(t *testing.T, it inbound, id int) {
	t.Helper()
	want := ping(id)[8:]
	if it.err != nil || it.req == nil || it.req.Method() != "ping" || !bytes.Equal(it.header, want) {
		t.Fatalf("read %q (err %v), want %q", it.header, it.err, want)
	}
	if it.last() {
		t.Fatalf("ping %d is the last item", id)
	}
}

func TestReaderReadsOnTheServingGoroutine(t *testing.T) {
	tr := newTestReader(t)
	defer tr.end(t)
	tr.write(t, ping(1))
	wantPing(t, tr.nextWithin(t), 1)
	// A frame split across reads: its prefix, part of its header, the rest.
	f := ping(2)
	tr.write(t, f[:3], f[3:12], f[12:])
	wantPing(t, tr.nextWithin(t), 2)
	tr.locked(func() {
		if tr.ahead || len(tr.queue) != 0 || tr.reading {
			t.Errorf("with no run: ahead %v, %d queued, reading %v", tr.ahead, len(tr.queue), tr.reading)
		}
	})
	// EOF inside a frame: a truncated frame, with the bytes read.
	half := ping(3)[:11]
	written := tr.write(t, half)
	go func() {
		<-written
		tr.w.Close()
	}()
	it := tr.nextWithin(t)
	if !errors.Is(it.err, frame.ErrTruncated) || !it.last() {
		t.Fatalf("EOF mid-frame: err %v, last %v", it.err, it.last())
	}
	if !bytes.Equal(it.partial, half) {
		t.Fatalf("EOF mid-frame: partial %q, want %q", it.partial, half)
	}
	tr.locked(func() {
		if !tr.ended {
			t.Error("not ended after EOF mid-frame")
		}
	})
}

func TestReaderReadsAheadOfALongRun(t *testing.T) {
	tr := newTestReader(t)
	defer tr.end(t)
	tr.running(true)
	tr.await(t, "reading ahead", func() bool { return tr.ahead })
	// readAhead+1 requests, the last split across reads: readAhead are
	// read ahead, and no more.
	var in [][]byte
	for id := 1; id <= readAhead; id++ {
		in = append(in, ping(id))
	}
	last := ping(readAhead + 1)
	in = append(in, last[:5], last[5:])
	tr.write(t, in...)
	tr.await(t, "a full queue", func() bool { return len(tr.queue) == readAhead })
	tr.locked(func() {
		if tr.reading || len(tr.reads) != readAhead {
			t.Fatalf("queue full: reading %v after %d reads, want no read beyond %d", tr.reading, len(tr.reads), readAhead)
		}
	})
	// Serving one makes room: the next is read ahead.
	wantPing(t, tr.nextWithin(t), 1)
	tr.await(t, "the queue refilled", func() bool { return len(tr.queue) == readAhead && !tr.reading })
	// The run ends: what was read ahead is served in order, and nothing
	// more is read ahead.
	tr.running(false)
	for id := 2; id <= readAhead+1; id++ {
		wantPing(t, tr.nextWithin(t), id)
	}
	tr.locked(func() {
		if tr.ahead || tr.reading || len(tr.queue) != 0 {
			t.Fatalf("after the run: ahead %v, reading %v, %d queued", tr.ahead, tr.reading, len(tr.queue))
		}
	})
	// A later request is read by the serving goroutine.
	tr.write(t, ping(10))
	wantPing(t, tr.nextWithin(t), 10)
}

func TestReaderReadAheadEndsAtEOFMidFrame(t *testing.T) {
	tr := newTestReader(t)
	defer tr.end(t)
	tr.running(true)
	tr.await(t, "reading ahead", func() bool { return tr.ahead })
	half := ping(2)[:13]
	written := tr.write(t, ping(1), half)
	go func() {
		<-written
		tr.w.Close()
	}()
	tr.await(t, "the end read ahead", func() bool { return tr.ended })
	tr.locked(func() {
		if len(tr.queue) != 2 || tr.reading {
			t.Fatalf("after EOF read ahead: %d queued, reading %v", len(tr.queue), tr.reading)
		}
	})
	wantPing(t, tr.nextWithin(t), 1)
	it := tr.nextWithin(t)
	if !errors.Is(it.err, frame.ErrTruncated) || !bytes.Equal(it.partial, half) {
		t.Fatalf("EOF mid-frame read ahead: err %v, partial %q", it.err, it.partial)
	}
	// Nothing is read past the end, though the run goes on.
	tr.locked(func() {
		if tr.reading || len(tr.reads) != 2 {
			t.Fatalf("past the end: reading %v, %d reads", tr.reading, len(tr.reads))
		}
	})
	tr.running(false)
}

func TestReaderTickerDozesAndWakes(t *testing.T) {
	tr := newTestReader(t)
	defer tr.end(t)
	// With no run the ticker dozes after idleTicks ticks. Its ticks
	// broadcast nothing, so this polls; the bound only catches a ticker
	// that never dozes.
	deadline := time.Now().Add(hang)
	for {
		var dozing bool
		tr.locked(func() { dozing = tr.dozing })
		if dozing {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the ticker never dozed")
		}
		time.Sleep(readAheadAfter)
	}
	// A run wakes it, and a long one is read ahead of.
	tr.running(true)
	tr.await(t, "reading ahead after dozing", func() bool { return tr.ahead })
	tr.running(false)
	tr.locked(func() {
		if tr.ahead || tr.serving {
			t.Fatalf("after the run: ahead %v, serving %v", tr.ahead, tr.serving)
		}
	})
}

func TestReaderStop(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		tr := newTestReader(t)
		stopped := make(chan struct{})
		go func() { tr.stop(); close(stopped) }()
		within(t, stopped, "stop")
		within(t, tr.done, "the read-ahead goroutine")
		within(t, tr.tickDone, "the ticker")
		tr.w.Close()
	})
	t.Run("read blocked", func(t *testing.T) {
		// A read ahead blocked inside a frame on open input: stop
		// returns without waiting for it.
		tr := newTestReader(t)
		tr.running(true)
		tr.await(t, "reading ahead", func() bool { return tr.ahead })
		within(t, tr.write(t, ping(1), ping(2)[:5]), "writing")
		tr.locked(func() {
			if len(tr.queue) != 1 || !tr.reading {
				t.Fatalf("%d queued, reading %v; want 1 and a read blocked", len(tr.queue), tr.reading)
			}
		})
		stopped := make(chan struct{})
		go func() { tr.stop(); close(stopped) }()
		within(t, stopped, "stop")
		within(t, tr.tickDone, "the ticker")
		// The blocked read ends with the input, and the goroutine with it.
		tr.w.Close()
		within(t, tr.done, "the read-ahead goroutine")
	})
}

func TestReaderReadsIntoHeadersServed(t *testing.T) {
	tr := newTestReader(t)
	defer tr.end(t)
	var given [][]byte // each read's buffer, as it was when handed in
	var mem []*byte    // ... and its memory
	next := tr.src.next
	tr.src.next = func(buf []byte) ([]byte, []byte, error) {
		given = append(given, bytes.Clone(buf[:cap(buf)]))
		mem = append(mem, unsafe.SliceData(buf))
		return next(buf)
	}
	tr.write(t, ping(1))
	first := tr.nextWithin(t)
	wantPing(t, first, 1)
	firstMem, firstLen := unsafe.SliceData(first.header), len(first.header)
	tr.release(first.header)

	tr.write(t, ping(2))
	second := tr.nextWithin(t)
	wantPing(t, second, 2)
	if len(given) != 2 || given[0] != nil {
		t.Fatalf("reads were handed %d buffers, the first %q; want a new one, then the header served", len(given), given[0])
	}
	if mem[1] != firstMem || unsafe.SliceData(second.header) != firstMem {
		t.Fatal("the second request was not read into the first's buffer")
	}
	if !bytes.Equal(given[1][:firstLen], make([]byte, firstLen)) {
		t.Fatalf("the header served was handed back as %q, not cleared", given[1][:firstLen])
	}

	// Only keptHeaders buffers are kept; with none handed back, a read
	// gets new memory.
	for i := 0; i < keptHeaders+1; i++ {
		tr.release(make([]byte, 8))
	}
	tr.locked(func() {
		if len(tr.headers) != keptHeaders {
			t.Errorf("%d buffers kept, want %d", len(tr.headers), keptHeaders)
		}
	})
	for range keptHeaders {
		<-tr.headers
	}
	tr.write(t, ping(3))
	wantPing(t, tr.nextWithin(t), 3)
	if given[2] != nil {
		t.Fatalf("with no buffer handed back the read was handed %q", given[2])
	}
}
