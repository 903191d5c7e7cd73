package host

import (
	"errors"
	"strings"
)

var (
	// ErrProcessExited is wrapped by the error of every call that was
	// outstanding, or made afterwards, when the sidecar process ended
	// without being closed: it crashed, was killed, or exited on a fatal
	// input. The error text gives the exit status and the first (and last)
	// line the process wrote to stderr.
	ErrProcessExited = errors.New("sidecar process exited")

	// ErrProtocol is wrapped when the sidecar broke the wire contract: an
	// undecodable or oversized response, a response to no request, or one
	// with the wrong id. Nothing later on that stream can be trusted, so
	// the client kills the process; errors.Is(err, ErrProcessExited) holds
	// for the calls that fail with it too.
	ErrProtocol = errors.New("sidecar protocol error")

	// ErrClosed is returned by calls made after Close.
	ErrClosed = errors.New("sidecar client is closed")

	// ErrRequestTooLarge is returned, without sending anything, for a
	// request over the sidecar's 1 MiB request limit (a sidecar ends the
	// session on one). Resume uploads large snapshots in chunks by itself;
	// this error is left for oversized sources, inputs and answers.
	ErrRequestTooLarge = errors.New("request exceeds the sidecar's 1 MiB request limit")
)

// Error is a request the sidecar answered with "ok": false. Message is the
// sidecar's text verbatim: "<Kind>: <message>" for guest failures
// ("Runtime: TypeError: bad\n  at f (2:9)", "Limit: execution cancelled")
// and a plain phrase for protocol failures ("unknown snapshot_id `…`").
type Error struct {
	Method  string // the request's method
	Message string
}

func (e *Error) Error() string { return e.Message }

// Kind returns the failure kind, "Parse", "Validation", "Runtime",
// "Limit" or "Serialization", or "" for a protocol failure.
func (e *Error) Kind() string {
	k, _, ok := strings.Cut(e.Message, ": ")
	if !ok {
		return ""
	}
	switch k {
	case "Parse", "Validation", "Runtime", "Limit", "Serialization":
		return k
	}
	return ""
}

// processError is the error of calls cut off by the end of the process.
type processError struct {
	msg    string
	causes []error
}

func (e *processError) Error() string   { return e.msg }
func (e *processError) Unwrap() []error { return e.causes }

// cancelledError is a start or resume that ended because its context was
// done: its text is what the sidecar (or the process's end) said, and it
// matches both that error and the context's.
type cancelledError struct {
	err    error
	ctxErr error
}

func (e *cancelledError) Error() string   { return e.err.Error() }
func (e *cancelledError) Unwrap() []error { return []error{e.err, e.ctxErr} }

// isSealRefusal reports whether err is the sidecar refusing a resume for
// its seal key (the sealed snapshots extension).
func isSealRefusal(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Message {
	case "snapshot is sealed and no seal key was given",
		"snapshot was sealed under another seal key",
		"snapshot is not sealed but a seal key was given":
		return true
	}
	return false
}
