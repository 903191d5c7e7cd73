// Package cache provides bounded least-recently-used caches with byte
// accounting, and a Budget that bounds several caches together. It knows
// nothing about what it holds: callers supply each entry's size and
// release resources in the eviction callback.
package cache

// LRU is a cache bounded by entry count and by total bytes.
//
// An LRU is not safe for concurrent use: a session drives it from a single
// goroutine, so locking would only add cost. Callers sharing one across
// goroutines must lock around it.
//
// Every entry that leaves the cache other than through Take is passed to
// onEvict, so owners of pooled or reference-counted values can release them.
// onEvict runs synchronously, after the cache's state is fully updated, so
// it may call into other caches. It must not call back into the same cache:
// that does not corrupt it, but the order of callbacks is then unspecified.
// If onEvict panics, the callbacks still pending for that operation are
// skipped.
type LRU[K comparable, V any] struct {
	maxEntries int
	maxBytes   int64
	onEvict    func(K, V)
	budget     *Budget // shared with other caches, or nil

	items map[K]*entry[K, V]
	// root is the sentinel of a circular list: root.next is the most
	// recently used entry, root.prev the least.
	root  entry[K, V]
	bytes int64

	free    *entry[K, V] // recycled nodes, linked through next
	freeLen int
	evicted []kv[K, V] // callbacks queued until the state is consistent
}

type entry[K comparable, V any] struct {
	prev, next *entry[K, V]
	key        K
	val        V
	size       int64
	g          node // its place in the budget, if the cache has one
}

type kv[K comparable, V any] struct {
	key K
	val V
}

// maxFree bounds the recycled nodes and the retained callback queue, so a
// one-off burst (such as Clear on a large cache) is not kept alive forever.
const maxFree = 64

// New returns an empty cache holding at most maxEntries entries and
// maxBytes bytes in total. A bound of zero or less means that dimension is
// unbounded. onEvict may be nil.
func New[K comparable, V any](maxEntries int, maxBytes int64, onEvict func(K, V)) *LRU[K, V] {
	c := &LRU[K, V]{
		maxEntries: maxEntries,
		maxBytes:   maxBytes,
		onEvict:    onEvict,
		items:      make(map[K]*entry[K, V]),
	}
	c.root.next = &c.root
	c.root.prev = &c.root
	return c
}

// NewInBudget is New for a cache whose entries also count against b,
// which other caches may share (see Budget): an entry is then evicted
// when this cache's own bounds or b's call for it.
func NewInBudget[K comparable, V any](b *Budget, maxEntries int, maxBytes int64, onEvict func(K, V)) *LRU[K, V] {
	c := New[K, V](maxEntries, maxBytes, onEvict)
	c.budget = b
	return c
}

// Add stores v under key as the most recently used entry, with the given
// size in bytes. An existing entry for key is replaced and passed to
// onEvict. Least recently used entries are then evicted until both bounds
// hold, and then the budget's. An entry whose size alone exceeds maxBytes,
// or what the budget can hold beside its reservations, is not stored and
// is passed to onEvict at once. Add panics if size is negative.
func (c *LRU[K, V]) Add(key K, v V, size int64) {
	if size < 0 {
		panic("cache: negative size")
	}
	tooLarge := (c.maxBytes > 0 && size > c.maxBytes) || (c.budget != nil && !c.budget.fits(size))
	if e, ok := c.items[key]; ok {
		c.queue(key, e.val)
		if tooLarge {
			c.unlink(e)
			c.queue(key, v)
		} else {
			c.bytes += size - e.size
			e.val = v
			e.size = size
			if c.budget != nil {
				c.budget.resize(&e.g, size)
			}
			c.moveToFront(e)
		}
	} else if tooLarge {
		c.queue(key, v)
	} else {
		e := c.newEntry()
		e.key, e.val, e.size = key, v, size
		c.items[key] = e
		c.bytes += size
		c.pushFront(e)
		if c.budget != nil {
			e.g = node{size: size, owner: c, entry: e}
			c.budget.link(&e.g)
		}
	}
	for c.overLimit() {
		old := c.root.prev
		c.queue(old.key, old.val)
		c.unlink(old)
	}
	c.flush()
	if c.budget != nil {
		c.budget.evictFor(0)
	}
}

// evictNode evicts the entry whose budget place is n, for the budget.
func (c *LRU[K, V]) evictNode(n *node) {
	e := n.entry.(*entry[K, V])
	c.queue(e.key, e.val)
	c.unlink(e)
	c.flush()
}

func (c *LRU[K, V]) overLimit() bool {
	return (c.maxEntries > 0 && len(c.items) > c.maxEntries) ||
		(c.maxBytes > 0 && c.bytes > c.maxBytes)
}

// Get returns the value for key and marks it most recently used, in the
// cache and in its budget.
func (c *LRU[K, V]) Get(key K) (V, bool) {
	e, ok := c.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.moveToFront(e)
	return e.val, true
}

// Peek returns the value for key without changing its recency.
func (c *LRU[K, V]) Peek(key K) (V, bool) {
	e, ok := c.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	return e.val, true
}

// Take removes the entry for key and hands it to the caller without calling
// onEvict: ownership moves to the caller (for one-use items).
func (c *LRU[K, V]) Take(key K) (V, bool) {
	e, ok := c.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	v := e.val
	c.unlink(e)
	return v, true
}

// Remove removes the entry for key, passing it to onEvict, and reports
// whether it was present.
func (c *LRU[K, V]) Remove(key K) bool {
	e, ok := c.items[key]
	if !ok {
		return false
	}
	c.queue(key, e.val)
	c.unlink(e)
	c.flush()
	return true
}

// RemoveIf removes every entry for which pred is true, least recently
// used first, passing each to onEvict, and returns how many it removed.
// pred must not change the cache.
func (c *LRU[K, V]) RemoveIf(pred func(K, V) bool) int {
	n := 0
	for e := c.root.prev; e != &c.root; {
		prev := e.prev
		if pred(e.key, e.val) {
			c.queue(e.key, e.val)
			c.unlink(e)
			n++
		}
		e = prev
	}
	c.flush()
	return n
}

// Len returns the number of entries.
func (c *LRU[K, V]) Len() int { return len(c.items) }

// Bytes returns the total size of the entries.
func (c *LRU[K, V]) Bytes() int64 { return c.bytes }

// Clear evicts every entry, least recently used first, passing each to
// onEvict.
func (c *LRU[K, V]) Clear() {
	for e := c.root.prev; e != &c.root; {
		prev := e.prev
		c.queue(e.key, e.val)
		if c.budget != nil {
			c.budget.unlink(&e.g)
		}
		c.release(e)
		e = prev
	}
	clear(c.items)
	c.root.next = &c.root
	c.root.prev = &c.root
	c.bytes = 0
	c.flush()
}

// queue records an eviction; callbacks run in flush once the state is
// consistent.
func (c *LRU[K, V]) queue(key K, v V) {
	if c.onEvict != nil {
		c.evicted = append(c.evicted, kv[K, V]{key, v})
	}
}

// flush runs the queued callbacks. The queue is detached first so a
// callback that re-enters this cache gets a fresh queue instead of
// clobbering the one being iterated.
func (c *LRU[K, V]) flush() {
	if len(c.evicted) == 0 {
		return
	}
	q := c.evicted
	c.evicted = nil
	for i := range q {
		c.onEvict(q[i].key, q[i].val)
	}
	clear(q) // drop references so evicted values can be collected
	if c.evicted == nil && cap(q) <= maxFree {
		c.evicted = q[:0]
	}
}

func (c *LRU[K, V]) pushFront(e *entry[K, V]) {
	e.prev = &c.root
	e.next = c.root.next
	e.prev.next = e
	e.next.prev = e
}

func (c *LRU[K, V]) moveToFront(e *entry[K, V]) {
	if c.budget != nil {
		c.budget.touch(&e.g)
	}
	if c.root.next == e {
		return
	}
	e.prev.next = e.next
	e.next.prev = e.prev
	c.pushFront(e)
}

// unlink removes e from the list, the map, the byte count and the budget,
// and recycles the node.
func (c *LRU[K, V]) unlink(e *entry[K, V]) {
	if c.budget != nil {
		c.budget.unlink(&e.g)
	}
	e.prev.next = e.next
	e.next.prev = e.prev
	delete(c.items, e.key)
	c.bytes -= e.size
	c.release(e)
}

func (c *LRU[K, V]) newEntry() *entry[K, V] {
	if e := c.free; e != nil {
		c.free = e.next
		c.freeLen--
		e.next = nil
		return e
	}
	return new(entry[K, V])
}

// release zeroes e, so the cache keeps no reference to its key or value, and
// keeps it for reuse if the free list has room.
func (c *LRU[K, V]) release(e *entry[K, V]) {
	*e = entry[K, V]{}
	if c.freeLen < maxFree {
		e.next = c.free
		c.free = e
		c.freeLen++
	}
}
