package cache

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// budgetOrder returns "cache:key" for every entry of b, most recently used
// first.
func budgetOrder(b *Budget, names map[member]string) []string {
	var out []string
	for n := b.root.next; n != &b.root; n = n.next {
		switch e := n.entry.(type) {
		case *entry[string, int]:
			out = append(out, names[n.owner]+":"+e.key)
		default:
			out = append(out, names[n.owner]+":?")
		}
	}
	return out
}

func expectBudget(t *testing.T, b *Budget, names map[member]string, used int64, want ...string) {
	t.Helper()
	if got := budgetOrder(b, names); !slices.Equal(got, want) {
		t.Fatalf("budget order (MRU first) = %v, want %v", got, want)
	}
	if b.Used() != used {
		t.Fatalf("Used = %d, want %d", b.Used(), used)
	}
}

// Two caches share a budget: past it, the least recently used entry of
// both goes, whichever cache holds it; Get counts as a use in both orders,
// Peek in neither.
func TestBudgetEvictsAcrossCaches(t *testing.T) {
	var ra, rb recorder
	b := NewBudget(10)
	x := NewInBudget[string, int](b, 0, 0, ra.fn)
	y := NewInBudget[string, int](b, 0, 0, rb.fn)
	names := map[member]string{x: "x", y: "y"}
	x.Add("a", 1, 3)
	y.Add("b", 2, 3)
	x.Add("c", 3, 3)
	expectBudget(t, b, names, 9, "x:c", "y:b", "x:a")
	x.Get("a")
	y.Peek("b")
	expectBudget(t, b, names, 9, "x:a", "x:c", "y:b")
	y.Add("d", 4, 3) // 12 > 10: y's b goes first, though y just added
	expectEvicted(t, &rb, ev{"b", 2})
	expectEvicted(t, &ra)
	expectBudget(t, b, names, 9, "y:d", "x:a", "x:c")
	y.Add("e", 5, 7) // 16: x's c, then x's a
	expectEvicted(t, &ra, ev{"c", 3}, ev{"a", 1})
	expectBudget(t, b, names, 10, "y:e", "y:d")
	expectKeys(t, x)
	if b.Evictions() != 3 {
		t.Fatalf("Evictions = %d, want 3", b.Evictions())
	}
}

// An entry the budget cannot hold beside its reservations is not stored,
// and nothing else is evicted for it; a cache's own bounds still hold.
func TestBudgetOversizeAndOwnBounds(t *testing.T) {
	var r recorder
	b := NewBudget(10)
	c := NewInBudget[string, int](b, 2, 8, r.fn)
	c.Add("a", 1, 4)
	c.Add("big", 2, 11)
	expectEvicted(t, &r, ev{"big", 2})
	expectKeys(t, c, "a")
	if !b.Reserve(5) {
		t.Fatal("5 reserved beside 4")
	}
	c.Add("six", 3, 6) // fits the cache's 8, not the budget beside 5 reserved
	expectEvicted(t, &r, ev{"six", 3})
	expectKeys(t, c, "a")
	b.Release(5)
	c.Add("b", 4, 1)
	c.Add("c", 5, 1) // the cache's count bound: a goes
	expectEvicted(t, &r, ev{"a", 1})
	expectKeys(t, c, "c", "b")
	if b.Used() != 2 {
		t.Fatalf("Used = %d, want 2", b.Used())
	}
	// Replacing an entry resizes it in the budget.
	c.Add("b", 6, 7)
	expectEvicted(t, &r, ev{"b", 4})
	if b.Used() != 8 {
		t.Fatalf("Used = %d, want 8", b.Used())
	}
	c.Add("b", 7, 50)
	expectEvicted(t, &r, ev{"b", 6}, ev{"b", 7})
	expectKeys(t, c, "c")
	if b.Used() != 1 {
		t.Fatalf("Used = %d, want 1", b.Used())
	}
}

// Reservations evict what they need, and fail without evicting when the
// reservations alone would be over the limit; MakeRoom evicts for
// something about to run and reserves nothing.
func TestBudgetReserveAndMakeRoom(t *testing.T) {
	var r recorder
	b := NewBudget(10)
	c := NewInBudget[string, int](b, 0, 0, r.fn)
	for i := range 5 {
		c.Add(strconv.Itoa(i), i, 2)
	}
	if !b.Reserve(3) {
		t.Fatal("Reserve(3) failed with everything evictable")
	}
	expectEvicted(t, &r, ev{"0", 0}, ev{"1", 1})
	if b.Used() != 9 || b.Reserved() != 3 {
		t.Fatalf("Used %d Reserved %d, want 9 3", b.Used(), b.Reserved())
	}
	if b.Reserve(8) {
		t.Fatal("Reserve(8) beside 3 reserved in 10")
	}
	expectEvicted(t, &r) // and nothing was evicted for it
	if !b.MakeRoom(4) {
		t.Fatal("MakeRoom(4) failed")
	}
	expectEvicted(t, &r, ev{"2", 2}, ev{"3", 3})
	if b.Used() != 5 {
		t.Fatalf("Used %d, want 5 (MakeRoom reserves nothing)", b.Used())
	}
	if b.MakeRoom(8) {
		t.Fatal("MakeRoom(8) beside 3 reserved in 10")
	}
	expectEvicted(t, &r, ev{"4", 4}) // it evicted all it could
	b.Release(3)
	if b.Used() != 0 || b.Reserved() != 0 {
		t.Fatalf("Used %d Reserved %d after release", b.Used(), b.Reserved())
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("releasing more than reserved did not panic")
			}
		}()
		b.Release(1)
	}()
	// Unbounded: nothing is ever evicted or refused.
	u := NewBudget(0)
	uc := NewInBudget[string, int](u, 0, 0, r.fn)
	uc.Add("a", 1, 1<<40)
	if !u.Reserve(1<<50) || !u.MakeRoom(1<<60) || uc.Len() != 1 {
		t.Fatal("an unbounded budget refused or evicted")
	}
}

// Take, Remove and Clear take entries out of the budget; an eviction's
// callback may reach into another cache of the same budget.
func TestBudgetRemovalAndReentry(t *testing.T) {
	var rb recorder
	b := NewBudget(6)
	y := NewInBudget[string, int](b, 0, 0, rb.fn)
	// Evicting x's entry drops y's entry of the same key (a program and
	// what depends on it).
	x := NewInBudget[string, int](b, 0, 0, func(k string, _ int) { y.Remove(k) })
	names := map[member]string{x: "x", y: "y"}
	x.Add("p", 1, 2)
	y.Add("p", 2, 1)
	y.Add("q", 3, 1)
	x.Get("p")
	expectBudget(t, b, names, 4, "x:p", "y:q", "y:p")
	if _, ok := y.Take("q"); !ok || b.Used() != 3 {
		t.Fatalf("Take: Used %d, want 3", b.Used())
	}
	y.Add("r", 4, 1)
	x.Add("s", 5, 3) // 7 > 6: y's p goes, the least recently used
	expectEvicted(t, &rb, ev{"p", 2})
	x.Add("t", 6, 2) // 8 > 6: x's p, whose callback removes nothing more
	expectBudget(t, b, names, 6, "x:t", "x:s", "y:r")
	y.Add("t", 7, 0)
	x.Add("u", 8, 2) // 8 > 6: y's r, then x's s
	expectEvicted(t, &rb, ev{"r", 4})
	expectBudget(t, b, names, 4, "x:u", "y:t", "x:t")
	x.Add("v", 9, 3) // 8 > 6: x's t goes, and its callback removes y's t
	expectEvicted(t, &rb, ev{"t", 7})
	expectBudget(t, b, names, 5, "x:v", "x:u")
	if !x.Remove("u") || b.Used() != 3 {
		t.Fatalf("Remove: Used %d, want 3", b.Used())
	}
	x.Clear()
	if b.Used() != 0 || len(budgetOrder(b, names)) != 0 {
		t.Fatalf("Clear left %d bytes, %v", b.Used(), budgetOrder(b, names))
	}
}

// Random operations on three caches sharing a budget, with reservations:
// the budget's count is always the entries' sizes plus the reservations,
// it is within the limit after every Add and Reserve, and each cache stays
// consistent.
func TestBudgetRandomized(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			limit := int64(20 + rng.IntN(40))
			b := NewBudget(limit)
			var cs []*LRU[string, int]
			for range 3 {
				cs = append(cs, NewInBudget[string, int](b, rng.IntN(6), int64(rng.IntN(30)), nil))
			}
			var reserved []int64
			for step := range 3000 {
				c := cs[rng.IntN(len(cs))]
				k := strconv.Itoa(rng.IntN(10))
				switch p := rng.IntN(100); {
				case p < 45:
					c.Add(k, step, int64(rng.IntN(12)))
					if b.Used() > limit && b.root.next != &b.root {
						t.Fatalf("step %d: Used %d over %d after Add", step, b.Used(), limit)
					}
				case p < 65:
					c.Get(k)
				case p < 72:
					c.Take(k)
				case p < 80:
					c.Remove(k)
				case p < 82:
					c.Clear()
				case p < 91:
					n := int64(rng.IntN(10))
					if b.Reserve(n) {
						reserved = append(reserved, n)
						if b.Used() > limit {
							t.Fatalf("step %d: Used %d over %d after Reserve", step, b.Used(), limit)
						}
					}
				default:
					if len(reserved) > 0 {
						b.Release(reserved[0])
						reserved = reserved[1:]
					}
				}
				var sum, res int64
				for _, c := range cs {
					sum += c.Bytes()
					checkInvariants(t, c)
				}
				for _, n := range reserved {
					res += n
				}
				if b.Used() != sum+res || b.Reserved() != res {
					t.Fatalf("step %d: Used %d Reserved %d, want %d %d", step, b.Used(), b.Reserved(), sum+res, res)
				}
				n := 0
				for nd := b.root.next; nd != &b.root; nd = nd.next {
					n++
				}
				if want := cs[0].Len() + cs[1].Len() + cs[2].Len(); n != want {
					t.Fatalf("step %d: %d entries in the budget, %d in the caches", step, n, want)
				}
			}
		})
	}
}

func TestBudgetSteadyStateDoesNotAllocate(t *testing.T) {
	b := NewBudget(64)
	c := NewInBudget[int, int](b, 0, 0, func(int, int) {})
	d := NewInBudget[int, int](b, 0, 0, nil)
	for i := range 32 {
		c.Add(i, i, 1)
		d.Add(i, i, 1)
	}
	i := 64
	allocs := testing.AllocsPerRun(1000, func() {
		c.Add(i, i, 1) // evicts one of c's or d's, reusing its node
		d.Get(i - 40)
		i++
	})
	if allocs > 0 {
		t.Fatalf("%.1f allocations per Add+Get in steady state", allocs)
	}
}
