package protocol

import "github.com/mustard-sidecar/mustard-sidecar/policy"

// What eviction leaves behind. The memory budget (and each cache's own
// bounds) may evict any cached entry, and a host that named it by id must
// then send what it stood for: the snapshot bytes, the full policy, the
// program bytes. Two things keep that recoverable and clear:
//
//   - a cached snapshot, and the execution parked on it, keep the policy
//     they were produced under (pinned in the snapshot's entry), so a
//     resume by the ids a step returned never finds its policy gone while
//     its snapshot is there: the policy goes with the last entry that
//     pins it, not before;
//   - the ids evicted lately are remembered (a bounded set per kind), so
//     naming one fails with its own error_code (evicted_snapshot_id,
//     evicted_policy_id, evicted_program_id) rather than the code of an id
//     this process never held. The phrase is the contract's for an id not
//     cached.

// maxPinnedPolicies bounds the policies one snapshot entry pins: the same
// snapshot reached again (a deterministic replay) under other policies
// keeps the most recent few.
const maxPinnedPolicies = 4

// pinnedPolicy is a policy a snapshot entry keeps, under its id.
type pinnedPolicy struct {
	id  string
	pol policy.Policy
}

// pinPolicy returns pins with (id, pol) first, without duplicates, at most
// maxPinnedPolicies long. pins is not changed.
func pinPolicy(pins []pinnedPolicy, id string, pol policy.Policy) []pinnedPolicy {
	out := make([]pinnedPolicy, 0, min(len(pins)+1, maxPinnedPolicies))
	out = append(out, pinnedPolicy{id, pol})
	for _, p := range pins {
		if len(out) == maxPinnedPolicies {
			break
		}
		if p.id != id {
			out = append(out, p)
		}
	}
	return out
}

// maxEvictedIDs bounds the ids remembered as evicted, per kind: enough for
// every entry the caches' count bounds hold, and a few kilobytes each.
const maxEvictedIDs = 1024

// evictedIDs is a bounded set of ids evicted lately: past its bound, the
// oldest is forgotten (and is then reported as never known).
type evictedIDs struct {
	set  map[string]struct{}
	ring []string
	next int
}

func (e *evictedIDs) add(id string) {
	if e.set == nil {
		e.set = make(map[string]struct{}, 64)
	}
	if _, ok := e.set[id]; ok {
		return
	}
	if len(e.ring) < maxEvictedIDs {
		e.ring = append(e.ring, id)
	} else {
		delete(e.set, e.ring[e.next])
		e.ring[e.next] = id
		e.next = (e.next + 1) % maxEvictedIDs
	}
	e.set[id] = struct{}{}
}

func (e *evictedIDs) has(id string) bool {
	_, ok := e.set[id]
	return ok
}

// evictions are the evicted ids of each kind a request may name.
type evictions struct {
	snapshots, policies, programs evictedIDs
}

// unknownSnapshot is the failure of a snapshot id the session does not
// hold: evicted, or never known.
func (e *evictions) unknownSnapshot(id string) error {
	c := codeUnknownSnapshotID
	if e.snapshots.has(id) {
		c = codeEvictedSnapshotID
	}
	return errorf(c, "unknown snapshot_id `%s`", id)
}

// unknownPolicy is unknownSnapshot for a policy id.
func (e *evictions) unknownPolicy(id string) error {
	c := codeUnknownPolicyID
	if e.policies.has(id) {
		c = codeEvictedPolicyID
	}
	return errorf(c, "unknown policy_id `%s`", id)
}

// unknownProgram is unknownSnapshot for a program id.
func (e *evictions) unknownProgram(id string) error {
	c := codeUnknownProgramID
	if e.programs.has(id) {
		c = codeEvictedProgramID
	}
	return errorf(c, "unknown program_id `%s`", id)
}
