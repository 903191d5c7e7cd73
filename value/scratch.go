package value

import "sync"

// scratch holds the stacks on which a decoder collects the elements and
// members of the arrays and objects it is inside; each finished one is
// copied out at its exact size. Pooling the stacks leaves the final slices,
// strings and keys as the only garbage a decode makes.
type scratch struct {
	elems   []Value
	members []Member
	buf     []byte        // a string being unescaped
	heads   []pendingHead // TranscodeJSON's array and object heads
	out     []byte        // TranscodeJSON's output, before it is copied out

	// keys interns object keys across decodes: tool results repeat the
	// same few keys, and each was a new string.
	keys map[string]string
}

// Interning is for short keys, at most maxInternedKeys of them per scratch,
// so hostile inputs with many distinct keys cost about what they did.
const (
	maxInternedKeyLen = 64
	maxInternedKeys   = 512
)

// key returns kb as a string, shared with earlier decodes when it is a
// key seen before.
func (s *scratch) key(kb []byte) string {
	if len(kb) > maxInternedKeyLen {
		return string(kb)
	}
	if k, ok := s.keys[string(kb)]; ok {
		return k
	}
	k := string(kb)
	switch {
	case s.keys == nil:
		s.keys = make(map[string]string, 32)
	case len(s.keys) >= maxInternedKeys:
		// Start over: inputs of many distinct keys cost a clear per
		// maxInternedKeys of them, and the usual few are back at once.
		clear(s.keys)
	}
	s.keys[k] = k
	return k
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// Stacks larger than this are dropped rather than pooled, so one huge
// input does not keep its memory alive.
const maxPooledEntries = 1 << 12

// maxPooledBuf is the largest unescaping buffer a scratch keeps.
const maxPooledBuf = 64 << 10

// maxPooledOut is the largest input TranscodeJSON transcodes in a
// scratch's output buffer, which it keeps: a request's worth. Larger
// inputs (staged values) get output of their own.
const maxPooledOut = 1<<20 + 64<<10

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

func (s *scratch) release() {
	// Entries above the lengths were cleared when popped; these are left
	// over by an error and must not keep the input's values alive.
	clear(s.elems)
	clear(s.members)
	if cap(s.elems) > maxPooledEntries || cap(s.members) > maxPooledEntries || cap(s.buf) > maxPooledBuf || cap(s.heads) > maxPooledEntries {
		return
	}
	if cap(s.out) > maxPooledOut {
		s.out = nil
	}
	s.elems, s.members, s.buf, s.heads, s.out = s.elems[:0], s.members[:0], s.buf[:0], s.heads[:0], s.out[:0]
	scratchPool.Put(s)
}

// takeElems pops the elements above base into a new slice.
func (s *scratch) takeElems(base int) []Value {
	out := make([]Value, len(s.elems)-base)
	copy(out, s.elems[base:])
	clear(s.elems[base:])
	s.elems = s.elems[:base]
	return out
}

// takeMembers pops the members above base into a new slice.
func (s *scratch) takeMembers(base int) []Member {
	out := make([]Member, len(s.members)-base)
	copy(out, s.members[base:])
	clear(s.members[base:])
	s.members = s.members[:base]
	return out
}
