// Package protocol implements the wire contract: request decoding, the
// compile/start/resume dispatch of a Session, and response encoding.
package protocol

// A request is read and served in serve.go, decoded once into its method's
// typed request in requests.go (with the field readers of decode.go,
// closed.go, payload.go, staged.go), and served by the Session's method in
// a file of its own (compile.go, start.go, resume.go, transfer.go, ping.go,
// cancel.go); start and resume share step.go, resume has auth.go and
// seal.go beside it. What a session holds between requests is its store
// (store.go, memory.go, evicted.go). This file holds the Session: its
// options and its lifecycle.

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/cache"
	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
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
	opts    Options
	engine  *engine.Runtime
	*store  // what it holds between requests: caches, budget, stages, keys, statistics
	flights flights
	decode  decoder        // reads requests; it takes their stages, opens their seal keys
	warming sync.WaitGroup // the process warm-up, if this session began it
	// quiet is that warm-up waiting for the session to be quiet. A
	// compile arranges it from Serve while the next request may be read
	// (Read), so it is set and read atomically.
	quiet atomic.Pointer[quietRun]
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
	s := &Session{opts: opts, engine: engine.NewRuntime(), store: &store{}}
	if opts.PinnedKey != nil {
		s.keys.pinned = wire.NewVerifier(opts.PinnedKey)
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
		s.stats.EvictedExecutions++
	})
	s.policies = cache.NewInBudget(s.budget, opts.MaxPolicies, 1<<62, func(id string, _ policy.Policy) {
		if _, ok := s.policies.Peek(id); !ok {
			s.evicted.policies.add(id)
		}
	})
	s.stages = newStages(opts.MaxStageBytes, s.budget)
	s.decode = decoder{binary: opts.Transport == Binary, stages: s.stages}
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
	s.quiet.Load().drop()
	s.warming.Wait()
	s.conts.Clear()
	s.engine.Close()
}

// Stats reports the resume counters.
func (s *Session) Stats() Stats { return s.stats }

// Parked reports how many live executions are parked.
func (s *Session) Parked() int { return s.conts.Len() }

// MemoryUsed reports what the session's budget counts now, and its limit.
func (s *Session) MemoryUsed() (used, limit int64) { return s.budget.Used(), s.budget.Limit() }

// StageBound reports the bound on staged bytes (and on a snapshot's size)
// in force: Options.MaxStageBytes, at most half the budget.
func (s *Session) StageBound() int64 { return s.opts.MaxStageBytes }
