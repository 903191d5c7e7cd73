package durable

import (
	"errors"
	"fmt"
)

// refusal is an error with its own text that matches a sentinel, and
// the error that caused it, if any.
type refusal struct {
	msg   string
	is    error
	cause error
}

func (e *refusal) Error() string { return e.msg }
func (e *refusal) Unwrap() []error {
	if e.cause == nil {
		return []error{e.is}
	}
	return []error{e.is, e.cause}
}

// refuse is a refusal matching is, with the text format makes of args.
func refuse(is error, format string, args ...any) error {
	return &refusal{fmt.Sprintf(format, args...), is, nil}
}

// Sentinels for the Runner's refusals, for errors.Is.
var (
	// ErrInvalidRun: the Runner or the Execution lacks what Run needs
	// (Runner.Pool, Runner.Key, Execution.ID, Execution.Program) or has
	// a field out of its range (Runner.HostCalls).
	ErrInvalidRun = errors.New("invalid Runner or Execution")
	// ErrProgramMismatch: the Store holds the execution ID with another
	// program than Execution.Program.
	ErrProgramMismatch = errors.New("execution stored with another program")
	// ErrCapabilityNotGiven: the execution is suspended on a capability
	// that Execution.Capabilities does not name (it was given one by the
	// Run that started it, and not by this one).
	ErrCapabilityNotGiven = errors.New("capability not given")
	// ErrBadCheckpoint: the Store returned a checkpoint the Runner cannot
	// continue (a batch-mode one without its outstanding calls).
	ErrBadCheckpoint = errors.New("checkpoint cannot be continued")
	// ErrInterceptor: an Interceptor did not call next exactly once.
	ErrInterceptor = errors.New("interceptor did not call next once")
	// ErrInvalidAnswer: a capability returned a value that cannot cross
	// the boundary (value.Value.Validate refused it).
	ErrInvalidAnswer = errors.New("capability answer cannot cross the boundary")
	// ErrProcessesKeepDying: Runner.MaxAttempts sidecar processes in a
	// row died during one step; the error wraps the last one's
	// host.ErrProcessExited too.
	ErrProcessesKeepDying = errors.New("sidecar processes keep dying during one step")
)
