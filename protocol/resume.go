package protocol

import (
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
)

// resume runs the contract's resume checks in order and continues the
// execution. Steps 1 to 3 (the snapshot and policy the request names, and
// its authentication) are the session's: its caches and keys. What needs
// the execution or its journal (the seal, step 4, the decode) and the
// choice between the parked execution and a replay are the engine's
// (engine/resume.go). The request holds the failures of its own fields at
// the steps the contract reports them.
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
	c, _ := s.conts.Peek(r.snapID)
	run := s.resumption(r, c)
	if err := run.Admit(); err != nil {
		return nil, err
	}
	if c != nil {
		// Out of the cache while it runs: nothing evicts it meanwhile.
		s.conts.Take(r.snapID)
		s.stats.HotResumes++
	} else {
		s.stats.Replays++
	}
	s.policies.Add(r.polID, r.pol, policyWeight(r.pol))
	out := &stepResult{pol: r.pol, policyID: r.polID, batch: r.pol.HostCalls == policy.HostCallsBatch,
		profile: r.profile, started: time.Now(), delivery: r.delivery, baseID: r.snapID, base: run.Raw}
	if c != nil {
		out.base = c.entry.bytes
	}
	exec, step := run.Run(s.engine, s.store, fl.stop)
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
		if err := s.park(out, exec, exec.Program()); err != nil {
			return nil, err
		}
	}
	if r.entry == nil && c == nil {
		s.keepSent(r)
	}
	return out, nil
}

// resumption is the engine's resume of r: the parked execution c, if
// any, or the bytes the session holds or was sent.
func (s *Session) resumption(r *resumeRequest, c *continuation) *engine.Resume {
	run := &r.run
	*run = engine.Resume{Raw: r.raw, Digest: r.digest, Seal: r.seal, Policy: r.pol,
		Answers: r.answers, One: r.answer.engine(), HasOne: r.hasPayload}
	if r.entry != nil {
		// Bytes the session holds: their seal is known, and their digest
		// is not needed (a journal continuing them hashes them again).
		run.Raw, run.Digest, run.Held, run.HeldSeal = r.entry.bytes, snapshot.Digest{}, true, r.entry.seal
	}
	if c != nil {
		run.Parked = c.exec
	}
	return run
}

// keepSent caches the bytes of a raw resume, like ones this session
// produced, pinning the policy it resumed under.
func (s *Session) keepSent(r *resumeRequest) {
	raw := r.raw
	if !r.owned {
		raw = append([]byte(nil), raw...)
	}
	e := &snapshotEntry{bytes: raw, seal: r.seal, pols: pinPolicy(nil, r.polID, r.pol)}
	s.snapshots.Add(r.snapID, e, e.weight())
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
