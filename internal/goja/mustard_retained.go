package goja

import (
	"math/big"
	"reflect"
	"unsafe"
)

// MustardRetainedBytes estimates the memory the guest keeps reachable: every
// value reachable from the global object, the global lexical scope, the
// interpreter's stack and scopes, and roots (what the embedder holds for
// the guest, such as the promises of pending host calls), walked through
// objects, closures' scopes, suspended async functions and generators, and
// the state of Promise combinators. (A mustard-sidecar addition; see
// PATCHES.md.)
//
// The figure is a deterministic function of the guest's state: two
// runtimes that ran the same program with the same answers give the same
// figure, whatever the collector did, which is what lets a replayed
// execution count exactly what the original counted. It charges what the
// Meter's allocation reports charge (valueBytes a slot, propertyBytes a
// property, a string's bytes) plus a fixed cost per object and scope, so it
// is of the order of the Go heap those values take. Built-in objects (the
// realm's intrinsics) count only for what the guest added to them through
// the global object: their own state is the same in every realm.
func (r *Runtime) MustardRetainedBytes(roots ...Value) uint64 {
	// Objects and scopes are marked with the walk's number as it visits
	// them; 0 is never a walk's.
	r.retainedEpoch++
	if r.retainedEpoch == 0 {
		r.retainedEpoch = 1
	}
	w := retainedWalk{epoch: r.retainedEpoch, pending: r.retainedPending}
	defer func() {
		// Keep a small walk's stack for the next one; a large one would
		// stay allocated as long as the runtime.
		if cap(w.pending) <= retainedKeepScratch {
			r.retainedPending = w.pending[:0]
		}
	}()
	// Built-in objects count as visited: the walk stops at them.
	base := unsafe.Pointer(&r.global)
	for _, off := range intrinsicFields {
		if o := *(**Object)(unsafe.Add(base, off)); o != nil {
			o.mark = w.epoch
		}
	}
	// The global object: what the guest put there (top-level var and
	// function declarations, inputs), not the built-ins.
	if g := r.globalObject; g != nil {
		g.mark = w.epoch
		if b, ok := g.self.(interface{ mustardBase() *baseObject }); ok {
			for _, v := range b.mustardBase().values {
				w.propValue(v)
			}
		}
	}
	w.stashChain(&r.global.stash)
	vm := r.vm
	for _, v := range vm.stack[:min(max(vm.sp, 0), len(vm.stack))] {
		w.value(v)
	}
	w.stashChain(vm.stash)
	for i := range vm.callStack {
		w.context(&vm.callStack[i])
	}
	for i := range vm.tryStack {
		w.stashChain(vm.tryStack[i].stash)
	}
	for i := range vm.iterStack {
		w.iterItem(&vm.iterStack[i])
	}
	w.value(vm.newTarget)
	w.value(vm.result)
	for _, q := range r.queued {
		if q.reaction != nil {
			w.reactions([]*promiseReaction{q.reaction})
		}
		w.value(q.argument)
	}
	for _, v := range roots {
		w.value(v)
	}
	w.drain()
	return w.bytes
}

// retainedKeepScratch: a walk whose stack of objects to visit stayed this
// small leaves it to the next walk.
const retainedKeepScratch = 256

// Costs of the walk, in bytes. A value slot and a property are what the
// allocation reports charge (mustard_meter.go); an object, a scope and a
// map entry are about their Go structures, calibrated against the live
// heap they take (mustard_retained_test.go: the walk's figure is within a
// factor of 2 of it for the common shapes).
const (
	retainedObject   = 384 // an Object, its baseObject and property map
	retainedArray    = 128 // what an array adds to an object
	retainedFunction = 192 // what a function adds to an object
	retainedStash    = 64
	retainedMapEntry = 96
	retainedNumber   = 8  // a boxed float64
	retainedString   = 16 // a string's header
	retainedFrame    = 48 // a captured stack frame of an Error
	retainedPattern  = 256
	// Strings this long or longer are counted once however often they are
	// referenced; shorter ones each time (cheaper than remembering them).
	retainedShareMin = 64
)

type retainedWalk struct {
	bytes    uint64
	epoch    uint32
	strings  map[unsafe.Pointer]struct{} // long strings counted
	pending  []*Object
	weak     []*weakMap
	weakDone map[any]struct{}
}

// intrinsicFields are the offsets of global's fields that hold the realm's
// built-in objects (each made when first needed).
var intrinsicFields = func() []uintptr {
	objectPtr := reflect.TypeOf((*Object)(nil))
	t := reflect.TypeOf(global{})
	var offs []uintptr
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.Type == objectPtr {
			offs = append(offs, f.Offset)
		}
	}
	return offs
}()

func (w *retainedWalk) add(n int) { w.bytes += uint64(max(n, 0)) }

// value counts v and queues the object it is.
func (w *retainedWalk) value(v Value) {
	switch v := v.(type) {
	case nil:
	case valueFloat:
		w.add(retainedNumber)
	case valueInt:
		if v < 0 || v > 255 { // Go boxes small integers without allocating
			w.add(retainedNumber)
		}
	case *Object:
		w.object(v)
	case asciiString:
		w.str(unsafe.Pointer(unsafe.StringData(string(v))), len(v))
	case unicodeString:
		if len(v) > 0 {
			w.str(unsafe.Pointer(&v[0]), 2*len(v))
		}
	case *importedString:
		w.str(unsafe.Pointer(v), len(v.s)+2*len(v.u))
	case *valueBigInt:
		w.add(retainedString + 8*len((*big.Int)(v).Bits()))
	case *Symbol:
		w.add(retainedString)
		w.value(v.desc)
	}
}

func (w *retainedWalk) str(p unsafe.Pointer, n int) {
	if n >= retainedShareMin {
		if _, seen := w.strings[p]; seen {
			return
		}
		if w.strings == nil {
			w.strings = make(map[unsafe.Pointer]struct{})
		}
		w.strings[p] = struct{}{}
	}
	w.add(retainedString + n)
}

// propValue counts a property's value: a plain value, an accessor's
// functions, or an arguments object's mapped binding.
func (w *retainedWalk) propValue(v Value) {
	switch p := v.(type) {
	case *valueProperty:
		w.value(p.value)
		if p.getterFunc != nil {
			w.object(p.getterFunc)
		}
		if p.setterFunc != nil {
			w.object(p.setterFunc)
		}
	case *mappedProperty:
		if p.v != nil {
			w.value(*p.v)
		}
	default:
		w.value(v)
	}
}

func (w *retainedWalk) object(o *Object) {
	if o == nil {
		return
	}
	if o.mark == w.epoch {
		return
	}
	o.mark = w.epoch
	w.pending = append(w.pending, o)
}

// drain walks queued objects until none is left, then the entries of weak
// maps whose keys turned out reachable (which can reach more objects).
func (w *retainedWalk) drain() {
	for {
		for len(w.pending) > 0 {
			o := w.pending[len(w.pending)-1]
			w.pending = w.pending[:len(w.pending)-1]
			w.walkObject(o)
		}
		if !w.weakEntries() {
			return
		}
	}
}

func (w *retainedWalk) weakEntries() bool {
	queued := false
	for _, wm := range w.weak {
		wm.Lock()
		for k, v := range wm.m {
			key := k.Value()
			if key == nil {
				continue
			}
			if key.mark != w.epoch || w.weakSeen(key, wm) {
				continue
			}
			w.add(retainedMapEntry)
			w.value(v)
			queued = true
		}
		wm.Unlock()
	}
	return queued && len(w.pending) > 0
}

// weakSeen remembers which weak entries were counted, so that the rounds
// of weakEntries count each once.
func (w *retainedWalk) weakSeen(key *Object, wm *weakMap) bool {
	type entry struct {
		k  *Object
		wm *weakMap
	}
	if w.weakDone == nil {
		w.weakDone = make(map[any]struct{})
	}
	e := entry{key, wm}
	if _, ok := w.weakDone[e]; ok {
		return true
	}
	w.weakDone[e] = struct{}{}
	return false
}

func (w *retainedWalk) walkObject(o *Object) {
	w.add(retainedObject)
	if b, ok := o.self.(interface{ mustardBase() *baseObject }); ok {
		w.base(b.mustardBase())
	}
	if f, ok := o.self.(interface{ mustardJs() *baseJsFuncObject }); ok {
		js := f.mustardJs()
		w.add(retainedFunction)
		w.stashChain(js.stash)
	}
	if f, ok := o.self.(interface{ mustardNative() *nativeFuncObject }); ok {
		n := f.mustardNative()
		w.add(retainedFunction)
		if n.holds != nil {
			n.holds(w.value)
		}
	}
	switch s := o.self.(type) {
	case *arrayObject:
		// Capacity, not length: an array grown by push holds up to twice
		// its length (the same in every replay: growth follows the pushes).
		w.add(retainedArray + valueBytes*cap(s.values))
		for _, v := range s.values {
			w.value(v)
		}
	case *sparseArrayObject:
		w.add((valueBytes + 8) * len(s.items))
		for i := range s.items {
			w.propValue(s.items[i].value)
		}
	case *arrowFuncObject:
		w.object(s.funcObj)
		w.value(s.newTarget)
	case *asyncArrowFuncObject:
		w.object(s.funcObj)
		w.value(s.newTarget)
	case *classFuncObject:
		for _, v := range s.computedKeys {
			w.value(v)
		}
		for _, v := range s.privateMethods {
			w.value(v)
		}
	case *boundFuncObject:
		w.object(s.wrapped)
	case *mapObject:
		w.orderedMap(s.m)
	case *setObject:
		w.orderedMap(s.m)
	case *weakMapObject:
		w.weak = append(w.weak, &s.m)
	case *Promise:
		w.value(s.result)
		w.reactions(s.fulfillReactions)
		w.reactions(s.rejectReactions)
	case *generatorObject:
		w.generator(&s.gen)
		if s.delegated != nil {
			w.object(s.delegated.iterator)
		}
	case *asyncGeneratorObject:
		w.generator(&s.gen)
		for i := range s.queue {
			w.value(s.queue[i].value)
			w.capability(s.queue[i].cap)
		}
		if s.delegate != nil {
			w.object(s.delegate.iterator)
		}
	case *proxyObject:
		w.object(s.target)
		if h, ok := s.handler.(*jsProxyHandler); ok {
			w.object(h.handler)
		}
	case *arrayBufferObject:
		w.buffer(s)
	case *typedArrayObject:
		if s.viewedArrayBuf != nil {
			w.object(s.viewedArrayBuf.val)
		}
	case *dataViewObject:
		if s.viewedArrayBuf != nil {
			w.object(s.viewedArrayBuf.val)
		}
	case *primitiveValueObject:
		w.value(s.pValue)
	case *stringObject:
		w.value(s.value)
	case *errorObject:
		w.add(retainedFrame * len(s.stack))
	case *regexpObject:
		w.add(retainedPattern)
		w.value(s.source)
	case *arrayIterObject:
		w.object(s.obj)
	}
}

func (w *retainedWalk) buffer(b *arrayBufferObject) {
	w.add(len(b.data))
}

func (w *retainedWalk) base(b *baseObject) {
	w.object(b.prototype)
	w.add(propertyBytes * len(b.values))
	for _, v := range b.values {
		w.propValue(v)
	}
	if m := b.symValues; m != nil {
		w.orderedMap(m)
	}
	for _, e := range b.privateElements {
		w.add(valueBytes * (len(e.fields) + len(e.methods)))
		for _, v := range e.fields {
			w.propValue(v)
		}
		for _, v := range e.methods {
			w.propValue(v)
		}
	}
}

func (w *retainedWalk) orderedMap(m *orderedMap) {
	if m == nil {
		return
	}
	for e := m.iterFirst; e != nil; e = e.iterNext {
		if e.key == nil { // deleted, still linked for live iterators
			continue
		}
		w.add(retainedMapEntry)
		w.value(e.key)
		w.propValue(e.value)
	}
}

func (w *retainedWalk) reactions(rs []*promiseReaction) {
	for _, re := range rs {
		w.capability(re.capability)
		if h := re.handler; h != nil {
			w.value(h.fn)
			if h.holds != nil {
				h.holds(w.value)
			}
		}
		if ar := re.asyncRunner; ar != nil {
			w.object(ar.f)
			w.capability(ar.promiseCap)
			w.generator(&ar.gen)
		}
	}
}

func (w *retainedWalk) capability(c *promiseCapability) {
	if c == nil {
		return
	}
	w.object(c.promise)
	w.object(c.resolveObj)
	w.object(c.rejectObj)
}

// generator counts a suspended function's saved frame.
func (w *retainedWalk) generator(g *generator) {
	c := &g.ctx
	w.add(valueBytes * len(c.stack))
	for _, v := range c.stack {
		w.value(v)
	}
	w.context(&c.context)
	for i := range c.tryStack {
		w.stashChain(c.tryStack[i].stash)
	}
	for i := range c.iterStack {
		w.iterItem(&c.iterStack[i])
	}
	w.value(g.returning)
}

func (w *retainedWalk) context(c *context) {
	w.stashChain(c.stash)
	w.value(c.newTarget)
	w.value(c.result)
}

func (w *retainedWalk) iterItem(it *iterStackItem) {
	w.value(it.val)
	if it.iter != nil {
		w.object(it.iter.iterator)
	}
	if it.aiter != nil {
		w.object(it.aiter.iterator)
	}
}

func (w *retainedWalk) stashChain(s *stash) {
	for ; s != nil; s = s.outer {
		if s.mark == w.epoch {
			return
		}
		s.mark = w.epoch
		w.add(retainedStash + valueBytes*(len(s.values)+len(s.extraArgs)))
		for _, v := range s.values {
			w.value(v)
		}
		for _, v := range s.extraArgs {
			w.value(v)
		}
		if s.obj != nil {
			w.object(s.obj)
		}
	}
}

func (o *baseObject) mustardBase() *baseObject               { return o }
func (f *baseJsFuncObject) mustardJs() *baseJsFuncObject     { return f }
func (f *nativeFuncObject) mustardNative() *nativeFuncObject { return f }

// holding records on a native function what its closure keeps reachable.
func holding(o *Object, holds func(visit func(Value))) *Object {
	o.self.(*nativeFuncObject).holds = holds
	return o
}

// holdValues is what a Promise combinator's element function keeps: its
// capability and the values collected so far.
func holdValues(visit func(Value), pcap *promiseCapability, values []Value) {
	visit(pcap.promise)
	if pcap.resolveObj != nil {
		visit(pcap.resolveObj)
	}
	if pcap.rejectObj != nil {
		visit(pcap.rejectObj)
	}
	for _, v := range values {
		visit(v)
	}
}

// holds is what an async generator's pending await keeps: the generator.
func (g *asyncGeneratorObject) holds(visit func(Value)) { visit(g.val) }

// queuedJob is what a queued promise job keeps reachable: its reaction and
// its argument. Jobs are closures the walk cannot see into, so the queue
// keeps this list beside them until it is drained (a host call in plain
// top-level code suspends with jobs queued that have not run yet).
type queuedJob struct {
	reaction *promiseReaction
	argument Value
}

func (r *Runtime) queuedReaction(re *promiseReaction, argument Value) {
	r.queued = append(r.queued, queuedJob{re, argument})
}
