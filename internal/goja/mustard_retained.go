package goja

import (
	"math/big"
	"reflect"
	"unsafe"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/unistring"
)

// MustardRetainedBytes estimates the memory the guest keeps reachable: every
// value reachable from the realm (the global object, every built-in object
// the runtime holds and, through their properties and prototypes, every
// built-in reachable from those; the symbol registry), the global lexical
// scope, the interpreter's stack and scopes, and roots (what the embedder
// holds for the guest, such as the promises of pending host calls), walked
// through objects, closures' scopes, suspended async functions and
// generators, and the state of Promise combinators. (A mustard-sidecar
// addition; see PATCHES.md.)
//
// The figure is a deterministic function of the guest's state: two
// runtimes that ran the same program with the same answers give the same
// figure, whatever the collector did, which is what lets a replayed
// execution count exactly what the original counted. It charges what the
// Meter's allocation reports charge (valueBytes a slot, propertyBytes a
// property, a string's bytes) plus a fixed cost per object and scope, so it
// is of the order of the Go heap those values take. Built-in objects count
// only for what was added to them or put in their place after the realm
// was built (builtinBase): their own state is the same in every realm,
// whether or not the guest looked at it.
func (r *Runtime) MustardRetainedBytes(roots ...Value) uint64 {
	w := r.newRetainedWalk()
	defer r.endRetainedWalk(&w)
	w.realm(r)
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

// MustardSealRealm records the realm as built: every object reachable from
// it now (the global object, the built-ins, what the embedder added to
// them to prepare the realm) is a built-in, whose own properties
// MustardRetainedBytes does not count; only what is added to it later
// counts. New calls it; an embedder that changes the realm before guest
// code runs (replacing or wrapping built-ins) calls it again once done,
// and never after guest code ran. Built-ins the runtime makes later, as
// their properties are first read, are built-ins as they are made.
func (r *Runtime) MustardSealRealm() {
	w := r.newRetainedWalk()
	defer r.endRetainedWalk(&w)
	w.sealing = true
	w.realm(r)
	w.drain()
	clear(r.builtinsWritten)
	r.builtinsWritten = r.builtinsWritten[:0]
	// The global object is where the guest's declarations go: walked
	// whole every time.
	r.globalObject.wrote()
}

// builtinWritten is the bit of Object.builtin set by the first write to a
// built-in after the realm was sealed (wrote).
const builtinWritten = 1 << 31

// wrote records a write to a built-in: setting, defining or deleting a
// property, setting its prototype, adding private elements, making a
// function's prototype object. A walk visits the built-ins written to
// (Runtime.builtinsWritten) and skips the others, which hold nothing of
// the guest's.
func (o *Object) wrote() {
	if b := o.builtin; b != 0 && b&builtinWritten == 0 {
		o.builtin = b | builtinWritten
		o.runtime.builtinsWritten = append(o.runtime.builtinsWritten, o)
	}
}

// builtinOwn is how many own properties a built-in had when it was made.
func (o *Object) builtinOwn() uint32 { return max(o.builtin&^builtinWritten, 1) - 1 }

func (r *Runtime) newRetainedWalk() retainedWalk {
	// Objects and scopes are marked with the walk's number as it visits
	// them; 0 is never a walk's.
	r.retainedEpoch++
	if r.retainedEpoch == 0 {
		r.retainedEpoch = 1
	}
	return retainedWalk{epoch: r.retainedEpoch, pending: r.retainedPending, globalStash: &r.global.stash}
}

func (r *Runtime) endRetainedWalk(w *retainedWalk) {
	// Keep a small walk's stack for the next one; a large one would stay
	// allocated as long as the runtime.
	if cap(w.pending) <= retainedKeepScratch {
		r.retainedPending = w.pending[:0]
	}
}

// realm queues the realm's roots: the global object, every built-in object
// the runtime holds (the fields of global, found by reflection, so that a
// new one cannot be missed), the String object the runtime keeps, the
// symbol registry and the global lexical scope. The walk reaches every
// other built-in through their properties and prototypes; a property not
// yet made (templates make them when first read) holds nothing but
// built-ins.
func (w *retainedWalk) realm(r *Runtime) {
	w.object(r.globalObject)
	if w.sealing {
		base := unsafe.Pointer(&r.global)
		for _, off := range intrinsicFields {
			w.object(*(**Object)(unsafe.Add(base, off)))
		}
		if s := r.stringSingleton; s != nil {
			w.object(s.val)
		}
	}
	// What the guest wrote to built-ins: the others hold nothing of its
	// own (walkObject skips them).
	for _, o := range r.builtinsWritten {
		w.object(o)
	}
	for _, s := range r.symbolRegistry {
		w.add(retainedMapEntry)
		w.value(s)
	}
	w.stashChain(&r.global.stash)
}

// makeBuiltin runs a template's factory: what it makes is a built-in.
func (r *Runtime) makeBuiltin(f templatePropFactory) Value {
	defer r.makingBuiltins()()
	return f(r)
}

// makingBuiltins starts making built-ins (a getter of global's fields
// making the one it returns, a template's factory) and returns what ends
// it: the objects made until then are built-ins.
func (r *Runtime) makingBuiltins() func() {
	r.making++
	return r.madeBuiltins
}

// madeBuiltins ends a factory run: once the outermost ends, the objects
// made (baseObject.init lists them while r.making is set) are built-ins
// with the properties they have now.
func (r *Runtime) madeBuiltins() {
	r.making--
	if r.making > 0 {
		return
	}
	for _, o := range r.builtinsMade {
		o.builtin = ownProperties(o) + 1
	}
	clear(r.builtinsMade)
	r.builtinsMade = r.builtinsMade[:0]
}

// ownProperties is how many own properties, string and symbol keyed, an
// object has in its property maps.
func ownProperties(o *Object) uint32 {
	b, ok := o.self.(interface{ mustardBase() *baseObject })
	if !ok {
		return 0
	}
	n := b.mustardBase().values.len()
	if m := b.mustardBase().symValues; m != nil {
		n += m.size
	}
	return uint32(min(n, 1<<31))
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

// The walk's costs of the values a host hands a guest, for an embedder
// that counts such a value before it makes it: an object, what an array
// adds to one, an array's value slot, a property, a string's header (its
// text counts a byte per character when ASCII, two per UTF-16 unit
// otherwise), a boxed number.
const (
	MustardRetainedObject   = retainedObject
	MustardRetainedArray    = retainedArray
	MustardRetainedSlot     = valueBytes
	MustardRetainedProperty = propertyBytes
	MustardRetainedString   = retainedString
	MustardRetainedNumber   = retainedNumber
)

type retainedWalk struct {
	bytes       uint64
	epoch       uint32
	sealing     bool // MustardSealRealm: marking built-ins, not counting
	globalStash *stash
	strings     map[unsafe.Pointer]struct{} // long strings counted
	pending     []*Object
	weak        []*weakMap
	weakDone    map[any]struct{}
}

// intrinsicFields are the offsets of global's fields, and of the fields of
// the structures it embeds, that hold the realm's built-in objects (each
// made when first needed).
var intrinsicFields = objectFields(reflect.TypeOf(global{}), 0)

func objectFields(t reflect.Type, at uintptr) []uintptr {
	objectPtr := reflect.TypeOf((*Object)(nil))
	var offs []uintptr
	for i := 0; i < t.NumField(); i++ {
		switch f := t.Field(i); {
		case f.Type == objectPtr:
			offs = append(offs, at+f.Offset)
		case f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(stash{}):
			offs = append(offs, objectFields(f.Type, at+f.Offset)...)
		}
	}
	return offs
}

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
			// A built-in key counts as reached: the walk skips the
			// built-ins nothing was written to.
			if (key.mark != w.epoch && key.builtin == 0) || w.weakSeen(key, wm) {
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
	tmpl := templateOf(o)
	switch {
	case w.sealing:
		if tmpl == nil {
			o.builtin = ownProperties(o) + 1
		} else {
			o.builtin = 1
		}
	case o.builtin != 0 && o.builtin&builtinWritten == 0 && (tmpl != nil || ownProperties(o) == o.builtinOwn()):
		// A built-in nothing was written to (and, if it is not
		// templated, with the properties it was made with, whatever
		// path added one): it holds only built-ins.
		return
	}
	builtin := tmpl != nil || o.builtin != 0
	if !builtin {
		w.add(retainedObject)
	}
	if b, ok := o.self.(interface{ mustardBase() *baseObject }); ok {
		if builtin {
			w.builtinBase(o, b.mustardBase(), tmpl)
		} else {
			w.base(b.mustardBase())
		}
	}
	if f, ok := o.self.(interface{ mustardJs() *baseJsFuncObject }); ok {
		js := f.mustardJs()
		if builtin {
			w.builtinStash(js.stash)
		} else {
			w.add(retainedFunction)
			w.stashChain(js.stash)
		}
	}
	if f, ok := o.self.(interface{ mustardNative() *nativeFuncObject }); ok {
		n := f.mustardNative()
		if !builtin {
			w.add(retainedFunction)
		}
		if n.holds != nil {
			n.holds.hold(w.value)
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
	w.add(propertyBytes * b.values.len())
	for k, v := range b.values.all() {
		w.key(k)
		w.propValue(v)
	}
	if m := b.symValues; m != nil {
		w.orderedMap(m)
	}
	w.private(b)
}

// key counts a long property name (a short one is part of propertyBytes).
func (w *retainedWalk) key(k unistring.String) {
	if len(k) >= retainedShareMin {
		w.str(unsafe.Pointer(unsafe.StringData(string(k))), len(k))
	}
}

func (w *retainedWalk) private(b *baseObject) {
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

// builtinBase counts what was added to a built-in after the realm was
// built. A templated built-in (templateOf) counts the properties its
// template does not make; another, the properties past those it had when
// it was made (o.builtin - 1). Values in its own slots count through
// ownValue: the guest's objects whole, built-ins for what was added to
// them, primitives only if long. So a built-in counts nothing until the
// guest adds to it, whether or not its template made its properties yet.
func (w *retainedWalk) builtinBase(o *Object, b *baseObject, tmpl *objectTemplate) {
	w.object(b.prototype)
	if tmpl != nil {
		for k, v := range b.values.all() {
			if _, own := tmpl.props[k]; own {
				w.ownValue(v)
			} else if v != nil {
				w.add(propertyBytes)
				w.key(k)
				w.propValue(v)
			}
		}
	} else {
		if n, own := ownProperties(o), o.builtinOwn(); n > own {
			w.add(retainedMapEntry * int(n-own))
		}
		for k, v := range b.values.all() {
			w.key(k)
			w.ownValue(v)
		}
	}
	if m := b.symValues; m != nil {
		for e := m.iterFirst; e != nil; e = e.iterNext {
			if e.key == nil { // deleted, still linked for live iterators
				continue
			}
			if s, ok := e.key.(*Symbol); ok && tmpl != nil && tmpl.symProps[s] == nil {
				w.add(retainedMapEntry)
				w.value(e.key)
				w.propValue(e.value)
				continue
			}
			w.ownValue(e.key)
			w.ownValue(e.value)
		}
	}
	w.private(b)
}

// ownValue counts the value of a built-in's own slot: an object is
// walked, a primitive counts only if it takes retainedShareMin bytes or
// more (the built-ins' own are names and numbers, which take less).
func (w *retainedWalk) ownValue(v Value) {
	switch p := v.(type) {
	case nil:
	case *Object:
		w.object(p)
	case *valueProperty:
		w.ownValue(p.value)
		if p.getterFunc != nil {
			w.object(p.getterFunc)
		}
		if p.setterFunc != nil {
			w.object(p.setterFunc)
		}
	default:
		before := w.bytes
		w.value(v)
		if w.bytes-before < retainedShareMin {
			w.bytes = before
		}
	}
}

// builtinStash walks the scopes of a built-in written in JavaScript (an
// embedder's, made before MustardSealRealm) as builtinBase walks a
// built-in's slots. The global scope, which the guest's declarations
// share, counts in full.
func (w *retainedWalk) builtinStash(s *stash) {
	for ; s != nil; s = s.outer {
		if s == w.globalStash {
			w.stashChain(s)
			return
		}
		if s.mark == w.epoch {
			return
		}
		s.mark = w.epoch
		for _, v := range s.values {
			w.ownValue(v)
		}
		for _, v := range s.extraArgs {
			w.ownValue(v)
		}
		if s.obj != nil {
			w.object(s.obj)
		}
	}
}

// templateOf is the template of a built-in made from one, or nil.
func templateOf(o *Object) *objectTemplate {
	if t, ok := o.self.(interface{ mustardTemplate() *objectTemplate }); ok {
		return t.mustardTemplate()
	}
	return nil
}

func (o *templatedObject) mustardTemplate() *objectTemplate { return o.tmpl }

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
	return holdingBy(o, holdFunc(holds))
}

// holdingBy is holding with a holder of another kind: one an image can
// name (mustard_image_rest.go).
func holdingBy(o *Object, h holder) *Object {
	o.self.(*nativeFuncObject).holds = h
	return o
}

// holder is what a native function's closure keeps reachable.
type holder interface{ hold(visit func(Value)) }

// holdFunc is a holder that is a function.
type holdFunc func(visit func(Value))

func (h holdFunc) hold(visit func(Value)) { h(visit) }

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
