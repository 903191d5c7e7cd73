// Package protocol implements the wire contract: request decoding, the
// compile/start/resume dispatch of a Session, and response encoding.
package protocol

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/cache"
	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
)

// Transport selects how raw bytes travel: binary payloads or base64 fields.
type Transport int

const (
	Binary Transport = iota
	JSONL
)

// Options configure a Session. Zero values mean the documented defaults.
type Options struct {
	Transport Transport

	MaxPrograms      int   // default 256
	MaxProgramBytes  int64 // default 64 MiB
	MaxSnapshots     int   // default 4096
	MaxSnapshotBytes int64 // default 128 MiB
	MaxContinuations int   // parked live executions; default 64
	MaxPolicies      int   // default 1024
	MaxStageBytes    int64 // staged upload bytes, all stages together; default 64 MiB
	Entropy          func() (seed uint64, clockMillis int64)

	// PinnedKey, if set, is the only snapshot key a resume may use
	// (--snapshot-key-file): every resume's snapshot_key_digest must be its
	// digest, and snapshot_key_base64 may be left out.
	PinnedKey []byte
}

// Session serves one host connection. Requests are read (Read) and served
// (Serve) strictly in order; one goroutine may read ahead while another
// serves, which is how a cancel reaches a running request. Nothing else is
// safe for concurrent use.
type Session struct {
	opts      Options
	engine    *engine.Runtime
	programs  *cache.LRU[string, *engine.Program]
	compiled  *cache.LRU[string, string] // source → program_id of its compile
	snapshots *cache.LRU[string, *snapshotEntry]
	conts     *cache.LRU[string, *continuation]
	policies  *cache.LRU[string, policy.Policy]
	stages    *stages
	stats     Stats
	flights   flights
	keys      keys
	seals     seals
	warming   sync.WaitGroup // the process warm-up, if this session began it
}

// Stats counts how resumes that got past authentication ran: a hot resume
// continues a parked execution, a replay re-runs the program from the
// snapshot's journal. They make the fast path observable to tests.
type Stats struct {
	HotResumes int
	Replays    int
	Compiles   int // sources compiled (not served from the cache)
}

// snapshotEntry is a snapshot this session produced or was given.
type snapshotEntry struct {
	bytes   []byte
	pending string           // the capability it is suspended on
	seal    *snapshot.Sealer // its seal, when it is sealed
}

// continuation is a parked live execution: the fast path for resuming the
// snapshot it produced.
type continuation struct {
	exec    *engine.Execution
	builder *snapshot.Builder
	entry   *snapshotEntry
}

// NewSession returns a session with empty caches.
func NewSession(opts Options) *Session {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def64 := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&opts.MaxPrograms, 256)
	def64(&opts.MaxProgramBytes, 64<<20)
	def(&opts.MaxSnapshots, 4096)
	def64(&opts.MaxSnapshotBytes, 128<<20)
	def(&opts.MaxContinuations, 64)
	def(&opts.MaxPolicies, 1024)
	def64(&opts.MaxStageBytes, 64<<20)
	if opts.Entropy == nil {
		opts.Entropy = RandomEntropy
	}
	s := &Session{opts: opts, engine: engine.NewRuntime()}
	if opts.PinnedKey != nil {
		s.keys.pinned = snapshot.NewVerifier(opts.PinnedKey)
	}
	s.programs = cache.New[string, *engine.Program](opts.MaxPrograms, opts.MaxProgramBytes, nil)
	s.compiled = cache.New[string, string](opts.MaxPrograms, opts.MaxProgramBytes, nil)
	s.snapshots = cache.New[string, *snapshotEntry](opts.MaxSnapshots, opts.MaxSnapshotBytes, nil)
	s.conts = cache.New[string, *continuation](opts.MaxContinuations, 1<<62, func(_ string, c *continuation) {
		c.exec.Abandon()
	})
	s.policies = cache.New[string, policy.Policy](opts.MaxPolicies, 1<<62, nil)
	s.stages = newStages(opts.MaxStageBytes)
	return s
}

// RandomEntropy is what a start reads unless Options say otherwise: a
// random Math.random seed and the wall clock.
func RandomEntropy() (uint64, int64) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:]), time.Now().UnixMilli()
}

// Close ends every parked execution, then the engine's own goroutines.
func (s *Session) Close() {
	s.warming.Wait()
	s.conts.Clear()
	s.engine.Close()
}

// Stats reports the resume counters.
func (s *Session) Stats() Stats { return s.stats }

// Parked reports how many live executions are parked.
func (s *Session) Parked() int { return s.conts.Len() }

// Response is one encoded response.
type Response struct {
	Header  []byte
	Payload []byte
}

// Handle reads and serves one request. A non-nil error is a *FatalError:
// the session must end.
func (s *Session) Handle(header, payload []byte) (Response, error) {
	return s.Serve(s.Read(header, payload))
}

// Request is a request as read: its envelope, decoded once, and what had to
// be settled the moment it was read.
type Request struct {
	header, payload []byte
	f               fields
	id              uint64
	method          string
	fatal           error

	flight *flight       // start/resume: how a cancel reaches it
	cancel *cancelAnswer // cancel: its effect, settled when read
}

// Fatal reports whether serving the request ends the session: nothing in it
// can be correlated. Nothing after it is read.
func (r *Request) Fatal() bool { return r.fatal != nil }

// Runs reports whether the request is a start or resume: one that runs
// guest code, which a cancel can stop.
func (r *Request) Runs() bool { return r.flight != nil }

// Read takes in the next request, in order, and does what must happen when
// it is read rather than when it is served: a cancel takes effect. It may
// run while Serve serves an earlier request. header and payload must stay
// unchanged until the request is served.
func (s *Session) Read(header, payload []byte) *Request {
	r := &Request{header: header, payload: payload}
	r.f, r.id, r.method, r.fatal = envelope(header, s.opts.Transport == Binary)
	if r.fatal != nil {
		return r
	}
	switch r.method {
	case "start", "resume":
		r.flight = s.flights.add(r.id)
	case "cancel":
		r.cancel = s.readCancel(r.f, payload)
	}
	return r
}

// Serve answers a request Read returned, in the order they were read. A
// non-nil error is a *FatalError: the session must end.
func (s *Session) Serve(r *Request) (Response, error) {
	if r.fatal != nil {
		return Response{}, r.fatal
	}
	res, err := s.serve(r)
	if err != nil {
		return s.failure(r.id, err), nil
	}
	return s.success(r.id, res), nil
}

func (s *Session) serve(r *Request) (*outcome, error) {
	fl := r.flight
	if fl == nil {
		return s.dispatch(r, nil)
	}
	// A flight cancelled while it waited its turn is served all the same,
	// under its stopped Stopper: its segment ends at its first
	// instruction, so it ends exactly as if the cancel had come while it
	// ran, however the two goroutines were scheduled.
	out, err := s.dispatch(r, fl)
	// A start/resume settles itself once its segment ends; one that failed
	// before it ran settles here. Either way a cancel read before this
	// point decides the answer.
	if s.flights.settle(fl) {
		return nil, engine.ErrCancelled
	}
	return out, err
}

// outcome is a successful result before encoding.
type outcome struct {
	program *engine.Program // compile
	fetched *fetched        // snapshot
	staged  *staged         // stage
	pong    bool            // ping
	cancel  *cancelAnswer   // cancel
	step    engine.Step     // start/resume
	snap    []byte
	snapID  string
	policy  string
	profile bool
	execNS  int64
	started time.Time

	// How the snapshot travels, and the snapshot the execution was resumed
	// from (nil for a start), which a delta extends.
	delivery delivery
	base     []byte
	baseID   string
}

// delivery is a start/resume's snapshot_delivery.
type delivery int

const (
	deliverFull  delivery = iota // the whole snapshot
	deliverDelta                 // the bytes appended to the resumed snapshot
	deliverNone                  // no bytes; the host fetches them if it wants them
)

// delivered returns the snapshot bytes a suspended response carries and,
// for a delta, the id of the snapshot they extend. A delta is sent only
// when the new snapshot really starts with the resumed one's bytes.
func (o *outcome) delivered() (b []byte, baseID string) {
	switch o.delivery {
	case deliverNone:
		return nil, ""
	case deliverDelta:
		if o.base != nil && bytes.HasPrefix(o.snap, o.base) {
			return o.snap[len(o.base):], o.baseID
		}
	}
	return o.snap, ""
}

func (s *Session) dispatch(r *Request, fl *flight) (*outcome, error) {
	f, method, payload := r.f, r.method, r.payload
	if method == "cancel" {
		c := r.cancel
		if c.err != nil {
			return nil, c.err
		}
		return &outcome{cancel: c}, nil
	}
	if err := checkVersion(f); err != nil {
		return nil, err
	}
	switch method {
	case "compile":
		return s.compile(f, payload)
	case "start":
		return s.start(f, payload, fl)
	case "resume":
		return s.resume(f, payload, fl)
	case "snapshot":
		return s.fetchSnapshot(f, payload)
	case "stage":
		return s.stage(f, payload)
	case "ping":
		return s.ping(payload)
	}
	return nil, errorf("unknown method %q", method)
}

// rawBytes returns the request's bytes: the binary payload, or the named
// base64 field in JSONL.
func (s *Session) rawBytes(f fields, payload []byte, field string) ([]byte, bool, error) {
	if s.opts.Transport == Binary {
		if f.present(field) {
			return nil, false, errorf("%s is not used by the binary transport; send the bytes as the frame payload", field)
		}
		return payload, len(payload) > 0, nil
	}
	return f.base64(field)
}

func (s *Session) compile(f fields, payload []byte) (*outcome, error) {
	if s.opts.Transport == Binary && len(payload) > 0 {
		return nil, errorf("compile requests must not include a binary payload")
	}
	src, ok, err := f.string("source")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errorf("compile requires source")
	}
	// Compiling is deterministic: a source compiled before in this process
	// gives the same program, served from the cache (hosts recompile the
	// same program for every run).
	// A compile usually comes before the first start: have a realm ready
	// by then.
	s.Warm()
	if id, ok := s.compiled.Get(src); ok {
		if p, ok := s.programs.Get(id); ok {
			return &outcome{program: p}, nil
		}
	}
	s.stats.Compiles++
	p, err := engine.Compile(src)
	if err != nil {
		return nil, err
	}
	s.programs.Add(p.ID, p, int64(len(p.Bytes)+2*len(p.Source)))
	s.compiled.Add(p.Source, p.ID, int64(len(p.Source)))
	return &outcome{program: p}, nil
}

func (s *Session) program(f fields, payload []byte) (*engine.Program, error) {
	id, hasID, err := f.string("program_id")
	if err != nil {
		return nil, err
	}
	b, hasBytes, err := s.rawBytes(f, payload, "program_base64")
	if err != nil {
		return nil, err
	}
	switch {
	case hasBytes:
		got := snapshot.ID(b)
		if hasID && id != got {
			return nil, errorf("program_id did not match program bytes")
		}
		return s.loadProgram(got, b)
	case hasID:
		if p, ok := s.programs.Get(id); ok {
			return p, nil
		}
		return nil, errorf("unknown program_id `%s`", id)
	}
	return nil, errorf("start requires program bytes or program_id")
}

// loadProgram returns the cached program with this id or validates bytes.
func (s *Session) loadProgram(id string, b []byte) (*engine.Program, error) {
	if p, ok := s.programs.Get(id); ok {
		return p, nil
	}
	p, err := engine.LoadProgram(append([]byte(nil), b...))
	if err != nil {
		return nil, err
	}
	s.programs.Add(p.ID, p, int64(len(p.Bytes)+2*len(p.Source)))
	return p, nil
}

func (s *Session) start(f fields, payload []byte, fl *flight) (*outcome, error) {
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
		return nil, errorf("start requires options")
	}
	inputs, err := opts.inputs("inputs")
	if err != nil {
		return nil, err
	}
	caps, err := opts.capabilities("capabilities")
	if err != nil {
		return nil, errorf("options.capabilities must be an array of strings")
	}
	limits, err := opts.limits("limits")
	if err != nil {
		return nil, err
	}
	seal, err := s.seals.read(opts, "options")
	if err != nil {
		return nil, err
	}
	pol, err := policy.New(caps, limits)
	if err != nil {
		return nil, requestError(err.Error())
	}
	prog, err := s.program(f, payload)
	if err != nil {
		return nil, err
	}
	policyID := pol.ID()
	s.policies.Add(policyID, pol, 1)
	seed, clock := s.opts.Entropy()
	header := snapshot.Header{
		Program:      prog.Bytes,
		Inputs:       engine.SortedMembers(inputs),
		Capabilities: pol.Capabilities,
		Seed:         seed,
		ClockMillis:  clock,
	}
	began := time.Now()
	exec, step := s.engine.Start(engine.Config{Program: prog, Header: header, Limits: pol.Limits, Stop: fl.stop})
	out := &outcome{step: step, policy: policyID, profile: profile, execNS: time.Since(began).Nanoseconds(), started: began, delivery: dlv}
	if err := s.settleRun(fl, exec); err != nil {
		return nil, err
	}
	if step.Err != nil {
		return nil, step.Err
	}
	if exec != nil {
		if err := s.park(out, exec, snapshot.NewBuilder(header, seal)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// settleRun decides a start/resume's outcome once its segment has ended and
// before anything is parked: a cancel read until now ends the execution.
func (s *Session) settleRun(fl *flight, exec *engine.Execution) error {
	if !s.flights.settle(fl) {
		return nil
	}
	if exec != nil {
		exec.Abandon()
	}
	return engine.ErrCancelled
}

// ErrSnapshotTooLarge ends an execution whose next snapshot would be larger
// than the stage bound: no process could ever resume it from its bytes.
var ErrSnapshotTooLarge = &engine.Error{Kind: engine.KindLimit, Message: "snapshot size limit exceeded"}

// park records a suspension: its snapshot bytes and the live execution. A
// snapshot over the stage bound ends the execution instead.
func (s *Session) park(out *outcome, exec *engine.Execution, b *snapshot.Builder) error {
	st := out.step
	bytes, id := b.Suspend(snapshot.Pending{Capability: st.Capability, Args: st.Args, Meter: st.Meter, Limits: &st.Limits})
	if int64(len(bytes)) > s.opts.MaxStageBytes {
		exec.Abandon()
		return ErrSnapshotTooLarge
	}
	entry := &snapshotEntry{bytes: bytes, pending: st.Capability, seal: b.Sealer()}
	out.snap, out.snapID = bytes, id
	s.snapshots.Add(id, entry, int64(len(bytes)))
	if old, ok := s.conts.Take(id); ok {
		// Same snapshot parked twice (deterministic replays): keep one.
		old.exec.Abandon()
	}
	s.conts.Add(id, &continuation{exec: exec, builder: b, entry: entry}, 1)
	return nil
}

// authFields are the four authentication fields of a resume.
type authFields struct {
	snapshotID, keyB64, digest, token  string
	hasID, hasKey, hasDigest, hasToken bool
}

func readAuth(f fields) (authFields, error) {
	var a authFields
	var err error
	if a.snapshotID, a.hasID, err = f.string("snapshot_id"); err != nil {
		return a, err
	}
	if a.keyB64, a.hasKey, err = f.string("snapshot_key_base64"); err != nil {
		return a, err
	}
	if a.digest, a.hasDigest, err = f.string("snapshot_key_digest"); err != nil {
		return a, err
	}
	if a.token, a.hasToken, err = f.string("snapshot_token"); err != nil {
		return a, err
	}
	return a, nil
}

// resumeReq is what a resume resolves, one contract step at a time.
type resumeReq struct {
	profile  bool
	delivery delivery
	answer   resumePayload

	// 1. Snapshot: its id, and either the bytes the host sent or staged
	// (raw; owned when they came from a stage) or the cached entry (entry).
	snapID string
	raw    []byte
	owned  bool
	entry  *snapshotEntry

	// 2. Policy, and the authentication fields that came with it (the
	// seal key among them).
	pol   policy.Policy
	polID string // pol.ID(), once known
	auth  authFields
	seal  *snapshot.Sealer

	// 4. The decoded snapshot, when the bytes were sent.
	snap *snapshot.Snapshot
}

// resume runs the contract's resume checks in order, then continues the
// parked execution (hot) or replays the journal.
func (s *Session) resume(f fields, payload []byte, fl *flight) (*outcome, error) {
	r := &resumeReq{}
	// A stage is dropped by the resume that names it, whatever the outcome.
	stagedBytes, stageErr := s.takeStage(f)
	var err error
	if r.profile, err = f.bool("profile"); err != nil {
		return nil, err
	}
	if r.delivery, err = f.delivery("snapshot_delivery"); err != nil {
		return nil, err
	}
	if r.answer, err = f.payload("payload"); err != nil {
		return nil, err
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
	if err := r.reassert(); err != nil {
		return nil, err
	}
	policyID := r.polID
	s.policies.Add(policyID, r.pol, 1)
	out := &outcome{policy: policyID, profile: r.profile, started: time.Now(), delivery: r.delivery, baseID: r.snapID}
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
		return nil, errorf("unknown stage_id `%s`", id)
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
			return errorf("resume takes snapshot bytes or stage_id, not both")
		}
		raw, hasRaw, r.owned = stagedBytes, true, true
	}
	switch {
	case hasRaw:
		r.raw, r.snapID = raw, snapshot.ID(raw)
		if hasGivenID && givenID != r.snapID {
			return errorf("snapshot_id did not match snapshot bytes")
		}
	case hasGivenID:
		r.snapID = givenID
		if r.entry = s.lookupSnapshot(givenID); r.entry == nil {
			return errorf("unknown snapshot_id `%s`", givenID)
		}
	default:
		return errorf("resume requires snapshot bytes or snapshot_id")
	}
	if signed, ok := policySnapshotID(f); ok && signed != r.snapID {
		return errTampered
	}
	return nil
}

// errTampered is the one answer to a snapshot the host's token does not
// authenticate.
var errTampered = errorf("raw snapshot restore rejected a tampered or unauthenticated snapshot")

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
	return errorf("resume requires policy or policy_id")
}

func (s *Session) rawPolicy(r *resumeReq, pf fields, policyID string, hasPolicyID bool) error {
	if !pf.present("limits") {
		return errorf("raw snapshot restore requires explicit limits")
	}
	caps, err := pf.capabilities("capabilities")
	if err != nil {
		return errorf("policy.capabilities must be an array of strings")
	}
	limits, err := pf.limits("limits")
	if err != nil {
		return err
	}
	if r.pol, err = policy.New(caps, limits); err != nil {
		return requestError(err.Error())
	}
	r.polID = r.pol.ID()
	if hasPolicyID && policyID != r.polID {
		return errorf("policy_id did not match policy")
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
		return errorf("unknown policy_id `%s`", policyID)
	}
	r.polID = policyID // the cache's key is the policy's ID
	authObj, ok, err := f.object("auth")
	if err != nil {
		return err
	}
	if !ok {
		return errorf("resume with policy_id requires auth metadata")
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

// reassert is steps 4 and 5 for authenticated input: the pending
// capability must be granted. Bytes the host sent are decoded first (the
// pending call is their last item), so malformed ones fail here.
func (r *resumeReq) reassert() error {
	pending := ""
	if r.entry != nil {
		pending = r.entry.pending
	} else {
		var err error
		if r.snap, err = loadSnapshot(r.raw, r.seal); err != nil {
			return err
		}
		pending = r.snap.Pending.Capability
	}
	if err := r.pol.Reassert(pending); err != nil {
		return requestError(err.Error())
	}
	return nil
}

// resumeHot continues the parked execution that produced the snapshot.
func (s *Session) resumeHot(r *resumeReq, c *continuation, out *outcome, fl *flight) (*outcome, error) {
	s.stats.HotResumes++
	out.base = c.entry.bytes
	exec, step := c.exec.ResumeWith(fl.stop, engine.Payload{Cancelled: r.answer.cancelled, Outcome: r.answer.outcome}, r.pol.Limits)
	out.step, out.execNS = step, time.Since(out.started).Nanoseconds()
	if err := s.settleRun(fl, exec); err != nil {
		return nil, err
	}
	if step.Err != nil {
		if exec != nil {
			// Refused before running (already over the new limits):
			// the execution stays parked.
			s.conts.Add(r.snapID, c, 1)
		}
		return nil, step.Err
	}
	if exec != nil {
		if !r.answer.cancelled {
			c.builder.Answer(r.answer.outcome)
		}
		if err := s.park(out, exec, c.builder); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// resumeReplay re-runs the program from the snapshot's journal in a fresh
// realm and continues live from the pending call.
func (s *Session) resumeReplay(r *resumeReq, out *outcome, fl *flight) (*outcome, error) {
	raw, snap := r.raw, r.snap
	if snap == nil {
		var err error
		if snap, err = loadSnapshot(r.entry.bytes, r.seal); err != nil {
			return nil, err
		}
		raw = r.entry.bytes
	}
	prog, err := s.loadProgram(snapshot.ID(snap.Header.Program), snap.Header.Program)
	if err != nil {
		return nil, err
	}
	pending := snap.Pending
	s.stats.Replays++
	out.base = raw
	exec, step := s.engine.Start(engine.Config{
		Program: prog,
		Header:  snap.Header,
		Limits:  r.pol.Limits,
		Replay:  snap.Calls,
		Pending: &pending,
		Answer:  engine.Payload{Cancelled: r.answer.cancelled, Outcome: r.answer.outcome},
		Stop:    fl.stop,
	})
	out.step, out.execNS = step, time.Since(out.started).Nanoseconds()
	if err := s.settleRun(fl, exec); err != nil {
		return nil, err
	}
	if step.Err != nil {
		return nil, step.Err
	}
	if exec != nil {
		b := snapshot.ContinueBuilder(raw, snap, r.seal)
		b.Answer(r.answer.outcome)
		if err := s.park(out, exec, b); err != nil {
			return nil, err
		}
	}
	if r.entry == nil {
		// Raw bytes a host sent are cached like ones this session produced.
		if !r.owned {
			raw = append([]byte(nil), raw...)
		}
		s.snapshots.Add(r.snapID, &snapshotEntry{bytes: raw, pending: snap.Pending.Capability, seal: r.seal}, int64(len(raw)))
	}
	return out, nil
}

// authenticate is step 3. With a pinned key the digest must be the pinned
// key's, and a key sent along must be that key (it must match the digest);
// the token is checked under the pinned key.
// keys verifies resumes: the pinned key's verifier, and the last key a
// host sent with its own (hosts use one key, so its digest and HMAC state
// are computed once, not per request).
type keys struct {
	pinned  *snapshot.Verifier
	lastB64 string
	last    *snapshot.Verifier
}

// sent returns the verifier of a key sent as base64.
func (k *keys) sent(keyB64 string) (*snapshot.Verifier, error) {
	// Constant time: the cached text is a host's key.
	if k.last != nil && subtle.ConstantTimeCompare([]byte(k.lastB64), []byte(keyB64)) == 1 {
		return k.last, nil
	}
	key, err := decodeBase64(keyB64)
	if err != nil {
		return nil, errorf("snapshot_key_base64 is not valid base64")
	}
	k.lastB64, k.last = keyB64, snapshot.NewVerifier(key)
	return k.last, nil
}

// authenticate is step 3 of a resume.
func (k *keys) authenticate(a authFields, snapID string) error {
	switch {
	case !a.hasID:
		return errorf("raw snapshot restore requires snapshot_id")
	case !a.hasKey && k.pinned == nil:
		return errorf("raw snapshot restore requires snapshot_key_base64")
	case !a.hasToken:
		return errorf("raw snapshot restore requires snapshot_token")
	case !a.hasDigest:
		return errorf("raw snapshot restore requires snapshot_key_digest")
	}
	if a.snapshotID != snapID {
		return errTampered
	}
	v := k.pinned
	if a.hasKey {
		sent, err := k.sent(a.keyB64)
		if err != nil {
			return err
		}
		if !sent.VerifyDigest(a.digest) {
			return errMismatchedDigest
		}
		if v == nil {
			v = sent
		}
	}
	if k.pinned != nil && !k.pinned.VerifyDigest(a.digest) {
		return errMismatchedDigest
	}
	if !v.VerifyToken(snapID, a.token) {
		return errTampered
	}
	return nil
}

var errMismatchedDigest = errorf("raw snapshot restore rejected a mismatched snapshot key digest")

// errorText renders a failure for the host.
func errorText(err error) string {
	var ee *engine.Error
	if errors.As(err, &ee) {
		return ee.Error()
	}
	var re requestError
	if errors.As(err, &re) {
		return string(re)
	}
	return fmt.Sprint("request failed")
}
