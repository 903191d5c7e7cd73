package protocol

import (
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// start serves {"method":"start"}: it runs a program from its beginning to
// its first suspension or its end.
func (s *Session) start(f fields, payload []byte, fl *flight) (*stepResult, error) {
	set := s.takeNamed(nil, f, programStageField)
	if o, err := splitObject(f.at("options")); err == nil {
		set = s.takeNamed(set, o, inputsStageField)
	}
	profile, err := f.bool("profile")
	if err != nil {
		return nil, err
	}
	dlv, err := f.delivery("snapshot_delivery")
	if err != nil {
		return nil, err
	}
	opts, ok, err := f.closedObject("options", "options", optionsKeys)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errorf(codeMissingField, "start requires options")
	}
	inputs, err := set.inputs(opts)
	if err != nil {
		return nil, err
	}
	caps, err := opts.capabilities("capabilities")
	if err != nil {
		return nil, errorf(codeInvalidField, "options.capabilities must be an array of strings")
	}
	limits, err := opts.limits("limits")
	if err != nil {
		return nil, err
	}
	mode, err := opts.hostCalls("host_calls")
	if err != nil {
		return nil, err
	}
	console, err := opts.console("console")
	if err != nil {
		return nil, err
	}
	entry, err := opts.entry("entry")
	if err != nil {
		return nil, err
	}
	seal, err := s.seals.read(opts, "options")
	if err != nil {
		return nil, err
	}
	pol, err := policy.New(caps, limits)
	if err != nil {
		return nil, wrapError(codeInvalidCapability, err)
	}
	pol.HostCalls, pol.Console = mode, console
	if err := engine.CheckCapabilities(pol.Capabilities, inputs); err != nil {
		return nil, wrapError(codeInvalidCapability, err)
	}
	prog, err := s.program(f, payload, set)
	if err != nil {
		return nil, err
	}
	policyID := pol.ID()
	s.policies.Add(policyID, pol, policyWeight(pol))
	seed, clock := s.opts.Entropy()
	header := snapshot.Header{
		Program:      prog.Bytes,
		Inputs:       engine.SortedMembers(inputs),
		Capabilities: pol.Capabilities,
		Seed:         seed,
		ClockMillis:  clock,
		Entry:        entry,
		Console:      console,
	}
	s.roomToRun(pol.Limits)
	began := time.Now()
	exec, step := s.engine.Start(engine.Config{Program: prog, Header: header, Limits: pol.Limits, Stop: fl.stop})
	out := &stepResult{step: step, pol: pol, policyID: policyID, batch: mode == policy.HostCallsBatch, profile: profile,
		execNS: time.Since(began).Nanoseconds(), started: began, delivery: dlv}
	if err := s.settleRun(fl, exec); err != nil {
		return nil, err
	}
	if step.Err != nil {
		return nil, failedStep(step)
	}
	if exec != nil {
		if err := s.park(out, exec, snapshot.NewBuilder(header, seal, prog.SnapshotVersion()), prog); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// program is the program a start names: its bytes, its cached id, or both
// (which must agree).
func (s *Session) program(f fields, payload []byte, set stagedSet) (*engine.Program, error) {
	id, hasID, err := f.string("program_id")
	if err != nil {
		return nil, err
	}
	b, hasBytes, err := s.rawBytes(f, payload, "program_base64")
	if err != nil {
		return nil, err
	}
	if id, ok, err := f.stageID(programStageField); err != nil {
		return nil, err
	} else if ok {
		if hasBytes {
			return nil, errorf(codeValueAndStage, "start takes program bytes or %s, not both", programStageField)
		}
		if b, hasBytes = set[id]; !hasBytes {
			return nil, errorf(codeUnknownStageID, "unknown stage_id `%s`", id)
		}
	}
	switch {
	case hasBytes:
		got := snapshot.ID(b)
		if hasID && id != got {
			return nil, errorf(codeProgramIDMismatch, "program_id did not match program bytes")
		}
		return s.loadProgram(got, b, true)
	case hasID:
		if p, ok := s.programs.Get(id); ok {
			if !p.Startable() {
				// Cached by a replay of one of its snapshots.
				return nil, engine.ErrRetiredProgramFormat
			}
			return p, nil
		}
		return nil, s.unknownProgram(id)
	}
	return nil, errorf(codeMissingProgram, "start requires program bytes or program_id")
}

// inputs reads options.inputs, or the object its inputs_stage_id staged.
func (set stagedSet) inputs(opts fields) ([]value.Member, error) {
	b, ok, err := set.staged(opts, inputsStageField, "inputs", "options")
	if err != nil || !ok {
		if err != nil {
			return nil, err
		}
		return opts.inputs("inputs")
	}
	sf, err := stagedJSON("options."+inputsStageField, "inputs", b)
	if err != nil {
		return nil, err
	}
	return sf.inputs("inputs")
}
