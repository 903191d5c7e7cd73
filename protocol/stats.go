package protocol

import (
	"strconv"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// statsResult is the stats method's result ({"kind":"stats"}): what the
// session holds now (in the memory budget's terms, docs/limits.md), and
// counters since it began. Reading it changes nothing, not even which
// cached entry is least recently used.
type statsResult struct {
	budget, used, reserved int64
	parked                 int
	programs, snapshots    int
	policies               int
	staged                 int64
	evictions              int64
	counts                 Stats
}

func (s *Session) statsNow() *statsResult {
	return &statsResult{
		budget: s.budget.Limit(), used: s.budget.Used(), reserved: s.budget.Reserved(),
		parked:   s.conts.Len(),
		programs: s.programs.Len(), snapshots: s.snapshots.Len(), policies: s.policies.Len(),
		staged:    s.stages.total,
		evictions: s.budget.Evictions(),
		counts:    s.stats,
	}
}

func (st *statsResult) encode(id uint64, jsonl bool) Response {
	b := okHeader(id, jsonl, 0)
	b = append(b, resultOf+wire.KindStats+`"`...)
	for _, m := range []struct {
		name string
		n    int64
	}{
		{wire.FieldMemoryBudgetBytes, st.budget},
		{wire.FieldMemoryUsedBytes, st.used},
		{wire.FieldMemoryReservedBytes, st.reserved},
		{wire.FieldParkedExecutions, int64(st.parked)},
		{wire.FieldCachedPrograms, int64(st.programs)},
		{wire.FieldCachedSnapshots, int64(st.snapshots)},
		{wire.FieldCachedPolicies, int64(st.policies)},
		{wire.FieldStagedBytes, st.staged},
		{wire.FieldCompiles, int64(st.counts.Compiles)},
		{wire.FieldHotResumes, int64(st.counts.HotResumes)},
		{wire.FieldReplays, int64(st.counts.Replays)},
		{wire.FieldEvictedExecutions, int64(st.counts.EvictedExecutions)},
		{wire.FieldEvictions, st.evictions},
	} {
		b = append(b, `,"`...)
		b = append(b, m.name...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, m.n, 10)
	}
	return Response{Header: append(b, "}}"...)}
}
