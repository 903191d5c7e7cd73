package protocol

import (
	"github.com/mustard-sidecar/mustard-sidecar/cache"
	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
)

// The session's store: what it holds between requests. Every cached
// program, snapshot, parked execution and policy is an entry of one memory
// budget (memory.go); stages are reserved in it (staged.go); what the
// caches evict is remembered (evicted.go). The methods serve what a request
// needs of them: find, keep, make room.

// store is what a session holds between requests.
type store struct {
	budget    *cache.Budget // the memory budget every cache below but compiled shares
	programs  *cache.LRU[string, *engine.Program]
	compiled  *cache.LRU[string, string] // source → program_id of its compile
	snapshots *cache.LRU[string, *snapshotEntry]
	conts     *cache.LRU[string, *continuation]
	policies  *cache.LRU[string, policy.Policy]
	stages    *stages
	evicted   evictions // ids the caches evicted lately (evicted.go)
	keys      keys      // the snapshot keys resumes are authenticated with (auth.go)
	stats     Stats
}

// Stats counts how admitted resumes (past authentication and the
// engine's checks) ran: a hot resume continues a parked execution, a
// replay re-runs the program from the snapshot's journal. The stats
// method reports them (stats.go).
type Stats struct {
	HotResumes int
	Replays    int
	Compiles   int // sources compiled (not served from the cache)
	// EvictedExecutions counts parked executions let go before their
	// resume (the memory budget, the count bound, their program
	// evicted): each such resume replays.
	EvictedExecutions int
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
// snapshot it produced (its journal so far, which the execution keeps).
type continuation struct {
	exec   *engine.Execution
	prog   *engine.Program
	entry  *snapshotEntry
	weight int64 // in the memory budget
}

// pinned returns the policy the entry pins under id.
func (e *snapshotEntry) pinned(id string) (policy.Policy, bool) {
	for _, p := range e.pols {
		if p.id == id {
			return p.pol, true
		}
	}
	return policy.Policy{}, false
}

// weight is what the entry keeps: its bytes and the policies it pins.
func (e *snapshotEntry) weight() int64 {
	return snapshotWeight(e.bytes) + e.pinWeight()
}

func (e *snapshotEntry) pinWeight() int64 {
	var n int64
	for _, p := range e.pols {
		n += policyWeight(p.pol)
	}
	return n
}

// loadProgram returns the cached program with this id or validates bytes.
// A program a fresh execution is to begin from (fresh) must be of the
// current format; one a replay runs may be of any format its snapshot
// journals.
func (st *store) loadProgram(id string, b []byte, fresh bool) (*engine.Program, error) {
	if p, ok := st.programs.Get(id); ok {
		if fresh && !p.Startable() {
			return nil, engine.ErrRetiredProgramFormat
		}
		return p, nil
	}
	load := engine.LoadProgramWith
	if fresh {
		load = engine.LoadProgramToStart
	}
	o, release := st.compileBound()
	p, err := load(append([]byte(nil), b...), o)
	release()
	if err != nil {
		return nil, err
	}
	return st.cacheProgram(p), nil
}

// Program is the program a replay runs (engine.Store): cached, or loaded
// from the bytes its snapshot holds.
func (st *store) Program(id string, b []byte) (*engine.Program, error) {
	return st.loadProgram(id, b, false)
}

// lookupSnapshot returns the snapshot this session holds under id, or nil.
func (st *store) lookupSnapshot(id string) *snapshotEntry {
	if c, ok := st.conts.Peek(id); ok {
		return c.entry
	}
	if e, ok := st.snapshots.Get(id); ok {
		return e
	}
	return nil
}

// snapshotEvicted records a snapshot id whose last cached form (its entry,
// or the execution parked on it) has gone.
func (st *store) snapshotEvicted(id string) {
	if st.lookupPeek(id) == nil {
		st.evicted.snapshots.add(id)
	}
}

// lookupPeek is lookupSnapshot without making the entry recently used.
func (st *store) lookupPeek(id string) *snapshotEntry {
	if c, ok := st.conts.Peek(id); ok {
		return c.entry
	}
	if e, ok := st.snapshots.Peek(id); ok {
		return e
	}
	return nil
}

// compileBound returns the options that hold a compile to the budget, and
// the function that gives back what it reserved, to call once the compile
// has returned (the program it made is then weighed by its Size when it is
// cached). A compile may take all of the budget that staged bytes do not
// hold, evicting every cached entry if it needs to: whether a source
// compiles depends on the source alone, unless stages are held.
func (st *store) compileBound() (engine.CompileOptions, func()) {
	var held int64
	reserve := func(total uint64) bool {
		if total > uint64(st.budget.Limit()) {
			return false
		}
		if n := int64(total) - held; n > 0 {
			if !st.budget.Reserve(n) {
				return false
			}
			held += n
		}
		return true
	}
	return engine.CompileOptions{Reserve: reserve}, func() {
		st.budget.Release(held)
		held = 0
	}
}

// MakeRoom makes room in the budget for an execution about to run under
// l (engine.Store): its heap limit, up to a quarter of the budget (a host that gives
// executions more heap than that runs them on memory the budget does not
// see, and should raise the budget with them). Nothing is refused: what
// cannot be evicted is what the running execution needs anyway.
func (st *store) MakeRoom(l policy.Limits) {
	st.budget.MakeRoom(int64(min(l.HeapLimitBytes, uint64(st.budget.Limit()/4))))
}

// programEvicted drops what depends on an evicted program: its entry in
// the compile cache (unless the same program is cached again), and the
// parked executions that run it, which would otherwise keep it in memory
// unweighed. Parking touches an execution's program, so in the budget's
// order a program outlives its parked executions; its own bounds (count,
// bytes) may still evict it first.
func (st *store) programEvicted(p *engine.Program) {
	if _, ok := st.programs.Peek(p.ID); !ok {
		if id, ok := st.compiled.Peek(programKey(p)); ok && id == p.ID {
			st.compiled.Remove(programKey(p))
		}
	}
	st.conts.RemoveIf(func(_ string, c *continuation) bool { return c.prog == p })
}

// cacheProgram caches a program just compiled or loaded, or returns the
// one cached under its id (the same program, made earlier).
func (st *store) cacheProgram(p *engine.Program) *engine.Program {
	if cur, ok := st.programs.Get(p.ID); ok {
		return cur
	}
	st.programs.Add(p.ID, p, int64(min(p.Size(), 1<<62)))
	return p
}

// compileKey is the compile cache's key of a source in a language: the
// source itself for JavaScript, as before languages, and the source after
// a prefix no JavaScript program can start with (a NUL byte cannot begin
// one that compiles) for any other.
func compileKey(lang engine.Language, src string) string {
	if lang == engine.JavaScript {
		return src
	}
	return "\x00" + string(lang) + "\x00" + src
}

// programKey is compileKey of the program's own source.
func programKey(p *engine.Program) string { return compileKey(p.Language, p.Source) }
