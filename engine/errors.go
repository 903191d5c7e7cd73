package engine

import "unicode/utf8"

// ErrorKind classifies guest-side failures; it is the prefix of the
// rendered message.
type ErrorKind string

const (
	KindParse         ErrorKind = "Parse"
	KindValidation    ErrorKind = "Validation"
	KindRuntime       ErrorKind = "Runtime"
	KindLimit         ErrorKind = "Limit"
	KindSerialization ErrorKind = "Serialization"
)

// Error is a guest-side failure. Its text is safe to show a host: it never
// carries host paths or Go internals.
type Error struct {
	Kind    ErrorKind
	Message string
}

func (e *Error) Error() string { return string(e.Kind) + ": " + e.Message }

// Limit failures, exactly as hosts match them.
var (
	ErrInstructionBudget = &Error{Kind: KindLimit, Message: "instruction budget exhausted"}
	ErrHeapLimit         = &Error{Kind: KindLimit, Message: "heap limit exceeded"}
	ErrAllocationBudget  = &Error{Kind: KindLimit, Message: "allocation budget exhausted"}
	ErrCallDepth         = &Error{Kind: KindLimit, Message: "call depth limit exceeded"}
	ErrOutstandingCalls  = &Error{Kind: KindLimit, Message: "outstanding host-call limit exhausted"}
	ErrCancelled         = &Error{Kind: KindLimit, Message: "execution cancelled"}
)

func utf8Valid(s string) bool { return utf8.ValidString(s) }
