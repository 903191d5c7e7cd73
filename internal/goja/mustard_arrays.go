package goja

import (
	"math"
	"slices"
)

// Helpers for the Meter hooks of the Array, Object, TypedArray/ArrayBuffer,
// Map/Set, Function, Reflect and Promise built-ins (a mustard-sidecar
// addition; see PATCHES.md and mustard_meter.go). Every helper is a no-op
// without a Meter, except that loop helpers still let an Interrupt stop a
// long native loop.

// What more guest values cost, for Alloc reports (measured on amd64 with
// runtime.MemStats, rounded; like valueBytes and propertyBytes, "about").
const (
	objectBytes     = 192                       // an ordinary object with no properties
	arrayBytes      = 512                       // an Array with no elements, its property map included
	pairBytes       = arrayBytes + 2*valueBytes // a [key, value] entry array
	keyBytes        = 2 * valueBytes            // a key in a keys array: its slot and, for an index, its name
	descBytes       = 3 * valueBytes            // a valueProperty (a property with attributes)
	sparseItemBytes = 24                        // one element of a sparse array
	mapEntryBytes   = 96                        // one Map/Set entry, its hash table slot included
	// per element of Promise.all/allSettled/any/race: the resolved promise,
	// a resolving function and the reactions and promise of a then
	promiseElementBytes = 4 * objectBytes
)

// defaultCompareUnits: sort without a comparator converts both values to
// strings at every comparison, about as costly as a guest call. An
// embedder may set another figure (MustardSetCompareUnits).
const defaultCompareUnits = 32

// MustardSetCompareUnits sets the work a comparison of sort without a
// comparator reports (0: the default, 32 units).
func (r *Runtime) MustardSetCompareUnits(n int) { r.sortCompareUnits = n }

func (r *Runtime) compareUnits() int {
	if r.sortCompareUnits > 0 {
		return r.sortCompareUnits
	}
	return defaultCompareUnits
}

// valueVisitUnits: JSON.stringify visits a value and writes its text.
const valueVisitUnits = 32

// copyBytesPerWork: copy() moves memory far faster than a loop visits
// elements, so a copy of n bytes is reported as n/copyBytesPerWork units.
const copyBytesPerWork = 128

// bytesFor is n items of size bytes, clamped to math.MaxInt: a size too
// large to compute is reported as huge, never wrapped or negative.
func bytesFor(n int64, size int) int {
	if n <= 0 || size <= 0 {
		return 0
	}
	if n > int64(math.MaxInt/size) {
		return math.MaxInt
	}
	return int(n) * size
}

// allocN reports n items of size bytes about to be allocated at once.
func (r *Runtime) allocN(n int64, size int) {
	if r.meter != nil {
		r.alloc(bytesFor(n, size))
	}
}

// allocBytesN reports n items of size bytes of bulk memory (a buffer).
func (r *Runtime) allocBytesN(n int64, size int) {
	if r.meter != nil {
		r.allocBytes(bytesFor(n, size))
	}
}

// allocStep is called before item i (from 0) of a result that grows one
// item at a time is made: it reports the items in chunks, before the
// chunk's first item: 8 items, then doubling (8, 16, ... 512) up to
// workEvery, so that a small result is not reported as a large one.
func (r *Runtime) allocStep(i int64, size int) {
	if i&(i-1) == 0 || i&(workEvery-1) == 0 { // 0, a power of two, a multiple of workEvery
		r.allocChunk(i, size)
	}
}

func (r *Runtime) allocChunk(i int64, size int) {
	switch {
	case i == 0:
		r.allocN(8, size)
	case i >= workEvery:
		r.allocN(workEvery, size)
	case i >= 8:
		r.allocN(i, size)
	}
}

// workStep is called at iteration i (from 0) of a native loop of at most n
// iterations: at the start of each chunk of workEvery iterations it reports
// the chunk's work, before it is done, and without a Meter it lets an
// Interrupt stop the loop.
func (r *Runtime) workStep(i, n int64) {
	if i&(workEvery-1) == 0 { // kept small enough to inline
		r.workChunk(i, n)
	}
}

// propertyStep is workStep for a search that reads each element through
// the object's property lookup (hasPropertyIdx, getIdx: a frozen, sealed,
// holey or array-like receiver), 20–35 ns an element against the plain
// array's few: 2 units an element.
func (r *Runtime) propertyStep(i, n int64) {
	if i&(workEvery-1) == 0 {
		r.workChunk(i, n)
		r.workChunk(i, n)
	}
}

func (r *Runtime) workChunk(i, n int64) {
	if r.meter != nil {
		r.work(int(max(min(n-i, workEvery), 1)))
	} else {
		r.vm.checkInterrupt()
	}
}

// workRest reports, at the end of a loop of n iterations counted with
// tick, the iterations tick has not reported yet.
func (r *Runtime) workRest(n int) {
	if r.meter != nil {
		r.work(n & (workEvery - 1))
	}
}

// workCopy reports a copy() of n items of size bytes.
func (r *Runtime) workCopy(n int64, size int) {
	if r.meter != nil {
		r.work(bytesFor(n, size) / copyBytesPerWork)
	}
}

// elemBytes is what a built-in's loop adding indexed properties to o one by
// one allocates per property, beyond what o reports itself: Arrays report
// the growth of their storage (arrayObject.expand, sparse items) and typed
// arrays have a fixed one, other objects take a property each.
func elemBytes(o *Object) int {
	switch o.self.(type) {
	case *arrayObject, *sparseArrayObject, *typedArrayObject:
		return 0
	}
	return propertyBytes
}

// ownKeysHint is how many own string keys o has as far as its Go
// representation tells, without running guest code (0 when it does not:
// proxies, host objects, functions...).
func ownKeysHint(o *Object) int64 {
	switch s := o.self.(type) {
	case *arrayObject:
		return int64(s.objCount) + int64(len(s.propNames))
	case *sparseArrayObject:
		return int64(len(s.items)) + int64(len(s.propNames))
	case *stringObject:
		return int64(s.length) + int64(len(s.propNames))
	case *typedArrayObject:
		return int64(s.length) + int64(len(s.propNames))
	case *baseObject:
		return int64(len(s.propNames))
	}
	return 0
}

// selfKeys is how many of o's keys its stringKeys reports itself, up
// front: the index keys of Arrays, typed arrays and String objects, which
// it makes a name for each (array.go, array_sparse.go, typedarrays.go,
// string.go).
func selfKeys(o *Object) int64 {
	switch s := o.self.(type) {
	case *arrayObject:
		return int64(s.objCount)
	case *sparseArrayObject:
		return int64(len(s.items))
	case *stringObject:
		return int64(s.length)
	case *typedArrayObject:
		return int64(s.length)
	}
	return 0
}

// keysRest reports, after a keys-listing built-in (Object.keys,
// getOwnPropertyNames, Reflect.ownKeys) listed n keys in one call, the work
// and the slots of the keys beyond the self keys that were reported already.
// (The other keys' names exist already: the object holds them.)
func (r *Runtime) keysRest(self int64, n int) {
	if r.meter != nil && int64(n) > self {
		r.allocN(int64(n)-self, valueBytes)
		r.work(n - int(self))
	}
}

// keysMeter meters a loop over an object's own properties that allocates
// size bytes per property: the properties ownKeysHint tells of are reported
// up front, any others in chunks as the loop reaches them, and the work is
// one unit per property (reported in chunks by tick, the rest by done).
type keysMeter struct {
	r       *Runtime
	hint, i int64
	size    int
}

func (r *Runtime) newKeysMeter(o *Object, size int) keysMeter {
	m := keysMeter{r: r, size: size}
	if r.meter != nil && size > 0 {
		m.hint = ownKeysHint(o)
		r.allocN(m.hint, size)
	}
	return m
}

// next is called before each property is handled.
func (m *keysMeter) next() {
	m.r.tick(int(m.i))
	if m.i >= m.hint {
		m.r.allocStep(m.i-m.hint, m.size)
	}
	m.i++
}

// done is called after the loop.
func (m *keysMeter) done() {
	m.r.workRest(int(m.i))
}

// partsAlloc reports the memory of a string built from parts (join,
// toLocaleString): each part before it is appended, in batches of
// partsBatch bytes so that a long join does not call the Meter per element.
type partsAlloc struct {
	r     *Runtime
	n     int
	units int // the work of the numbers converted, not yet reported
}

// intStringUnits and floatStringUnits are the work of converting a number
// element to its text for a join, in elements visited: an integer's digits
// take about as long as 16 visits, a float's shortest digits (~400 ns)
// about 48; the join's own step and the copy of the text are a small part
// of that.
const (
	intStringUnits   = 16
	floatStringUnits = 48
)

// number reports, in programs metered by operand size, units of work
// converting a number element to the part s, then adds s.
func (a *partsAlloc) number(s String, units int) {
	if a.r.meter != nil && a.r.bigMetered {
		a.units += units
		if a.units >= workEvery*intStringUnits {
			a.r.work(a.units)
			a.units = 0
		}
	}
	a.add(s)
}

// elementString is the part stringOf makes of a join's element, its
// conversion reported when the element is a number.
func (a *partsAlloc) elementString(v Value) String {
	switch v.(type) {
	case valueInt:
		s := v.toString()
		a.number(s, intStringUnits)
		return s
	case valueFloat:
		s := v.toString()
		a.number(s, floatStringUnits)
		return s
	}
	s := a.r.stringOf(v)
	a.add(s)
	return s
}

const partsBatch = 64 << 10

func (a *partsAlloc) add(s String) {
	if a.r.meter != nil {
		a.n += stringBytes(s)
		if a.n >= partsBatch {
			n := a.n
			a.n = 0
			a.report(n)
		}
	}
}

func (a *partsAlloc) flush() {
	if a.r.meter != nil && a.units > 0 {
		a.r.work(a.units)
		a.units = 0
	}
	if a.r.meter != nil && a.n > 0 {
		n := a.n
		a.n = 0
		a.report(n)
	}
}

// report reports n bytes of the result: their memory, and, in programs
// metered by operand size (current ones), the work of copying them
// (copying, joinCopies times: the builder copies what it holds again each
// time it grows, and the result is collected): a long separator copied between 100,000 elements is the join's
// real work, not the elements. Older programs keep the memory alone, as
// their journals recorded.
func (a *partsAlloc) report(n int) {
	const joinCopies = 4
	if a.r.bigMetered {
		a.r.allocBytes(n)
		a.r.work(joinCopies * a.r.copyUnits(n))
	} else {
		a.r.allocBytes(n)
	}
}

// presentIndices returns, sorted, the array indices below length that o or
// an object of its prototype chain has as own properties, when o's length
// is large against them (sparseIndexRatio) and the chain holds only
// ordinary objects, whose keys can be listed without running guest code;
// sparse is false otherwise, and the caller visits every index.
func (r *Runtime) presentIndices(o *Object, length int64) (present []int64, sparse bool) {
	if length <= sparseIndexMin {
		return nil, false
	}
	seen := map[int64]bool{}
	for p := o; p != nil; p = p.self.proto() {
		if _, isProxy := p.self.(*proxyObject); isProxy {
			return nil, false
		}
		keys := p.self.stringKeys(true, nil)
		r.work(len(keys))
		for _, k := range keys {
			if i := strToIdx64(k.string()); i >= 0 && i < length && !seen[i] {
				seen[i] = true
				r.allocSlots(len(present))
				present = append(present, i)
			}
		}
		if int64(len(present))*sparseIndexRatio > length {
			return nil, false // dense enough: visiting every index is as cheap
		}
	}
	slices.Sort(present)
	return present, true
}

// A length over sparseIndexMin with fewer than one present index in
// sparseIndexRatio is handled by its keys.
const (
	sparseIndexMin   = 1 << 16
	sparseIndexRatio = 4
)

// clearWork reports, in programs metered by operand size, the work of
// Map.prototype.clear and Set.prototype.clear: a unit an entry unlinked
// (about 12 ns each on a 100,000-entry Set, measured); other programs keep
// the constant charge their journals recorded.
func (r *Runtime) clearWork(m *orderedMap) {
	if r.meter != nil && r.bigMetered {
		r.work(m.size)
	}
}

// listStepBytes is what a step of iterableToList makes, in programs metered
// by operand size: the step's result object and the list's slot. Charged as
// made (memory and a unit a byte), it brings `new Float32Array(array)`
// (about 1.2 µs an element through the array's iterator) within the
// documented time an instruction; other programs keep the step's charge
// their journals recorded.
const listStepBytes = 48

// listStep is called before the list's n-th value is appended.
func (r *Runtime) listStep(n int) {
	if n&(workEvery-1) == workEvery-1 && r.bigMetered && r.meter != nil {
		r.alloc(workEvery * listStepBytes)
	}
}

// nativeCallbackUnits is the work of a built-in's call of a native
// callback (`[...].map(Number)`): about 50–150 ns that no instruction
// pays for, where a guest callback pays with its own instructions.
const nativeCallbackUnits = 4

// callbackOf is toCallable for an iterating built-in's callback: in
// programs metered by operand size, a native callee's calls are charged.
func (r *Runtime) callbackOf(v Value) func(FunctionCall) Value {
	return r.chargedCallback(v, r.mustardCallable(v))
}

// chargedCallback is fn, v's call, charged as callbackOf's.
func (r *Runtime) chargedCallback(v Value, fn func(FunctionCall) Value) func(FunctionCall) Value {
	if r.meter != nil && r.bigMetered {
		if o, ok := v.(*Object); ok {
			switch o.self.(type) {
			case *nativeFuncObject, *templatedFuncObject:
				return func(c FunctionCall) Value {
					r.work(nativeCallbackUnits)
					return fn(c)
				}
			}
		}
	}
	return fn
}

// localeString adds s, the text item's toLocaleString made, with a
// number's formatting reported as elementString reports it.
func (a *partsAlloc) localeString(item Value, s String) {
	switch item.(type) {
	case valueInt:
		a.number(s, intStringUnits)
	case valueFloat:
		a.number(s, floatStringUnits)
	default:
		a.add(s)
	}
}
