package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/mustard-sidecar/mustard-sidecar/frame"
	"github.com/mustard-sidecar/mustard-sidecar/internal/trace"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// readAhead is how many requests the sidecar reads beyond the one it is
// serving. Reading ahead is what lets a cancel reach a running guest; the
// bound is what pushes back on a host that writes without reading: the
// sidecar then holds at most readAhead+1 requests.
const readAhead = 4

// inbound is one request read, or the end of the input: io.EOF or a fatal
// read error, the last item.
type inbound struct {
	req             *protocol.Request
	header, payload []byte // the request as read
	err             error
	partial         []byte // with a fatal read error: the failing request's bytes, as far as read
}

// Serve answers requests from in on out until EOF, as the command does. A
// returned error is fatal. Requests are read on a second goroutine while
// one is served, up to readAhead ahead; responses are written strictly in
// request order. On EOF every request read is answered first; a fatal
// input takes effect once every request before it is answered.
func Serve(opts protocol.Options, in io.Reader, out io.Writer) error {
	return serve(opts, in, out, nil)
}

// serve is Serve, recording the session in tr if it is not nil.
func serve(opts protocol.Options, in io.Reader, out io.Writer, tr *trace.Writer) error {
	s := protocol.NewSession(opts)
	defer s.Close()
	src, write := transport(opts.Transport, in, out)

	items := make(chan inbound, readAhead)
	slots := make(chan struct{}, readAhead) // a slot per request read and not yet being served
	done := make(chan struct{})             // the serving side has stopped
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		readRequests(s, src, items, slots, done)
	}()

	for {
		it := <-items
		<-slots
		if it.err != nil {
			<-ended
			if errors.Is(it.err, io.EOF) {
				return nil
			}
			if tr != nil {
				tr.Input(it.partial)
			}
			return it.err
		}
		resp, err := s.Serve(it.req)
		if err == nil {
			err = write(resp)
			if err == nil && tr != nil {
				tr.Exchange(it.header, it.payload, resp.Header, resp.Payload)
			}
		} else if tr != nil {
			tr.Input(src.raw(it.header, it.payload))
		}
		if err != nil {
			// The reader may be blocked reading stdin; it ends when the
			// input does, or with the process.
			close(done)
			return err
		}
	}
}

// readRequests reads requests into items until the input ends, a fatal
// request, or done. Each takes a slot before it is read, so at most
// readAhead are read and not yet being served.
func readRequests(s *protocol.Session, src source, items chan<- inbound, slots chan<- struct{}, done <-chan struct{}) {
	for {
		select {
		case slots <- struct{}{}:
		case <-done:
			return
		}
		header, payload, err := src.next()
		it := inbound{err: err}
		if err == nil {
			// The frame readers reuse their buffers; a request read ahead
			// must own its bytes.
			it.header, it.payload = bytes.Clone(header), bytes.Clone(payload)
			it.req = s.Read(it.header, it.payload)
		} else {
			it.partial = src.partial()
		}
		select {
		case items <- it:
		case <-done:
			return
		}
		if err != nil || it.req.Fatal() {
			return
		}
	}
}

// source reads a transport's requests.
type source struct {
	next    func() (header, payload []byte, err error) // errors in their host-facing form
	partial func() []byte                              // after a read error: the failing request's bytes, as far as read
	raw     func(header, payload []byte) []byte        // a request's bytes as they came
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
				next: func() ([]byte, []byte, error) {
					line, err := r.Next()
					return line, nil, readError(err, "invalid request")
				},
				partial: r.Partial,
				raw:     func(line, _ []byte) []byte { return append(bytes.Clone(line), '\n') },
			},
			func(resp protocol.Response) error { return writeErr(w.Write(resp.Header)) }
	}
	r, w := frame.NewBinaryReader(in), frame.NewBinaryWriter(out)
	return source{
			next: func() ([]byte, []byte, error) {
				f, err := r.Next()
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
