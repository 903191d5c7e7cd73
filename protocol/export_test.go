package protocol

// Hooks for the package's external tests: states a host reaches only
// through particular histories of evictions, set up directly.

// ForgetPolicy drops a cached policy; the snapshots that pin it keep it.
func (s *Session) ForgetPolicy(id string) { s.policies.Remove(id) }

// ForgetSnapshot drops a cached snapshot entry; an execution parked on it
// keeps it.
func (s *Session) ForgetSnapshot(id string) { s.snapshots.Remove(id) }

// FillBudget reserves what is free in the memory budget, so that the next
// entry cached evicts the least recently used ones.
func (s *Session) FillBudget() {
	s.budget.Reserve(s.budget.Limit() - s.budget.Used() - s.budget.Reserved())
}

// CachedSnapshot returns the bytes the session keeps for a snapshot id,
// nil when it keeps none.
func (s *Session) CachedSnapshot(id string) []byte {
	if e, ok := s.snapshots.Peek(id); ok {
		return e.bytes
	}
	return nil
}
