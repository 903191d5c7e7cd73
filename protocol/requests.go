package protocol

import (
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Typed requests. Each method's request is decoded once, here, into a
// struct of its own, in the order the contract checks its fields: the
// first failure found is the request's answer. The session's methods take
// these structs and never read the request's JSON again.
//
// A decode touches two things the session holds, both the request's own
// business: it takes the stages the request names (every one of them,
// before anything else about the request is checked, staged.go), and it
// opens seal keys through the last one it opened (seal.go). It looks up
// nothing cached: where the contract puts a lookup (an unknown snapshot or
// policy id) before a field's own failure, the decode keeps that failure
// for the step after the lookup (resumeRequest).

// decoder decodes request bodies for one session. Only cancel, which
// reads neither stages nor seal keys, may be decoded while another request
// is served.
type decoder struct {
	binary bool // the binary transport: raw bytes travel as the payload
	stages *stages
	seals  seals
}

// noPayload fails a request of a method that takes no binary payload when
// it has one.
func (d *decoder) noPayload(method string, payload []byte) error {
	if d.binary && len(payload) > 0 {
		return errorf(codeUnexpectedPayload, "%s requests must not include a binary payload", method)
	}
	return nil
}

// rawBytes returns the request's bytes: the binary payload, or the named
// base64 field in JSONL.
func (d *decoder) rawBytes(f fields, payload []byte, field string) ([]byte, bool, error) {
	if d.binary {
		if f.present(field) {
			return nil, false, errorf(codeBinaryField, "%s is not used by the binary transport; send the bytes as the frame payload", field)
		}
		return payload, len(payload) > 0, nil
	}
	return f.base64(field)
}

// compileRequest is {"method":"compile","source","language"}.
type compileRequest struct {
	lang   engine.Language
	source string
}

func (d *decoder) compile(f fields, payload []byte) (compileRequest, error) {
	var r compileRequest
	if err := d.noPayload(wire.MethodCompile, payload); err != nil {
		return r, err
	}
	var err error
	if r.lang, err = f.language(); err != nil {
		return r, err
	}
	set := d.stages.takeNamed(nil, f, wire.FieldSourceStageID)
	src, ok, err := f.string(wire.FieldSource)
	if err != nil {
		return r, err
	}
	b, staged, err := set.staged(f, wire.FieldSourceStageID, wire.FieldSource, wire.MethodCompile)
	if err != nil {
		return r, err
	}
	if staged {
		if !utf8.Valid(b) {
			return r, errorf(codeInvalidStaged, "%s: the staged bytes are not valid UTF-8", wire.FieldSourceStageID)
		}
		src, ok = string(b), true
	}
	if !ok {
		return r, errorf(codeMissingField, "compile requires source")
	}
	r.source = src
	return r, nil
}

// startRequest is {"method":"start"}: a program and the options it runs
// under.
type startRequest struct {
	profile  bool
	delivery delivery
	inputs   []value.Member
	pol      policy.Policy // options' capabilities, limits, host_calls and console
	entry    snapshot.Entry
	seal     *snapshot.Sealer

	// The program: its bytes (sent or staged) and their id, or the id of
	// a cached program alone.
	programID  string
	program    []byte
	hasProgram bool
}

func (d *decoder) start(f fields, payload []byte) (startRequest, error) {
	var r startRequest
	set := d.stages.takeNamed(nil, f, wire.FieldProgramStageID)
	if o, err := splitObject(f.at(wire.FieldOptions)); err == nil {
		set = d.stages.takeNamed(set, o, wire.FieldInputsStageID)
	}
	var err error
	if r.profile, err = f.bool(wire.FieldProfile); err != nil {
		return r, err
	}
	if r.delivery, err = f.delivery(wire.FieldSnapshotDelivery); err != nil {
		return r, err
	}
	opts, ok, err := f.closedObject(wire.FieldOptions, wire.FieldOptions, optionsKeys)
	if err != nil {
		return r, err
	}
	if !ok {
		return r, errorf(codeMissingField, "start requires options")
	}
	if r.inputs, err = set.inputs(opts); err != nil {
		return r, err
	}
	caps, err := opts.capabilities(wire.FieldCapabilities)
	if err != nil {
		return r, errorf(codeInvalidField, "options.capabilities must be an array of strings")
	}
	limits, err := opts.limits(wire.FieldLimits)
	if err != nil {
		return r, err
	}
	mode, err := opts.hostCalls(wire.FieldHostCalls)
	if err != nil {
		return r, err
	}
	console, err := opts.console(wire.FieldConsole)
	if err != nil {
		return r, err
	}
	if r.entry, err = opts.entry(wire.FieldEntry); err != nil {
		return r, err
	}
	if r.seal, err = d.seals.read(opts, wire.FieldOptions); err != nil {
		return r, err
	}
	if r.pol, err = policy.New(caps, limits); err != nil {
		return r, wrapError(codeInvalidCapability, err)
	}
	r.pol.HostCalls, r.pol.Console = mode, console
	if err := engine.CheckCapabilities(r.pol.Capabilities, r.inputs); err != nil {
		return r, wrapError(codeInvalidCapability, err)
	}
	return r, d.program(&r, f, payload, set)
}

// program reads the program a start names: its bytes, its cached id, or
// both (which must agree).
func (d *decoder) program(r *startRequest, f fields, payload []byte, set stagedSet) error {
	id, hasID, err := f.string(wire.FieldProgramID)
	if err != nil {
		return err
	}
	b, hasBytes, err := d.rawBytes(f, payload, wire.FieldProgramBase64)
	if err != nil {
		return err
	}
	if sid, ok, err := f.stageID(wire.FieldProgramStageID); err != nil {
		return err
	} else if ok {
		if hasBytes {
			return errorf(codeValueAndStage, "start takes program bytes or %s, not both", wire.FieldProgramStageID)
		}
		if b, hasBytes = set[sid]; !hasBytes {
			return errorf(codeUnknownStageID, "unknown stage_id `%s`", sid)
		}
	}
	switch {
	case hasBytes:
		got := snapshot.ID(b)
		if hasID && id != got {
			return errorf(codeProgramIDMismatch, "program_id did not match program bytes")
		}
		r.programID, r.program, r.hasProgram = got, b, true
	case hasID:
		r.programID = id
	default:
		return errorf(codeMissingProgram, "start requires program bytes or program_id")
	}
	return nil
}

// inputs reads options.inputs, or the object its inputs_stage_id staged.
func (set stagedSet) inputs(opts fields) ([]value.Member, error) {
	b, ok, err := set.staged(opts, wire.FieldInputsStageID, wire.FieldInputs, wire.FieldOptions)
	if err != nil || !ok {
		if err != nil {
			return nil, err
		}
		return opts.inputs(wire.FieldInputs)
	}
	sf, err := stagedJSON(wire.FieldOptions+"."+wire.FieldInputsStageID, wire.FieldInputs, b)
	if err != nil {
		return nil, err
	}
	return sf.inputs(wire.FieldInputs)
}

// resumeRequest is {"method":"resume"}, and what the session resolves of
// it, one contract step at a time (resume.go).
type resumeRequest struct {
	// A field's failure, by the step at which the contract reports it:
	// before anything cached is looked up (err), once a snapshot named by
	// id is found (afterSnapshot), once a policy named by id is found
	// (afterPolicy). Decoding stops at the first.
	err, afterSnapshot, afterPolicy error

	profile  bool
	delivery delivery
	// The answers: payload in one mode, answers in batch mode; which
	// calls they answer is known once the snapshot is.
	answer     resumePayload
	hasPayload bool
	answers    []engine.Answer

	// 1. Snapshot: its id, and either the bytes the host sent or staged
	// (raw; owned when they are the request's to keep: staged, decoded
	// from base64, or a payload handed over by ReadOwned) or, byID, the
	// cached entry the session finds (entry).
	snapID string
	byID   bool
	raw    []byte
	digest snapshot.Digest // of raw, which a replay's journal continues from
	owned  bool
	staged bool // raw came from a stage
	entry  *snapshotEntry

	// 2. Policy, given whole, or by id (cached: the session finds it),
	// and the authentication fields that came with it (the seal key
	// among them).
	pol    policy.Policy
	polID  string // pol.ID(), or the id a cached policy is named by
	cached bool
	auth   authFields
	seal   *snapshot.Sealer

	// 4. The resume the engine admits and runs (kept here, so that it
	// too stays on the serving stack).
	run engine.Resume
}

// resume fills r, which the caller provides so that it can stay on its
// stack: the hot path allocates nothing for the request.
func (d *decoder) resume(r *resumeRequest, f fields, payload []byte) {
	if r.err = d.resumeSnapshot(r, f, payload); r.err != nil {
		return
	}
	if r.afterSnapshot = d.resumePolicy(r, f); r.afterSnapshot != nil || !r.cached {
		return
	}
	r.afterPolicy = d.resumeAuth(r, f)
}

// resumeSnapshot reads what is checked before anything cached is looked
// up: the answers, and step 1's snapshot bytes or id.
func (d *decoder) resumeSnapshot(r *resumeRequest, f fields, payload []byte) error {
	// A stage is dropped by the resume that names it, whatever the
	// outcome; the snapshot's stage fails (if it does) in its turn.
	stagedBytes, stageErr := d.stages.takeOne(f, wire.FieldStageID)
	set := d.stages.takeAnswerStages(d.stages.takeNamed(nil, f, wire.FieldPayloadStageID), f)
	var err error
	if r.profile, err = f.bool(wire.FieldProfile); err != nil {
		return err
	}
	if r.delivery, err = f.delivery(wire.FieldSnapshotDelivery); err != nil {
		return err
	}
	if f.present(wire.FieldAnswers) {
		if r.answers, err = set.answers(f, wire.FieldAnswers); err != nil {
			return err
		}
	}
	if r.hasPayload = f.present(wire.FieldPayload) || f.present(wire.FieldPayloadStageID) || r.answers == nil; r.hasPayload {
		if r.answer, err = set.payload(f, wire.MethodResume); err != nil {
			return err
		}
	}
	if err := f.unknownIn(wire.FieldPolicy, wire.FieldPolicy, policyKeys); err != nil {
		return err
	}
	if err := f.unknownIn(wire.FieldAuth, wire.FieldAuth, authKeys); err != nil {
		return err
	}
	givenID, hasGivenID, err := f.string(wire.FieldSnapshotID)
	if err != nil {
		return err
	}
	raw, hasRaw, err := d.rawBytes(f, payload, wire.FieldSnapshotBase64)
	if err != nil {
		return err
	}
	if hasRaw && !d.binary {
		r.owned = true // decoded from base64 into memory of its own
	}
	if stageErr != nil {
		return stageErr
	}
	if stagedBytes != nil {
		if hasRaw {
			return errorf(codeSnapshotAndStage, "resume takes snapshot bytes or stage_id, not both")
		}
		raw, hasRaw, r.owned, r.staged = stagedBytes, true, true, true
	}
	switch {
	case hasRaw:
		r.raw, r.digest = raw, snapshot.NewDigest(raw)
		r.snapID = r.digest.ID()
		if hasGivenID && givenID != r.snapID {
			return errorf(codeSnapshotIDMismatch, "snapshot_id did not match snapshot bytes")
		}
	case hasGivenID:
		r.snapID, r.byID = givenID, true
	default:
		return errorf(codeMissingSnapshot, "resume requires snapshot bytes or snapshot_id")
	}
	return nil
}

// resumePolicy reads what is checked once the snapshot is known: the
// policy's own snapshot id, then step 2's policy, whole (with its
// authentication fields) or by id.
func (d *decoder) resumePolicy(r *resumeRequest, f fields) error {
	if signed, ok := policySnapshotID(f); ok && signed != r.snapID {
		return errTampered
	}
	policyID, hasPolicyID, err := f.string(wire.FieldPolicyID)
	if err != nil {
		return err
	}
	pf, hasPolicy, err := f.object(wire.FieldPolicy)
	if err != nil {
		return err
	}
	switch {
	case hasPolicy:
		return d.rawPolicy(r, pf, policyID, hasPolicyID)
	case hasPolicyID:
		r.polID, r.cached = policyID, true // the cache's key is the policy's ID
		return nil
	}
	return errorf(codeMissingPolicy, "resume requires policy or policy_id")
}

// policySnapshotID reads policy.snapshot_id, the id the host's token signs,
// when it is there to compare; a policy or field of the wrong type is
// reported by the later steps.
func policySnapshotID(f fields) (string, bool) {
	pf, ok, err := f.object(wire.FieldPolicy)
	if err != nil || !ok {
		return "", false
	}
	id, ok, err := pf.string(wire.FieldSnapshotID)
	return id, ok && err == nil
}

// rawPolicy reads a policy given whole.
func (d *decoder) rawPolicy(r *resumeRequest, pf fields, policyID string, hasPolicyID bool) error {
	if !pf.present(wire.FieldLimits) {
		return errorf(codeMissingLimits, "raw snapshot restore requires explicit limits")
	}
	caps, err := pf.capabilities(wire.FieldCapabilities)
	if err != nil {
		return errorf(codeInvalidField, "policy.capabilities must be an array of strings")
	}
	limits, err := pf.limits(wire.FieldLimits)
	if err != nil {
		return err
	}
	if r.pol, err = policy.New(caps, limits); err != nil {
		return wrapError(codeInvalidCapability, err)
	}
	if r.pol.HostCalls, err = pf.hostCalls(wire.FieldHostCalls); err != nil {
		return err
	}
	if r.pol.Console, err = pf.console(wire.FieldConsole); err != nil {
		return err
	}
	r.polID = r.pol.ID()
	if hasPolicyID && policyID != r.polID {
		return errorf(codePolicyIDMismatch, "policy_id did not match policy")
	}
	if r.auth, err = readAuth(pf); err != nil {
		return err
	}
	r.seal, err = d.seals.read(pf, wire.FieldPolicy)
	return err
}

// readAuth reads them from policy (raw form) or auth (cached form).
func readAuth(f fields) (authFields, error) {
	var a authFields
	var err error
	if a.snapshotID, a.hasID, err = f.string(wire.FieldSnapshotID); err != nil {
		return a, err
	}
	if a.keyB64, a.hasKey, err = f.string(wire.FieldSnapshotKeyBase64); err != nil {
		return a, err
	}
	if a.digest, a.hasDigest, err = f.string(wire.FieldSnapshotKeyDigest); err != nil {
		return a, err
	}
	if a.token, a.hasToken, err = f.string(wire.FieldSnapshotToken); err != nil {
		return a, err
	}
	return a, nil
}

// resumeAuth reads the auth object that comes with a policy named by id,
// checked once that policy is found.
func (d *decoder) resumeAuth(r *resumeRequest, f fields) error {
	authObj, ok, err := f.object(wire.FieldAuth)
	if err != nil {
		return err
	}
	if !ok {
		return errorf(codeMissingAuth, "resume with policy_id requires auth metadata")
	}
	if r.auth, err = readAuth(authObj); err != nil {
		return err
	}
	if r.seal, err = d.seals.read(authObj, wire.FieldAuth); err != nil {
		return err
	}
	r.auth.snapshotID, r.auth.hasID = r.snapID, true
	return nil
}

// stageRequest is {"method":"stage","stage_id","offset"} with a chunk.
type stageRequest struct {
	stageID string
	offset  uint64
	chunk   []byte
	owned   bool // chunk is the request's to keep
}

func (d *decoder) stage(f fields, payload []byte) (stageRequest, error) {
	var r stageRequest
	id, ok, err := f.stageID(wire.FieldStageID)
	if err != nil {
		return r, err
	}
	if !ok {
		return r, errorf(codeMissingField, "stage requires stage_id")
	}
	offset, ok, err := f.uint(wire.FieldOffset)
	if err != nil {
		return r, err
	}
	if !ok {
		return r, errorf(codeMissingField, "stage requires offset")
	}
	chunk, _, err := d.rawBytes(f, payload, wire.FieldBytesBase64)
	if err != nil {
		return r, err
	}
	// A JSONL chunk was decoded from base64 into memory of its own.
	return stageRequest{stageID: id, offset: offset, chunk: chunk, owned: !d.binary}, nil
}

// fetchRequest is {"method":"snapshot","snapshot_id","offset","max_bytes"}.
type fetchRequest struct {
	snapID   string
	offset   uint64
	maxBytes uint64 // at most MaxFetchBytes
}

func (d *decoder) fetch(f fields, payload []byte) (fetchRequest, error) {
	var r fetchRequest
	if err := d.noPayload(wire.MethodSnapshot, payload); err != nil {
		return r, err
	}
	id, ok, err := f.string(wire.FieldSnapshotID)
	if err != nil {
		return r, err
	}
	if !ok {
		return r, errorf(codeMissingField, "snapshot requires snapshot_id")
	}
	offset, _, err := f.uint(wire.FieldOffset)
	if err != nil {
		return r, err
	}
	limit := uint64(wire.MaxFetchBytes)
	max, ok, err := f.uint(wire.FieldMaxBytes)
	if err != nil {
		return r, err
	}
	if !ok || max > limit {
		max = limit
	}
	return fetchRequest{snapID: id, offset: offset, maxBytes: max}, nil
}

// ping is {"method":"ping"}: nothing but its envelope.
func (d *decoder) ping(payload []byte) error {
	return d.noPayload(wire.MethodPing, payload)
}

// cancel reads {"method":"cancel","target_id":N}, protocol version
// included: a cancel is decoded when it is read, not when it is served.
func (d *decoder) cancel(f fields, payload []byte) (target uint64, err error) {
	if err := checkVersion(f); err != nil {
		return 0, err
	}
	if err := d.noPayload(wire.MethodCancel, payload); err != nil {
		return 0, err
	}
	target, ok, err := f.uint(wire.FieldTargetID)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, errorf(codeMissingField, "cancel requires target_id")
	}
	return target, nil
}
