package protocol

import (
	"slices"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
)

// resume runs the contract's resume checks in order, then continues the
// parked execution (hot) or replays the journal. The request holds the
// failures of its own fields at the steps the contract reports them.
func (s *Session) resume(r *resumeRequest, fl *flight) (*stepResult, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.byID {
		if r.entry = s.lookupSnapshot(r.snapID); r.entry == nil {
			return nil, s.evicted.unknownSnapshot(r.snapID)
		}
	}
	if r.afterSnapshot != nil {
		return nil, r.afterSnapshot
	}
	if r.cached {
		if err := s.cachedPolicy(r); err != nil {
			return nil, err
		}
		if r.afterPolicy != nil {
			return nil, r.afterPolicy
		}
	}
	if err := s.keys.authenticate(r.auth, r.snapID); err != nil {
		return nil, err
	}
	if r.entry != nil {
		if err := checkSeal(r.entry.seal, r.seal); err != nil {
			return nil, err
		}
	}
	batch := r.pol.HostCalls == policy.HostCallsBatch
	if batch != (r.answers != nil) || batch && r.hasPayload {
		return nil, errorf(codeHostCallsMismatch, "resume payload does not match host_calls %s", r.pol.HostCalls)
	}
	if err := s.reassert(r); err != nil {
		return nil, err
	}
	policyID := r.polID
	s.policies.Add(policyID, r.pol, policyWeight(r.pol))
	out := &stepResult{pol: r.pol, policyID: policyID, batch: batch, profile: r.profile, started: time.Now(), delivery: r.delivery, baseID: r.snapID}
	if c, ok := s.conts.Take(r.snapID); ok {
		return s.resumeHot(r, c, out, fl)
	}
	return s.resumeReplay(r, out, fl)
}

// cachedPolicy finds the policy a resume names by id: cached, or pinned by
// the snapshot it resumes.
func (s *Session) cachedPolicy(r *resumeRequest) error {
	var ok bool
	if r.pol, ok = s.policies.Get(r.polID); !ok {
		// The policy the snapshot was produced under stays with it.
		entry := r.entry
		if entry == nil {
			entry = s.lookupPeek(r.snapID)
		}
		if entry == nil {
			return s.evicted.unknownPolicy(r.polID)
		}
		if r.pol, ok = entry.pinned(r.polID); !ok {
			return s.evicted.unknownPolicy(r.polID)
		}
	}
	return nil
}

// reassert is steps 4 and 5 for authenticated input: the capabilities of
// the outstanding calls must be granted. A parked execution knows its
// calls; otherwise the snapshot is decoded (for the replay that follows),
// so bytes the host sent that are malformed fail here.
func (s *Session) reassert(r *resumeRequest) error {
	granted := func(c *snapshot.HostCall) error {
		if err := r.pol.Reassert(c.Capability); err != nil {
			return wrapError(codeUnauthorizedCapability, err)
		}
		return nil
	}
	if r.entry != nil {
		if c, ok := s.conts.Peek(r.snapID); ok {
			if err := checkConsole(r.pol, c.exec.Console()); err != nil {
				return err
			}
			return c.exec.EachOutstanding(granted)
		}
	}
	raw := r.raw
	if r.entry != nil {
		raw = r.entry.bytes
	}
	var err error
	if r.snap, err = loadSnapshot(raw, r.seal); err != nil {
		return err
	}
	if err := checkConsole(r.pol, policy.Console(r.snap.Header.Console)); err != nil {
		return err
	}
	r.outstanding = r.snap.Outstanding()
	for i := range r.outstanding {
		if err := granted(&r.outstanding[i]); err != nil {
			return err
		}
	}
	return nil
}

// checkConsole refuses a resume whose policy's console mode is not the
// one the execution started with: the console is part of the realm the
// journal replays in.
func checkConsole(p policy.Policy, started policy.Console) error {
	if p.Console != started {
		return errorf(codeConsoleMismatch, "snapshot policy rejected console `%s`; the execution started with console `%s`", p.Console, started)
	}
	return nil
}

// engineAnswers are the resume's answers; in one mode, the payload
// answers the focus call.
func (r *resumeRequest) engineAnswers(focus uint64) []engine.Answer {
	if r.answers != nil {
		return r.answers
	}
	r.one[0] = engine.Answer{CallID: focus, Payload: r.answer.engine()}
	return r.one[:]
}

// resumeHot continues the parked execution that produced the snapshot.
func (s *Session) resumeHot(r *resumeRequest, c *continuation, out *stepResult, fl *flight) (*stepResult, error) {
	s.stats.HotResumes++
	out.base = c.entry.bytes
	answers := r.engineAnswers(c.exec.Focus())
	s.roomToRun(r.pol.Limits)
	exec, step := c.exec.ResumeWith(fl.stop, answers, r.pol.Limits)
	out.step, out.execNS = step, time.Since(out.started).Nanoseconds()
	if err := s.settleRun(fl, exec); err != nil {
		return nil, err
	}
	if step.Err != nil {
		if exec != nil {
			// Refused before running (answers to calls not outstanding,
			// or already over the new limits): the execution stays parked.
			s.conts.Add(r.snapID, c, c.weight)
		}
		return nil, failedStep(step)
	}
	if exec != nil {
		if err := s.park(out, exec, c.prog); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// resumeReplay re-runs the program from the snapshot's journal in a fresh
// realm and continues live from its last suspension.
func (s *Session) resumeReplay(r *resumeRequest, out *stepResult, fl *flight) (*stepResult, error) {
	raw, snap := r.raw, r.snap // reassert decoded the snapshot
	if r.entry != nil {
		raw = r.entry.bytes
	}
	// The replay keeps its answers: a copy, so the request (whose one-mode
	// answer the hot path uses in place) need not be allocated.
	answers := slices.Clone(r.engineAnswers(snap.Last().Focus))
	if err := engine.CheckAnswers(r.outstanding, uint64(len(snap.Calls)), answers); err != nil {
		return nil, err
	}
	prog, err := s.loadProgram(snapshot.ID(snap.Header.Program), snap.Header.Program, false)
	if err != nil {
		return nil, err
	}
	s.stats.Replays++
	out.base = raw
	// The execution's journal continues the bytes: with the digest of
	// bytes the host sent, taken when they were authenticated.
	var d snapshot.Digest
	if r.entry == nil {
		d, r.digest = r.digest, snapshot.Digest{} // raw is r.raw
	}
	s.roomToRun(r.pol.Limits)
	exec, step := s.engine.Start(engine.Config{
		Program: prog,
		Header:  snap.Header,
		Limits:  r.pol.Limits,
		Seal:    r.seal,
		Journal: snap,
		Raw:     raw,
		Digest:  d,
		Answers: answers,
		Stop:    fl.stop,
	})
	out.step, out.execNS = step, time.Since(out.started).Nanoseconds()
	if err := s.settleRun(fl, exec); err != nil {
		return nil, err
	}
	if step.Err != nil {
		return nil, failedStep(step)
	}
	if exec != nil {
		if err := s.park(out, exec, prog); err != nil {
			return nil, err
		}
	}
	if r.entry == nil {
		// Raw bytes a host sent are cached like ones this session produced.
		if !r.owned {
			raw = append([]byte(nil), raw...)
		}
		e := &snapshotEntry{bytes: raw, seal: r.seal, pols: pinPolicy(nil, r.polID, r.pol)}
		s.snapshots.Add(r.snapID, e, e.weight())
	}
	return out, nil
}
