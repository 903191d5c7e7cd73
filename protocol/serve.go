package protocol

import (
	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// Serving: a request is read (its envelope, and a cancel's effect), then
// served in its turn: decoded into its method's typed request
// (requests.go) and handed to the Session's method for it.

// Handle reads and serves one request. A non-nil error is a *FatalError:
// the session must end.
func (s *Session) Handle(header, payload []byte) (Response, error) {
	return s.Serve(s.Read(header, payload))
}

// Request is a request as read: its envelope, decoded once, and what had to
// be settled the moment it was read.
type Request struct {
	header, payload []byte
	f               fields
	id              uint64
	method          string
	fatal           error

	flight *flight       // start/resume: how a cancel reaches it
	cancel *cancelAnswer // cancel: its effect, settled when read
	owned  bool          // the payload was handed over (ReadOwned)
}

// Fatal reports whether serving the request ends the session: nothing in it
// can be correlated. Nothing after it is read.
func (r *Request) Fatal() bool { return r.fatal != nil }

// Method is the request's method, "" if its envelope could not be read.
func (r *Request) Method() string { return r.method }

// Runs reports whether the request is a start or resume: one that runs
// guest code, which a cancel can stop.
func (r *Request) Runs() bool { return r.flight != nil }

// Read takes in the next request, in order, and does what must happen when
// it is read rather than when it is served: a cancel takes effect. It may
// run while Serve serves an earlier request. header and payload must stay
// unchanged until the request is served.
func (s *Session) Read(header, payload []byte) *Request {
	return s.read(header, payload, false)
}

// ReadOwned is Read for a payload the caller hands over and never touches
// again: the session may keep it instead of a copy (a stage's first chunk
// becomes the stage; a raw resume's snapshot bytes are cached as sent).
func (s *Session) ReadOwned(header, payload []byte) *Request {
	return s.read(header, payload, true)
}

func (s *Session) read(header, payload []byte, owned bool) *Request {
	s.quiet.Load().begin()
	r := &Request{header: header, payload: payload, owned: owned}
	r.f, r.id, r.method, r.fatal = envelope(header, s.opts.Transport == Binary)
	if r.fatal != nil {
		return r
	}
	switch r.method {
	case wire.MethodStart, wire.MethodResume:
		r.flight = s.flights.add(r.id)
	case wire.MethodCancel:
		r.cancel = s.flights.answer(s.decode.cancel(r.f, payload))
	}
	return r
}

// Serve answers a request Read returned, in the order they were read. A
// non-nil error is a *FatalError: the session must end.
func (s *Session) Serve(r *Request) (Response, error) {
	defer s.quiet.Load().end() // the receiver as it is now: nil if this request begins the warm-up
	if r.fatal != nil {
		return Response{}, r.fatal
	}
	res, err := s.serve(r)
	if err != nil {
		return failure(r.id, err), nil
	}
	return res.encode(r.id, s.opts.Transport == JSONL), nil
}

func (s *Session) serve(r *Request) (result, error) {
	fl := r.flight
	if fl == nil {
		return s.dispatch(r, nil)
	}
	// A flight cancelled while it waited its turn is served all the same,
	// under its stopped Stopper: its segment ends at its first
	// instruction, so it ends exactly as if the cancel had come while it
	// ran, however the two goroutines were scheduled.
	out, err := s.dispatch(r, fl)
	// A start/resume settles itself once its segment ends; one that failed
	// before it ran settles here. Either way a cancel read before this
	// point decides the answer.
	if s.flights.settle(fl) {
		return nil, engine.ErrCancelled
	}
	return out, err
}

// dispatch decodes the request its method names (requests.go) and serves
// it.
func (s *Session) dispatch(r *Request, fl *flight) (result, error) {
	f, payload := r.f, r.payload
	if r.method == wire.MethodCancel {
		c := r.cancel // settled when it was read
		if c.err != nil {
			return nil, c.err
		}
		return c, nil
	}
	if err := checkVersion(f); err != nil {
		return nil, err
	}
	switch r.method {
	case wire.MethodCompile:
		req, err := s.decode.compile(f, payload)
		if err != nil {
			return nil, err
		}
		return s.compile(req)
	case wire.MethodStart:
		req, err := s.decode.start(f, payload)
		if err != nil {
			return nil, err
		}
		return s.start(req, fl)
	case wire.MethodResume:
		req := resumeRequest{owned: r.owned}
		s.decode.resume(&req, f, payload)
		return s.resume(&req, fl)
	case wire.MethodSnapshot:
		req, err := s.decode.fetch(f, payload)
		if err != nil {
			return nil, err
		}
		return s.fetchSnapshot(req)
	case wire.MethodStage:
		req, err := s.decode.stage(f, payload)
		if err != nil {
			return nil, err
		}
		req.owned = req.owned || r.owned
		return s.stage(req)
	case wire.MethodPing:
		if err := s.decode.ping(payload); err != nil {
			return nil, err
		}
		return pong{}, nil
	case wire.MethodStats:
		if err := s.decode.noPayload(wire.MethodStats, payload); err != nil {
			return nil, err
		}
		return s.statsNow(), nil
	}
	return nil, errorf(codeUnknownMethod, "unknown method %q", r.method)
}
