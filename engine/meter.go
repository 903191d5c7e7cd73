package engine

// The realm is goja's Meter (internal/goja/mustard_meter.go): built-ins
// report their own work and the memory they are about to allocate, from
// inside goja, where no guest code runs and no wrapper could see it.

// workUnit is how many units of a built-in's work (elements or characters
// visited, 128 bytes copied) one instruction pays for.
const workUnit = 64

// Work charges a built-in's work to the instruction budget. The remainder
// carries over, so many small calls add up exactly as one large one.
func (r *realm) Work(units int) {
	x := r.x
	if x == nil {
		return // building the realm: no guest code has run
	}
	x.workCarry += uint64(units)
	if n := x.workCarry / workUnit; n > 0 {
		x.workCarry %= workUnit
		x.spend(n)
	}
}

// Alloc is told of memory a built-in is about to allocate. More than the
// limit in one piece fails at once, before anything is allocated
// (deterministic); otherwise every heapCheckShare of the limit allocated
// this way brings a heap check that counts the pending bytes.
func (r *realm) Alloc(bytes int) { r.admit(bytes) }

// admit is Alloc; false means the execution is failing.
func (r *realm) admit(bytes int) bool {
	x := r.x
	if x == nil {
		return true
	}
	n := uint64(bytes)
	limit := x.limits.HeapLimitBytes
	if n > limit {
		x.fail(ErrHeapLimit)
		return false
	}
	x.heap.allocated += n
	if x.heap.allocated < max(limit/heapCheckShare, minHeapCheckBytes) {
		return true
	}
	x.heap.allocated = 0
	if x.overHeapLimit(n) {
		x.fail(ErrHeapLimit)
		return false
	}
	return true
}

// heapCheckShare: built-ins allocating a quarter of the limit bring a heap
// check, so one native call cannot run far past the limit before a look.
const (
	heapCheckShare    = 4
	minHeapCheckBytes = 64 << 10
)

// Make is told of memory a built-in is about to allocate for values (array
// slots, objects, properties): memory as Alloc, and the making as work, one
// unit a byte, since a built-in that makes a value per element costs far
// more per element than one that only visits (Object.keys of 50,000
// properties takes as long as ~10,000 loop iterations).
func (r *realm) Make(bytes int) {
	if r.admit(bytes) {
		r.Work(bytes)
	}
}
