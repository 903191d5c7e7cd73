package protocol

import (
	"slices"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
)

// resumeReq is what a resume resolves, one contract step at a time.
type resumeReq struct {
	profile  bool
	delivery delivery
	// The answers: payload in one mode, answers in batch mode; which
	// calls they answer is known once the snapshot is.
	answer     resumePayload
	hasPayload bool
	answers    []engine.Answer
	one        [1]engine.Answer // the one-mode answer, without an allocation

	// 1. Snapshot: its id, and either the bytes the host sent or staged
	// (raw; owned when they came from a stage) or the cached entry (entry).
	snapID string
	raw    []byte
	digest snapshot.Digest // of raw, which a replay's journal continues from
	owned  bool
	entry  *snapshotEntry

	// 2. Policy, and the authentication fields that came with it (the
	// seal key among them).
	pol   policy.Policy
	polID string // pol.ID(), once known
	auth  authFields
	seal  *snapshot.Sealer

	// 4. The decoded snapshot and its outstanding calls, unless a parked
	// execution resumes.
	snap        *snapshot.Snapshot
	outstanding []snapshot.HostCall
}

// resume runs the contract's resume checks in order, then continues the
// parked execution (hot) or replays the journal.
func (s *Session) resume(f fields, payload []byte, fl *flight) (*stepResult, error) {
	r := &resumeReq{}
	// A stage is dropped by the resume that names it, whatever the outcome.
	stagedBytes, stageErr := s.takeStage(f)
	set := s.takeAnswerStages(s.takeNamed(nil, f, payloadStageField), f)
	var err error
	if r.profile, err = f.bool("profile"); err != nil {
		return nil, err
	}
	if r.delivery, err = f.delivery("snapshot_delivery"); err != nil {
		return nil, err
	}
	if f.present("answers") {
		if r.answers, err = set.answers(f, "answers"); err != nil {
			return nil, err
		}
	}
	if r.hasPayload = f.present("payload") || f.present(payloadStageField) || r.answers == nil; r.hasPayload {
		if r.answer, err = set.payload(f, "resume"); err != nil {
			return nil, err
		}
	}
	if err := f.unknownIn("policy", "policy", policyKeys); err != nil {
		return nil, err
	}
	if err := f.unknownIn("auth", "auth", authKeys); err != nil {
		return nil, err
	}
	if err := s.resolveSnapshot(r, f, payload, stagedBytes, stageErr); err != nil {
		return nil, err
	}
	if err := s.resolvePolicy(r, f); err != nil {
		return nil, err
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

// takeStage removes the stage a resume names. It returns nil bytes and no
// error when the resume names none.
func (s *Session) takeStage(f fields) ([]byte, error) {
	id, ok, err := f.stageID("stage_id")
	if err != nil || !ok {
		return nil, err
	}
	b, ok := s.stages.take(id)
	if !ok {
		return nil, errorf(codeUnknownStageID, "unknown stage_id `%s`", id)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// resolveSnapshot is step 1: the snapshot's id from the bytes sent or
// staged, or a cached id.
func (s *Session) resolveSnapshot(r *resumeReq, f fields, payload, stagedBytes []byte, stageErr error) error {
	givenID, hasGivenID, err := f.string("snapshot_id")
	if err != nil {
		return err
	}
	raw, hasRaw, err := s.rawBytes(f, payload, "snapshot_base64")
	if err != nil {
		return err
	}
	if stageErr != nil {
		return stageErr
	}
	if stagedBytes != nil {
		if hasRaw {
			return errorf(codeSnapshotAndStage, "resume takes snapshot bytes or stage_id, not both")
		}
		raw, hasRaw, r.owned = stagedBytes, true, true
	}
	switch {
	case hasRaw:
		r.raw, r.digest = raw, snapshot.NewDigest(raw)
		r.snapID = r.digest.ID()
		if hasGivenID && givenID != r.snapID {
			return errorf(codeSnapshotIDMismatch, "snapshot_id did not match snapshot bytes")
		}
	case hasGivenID:
		r.snapID = givenID
		if r.entry = s.lookupSnapshot(givenID); r.entry == nil {
			return s.unknownSnapshot(givenID)
		}
	default:
		return errorf(codeMissingSnapshot, "resume requires snapshot bytes or snapshot_id")
	}
	if signed, ok := policySnapshotID(f); ok && signed != r.snapID {
		return errTampered
	}
	return nil
}

// policySnapshotID reads policy.snapshot_id, the id the host's token signs,
// when it is there to compare; a policy or field of the wrong type is
// reported by the later steps.
func policySnapshotID(f fields) (string, bool) {
	pf, ok, err := f.object("policy")
	if err != nil || !ok {
		return "", false
	}
	id, ok, err := pf.string("snapshot_id")
	return id, ok && err == nil
}

// resolvePolicy is step 2: a full policy (raw form) or a cached policy id
// with an auth object.
func (s *Session) resolvePolicy(r *resumeReq, f fields) error {
	policyID, hasPolicyID, err := f.string("policy_id")
	if err != nil {
		return err
	}
	polFields, hasPolicy, err := f.object("policy")
	if err != nil {
		return err
	}
	switch {
	case hasPolicy:
		return s.rawPolicy(r, polFields, policyID, hasPolicyID)
	case hasPolicyID:
		return s.cachedPolicy(r, f, policyID)
	}
	return errorf(codeMissingPolicy, "resume requires policy or policy_id")
}

func (s *Session) rawPolicy(r *resumeReq, pf fields, policyID string, hasPolicyID bool) error {
	if !pf.present("limits") {
		return errorf(codeMissingLimits, "raw snapshot restore requires explicit limits")
	}
	caps, err := pf.capabilities("capabilities")
	if err != nil {
		return errorf(codeInvalidField, "policy.capabilities must be an array of strings")
	}
	limits, err := pf.limits("limits")
	if err != nil {
		return err
	}
	if r.pol, err = policy.New(caps, limits); err != nil {
		return wrapError(codeInvalidCapability, err)
	}
	if r.pol.HostCalls, err = pf.hostCalls("host_calls"); err != nil {
		return err
	}
	if r.pol.Console, err = pf.console("console"); err != nil {
		return err
	}
	r.polID = r.pol.ID()
	if hasPolicyID && policyID != r.polID {
		return errorf(codePolicyIDMismatch, "policy_id did not match policy")
	}
	if r.auth, err = readAuth(pf); err != nil {
		return err
	}
	r.seal, err = s.seals.read(pf, "policy")
	return err
}

func (s *Session) cachedPolicy(r *resumeReq, f fields, policyID string) error {
	var ok bool
	if r.pol, ok = s.policies.Get(policyID); !ok {
		// The policy the snapshot was produced under stays with it.
		entry := r.entry
		if entry == nil {
			entry = s.lookupPeek(r.snapID)
		}
		if entry == nil {
			return s.unknownPolicy(policyID)
		}
		if r.pol, ok = entry.pinned(policyID); !ok {
			return s.unknownPolicy(policyID)
		}
	}
	r.polID = policyID // the cache's key is the policy's ID
	authObj, ok, err := f.object("auth")
	if err != nil {
		return err
	}
	if !ok {
		return errorf(codeMissingAuth, "resume with policy_id requires auth metadata")
	}
	if r.auth, err = readAuth(authObj); err != nil {
		return err
	}
	if r.seal, err = s.seals.read(authObj, "auth"); err != nil {
		return err
	}
	r.auth.snapshotID, r.auth.hasID = r.snapID, true
	return nil
}

// reassert is steps 4 and 5 for authenticated input: the capabilities of
// the outstanding calls must be granted. A parked execution knows its
// calls; otherwise the snapshot is decoded (for the replay that follows),
// so bytes the host sent that are malformed fail here.
func (s *Session) reassert(r *resumeReq) error {
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
	if err := checkConsole(r.pol, r.snap.Header.Console); err != nil {
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
func (r *resumeReq) engineAnswers(focus uint64) []engine.Answer {
	if r.answers != nil {
		return r.answers
	}
	r.one[0] = engine.Answer{CallID: focus, Payload: r.answer.engine()}
	return r.one[:]
}

// resumeHot continues the parked execution that produced the snapshot.
func (s *Session) resumeHot(r *resumeReq, c *continuation, out *stepResult, fl *flight) (*stepResult, error) {
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
		engine.RecordAnswers(c.builder, answers)
		if err := s.park(out, exec, c.builder, c.prog); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// resumeReplay re-runs the program from the snapshot's journal in a fresh
// realm and continues live from its last suspension.
func (s *Session) resumeReplay(r *resumeReq, out *stepResult, fl *flight) (*stepResult, error) {
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
	s.roomToRun(r.pol.Limits)
	exec, step := s.engine.Start(engine.Config{
		Program: prog,
		Header:  snap.Header,
		Limits:  r.pol.Limits,
		Journal: snap,
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
		var d snapshot.Digest
		if r.entry == nil {
			d, r.digest = r.digest, snapshot.Digest{} // raw is r.raw
		}
		b := snapshot.ContinueBuilderFrom(raw, snap, r.seal, d)
		engine.RecordAnswers(b, answers)
		if err := s.park(out, exec, b, prog); err != nil {
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
