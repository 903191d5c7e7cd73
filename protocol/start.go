package protocol

import (
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
)

// start serves {"method":"start"}: it runs a program from its beginning to
// its first suspension or its end.
func (s *Session) start(r startRequest, fl *flight) (*stepResult, error) {
	prog, err := s.program(r)
	if err != nil {
		return nil, err
	}
	pol := r.pol
	policyID := pol.ID()
	s.policies.Add(policyID, pol, policyWeight(pol))
	seed, clock := s.opts.Entropy()
	header := snapshot.Header{
		Program:      prog.Bytes,
		Inputs:       snapshot.SortedInputs(r.inputs),
		Capabilities: pol.Capabilities,
		Seed:         seed,
		ClockMillis:  clock,
		Entry:        r.entry,
		Console:      snapshot.Console(pol.Console),
	}
	s.MakeRoom(pol.Limits)
	began := time.Now()
	exec, step := s.engine.Start(engine.Config{Program: prog, Header: header, Limits: pol.Limits, Seal: r.seal, Stop: fl.stop})
	out := &stepResult{step: step, pol: pol, policyID: policyID, batch: pol.HostCalls == policy.HostCallsBatch, profile: r.profile,
		execNS: time.Since(began).Nanoseconds(), started: began, delivery: r.delivery}
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
	return out, nil
}

// program is the program a start names: loaded from its bytes, or cached
// under its id.
func (s *Session) program(r startRequest) (*engine.Program, error) {
	if r.hasProgram {
		return s.loadProgram(r.programID, r.program, true)
	}
	if p, ok := s.programs.Get(r.programID); ok {
		if !p.Startable() {
			// Cached by a replay of one of its snapshots.
			return nil, engine.ErrRetiredProgramFormat
		}
		return p, nil
	}
	return nil, s.evicted.unknownProgram(r.programID)
}
