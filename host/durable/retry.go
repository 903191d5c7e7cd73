package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/host"

	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// RetryPolicy says what a Runner does when a capability returns an error
// that is not a host.CallError. The zero RetryPolicy is the Runner's behaviour
// without one: the error stops Run, which returns it, and a later Run of
// the execution asks the same call again.
//
// With Attempts set, a call whose error is retryable (Retryable, by
// default IsTransient) is tried again after a backoff, up to Attempts
// tries in all, each with the same Call (its ID the same: an idempotency
// key) and Call.Attempt counting them. An error that is not retryable, or
// the last try's, is the call's outcome: the guest's call throws (its
// promise rejects) a host.Error with the error's text as its message, which
// guest code can catch, or, if the error wraps a host.CallError, that
// host.CallError. With StopRun it stops Run instead, as without a policy.
//
// An error while Run's ctx is done (Run ending, or Cancel) is never
// retried nor shown to the guest: it stops Run, and the call is asked
// again by a later Run, its tries counted afresh.
type RetryPolicy struct {
	// Attempts bounds the tries of one call, the first included; 0 means
	// no policy (see above), 1 one try whose error goes to the guest.
	Attempts int
	// Backoff is the wait before the second try; each later wait doubles
	// it, up to MaxBackoff. Each wait is drawn at random between half
	// and all of that, so that calls failing together do not retry
	// together. 0 means 100 ms; MaxBackoff 0 means 10 s.
	Backoff, MaxBackoff time.Duration
	// Retryable reports whether an error is worth another try; nil means
	// IsTransient.
	Retryable func(error) bool
	// StopRun makes a call's final error stop Run (the call then asked
	// again by a later Run) instead of throwing in the guest.
	StopRun bool
}

// Transient marks err as transient: worth another try of the call (see
// RetryPolicy). The result matches err with errors.Is and errors.As and
// has its text. Transient(nil) is nil.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return &transientError{err}
}

type transientError struct{ err error }

func (e *transientError) Error() string   { return e.err.Error() }
func (e *transientError) Unwrap() error   { return e.err }
func (e *transientError) Transient() bool { return true }

// IsTransient reports whether err, or an error it wraps, has a method
// Transient() bool that returns true: errors made with Transient, and
// any of the host's own error types that say so.
func IsTransient(err error) bool {
	var t interface{ Transient() bool }
	return errors.As(err, &t) && t.Transient()
}

// retryFor is the policy of the capability name in x.
func (x *execution) retryFor(name string) RetryPolicy {
	if p, ok := x.e.Retry[name]; ok {
		return p
	}
	return x.r.Retry
}

// answer runs a capability call, with the retries of its policy, and
// returns the answer to store, or the error that stops Run.
func (x *execution) answer(ctx, values context.Context, fn Capability, call Call) (host.Payload, error) {
	p := x.retryFor(call.Name)
	retryable := p.Retryable
	if retryable == nil {
		retryable = IsTransient
	}
	backoff := p.Backoff
	if backoff <= 0 {
		backoff = 100 * time.Millisecond
	}
	maxBackoff := p.MaxBackoff
	if maxBackoff <= 0 {
		maxBackoff = 10 * time.Second
	}
	for attempt := 1; ; attempt++ {
		call.Attempt = attempt
		v, err := x.callCapability(ctx, values, fn, call)
		if err != nil && p.Attempts > 0 && ctx.Err() == nil && attempt < p.Attempts && retryable(err) {
			wait := backoff << min(attempt-1, 30)
			if wait <= 0 || wait > maxBackoff {
				wait = maxBackoff
			}
			wait = wait/2 + rand.N(wait/2+1)
			x.log.Warn("capability failed; trying it again", "execution", x.e.ID, "capability", call.Name,
				"call", call.ID, "attempt", attempt, "wait", wait, "error", err.Error())
			t := time.NewTimer(wait)
			select {
			case <-t.C:
				continue
			case <-ctx.Done():
				t.Stop()
				return answerOf(call.Name, v, err)
			}
		}
		answer, aerr := answerOf(call.Name, v, err)
		if err != nil && aerr == nil && attempt > 1 {
			x.log.Warn("capability failed; the guest's call throws its error", "execution", x.e.ID,
				"capability", call.Name, "call", call.ID, "attempts", attempt, "error", err.Error())
		}
		if aerr == nil || ctx.Err() != nil || p.Attempts <= 0 || p.StopRun {
			return answer, aerr
		}
		x.log.Warn("capability failed; the guest's call throws its error", "execution", x.e.ID,
			"capability", call.Name, "call", call.ID, "attempts", attempt, "error", err.Error())
		return host.Throw(guestError(err)), nil
	}
}

// guestError is what the guest sees of a capability's final error: the
// host.CallError it wraps, or a host.Error with its text.
func guestError(err error) host.CallError {
	var ce host.CallError
	var pce *host.CallError
	switch {
	case errors.As(err, &pce) && pce != nil:
		return *pce
	case errors.As(err, &ce):
		return ce
	}
	return host.CallError{Name: "Error", Message: err.Error()}
}
