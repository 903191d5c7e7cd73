package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/host"

	"context"
	"log/slog"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Interceptor wraps what a Runner does, so that a host can time it, trace
// it or log it: every Run of an execution, every segment (a start or a
// resume, up to the next suspension or the end), and every capability
// call. Each field is optional; each gets the context of what it wraps
// and must call next exactly once, with that context or one derived from
// it, and return what next returned (it may look at it).
//
// Contexts nest: the context a Segment or Call gets derives from the one
// the Execution interceptor passed to its next, and a Call's carries the
// values of the one the Segment interceptor passed to its next for the
// segment that suspended on the call (the first such segment: in batch
// mode a call stays outstanding over several; for a call stored by an
// earlier Run, before a restart, the Execution's). So a tracer that
// starts a span in each and puts it in the context gets one tree per
// Run: the execution, its segments, and under each segment the tool
// calls it suspended on. A call's span begins once its segment has ended,
// and in batch mode it may end during a later segment. The context a
// Call gets is cancelled as the capability's own is (see Capability),
// whatever the Segment interceptor did with its own.
//
// A segment that fails because its process died is tried again on a new
// process: each try is a segment, with SegmentInfo.Attempt counting them.
// A capability call tried again under a RetryPolicy goes through Call
// once per try, with Call.Attempt counting them.
type Interceptor struct {
	Execution func(ctx context.Context, e *ExecutionInfo, next func(context.Context) error) error
	Segment   func(ctx context.Context, s *SegmentInfo, next func(context.Context) error) error
	Call      func(ctx context.Context, c Call, next func(context.Context) (value.Value, error)) (value.Value, error)
}

// ExecutionInfo describes one Run of an execution to an Interceptor.
type ExecutionInfo struct {
	ID        string // Execution.ID
	ProgramID string
}

// SegmentInfo describes one segment to an Interceptor. The Runner fills
// in the fields below Answers by the time next returns.
type SegmentInfo struct {
	Execution string // Execution.ID
	// Start is set for the execution's start; a resume leaves it unset.
	Start bool
	// Calls is how many answers the execution was sent before the
	// segment (0 for the start).
	Calls int
	// Answers is how many answers the segment's resume sends (0 for the
	// start).
	Answers int
	// Attempt counts the tries of this step: 1, then 2, ... when the
	// process running it died and the step is tried on a new one.
	Attempt int

	// PID is the sidecar process the segment ran on (0 if none was had).
	PID int
	// Hot is set for a resume on the process holding the parked
	// execution; a resume from the stored bytes (cold) leaves it unset.
	Hot bool
	// Suspended is set if the segment ended suspended on calls; Done if
	// the execution completed (its result) or failed (next's error is an
	// *host.Error with a Kind).
	Suspended, Done bool
	// Logs are the lines the guest wrote with console in this try of
	// the segment (host.Step.Logs, or a failed segment's host.Error.Logs). A try
	// whose process died has none; a segment whose Run ended before it
	// was stored is run again by a later Run, and shows its lines again
	// there. Execution.OnLog is the place that sees each line once.
	Logs []host.LogLine
}

// discardLogger is the logger of a Runner given none and no Pool logger.
var discardLogger = slog.New(slog.DiscardHandler)

// valuesOf is a context with the deadline and cancellation of ctx and the
// values of values: a call's context, cancelled with the call, carrying
// what its segment's interceptor put in the segment's context.
type valuesOf struct {
	context.Context
	values context.Context
}

func (c valuesOf) Value(key any) any { return c.values.Value(key) }
