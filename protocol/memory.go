package protocol

import (
	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
)

// The memory budget (docs/limits.md, "The memory budget"): one bound on
// the memory a session holds between requests and takes while it serves
// one. Every cached program, snapshot, parked execution and policy is an
// entry of one cache.Budget, weighed by what it keeps; staged bytes and a
// compile under way are reservations in it; an execution about to run
// makes room for its heap limit. Past the budget, the least recently used
// entry of any kind is evicted: a host resumes an evicted parked execution
// from its snapshot bytes, and an evicted id is unknown as the contract
// allows. What cannot be evicted is refused: a compile that would take
// more than the budget beside staged bytes, and staged bytes past half of
// it.

// DefaultMemoryBudget is the budget when Options leave it zero, and not
// less than twice the staged bytes bound.
const DefaultMemoryBudget = 128 << 20

// Fixed parts of the weights: the entry, its key and its value's headers.
const (
	snapshotOverhead = 256
	policyOverhead   = 512
)

func snapshotWeight(b []byte) int64 { return int64(len(b)) + snapshotOverhead }

// policyWeight is a policy's capability names and the rest of it.
func policyWeight(p policy.Policy) int64 {
	n := int64(policyOverhead)
	for _, c := range p.Capabilities {
		n += int64(len(c)) + 16
	}
	return n
}

// contWeight is what a parked execution keeps: the guest's values (at
// most RetainedBytes), its realm and goroutine, and its journal so far
// (which its snapshots share; a snapshot cached beside it is counted
// again).
func contWeight(exec *engine.Execution, b interface{ Size() int }) int64 {
	return int64(min(exec.RetainedBytes()+engine.ParkedOverhead, 1<<62)) + int64(b.Size())
}

// compileBound returns the options that hold a compile to the budget, and
// the function that gives back what it reserved, to call once the compile
// has returned (the program it made is then weighed by its Size when it is
// cached). A compile may take all of the budget that staged bytes do not
// hold, evicting every cached entry if it needs to: whether a source
// compiles depends on the source alone, unless stages are held.
func (s *Session) compileBound() (engine.CompileOptions, func()) {
	var held int64
	reserve := func(total uint64) bool {
		if total > uint64(s.budget.Limit()) {
			return false
		}
		if n := int64(total) - held; n > 0 {
			if !s.budget.Reserve(n) {
				return false
			}
			held += n
		}
		return true
	}
	return engine.CompileOptions{Reserve: reserve}, func() {
		s.budget.Release(held)
		held = 0
	}
}

// roomToRun makes room in the budget for an execution about to run under
// l: its heap limit, up to a quarter of the budget (a host that gives
// executions more heap than that runs them on memory the budget does not
// see, and should raise the budget with them). Nothing is refused: what
// cannot be evicted is what the running execution needs anyway.
func (s *Session) roomToRun(l policy.Limits) {
	s.budget.MakeRoom(int64(min(l.HeapLimitBytes, uint64(s.budget.Limit()/4))))
}

// programEvicted drops what depends on an evicted program: its entry in
// the compile cache (unless the same program is cached again), and the
// parked executions that run it, which would otherwise keep it in memory
// unweighed. Parking touches an execution's program, so in the budget's
// order a program outlives its parked executions; its own bounds (count,
// bytes) may still evict it first.
func (s *Session) programEvicted(p *engine.Program) {
	if _, ok := s.programs.Peek(p.ID); !ok {
		if id, ok := s.compiled.Peek(programKey(p)); ok && id == p.ID {
			s.compiled.Remove(programKey(p))
		}
	}
	s.conts.RemoveIf(func(_ string, c *continuation) bool { return c.prog == p })
}

// cacheProgram caches a program just compiled or loaded, or returns the
// one cached under its id (the same program, made earlier).
func (s *Session) cacheProgram(p *engine.Program) *engine.Program {
	if cur, ok := s.programs.Get(p.ID); ok {
		return cur
	}
	s.programs.Add(p.ID, p, int64(min(p.Size(), 1<<62)))
	return p
}

// MemoryUsed reports what the session's budget counts now, and its limit.
func (s *Session) MemoryUsed() (used, limit int64) { return s.budget.Used(), s.budget.Limit() }

// StageBound reports the bound on staged bytes (and on a snapshot's size)
// in force: Options.MaxStageBytes, at most half the budget.
func (s *Session) StageBound() int64 { return s.opts.MaxStageBytes }
