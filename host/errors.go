package host

import (
	"errors"

	"regexp"
	"strconv"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
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
	// session on one). Compile, Start and Resume stage sources, program
	// bytes, inputs, snapshots and answers that do not fit by themselves
	// (the stage_values extension), so this error is left for requests
	// that do not fit even so (thousands of answers at once), and for
	// values the sidecar's stage bound cannot hold (then it wraps
	// ErrStageTooLarge too).
	ErrRequestTooLarge = errors.New("request exceeds the sidecar's 1 MiB request limit")
)

// Error is a request the sidecar answered with "ok": false. Message is the
// sidecar's text verbatim: "<Kind>: <message>" for guest failures
// ("Runtime: TypeError: bad\n  at f (2:9)", "Limit: execution cancelled")
// and a plain phrase for protocol failures ("unknown snapshot_id `…`").
// Code is its error_code ("runtime", "limit_cancelled",
// "unknown_snapshot_id"; docs/protocol.md lists them all), the part to
// branch on: it is stable, the text is not meant for programs. A sidecar
// too old to send codes gets one derived from the text, as far as it can
// be ("" when it cannot). errors.Is matches an Error against the
// sentinels below (ErrUnknownSnapshotID, ErrLimit, ...).
type Error struct {
	Method  string // the request's method
	Message string
	Code    string
	// Logs are the lines the guest wrote with console in the failed
	// start or resume before it failed (the console extension), as
	// Step.Logs; nil when there were none.
	Logs []LogLine

	// The failure as the guest's program sees it, read from Message for
	// a guest failure (Kind not empty), so that a host can show a model
	// its mistake without parsing text. For an uncaught exception
	// ("Runtime: TypeError: boom\n  at f (2:20)"), GuestName is the
	// error's name ("TypeError"), GuestMessage its message ("boom"), and
	// Stack its frames, innermost first, Line and Column the innermost's.
	// For other failures GuestName is empty and GuestMessage is the text
	// after the kind ("Unexpected identifier", "instruction budget
	// exhausted"), with Line and Column where the sidecar gives them
	// (a Parse failure's "(1:17)"). Lines and columns are 1-based, in the
	// program's own source (TypeScript's, for a TypeScript program); 0
	// when unknown.
	GuestName    string
	GuestMessage string
	Line, Column int
	Stack        []Frame
}

// Frame is one frame of a guest error's stack.
type Frame struct {
	// Function is the function's name, "<anonymous>" for an anonymous
	// function, "<script>" for top-level code.
	Function     string
	Line, Column int
}

var (
	frameLine   = regexp.MustCompile(`^\s+at (.+) \((\d+):(\d+)\)$`)
	trailingPos = regexp.MustCompile(` \((\d+):(\d+)\)$`)
	errorName   = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)
)

// parse fills in the guest fields from Message.
func (e *Error) parse() {
	kind := e.Kind()
	if kind == "" {
		return
	}
	lines := strings.Split(strings.TrimPrefix(e.Message, kind+": "), "\n")
	n := len(lines)
	for n > 1 && frameLine.MatchString(lines[n-1]) {
		n--
	}
	for _, l := range lines[n:] {
		m := frameLine.FindStringSubmatch(l)
		line, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		e.Stack = append(e.Stack, Frame{Function: m[1], Line: line, Column: col})
	}
	body := strings.Join(lines[:n], "\n")
	if kind == "Runtime" {
		name, msg, ok := strings.Cut(body, ": ")
		switch {
		case ok && errorName.MatchString(name):
			e.GuestName, body = name, msg
		case !ok && errorName.MatchString(body):
			e.GuestName, body = body, ""
		}
	}
	if len(e.Stack) > 0 {
		e.Line, e.Column = e.Stack[0].Line, e.Stack[0].Column
	} else if m := trailingPos.FindStringSubmatch(body); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Column, _ = strconv.Atoi(m[2])
		body = body[:len(body)-len(m[0])]
	}
	e.GuestMessage = body
}

func (e *Error) Error() string { return e.Message }

// Is reports whether the failure is the one a sentinel names.
func (e *Error) Is(target error) bool {
	t, ok := target.(*codeSentinel)
	if !ok {
		return false
	}
	for _, c := range t.codes {
		if c == e.Code || strings.HasSuffix(c, "_") && strings.HasPrefix(e.Code, c) {
			return true
		}
	}
	return false
}

// codeSentinel names one or more error codes; a code ending in "_" is a
// prefix.
type codeSentinel struct {
	text  string
	codes []string
}

func (s *codeSentinel) Error() string { return s.text }

// Sentinels for the failures a host acts on, for errors.Is; Error.Code
// tells every failure apart.
var (
	// ErrUnknownSnapshotID: the process does not hold the snapshot id a
	// resume or fetch named (its caches are bounded, or it restarted).
	// Resume from the bytes instead.
	// It matches an id the process evicted (evicted_snapshot_id) and one
	// it never held (unknown_snapshot_id); the same holds for the next two.
	ErrUnknownSnapshotID error = &codeSentinel{"unknown snapshot_id", []string{wire.CodeUnknownSnapshotID, wire.CodeEvictedSnapshotID}}
	// ErrUnknownPolicyID: the process does not hold the policy id; resume
	// with the full policy.
	ErrUnknownPolicyID error = &codeSentinel{"unknown policy_id", []string{wire.CodeUnknownPolicyID, wire.CodeEvictedPolicyID}}
	// ErrUnknownProgramID: the process does not hold the program id; send
	// the program bytes.
	ErrUnknownProgramID error = &codeSentinel{"unknown program_id", []string{wire.CodeUnknownProgramID, wire.CodeEvictedProgramID}}
	// ErrTamperedSnapshot: the token does not authenticate the snapshot
	// (other bytes, another key, or a forged token).
	ErrTamperedSnapshot error = &codeSentinel{"tampered or unauthenticated snapshot", []string{wire.CodeTamperedSnapshot}}
	// ErrSealKey: a resume's seal key is not the snapshot's (missing,
	// superfluous or another key).
	ErrSealKey error = &codeSentinel{"seal key refused", []string{wire.CodeSealKeyRequired, wire.CodeSnapshotNotSealed, wire.CodeWrongSealKey}}
	// ErrStageTooLarge: the sidecar's bound on staged bytes
	// (--max-stage-bytes, 64 MiB by default) cannot hold a value a request
	// had to stage; Client calls that stage by themselves report it
	// wrapped in ErrRequestTooLarge too.
	ErrStageTooLarge error = &codeSentinel{"stage bound exceeded", []string{wire.CodeStageTooLarge, wire.CodeTooManyStages}}
	// ErrLimit: any limit ran out, the host's cancel among them ("limit_"
	// codes; Error.Code says which).
	ErrLimit error = &codeSentinel{"limit exceeded", []string{wire.CodeLimit + "_", wire.CodeLimit}}
)

// newError is the Error of a failed response: its code as sent, or, from
// a sidecar that sends none, as its text implies.
func newError(method string, resp *response) *Error {
	code := resp.ErrorCode
	if code == "" {
		code = legacyCode(resp.Error)
	}
	e := &Error{Method: method, Message: resp.Error, Code: code, Logs: resp.Logs}
	e.parse()
	return e
}

// storedError is the Error of an execution whose store records its
// failure: its text and its code, derived from the text if empty.
func storedError(method, failure, code string) *Error {
	if code == "" {
		code = legacyCode(failure)
	}
	e := &Error{Method: method, Message: failure, Code: code}
	e.parse()
	return e
}

// legacyCode derives the code of a failure from its text, for a sidecar
// without the error_codes feature, and for failures a Store kept as text.
// It knows the failures a host acts on and the guest kinds only.
func legacyCode(msg string) string {
	for prefix, code := range map[string]string{
		"unknown snapshot_id ": wire.CodeUnknownSnapshotID,
		"unknown policy_id ":   wire.CodeUnknownPolicyID,
		"unknown program_id ":  wire.CodeUnknownProgramID,
		"Parse: ":              wire.CodeParse,
		"Validation: ":         wire.CodeValidation,
		"Runtime: ":            wire.CodeRuntime,
		"Serialization: ":      wire.CodeSerialization,
	} {
		if strings.HasPrefix(msg, prefix) {
			return code
		}
	}
	switch msg {
	case "raw snapshot restore rejected a tampered or unauthenticated snapshot":
		return wire.CodeTamperedSnapshot
	case "snapshot is sealed and no seal key was given":
		return wire.CodeSealKeyRequired
	case "snapshot is not sealed but a seal key was given":
		return wire.CodeSnapshotNotSealed
	case "snapshot was sealed under another seal key":
		return wire.CodeWrongSealKey
	case "Limit: instruction budget exhausted":
		return wire.CodeLimitInstructions
	case "Limit: heap limit exceeded":
		return wire.CodeLimitHeap
	case "Limit: allocation budget exhausted":
		return wire.CodeLimitAllocations
	case "Limit: call depth limit exceeded":
		return wire.CodeLimitCallDepth
	case "Limit: outstanding host-call limit exhausted":
		return wire.CodeLimitOutstandingCalls
	case "Limit: execution cancelled":
		return wire.CodeLimitCancelled
	case "Limit: wall time exceeded":
		return wire.CodeLimitWallTime
	case "Limit: snapshot size limit exceeded":
		return wire.CodeLimitSnapshotSize
	}
	if strings.HasPrefix(msg, "Limit: ") {
		return wire.CodeLimit
	}
	return ""
}

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
