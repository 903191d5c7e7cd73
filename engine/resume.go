package engine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
)

// A resume continues a suspended execution from its snapshot: the
// execution itself if it is still parked (hot), or else a replay of the
// snapshot's journal in a fresh realm (cold). The caller authenticates the
// snapshot; Admit then makes the checks that need the execution or its
// journal, and Run continues it. Hot and cold check alike, so a resume
// that fails after a crash fails the same way before one.

// Resume is one resume of a suspended execution.
type Resume struct {
	// Parked is the execution that suspended, if it is still parked.
	Parked *Execution
	// Raw are the snapshot's bytes, authenticated by the caller, and
	// Digest, if not zero, their digest. Held says the caller produced or
	// cached them itself, sealed under HeldSeal: their seal is then
	// compared with Seal before anything else, and a parked execution is
	// resumed without decoding them.
	Raw      []byte
	Digest   snapshot.Digest
	Held     bool
	HeldSeal *snapshot.Sealer
	// Seal is the seal key the resume names (nil: none).
	Seal *snapshot.Sealer
	// Policy is re-asserted (its capabilities and console) and governs
	// what runs (its limits and mode).
	Policy policy.Policy
	// The answers. In batch mode Answers (not nil); in one mode One, which
	// answers the call the suspension presented (HasOne: it was sent).
	Answers []Answer
	One     Payload
	HasOne  bool

	// Set by Admit (and one by Run).
	journal     *snapshot.Snapshot // decoded, when no execution is resumed hot
	outstanding []snapshot.HostCall
	one         [1]Answer // the one-mode answer, without an allocation
}

// RefusalReason says why a resume was refused.
type RefusalReason int

const (
	SealKeyRequired RefusalReason = iota // the snapshot is sealed; the resume names no seal key
	NotSealed                            // the resume names a seal key; the snapshot is not sealed
	WrongSealKey                         // the snapshot is sealed under another key
	ModeMismatch                         // batch answers in one mode, or a payload in batch mode
	ConsoleMismatch                      // the policy's console is not the one the execution started with
	Unauthorized                         // an outstanding call's capability is not granted
)

// Refusal is a resume refused before anything ran. Nothing has changed
// when a resume fails with one.
type Refusal struct {
	Reason RefusalReason
	Msg    string
}

func (e *Refusal) Error() string { return e.Msg }

// Admit checks r in the contract's order: a held snapshot's seal, the
// answers' mode, then (decoding the bytes unless a held snapshot's
// execution is parked) the console and the capability of every
// outstanding call, in call order. Bytes that do not decode fail with a
// Serialization error.
func (r *Resume) Admit() error {
	if r.Held {
		if err := sealRefusal(checkSeal(r.HeldSeal, r.Seal)); err != nil {
			return err
		}
	}
	if batch := r.Policy.HostCalls == policy.HostCallsBatch; batch != (r.Answers != nil) || batch && r.HasOne {
		return &Refusal{ModeMismatch, fmt.Sprintf("resume payload does not match host_calls %s", r.Policy.HostCalls)}
	}
	// What the execution started with and what it waits on: the parked
	// execution knows; otherwise its journal says.
	var started policy.Console
	var capability func(i int) string
	n := 0
	if x := r.Parked; r.Held && x != nil {
		started, n = x.console, len(x.outstanding)
		capability = func(i int) string { return x.outstanding[i].Capability }
	} else {
		snap, err := snapshot.Load(r.Raw, r.Seal)
		if err != nil {
			if e := sealRefusal(err); e != nil {
				return e
			}
			return &Error{Kind: KindSerialization, Message: err.Error()}
		}
		r.journal, r.outstanding = snap, snap.Outstanding()
		started, n = policy.Console(snap.Header.Console), len(r.outstanding)
		capability = func(i int) string { return r.outstanding[i].Capability }
	}
	// The console is part of the realm the journal replays in.
	if c := r.Policy.Console; c != started {
		return &Refusal{ConsoleMismatch, fmt.Sprintf("snapshot policy rejected console `%s`; the execution started with console `%s`", c, started)}
	}
	for i := range n {
		if err := r.Policy.Reassert(capability(i)); err != nil {
			return &Refusal{Unauthorized, err.Error()}
		}
	}
	return nil
}

// errNotAdmitted is a replay run without its journal: Admit decodes it.
var errNotAdmitted = errors.New("resume run before it was admitted")

// A Store is what a cold resume draws on from its caller.
type Store interface {
	// Program returns the program with this id, from its bytes if it is
	// not at hand.
	Program(id string, b []byte) (*Program, error)
	// MakeRoom is called before an execution runs under limits l.
	MakeRoom(l policy.Limits)
}

// Run continues the resume under its policy's limits, once Admit has
// admitted it, with a Stopper that can end the segment (nil: none).
// Answers that do not fit the outstanding calls fail its Step with an
// *AnswerError; a hot resume that fails so, or is over a stricter budget,
// leaves the execution parked (the returned execution).
func (r *Resume) Run(rt *Runtime, st Store, stop *Stopper) (*Execution, Step) {
	limits := r.Policy.Limits
	if x := r.Parked; x != nil {
		st.MakeRoom(limits)
		return x.ResumeWith(stop, r.answers(x.Focus()), limits)
	}
	cfg, err := r.replay(st, stop)
	if err != nil {
		return nil, Step{Err: err}
	}
	return rt.Start(cfg)
}

// replay is what a cold resume starts: the journal replayed with its
// answers checked, its program from st, with room made for it.
func (r *Resume) replay(st Store, stop *Stopper) (Config, error) {
	if r.journal == nil {
		return Config{}, errNotAdmitted
	}
	// The replay keeps its answers: a copy, so that a one-mode answer
	// needs no allocation on the hot path.
	answers := slices.Clone(r.answers(r.journal.Last().Focus))
	if err := CheckAnswers(r.outstanding, r.journal.Made(), answers); err != nil {
		return Config{}, err
	}
	h := r.journal.Header
	prog, err := st.Program(snapshot.ID(h.Program), h.Program)
	if err != nil {
		return Config{}, err
	}
	limits := r.Policy.Limits
	st.MakeRoom(limits)
	return Config{
		Program: prog,
		Header:  h,
		Limits:  limits,
		Seal:    r.Seal,
		Journal: r.journal,
		Raw:     r.Raw,
		Digest:  r.Digest,
		Answers: answers,
		Stop:    stop,
	}, nil
}

// answers are the resume's answers; in one mode, One answers the focus
// call.
func (r *Resume) answers(focus uint64) []Answer {
	if r.Answers != nil {
		return r.Answers
	}
	r.one[0] = Answer{CallID: focus, Payload: r.One}
	return r.one[:]
}

// checkSeal compares the seal of a snapshot the caller holds with the
// resume's.
func checkSeal(held, given *snapshot.Sealer) error {
	switch {
	case held != nil && given == nil:
		return snapshot.ErrSealedNeedsKey
	case held == nil && given != nil:
		return snapshot.ErrNotSealed
	case held != nil && !held.Same(given):
		return snapshot.ErrSealKey
	}
	return nil
}

// sealRefusal turns a seal mismatch into its refusal; nil for any other
// error.
func sealRefusal(err error) error {
	for _, e := range []struct {
		err    error
		reason RefusalReason
	}{
		{snapshot.ErrSealedNeedsKey, SealKeyRequired},
		{snapshot.ErrNotSealed, NotSealed},
		{snapshot.ErrSealKey, WrongSealKey},
	} {
		if errors.Is(err, e.err) {
			return &Refusal{e.reason, e.err.Error()}
		}
	}
	return nil
}
