package cache

// Budget bounds the bytes of several caches together, plus the bytes their
// owner reserves outside them (work under way that cannot be evicted). Each
// cache keeps its own bounds too; the budget is on top of them.
//
// Recency is one order across every cache that shares the budget: an
// entry is used when it is added and when it is got (Get, not Peek). Past
// the limit, the least recently used entry of them all is evicted,
// whichever cache holds it, exactly as that cache evicts for its own
// bounds (its onEvict is called). So an entry used often stays, whatever
// its kind, and a burst of one kind pushes out what has not been used
// since.
//
// A Budget is not safe for concurrent use, nor are the caches that share
// it: one goroutine drives them all.
type Budget struct {
	limit    int64
	used     int64 // the entries' sizes and the reservations
	reserved int64 // the reservations
	// root is the sentinel of a circular list of every entry of every
	// cache sharing the budget: root.next is the most recently used.
	root      node
	evictions int64
}

// node is an entry's place in its budget's list.
type node struct {
	prev, next *node
	size       int64
	owner      member // the cache holding the entry
	entry      any    // the entry, for its owner
}

// member is a cache that shares a budget.
type member interface {
	// evictNode evicts the entry n is the place of, as the cache evicts
	// for its own bounds.
	evictNode(n *node)
}

// NewBudget returns a budget of limit bytes; zero or less means unbounded.
func NewBudget(limit int64) *Budget {
	b := &Budget{limit: limit}
	b.root.next = &b.root
	b.root.prev = &b.root
	return b
}

// Limit returns the budget's limit.
func (b *Budget) Limit() int64 { return b.limit }

// Used returns the bytes of every entry of the caches sharing the budget,
// plus the reservations.
func (b *Budget) Used() int64 { return b.used }

// Reserved returns the bytes reserved outside the caches.
func (b *Budget) Reserved() int64 { return b.reserved }

// Evictions returns how many entries the budget has evicted, over its
// life: entries its caches evicted for their own bounds are not counted.
func (b *Budget) Evictions() int64 { return b.evictions }

// Reserve takes n bytes for something outside the caches, evicting the
// least recently used entries to make room. It fails, taking nothing and
// evicting nothing, when the reservations alone would be over the limit.
// Reserve panics if n is negative.
func (b *Budget) Reserve(n int64) bool {
	if n < 0 {
		panic("cache: negative reservation")
	}
	if b.limit > 0 && b.reserved+n > b.limit {
		return false
	}
	b.evictFor(n)
	b.used += n
	b.reserved += n
	return true
}

// Release gives back n reserved bytes.
func (b *Budget) Release(n int64) {
	if n < 0 || n > b.reserved {
		panic("cache: releasing more than was reserved")
	}
	b.used -= n
	b.reserved -= n
}

// MakeRoom evicts least recently used entries until n more bytes fit, or
// no entry is left, and reports whether they fit. Nothing is reserved: it
// is for something about to run that holds its memory only while it runs.
func (b *Budget) MakeRoom(n int64) bool {
	b.evictFor(n)
	return b.limit <= 0 || b.used+n <= b.limit
}

// fits reports whether an entry of size bytes can be held at all: with
// every other entry evicted, beside the reservations.
func (b *Budget) fits(size int64) bool {
	return b.limit <= 0 || b.reserved+size <= b.limit
}

// evictFor evicts least recently used entries until room more bytes fit
// or none is left. An eviction's callback may evict other entries or add
// some: the list is read afresh at every step.
func (b *Budget) evictFor(room int64) {
	for b.limit > 0 && b.used+room > b.limit && b.root.prev != &b.root {
		n := b.root.prev
		b.evictions++
		n.owner.evictNode(n)
	}
}

// link puts n first in the list and counts its size.
func (b *Budget) link(n *node) {
	n.prev = &b.root
	n.next = b.root.next
	n.prev.next = n
	n.next.prev = n
	b.used += n.size
}

// unlink takes n out of the list and its size out of the count.
func (b *Budget) unlink(n *node) {
	n.prev.next = n.next
	n.next.prev = n.prev
	n.prev, n.next = nil, nil
	b.used -= n.size
}

// touch makes n the most recently used.
func (b *Budget) touch(n *node) {
	if b.root.next == n {
		return
	}
	n.prev.next = n.next
	n.next.prev = n.prev
	n.prev = &b.root
	n.next = b.root.next
	n.prev.next = n
	n.next.prev = n
}

// resize changes n's size in the count.
func (b *Budget) resize(n *node, size int64) {
	b.used += size - n.size
	n.size = size
}
