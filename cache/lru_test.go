package cache

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

type ev struct {
	key string
	val int
}

// recorder collects onEvict calls.
type recorder struct{ got []ev }

func (r *recorder) fn(k string, v int) { r.got = append(r.got, ev{k, v}) }

func (r *recorder) take() []ev {
	g := r.got
	r.got = nil
	return g
}

func expectEvicted(t *testing.T, r *recorder, want ...ev) {
	t.Helper()
	got := r.take()
	if !slices.Equal(got, want) {
		t.Fatalf("evicted %v, want %v", got, want)
	}
}

// keys returns keys from most to least recently used.
func keys[K comparable, V any](c *LRU[K, V]) []K {
	var ks []K
	for e := c.root.next; e != &c.root; e = e.next {
		ks = append(ks, e.key)
	}
	return ks
}

func expectKeys(t *testing.T, c *LRU[string, int], want ...string) {
	t.Helper()
	if got := keys(c); !slices.Equal(got, want) {
		t.Fatalf("keys (MRU first) = %v, want %v", got, want)
	}
	if c.Len() != len(want) {
		t.Fatalf("Len = %d, want %d", c.Len(), len(want))
	}
}

func TestLRUOrder(t *testing.T) {
	var r recorder
	c := New[string, int](3, 0, r.fn)
	c.Add("a", 1, 1)
	c.Add("b", 2, 1)
	c.Add("c", 3, 1)
	expectKeys(t, c, "c", "b", "a")

	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Fatalf("Get(a) = %v, %v", v, ok)
	}
	expectKeys(t, c, "a", "c", "b")

	if v, ok := c.Peek("b"); !ok || v != 2 {
		t.Fatalf("Peek(b) = %v, %v", v, ok)
	}
	expectKeys(t, c, "a", "c", "b") // Peek does not reorder

	c.Add("d", 4, 1)
	expectEvicted(t, &r, ev{"b", 2})
	expectKeys(t, c, "d", "a", "c")

	if _, ok := c.Get("b"); ok {
		t.Fatal("evicted entry still present")
	}
	if _, ok := c.Peek("zz"); ok {
		t.Fatal("Peek of missing key succeeded")
	}
}

func TestByteBound(t *testing.T) {
	var r recorder
	c := New[string, int](0, 10, r.fn)
	c.Add("a", 1, 4)
	c.Add("b", 2, 4)
	if c.Bytes() != 8 {
		t.Fatalf("Bytes = %d", c.Bytes())
	}
	c.Add("c", 3, 4) // 12 > 10: evict a
	expectEvicted(t, &r, ev{"a", 1})
	expectKeys(t, c, "c", "b")
	if c.Bytes() != 8 {
		t.Fatalf("Bytes = %d", c.Bytes())
	}
	c.Get("b")
	c.Add("d", 4, 9) // needs 9: evict c then b
	expectEvicted(t, &r, ev{"c", 3}, ev{"b", 2})
	expectKeys(t, c, "d")
	if c.Bytes() != 9 {
		t.Fatalf("Bytes = %d", c.Bytes())
	}
	c.Add("e", 5, 1) // exactly at the bound: nothing evicted
	expectEvicted(t, &r)
	if c.Bytes() != 10 {
		t.Fatalf("Bytes = %d", c.Bytes())
	}
	c.Add("z", 0, 0) // zero-sized entries are fine
	expectEvicted(t, &r)
	expectKeys(t, c, "z", "e", "d")
}

func TestCountBound(t *testing.T) {
	var r recorder
	c := New[string, int](2, 1000, r.fn)
	for i := range 5 {
		c.Add(strconv.Itoa(i), i, 1)
	}
	expectEvicted(t, &r, ev{"0", 0}, ev{"1", 1}, ev{"2", 2})
	expectKeys(t, c, "4", "3")
	if c.Bytes() != 2 {
		t.Fatalf("Bytes = %d", c.Bytes())
	}
}

func TestUnbounded(t *testing.T) {
	var r recorder
	c := New[string, int](0, 0, r.fn)
	for i := range 1000 {
		c.Add(strconv.Itoa(i), i, 1<<40)
	}
	expectEvicted(t, &r)
	if c.Len() != 1000 || c.Bytes() != 1000<<40 {
		t.Fatalf("Len %d Bytes %d", c.Len(), c.Bytes())
	}
}

func TestOversizeEntry(t *testing.T) {
	var r recorder
	c := New[string, int](10, 10, r.fn)
	c.Add("a", 1, 5)
	c.Add("big", 2, 11)
	expectEvicted(t, &r, ev{"big", 2})
	expectKeys(t, c, "a") // existing entries untouched
	if c.Bytes() != 5 {
		t.Fatalf("Bytes = %d", c.Bytes())
	}

	// Replacing with an oversize value drops both old and new.
	c.Add("a", 3, 11)
	expectEvicted(t, &r, ev{"a", 1}, ev{"a", 3})
	expectKeys(t, c)
	if c.Bytes() != 0 {
		t.Fatalf("Bytes = %d", c.Bytes())
	}

	c.Add("exact", 4, 10)
	expectEvicted(t, &r)
	expectKeys(t, c, "exact")
}

func TestReplace(t *testing.T) {
	var r recorder
	c := New[string, int](3, 10, r.fn)
	c.Add("a", 1, 2)
	c.Add("b", 2, 2)
	c.Add("a", 10, 5) // replace: old value evicted, moved to front, bytes adjusted
	expectEvicted(t, &r, ev{"a", 1})
	expectKeys(t, c, "a", "b")
	if v, _ := c.Peek("a"); v != 10 {
		t.Fatalf("Peek(a) = %d", v)
	}
	if c.Bytes() != 7 {
		t.Fatalf("Bytes = %d", c.Bytes())
	}
	// Growing the replaced entry evicts others, never itself.
	c.Add("a", 11, 9)
	expectEvicted(t, &r, ev{"a", 10}, ev{"b", 2})
	expectKeys(t, c, "a")
	if c.Bytes() != 9 {
		t.Fatalf("Bytes = %d", c.Bytes())
	}
	// Same value again still counts as a replacement.
	c.Add("a", 11, 1)
	expectEvicted(t, &r, ev{"a", 11})
	if c.Bytes() != 1 {
		t.Fatalf("Bytes = %d", c.Bytes())
	}
}

func TestTakeVersusRemove(t *testing.T) {
	var r recorder
	c := New[string, int](10, 100, r.fn)
	c.Add("a", 1, 3)
	c.Add("b", 2, 4)

	v, ok := c.Take("a")
	if !ok || v != 1 {
		t.Fatalf("Take(a) = %v, %v", v, ok)
	}
	expectEvicted(t, &r) // Take hands ownership to the caller
	if _, ok := c.Take("a"); ok {
		t.Fatal("second Take succeeded")
	}
	if c.Bytes() != 4 || c.Len() != 1 {
		t.Fatalf("after Take: Len %d Bytes %d", c.Len(), c.Bytes())
	}

	if !c.Remove("b") {
		t.Fatal("Remove(b) = false")
	}
	expectEvicted(t, &r, ev{"b", 2})
	if c.Remove("b") {
		t.Fatal("second Remove succeeded")
	}
	expectEvicted(t, &r)
	if c.Bytes() != 0 || c.Len() != 0 {
		t.Fatalf("after Remove: Len %d Bytes %d", c.Len(), c.Bytes())
	}
}

func TestClear(t *testing.T) {
	var r recorder
	c := New[string, int](10, 100, r.fn)
	c.Add("a", 1, 1)
	c.Add("b", 2, 2)
	c.Add("c", 3, 3)
	c.Get("a")
	c.Clear()
	expectEvicted(t, &r, ev{"b", 2}, ev{"c", 3}, ev{"a", 1}) // LRU first
	expectKeys(t, c)
	if c.Bytes() != 0 {
		t.Fatalf("Bytes = %d", c.Bytes())
	}
	c.Clear()
	expectEvicted(t, &r)
	// Usable after Clear.
	c.Add("d", 4, 4)
	expectKeys(t, c, "d")
	if v, ok := c.Get("d"); !ok || v != 4 {
		t.Fatalf("Get(d) = %v, %v", v, ok)
	}
}

func TestNilOnEvict(t *testing.T) {
	c := New[string, int](1, 0, nil)
	c.Add("a", 1, 1)
	c.Add("b", 2, 1)
	c.Add("b", 3, 1)
	c.Remove("b")
	c.Add("c", 1, 1)
	c.Clear()
	if c.Len() != 0 {
		t.Fatal("not empty")
	}
}

func TestNegativeSizePanics(t *testing.T) {
	c := New[string, int](1, 0, nil)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	c.Add("a", 1, -1)
}

// Callbacks run after the state is consistent, so they may inspect the
// cache and use other caches.
func TestOnEvictSeesConsistentState(t *testing.T) {
	other := New[string, int](0, 0, nil)
	var c *LRU[string, int]
	c = New(2, 0, func(k string, v int) {
		if _, ok := c.Peek(k); ok && k != "a" {
			t.Errorf("evicted key %q still visible", k)
		}
		if c.Len() > 2 {
			t.Errorf("Len %d over bound during callback", c.Len())
		}
		other.Add(k, v, 1)
	})
	c.Add("x", 1, 1)
	c.Add("y", 2, 1)
	c.Add("z", 3, 1)
	if _, ok := other.Peek("x"); !ok {
		t.Fatal("callback did not reach the other cache")
	}
	if keys(c)[0] != "z" || c.Len() != 2 {
		t.Fatalf("keys %v", keys(c))
	}
}

// Re-entry is documented as unsupported but must not corrupt the cache.
func TestReentrantOnEvictDoesNotCorrupt(t *testing.T) {
	var c *LRU[string, int]
	var seen []string
	c = New(2, 0, func(k string, v int) {
		seen = append(seen, k)
		if v < 3 {
			c.Add(k+"'", v+1, 1)
		}
	})
	for i := range 5 {
		c.Add(strconv.Itoa(i), 0, 1)
	}
	checkInvariants(t, c)
	if c.Len() != 2 {
		t.Fatalf("Len = %d", c.Len())
	}
}

func checkInvariants[K comparable, V any](t *testing.T, c *LRU[K, V]) {
	t.Helper()
	n := 0
	var bytes int64
	for e := c.root.next; e != &c.root; e = e.next {
		if e.next.prev != e || e.prev.next != e {
			t.Fatal("broken links")
		}
		if c.items[e.key] != e {
			t.Fatal("list entry not in map")
		}
		n++
		bytes += e.size
	}
	if n != len(c.items) || bytes != c.bytes {
		t.Fatalf("list has %d entries/%d bytes, cache says %d/%d", n, bytes, len(c.items), c.bytes)
	}
	if c.maxEntries > 0 && n > c.maxEntries || c.maxBytes > 0 && bytes > c.maxBytes {
		t.Fatalf("bounds exceeded: %d entries, %d bytes", n, bytes)
	}
}

// model is a deliberately naive LRU used as the reference.
type model struct {
	maxEntries int
	maxBytes   int64
	order      []string // MRU first
	vals       map[string]int
	sizes      map[string]int64
	evicted    []ev
}

func (m *model) bytes() int64 {
	var b int64
	for _, k := range m.order {
		b += m.sizes[k]
	}
	return b
}

func (m *model) drop(k string) {
	m.order = slices.DeleteFunc(m.order, func(x string) bool { return x == k })
	delete(m.vals, k)
	delete(m.sizes, k)
}

func (m *model) touch(k string) {
	m.order = slices.DeleteFunc(m.order, func(x string) bool { return x == k })
	m.order = slices.Insert(m.order, 0, k)
}

func (m *model) add(k string, v int, size int64) {
	if old, ok := m.vals[k]; ok {
		m.evicted = append(m.evicted, ev{k, old})
		m.drop(k)
	}
	if m.maxBytes > 0 && size > m.maxBytes {
		m.evicted = append(m.evicted, ev{k, v})
		return
	}
	m.vals[k], m.sizes[k] = v, size
	m.touch(k)
	for (m.maxEntries > 0 && len(m.order) > m.maxEntries) || (m.maxBytes > 0 && m.bytes() > m.maxBytes) {
		last := m.order[len(m.order)-1]
		m.evicted = append(m.evicted, ev{last, m.vals[last]})
		m.drop(last)
	}
}

func TestRandomizedAgainstModel(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 42))
			maxEntries := rng.IntN(8) // 0 = unbounded
			maxBytes := int64(rng.IntN(40))
			var r recorder
			c := New[string, int](maxEntries, maxBytes, r.fn)
			m := &model{maxEntries: maxEntries, maxBytes: maxBytes, vals: map[string]int{}, sizes: map[string]int64{}}
			for step := range 3000 {
				k := strconv.Itoa(rng.IntN(12))
				var op string
				switch p := rng.IntN(100); {
				case p < 45:
					op = "add"
					v, size := rng.Int(), int64(rng.IntN(15))
					c.Add(k, v, size)
					m.add(k, v, size)
				case p < 65:
					op = "get"
					v, ok := c.Get(k)
					mv, mok := m.vals[k]
					if ok != mok || v != mv {
						t.Fatalf("step %d Get(%s) = %v,%v want %v,%v", step, k, v, ok, mv, mok)
					}
					if mok {
						m.touch(k)
					}
				case p < 75:
					op = "peek"
					v, ok := c.Peek(k)
					mv, mok := m.vals[k]
					if ok != mok || v != mv {
						t.Fatalf("step %d Peek(%s) = %v,%v want %v,%v", step, k, v, ok, mv, mok)
					}
				case p < 85:
					op = "take"
					v, ok := c.Take(k)
					mv, mok := m.vals[k]
					if ok != mok || v != mv {
						t.Fatalf("step %d Take(%s) = %v,%v want %v,%v", step, k, v, ok, mv, mok)
					}
					m.drop(k)
				case p < 98:
					op = "remove"
					ok := c.Remove(k)
					mv, mok := m.vals[k]
					if ok != mok {
						t.Fatalf("step %d Remove(%s) = %v want %v", step, k, ok, mok)
					}
					if mok {
						m.evicted = append(m.evicted, ev{k, mv})
						m.drop(k)
					}
				default:
					op = "clear"
					c.Clear()
					for i := len(m.order) - 1; i >= 0; i-- {
						k := m.order[i]
						m.evicted = append(m.evicted, ev{k, m.vals[k]})
					}
					m.order, m.vals, m.sizes = nil, map[string]int{}, map[string]int64{}
				}
				if got := r.take(); !slices.Equal(got, m.evicted) {
					t.Fatalf("step %d %s(%s): evicted %v, want %v", step, op, k, got, m.evicted)
				}
				m.evicted = nil
				if got := keys(c); !slices.Equal(got, m.order) {
					t.Fatalf("step %d %s(%s): order %v, want %v", step, op, k, got, m.order)
				}
				if c.Bytes() != m.bytes() || c.Len() != len(m.order) {
					t.Fatalf("step %d %s: Len %d Bytes %d, want %d %d", step, op, c.Len(), c.Bytes(), len(m.order), m.bytes())
				}
				checkInvariants(t, c)
			}
		})
	}
}

func TestSteadyStateDoesNotAllocate(t *testing.T) {
	c := New[int, int](64, 0, func(int, int) {})
	for i := range 64 {
		c.Add(i, i, 1)
	}
	i := 64
	allocs := testing.AllocsPerRun(1000, func() {
		c.Add(i, i, 1) // evicts one, reuses its node
		c.Get(i - 10)
		i++
	})
	if allocs > 0 {
		t.Fatalf("%.1f allocations per Add+Get in steady state", allocs)
	}
}

func TestReleasedNodesHoldNoReferences(t *testing.T) {
	c := New[string, *int](1, 0, nil)
	x := new(int)
	c.Add("a", x, 1)
	c.Add("b", nil, 1) // evicts a
	for e := c.free; e != nil; e = e.next {
		if e.val != nil || e.key != "" {
			t.Fatal("free node retains key or value")
		}
	}
	if len(c.evicted) != 0 {
		t.Fatal("callback queue not empty")
	}
}

func BenchmarkAdd(b *testing.B) {
	c := New[int, int](1024, 0, func(int, int) {})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c.Add(i&4095, i, 1)
		i++
	}
}

func BenchmarkGet(b *testing.B) {
	c := New[int, int](1024, 0, nil)
	for i := range 1024 {
		c.Add(i, i, 1)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c.Get(i & 2047) // half hits, half misses
		i++
	}
}

func TestRemoveIf(t *testing.T) {
	var r recorder
	b := NewBudget(0)
	c := NewInBudget[string, int](b, 0, 0, r.fn)
	for i := range 6 {
		c.Add(strconv.Itoa(i), i, int64(i))
	}
	if n := c.RemoveIf(func(_ string, v int) bool { return v%2 == 1 }); n != 3 {
		t.Fatalf("removed %d, want 3", n)
	}
	expectEvicted(t, &r, ev{"1", 1}, ev{"3", 3}, ev{"5", 5})
	expectKeys(t, c, "4", "2", "0")
	if c.Bytes() != 6 || b.Used() != 6 {
		t.Fatalf("Bytes %d, budget %d, want 6", c.Bytes(), b.Used())
	}
	checkInvariants(t, c)
}
