package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/frame"
	"github.com/mustard-sidecar/mustard-sidecar/internal/trace"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// readAhead is how many requests the sidecar reads beyond the one it is
// serving. Reading ahead is what lets a cancel reach a running guest; the
// bound is what pushes back on a host that writes without reading: the
// sidecar then holds at most readAhead+1 requests.
const readAhead = 4

// readAheadAfter is how long a start or resume runs, at least, before the
// sidecar reads ahead of it. Until then the goroutine that serves requests
// reads them too: a request that arrives while nothing runs long is served
// by the goroutine that read it, with no hand-off between goroutines
// (which costs a hot resume tens of microseconds). A ticker of this period
// tells a long run: one still running at two consecutive ticks, so after
// one to two periods. A cancel of a long run is read at most twice this
// much later than it would be otherwise.
//
// The ticker runs while requests come and sleeps after idleTicks without a
// run. A timer armed for each request would be simpler, but arming and
// stopping one around a blocking read of a pipe costs a hot round trip
// ~5 µs (it wakes the thread waiting for timers).
const (
	readAheadAfter = time.Millisecond
	idleTicks      = 100
)

// inbound is one request read, or the end of the input: io.EOF or a fatal
// read error, the last item.
type inbound struct {
	req             *protocol.Request
	header, payload []byte // the request as read
	err             error
	partial         []byte // with a fatal read error: the failing request's bytes, as far as read
}

// last reports whether nothing can be read after it.
func (it inbound) last() bool { return it.err != nil || it.req.Fatal() }

// Serve answers requests from in on out until EOF, as the command does. A
// returned error is fatal. Responses are written strictly in request
// order. While a start or resume runs (past readAheadAfter) requests are
// read ahead on a second goroutine, at most readAhead, so that a cancel
// reaches it. On EOF every request read is answered first; a fatal input
// read ahead takes effect once every request before it is answered.
func Serve(opts protocol.Options, in io.Reader, out io.Writer) error {
	return serve(opts, in, out, nil, nil, nil)
}

// serve is Serve, recording the session in tr if it is not nil, logging
// each request to log if it is not nil, and calling served after each
// response written if it is not nil.
func serve(opts protocol.Options, in io.Reader, out io.Writer, tr *trace.Writer, log *slog.Logger, served func()) error {
	s := protocol.NewSession(opts)
	defer s.Close()
	s.Warm()
	src, write := transport(opts.Transport, in, out)
	r := newReader(s, src)
	defer r.stop()
	for {
		it := r.next()
		if it.err != nil {
			if errors.Is(it.err, io.EOF) {
				return nil
			}
			if tr != nil {
				tr.Input(it.partial)
			}
			return it.err
		}
		runs := it.req.Runs()
		if runs {
			r.running(true)
		}
		var began time.Time
		if log != nil {
			began = time.Now()
		}
		resp, err := s.Serve(it.req)
		if runs {
			r.running(false)
		}
		if log != nil && err == nil {
			logRequest(log, it.req.Method(), time.Since(began), resp.Header)
		}
		if err == nil {
			err = write(resp)
			if err == nil && served != nil {
				served()
			}
			if err == nil && tr != nil {
				tr.Exchange(it.header, it.payload, resp.Header, resp.Payload)
			}
		} else if tr != nil {
			tr.Input(src.raw(it.header, it.payload))
		}
		if err != nil {
			return err
		}
		r.release(it.header)
	}
}

// reader reads requests in order, one read at a time, either on the
// serving goroutine (next) or, while a start or resume runs long, ahead on
// its own goroutine.
type reader struct {
	s   *protocol.Session
	src source

	headers chan []byte // buffers of requests served, for later ones (release)

	mu       sync.Mutex
	cond     *sync.Cond
	queue    []inbound // read ahead, not yet served
	reading  bool      // a read is in progress
	serving  bool      // a start or resume is being served
	runs     uint64    // starts and resumes begun: the ticker tells them apart
	ahead    bool      // ... and has run long: read ahead
	ended    bool      // the last item has been read
	quit     bool
	dozing   bool          // the ticker sleeps until the next run
	wake     chan struct{} // wakes it
	quitTick chan struct{} // closed by stop
	done     chan struct{} // closed when the read-ahead goroutine ends
	tickDone chan struct{} // closed when the ticker ends
}

func newReader(s *protocol.Session, src source) *reader {
	r := &reader{s: s, src: src,
		headers:  make(chan []byte, keptHeaders),
		wake:     make(chan struct{}, 1),
		quitTick: make(chan struct{}),
		done:     make(chan struct{}),
		tickDone: make(chan struct{}),
	}
	r.cond = sync.NewCond(&r.mu)
	go r.readAhead()
	go r.tick()
	return r
}

// read reads the next request. Only one read runs at a time, so requests
// are read, and Session.Read sees them, in order.
//
// A request served while the next is read must own its bytes. Its header
// is read into a buffer of a request already served, if there is one,
// which goes back once it is served (release). Its payload is read into
// memory of its own, the session's to keep (ReadOwned): a snapshot sent
// raw or staged is not copied again.
func (r *reader) read() inbound {
	var buf []byte
	select {
	case buf = <-r.headers:
	default:
	}
	header, payload, err := r.src.next(buf)
	if err != nil {
		return inbound{err: err, partial: r.src.partial()}
	}
	it := inbound{header: header, payload: payload}
	it.req = r.s.ReadOwned(header, payload)
	return it
}

// keptHeaders is how many header buffers of requests served the reader
// keeps for later ones: one serves a host that waits for each response,
// the second one that writes its next request before reading.
const keptHeaders = 2

// release hands back the header of a request that has been served: the
// session keeps nothing of it (protocol.Session.Read), and reading a later
// request into the same memory spares the allocator a large answer's
// pages every time. Its bytes are cleared first, so that a request's text
// (answers, tokens) does not stay in memory after it.
func (r *reader) release(header []byte) {
	if cap(header) == 0 {
		return
	}
	clear(header)
	select {
	case r.headers <- header[:0]:
	default:
	}
}

// next returns the next request to serve: one read ahead, the one being
// read ahead (waiting for it), or one read now.
func (r *reader) next() inbound {
	r.mu.Lock()
	for len(r.queue) == 0 && r.reading {
		r.cond.Wait()
	}
	if len(r.queue) > 0 {
		it := r.queue[0]
		r.queue = r.queue[1:]
		r.cond.Broadcast() // room to read ahead again
		r.mu.Unlock()
		return it
	}
	it := r.readHeld()
	r.mu.Unlock()
	return it
}

// readHeld is read for a caller holding r.mu, which is released while the
// read blocks; other goroutines see reading set meanwhile.
func (r *reader) readHeld() inbound {
	r.reading = true
	r.mu.Unlock()
	it := r.read()
	r.mu.Lock()
	r.reading = false
	r.ended = it.last()
	return it
}

// running marks a start or resume being served. Reading ahead begins once
// it has run long (readAheadAfter), and ends with it (a read in progress
// then completes, and its request is the next one served).
func (r *reader) running(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !on {
		r.serving, r.ahead = false, false
		return
	}
	r.serving = true
	r.runs++
	if r.dozing {
		r.dozing = false
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

// tick is the ticker goroutine: a run still going at two consecutive ticks
// has run long.
func (r *reader) tick() {
	defer close(r.tickDone)
	t := time.NewTicker(readAheadAfter)
	defer t.Stop()
	var seen uint64 // the run in progress at the last tick, if any
	idle := 0
	for {
		select {
		case <-t.C:
		case <-r.quitTick:
			return
		}
		r.mu.Lock()
		switch {
		case r.serving && r.runs == seen:
			if !r.ahead {
				r.ahead = true
				r.cond.Broadcast()
			}
			idle = 0
		case r.serving || r.runs != seen:
			idle = 0
		default:
			idle++
		}
		seen = r.runs
		if idle >= idleTicks {
			r.dozing = true
		}
		dozing := r.dozing
		r.mu.Unlock()
		if dozing {
			t.Stop()
			select {
			case <-r.wake:
			case <-r.quitTick:
				return
			}
			t.Reset(readAheadAfter)
			idle = 0
		}
	}
}

// readAhead is the read-ahead goroutine.
func (r *reader) readAhead() {
	defer close(r.done)
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		for !r.quit && !(r.ahead && !r.reading && !r.ended && len(r.queue) < readAhead) {
			r.cond.Wait()
		}
		if r.quit {
			return
		}
		r.queue = append(r.queue, r.readHeld())
		r.cond.Broadcast()
	}
}

// stop ends the read-ahead goroutine. One blocked reading stdin ends when
// the input does, or with the process: stop does not wait for it.
func (r *reader) stop() {
	close(r.quitTick)
	<-r.tickDone
	r.mu.Lock()
	r.quit = true
	wait := !r.reading
	r.cond.Broadcast()
	r.mu.Unlock()
	if wait {
		<-r.done
	}
}

// source reads a transport's requests.
//
// next reads the header into buf's memory when it has room (into a new
// buffer when it has not), and the payload into memory of its own: the
// caller keeps both.
type source struct {
	next    func(buf []byte) (header, payload []byte, err error) // errors in their host-facing form
	partial func() []byte                                        // after a read error: the failing request's bytes, as far as read
	raw     func(header, payload []byte) []byte                  // a request's bytes as they came
}

// transport returns the request source and response writer of a
// transport.
func transport(t protocol.Transport, in io.Reader, out io.Writer) (source, func(protocol.Response) error) {
	writeErr := func(err error) error {
		if err != nil {
			return fmt.Errorf("writing response: %w", err)
		}
		return nil
	}
	if t == protocol.JSONL {
		r, w := frame.NewLineReader(in), frame.NewLineWriter(out)
		return source{
				next: func(buf []byte) ([]byte, []byte, error) {
					line, err := r.Next()
					if err != nil {
						return nil, nil, readError(err, "invalid request")
					}
					return append(buf[:0], line...), nil, nil
				},
				partial: r.Partial,
				raw:     func(line, _ []byte) []byte { return append(bytes.Clone(line), '\n') },
			},
			func(resp protocol.Response) error { return writeErr(w.Write(resp.Header)) }
	}
	r, w := frame.NewBinaryReader(in), frame.NewBinaryWriter(out)
	return source{
			next: func(buf []byte) ([]byte, []byte, error) {
				f, err := r.NextInto(buf)
				return f.Header, f.Payload, readError(err, "invalid request header")
			},
			partial: r.Partial,
			raw:     frame.Encode,
		},
		func(resp protocol.Response) error { return writeErr(w.Write(resp.Header, resp.Payload)) }
}

// readError keeps io.EOF (the clean end) and the frame errors hosts match,
// and hides any other I/O error behind the contract's prefix.
func readError(err error, prefix string) error {
	if err == nil || errors.Is(err, io.EOF) {
		return err
	}
	if errors.Is(err, frame.ErrFrameTooLarge) || errors.Is(err, frame.ErrLineTooLarge) || errors.Is(err, frame.ErrTruncated) {
		return err
	}
	return fmt.Errorf("%s: reading stdin failed", prefix)
}

// logRequest logs a request served: its method, how long it took, and for
// a failure its error_code. A limit hit is a warning of its own. The text
// of other failures is not logged: it may quote the guest's data.
func logRequest(log *slog.Logger, method string, took time.Duration, header []byte) {
	// A failure's header is small and starts with its envelope
	// (`{"protocol_version":2,"id":N,"ok":false`).
	if !bytes.Contains(header[:min(len(header), 64)], []byte(`"ok":false`)) {
		log.Info("request", "method", method, "duration", took, "ok", true)
		return
	}
	var f struct {
		Error     string `json:"error"`
		ErrorCode string `json:"error_code"`
	}
	_ = json.Unmarshal(header, &f)
	log.Info("request", "method", method, "duration", took, "ok", false, "error_code", f.ErrorCode)
	if strings.HasPrefix(f.ErrorCode, "limit") {
		log.Warn("limit hit", "method", method, "error_code", f.ErrorCode, "error", f.Error)
	}
}
