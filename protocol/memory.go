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
func contWeight(exec *engine.Execution) int64 {
	return int64(min(exec.RetainedBytes()+engine.ParkedOverhead, 1<<62)) + int64(exec.JournalSize())
}
