// Package protocol implements the wire contract: request decoding, the
// compile/start/resume dispatch of a Session, and response encoding.
package protocol

// Each method decodes its request, checks it and encodes its response in a
// file of its own (compile.go, start.go, resume.go, transfer.go, ping.go,
// cancel.go); start and resume share step.go, resume has auth.go and
// payload.go beside it. This file holds the Session: its lifecycle, its
// caches, and the dispatch every request goes through.

import (
	"crypto/rand"
	"encoding/binary"
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
	MaxStageBytes    int64 // staged upload bytes, all stages together; default 64 MiB, at most MemoryBudget/2
	// MemoryBudget bounds what the session holds and takes, all caches and
	// work together (memory.go); default DefaultMemoryBudget, or twice
	// MaxStageBytes if that is more.
	MemoryBudget int64
	Entropy      func() (seed uint64, clockMillis int64)

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
	budget    *cache.Budget // the memory budget every cache below but compiled shares
	programs  *cache.LRU[string, *engine.Program]
	compiled  *cache.LRU[string, string] // source → program_id of its compile
	snapshots *cache.LRU[string, *snapshotEntry]
	conts     *cache.LRU[string, *continuation]
	policies  *cache.LRU[string, policy.Policy]
	stages    *stages
	evicted   evictions // ids the caches evicted lately (evicted.go)
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
	bytes []byte
	seal  *snapshot.Sealer // its seal, when it is sealed
	// pols are the policies it was produced (or resumed from bytes)
	// under, most recent first: they stay as long as the entry does
	// (evicted.go).
	pols []pinnedPolicy
}

// continuation is a parked live execution: the fast path for resuming the
// snapshot it produced.
type continuation struct {
	exec    *engine.Execution
	prog    *engine.Program
	builder *snapshot.Builder
	entry   *snapshotEntry
	weight  int64 // in the memory budget
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
	if opts.MemoryBudget <= 0 {
		opts.MemoryBudget = max(DefaultMemoryBudget, 2*opts.MaxStageBytes)
	}
	opts.MaxStageBytes = min(opts.MaxStageBytes, opts.MemoryBudget/2)
	if opts.Entropy == nil {
		opts.Entropy = RandomEntropy
	}
	s := &Session{opts: opts, engine: engine.NewRuntime()}
	if opts.PinnedKey != nil {
		s.keys.pinned = snapshot.NewVerifier(opts.PinnedKey)
	}
	s.budget = cache.NewBudget(opts.MemoryBudget)
	s.programs = cache.NewInBudget(s.budget, opts.MaxPrograms, opts.MaxProgramBytes, func(id string, p *engine.Program) {
		s.programEvicted(p)
		if _, ok := s.programs.Peek(id); !ok {
			s.evicted.programs.add(id)
		}
	})
	// Source to program id: the source is the cached program's own text,
	// and goes with it (programEvicted).
	s.compiled = cache.New[string, string](opts.MaxPrograms, opts.MaxProgramBytes, nil)
	s.snapshots = cache.NewInBudget(s.budget, opts.MaxSnapshots, opts.MaxSnapshotBytes, func(id string, _ *snapshotEntry) {
		s.snapshotEvicted(id)
	})
	s.conts = cache.NewInBudget(s.budget, opts.MaxContinuations, 1<<62, func(id string, c *continuation) {
		c.exec.Abandon()
		s.snapshotEvicted(id)
	})
	s.policies = cache.NewInBudget(s.budget, opts.MaxPolicies, 1<<62, func(id string, _ policy.Policy) {
		if _, ok := s.policies.Peek(id); !ok {
			s.evicted.policies.add(id)
		}
	})
	s.stages = newStages(opts.MaxStageBytes, s.budget)
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

// Method is the request's method, "" if its envelope could not be read.
func (r *Request) Method() string { return r.method }

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
		return failure(r.id, err), nil
	}
	return res.encode(r.id, s.opts.Transport == JSONL), nil
}

func (s *Session) serve(r *Request) (result, error) {
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

func (s *Session) dispatch(r *Request, fl *flight) (result, error) {
	f, method, payload := r.f, r.method, r.payload
	if method == "cancel" {
		c := r.cancel // settled when it was read
		if c.err != nil {
			return nil, c.err
		}
		return c, nil
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
	return nil, errorf(codeUnknownMethod, "unknown method %q", method)
}

// rawBytes returns the request's bytes: the binary payload, or the named
// base64 field in JSONL.
func (s *Session) rawBytes(f fields, payload []byte, field string) ([]byte, bool, error) {
	if s.opts.Transport == Binary {
		if f.present(field) {
			return nil, false, errorf(codeBinaryField, "%s is not used by the binary transport; send the bytes as the frame payload", field)
		}
		return payload, len(payload) > 0, nil
	}
	return f.base64(field)
}

// loadProgram returns the cached program with this id or validates bytes.
// A program a fresh execution is to begin from (fresh) must be of the
// current format; one a replay runs may be of any format its snapshot
// journals.
func (s *Session) loadProgram(id string, b []byte, fresh bool) (*engine.Program, error) {
	if p, ok := s.programs.Get(id); ok {
		if fresh && !p.Startable() {
			return nil, engine.ErrRetiredProgramFormat
		}
		return p, nil
	}
	load := engine.LoadProgramWith
	if fresh {
		load = engine.LoadProgramToStart
	}
	o, release := s.compileBound()
	p, err := load(append([]byte(nil), b...), o)
	release()
	if err != nil {
		return nil, err
	}
	return s.cacheProgram(p), nil
}
