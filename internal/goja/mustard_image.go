package goja

// A heap image of a suspended execution (a mustard-sidecar addition; see
// PATCHES.md and docs/heap-image.md): an execution suspended in a host
// function that guest code called directly (the interpreter's loop, then
// the call instruction, then the host function: no guest frame on a Go
// stack) is written as data (the interpreter's stacks, frames and scopes
// and the objects they reach) and continued in a new runtime from those
// bytes alone, with the program compiled again and the realm made again
// as it was before guest code ran.
//
// It writes plain objects, dense arrays, ordinary and arrow functions,
// scopes without `with`, the interpreter's call frames and try frames,
// the global object's and the global scope's declarations, built-ins by
// name (the global object, three prototypes and their properties) and the
// embedder's own objects by the names it gives them. It refuses the rest
// with ErrImageUnsupported, and the embedder keeps its other way of
// continuing (a journal): no iterators in flight, no symbols, no pending
// promise jobs, no built-in the guest wrote to, no host call made by a
// built-in. Equal heaps give equal bytes: objects and scopes are numbered
// in the order a walk from the interpreter's state first reaches them.
// An execution at rest (async code waiting on promises, nothing running)
// is written by mustard_image_rest.go with the same pieces.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/unistring"
)

// ErrImageUnsupported is wrapped by MustardWriteImage's error for a state
// an image cannot hold.
var ErrImageUnsupported = errors.New("image: not supported")

var errImageUnsupported = ErrImageUnsupported

// ErrImageState is Image.Run's error for a state the interpreter could
// not run: damaged bytes the reader's checks let through.
var ErrImageState = errors.New("image: the state read does not run")

// Value tags.
const (
	imgNil byte = iota
	imgUndefined
	imgNull
	imgTrue
	imgFalse
	imgInt
	imgFloat
	imgASCII
	imgUnicode
	imgObject   // a guest object, by number
	imgBuiltin  // a built-in, by its index in imageBuiltins
	imgNative   // an embedder's object by its name, or a host function by the global name it is installed under
	imgProperty // a property with attributes (valueProperty)
	imgMember   // a built-in held by one of imageBuiltins: its index and the property's name
	imgVariadic // the marker a call with spread arguments leaves on the stack
	imgImported // a string as the embedder imported it (importedString): whether scanned, its text
	imgShared   // an imported string written before, by number
)

// Body records, after the interpreter's state.
const (
	imgBodyObject byte = iota + 1
	imgBodyStash
)

// Object kinds.
const (
	imgPlain byte = iota + 1
	imgArray
	imgFunc
	imgArrow
	imgArrayIter // an array's iterator (a for-of loop's, in flight)
	imgMap
	imgSet
	imgPromise    // mustard_image_rest.go
	imgAsyncFunc  // an async function
	imgAsyncArrow // an async arrow function
	imgResolving  // a capability's resolve or reject function
	imgElement    // a Promise combinator's element function
)

// imageBuiltins are the built-ins an image names rather than writes:
// get is how a reader has each (made if it must be), made how a writer,
// which makes no built-in, does (nil if the realm has not made it).
var imageBuiltins = []imageBuiltin{
	always(func(r *Runtime) *Object { return r.globalObject }),
	always(func(r *Runtime) *Object { return r.global.ObjectPrototype }),
	always((*Runtime).getArrayPrototype),
	always((*Runtime).getFunctionPrototype),
	{(*Runtime).getArrayIteratorPrototype, func(r *Runtime) *Object { return r.global.ArrayIteratorPrototype }},
	{(*Runtime).getMapPrototype, func(r *Runtime) *Object { return r.global.MapPrototype }},
	{(*Runtime).getSetPrototype, func(r *Runtime) *Object { return r.global.SetPrototype }},
	{(*Runtime).getPromisePrototype, func(r *Runtime) *Object { return r.global.PromisePrototype }},
	{(*Runtime).getAsyncFunctionPrototype, func(r *Runtime) *Object { return r.global.AsyncFunctionPrototype }},
}

type imageBuiltin struct{ get, made func(r *Runtime) *Object }

// always is a built-in a writer may get as a reader does.
func always(f func(r *Runtime) *Object) imageBuiltin { return imageBuiltin{f, f} }

// imageBase is what a realm holds before guest code runs: the global
// object's own property names, in order, and the values of those already
// made (the rest are made from the global object's template when first
// read). An image writes the global properties added since, and refuses
// a realm whose others changed.
type imageBase struct {
	names []unistring.String
	made  []imageBaseValue // by index into names, in order
}

// imageBaseValue is a global property's value as the base had it: the
// value itself and its attributes (a writable global's property is
// changed in place by an assignment).
type imageBaseValue struct {
	at    int
	value Value
	flags byte
}

func newImageBase(r *Runtime) imageBase {
	g, names := imageGlobal(r)
	b := imageBase{names: imageBaseNames.intern(names)}
	// Counted first: every start records a base, and a parked execution's
	// memory counts what its start left for the collector too.
	n := 0
	for _, name := range names {
		if g.values.get(name) != nil {
			n++
		}
	}
	b.made = make([]imageBaseValue, 0, n)
	for i, name := range names {
		if v := g.values.get(name); v != nil {
			value, flags := imagePropValue(v)
			b.made = append(b.made, imageBaseValue{i, value, flags})
		}
	}
	return b
}

// imageBaseNames keeps the list of global names the last base had: the
// realms of one host's executions mostly have the same globals, and a
// parked execution then keeps no copy of its own.
var imageBaseNames baseNames

type baseNames struct {
	mu   sync.Mutex
	last []unistring.String
}

// intern returns a list equal to names that no one changes.
func (c *baseNames) intern(names []unistring.String) []unistring.String {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Equal(c.last, names) {
		c.last = slices.Clone(names)
	}
	return c.last
}

// imagePropValue is a property's value and its attributes as an image
// writes them (an accessor's value is nil: never the same as another).
func imagePropValue(v Value) (Value, byte) {
	p, ok := v.(*valueProperty)
	if !ok {
		return v, 7 // writable, enumerable, configurable
	}
	if p.accessor {
		return nil, 0
	}
	var flags byte
	if p.writable {
		flags |= 1
	}
	if p.enumerable {
		flags |= 2
	}
	if p.configurable {
		flags |= 4
	}
	return p.value, flags
}

// unchanged reports whether the global property at index i of the base,
// name, holds what it held then: the same value (an object the same
// one), or, one not made then, what the global object's template makes
// for it. Asking the template for a built-in whose value the guest
// replaced before ever reading it makes that built-in (an unwritten
// built-in, which no heap figure counts); the image is refused then.
func (b *imageBase) unchanged(r *Runtime, i int, name unistring.String, now Value, made *int) bool {
	value, flags := imagePropValue(now)
	if *made < len(b.made) && b.made[*made].at == i {
		m := b.made[*made]
		*made++
		return value != nil && flags == m.flags && value.SameAs(m.value)
	}
	if now == nil {
		return true // still not made
	}
	t, ok := r.globalObject.self.(*templatedObject)
	if !ok || value == nil {
		return false
	}
	f := t.tmpl.props[name]
	if f == nil {
		return false
	}
	want, wantFlags := imagePropValue(f(r))
	return flags == wantFlags && want != nil && value.SameAs(want)
}

// imageGlobal is the global object's own properties and their names. The
// realm makes the global object from a template, whose list of names is
// its own only once a property is added: that is not made here, since a
// heap figure (mustard_retained.go) tells a realm that made it from one
// that did not.
func imageGlobal(r *Runtime) (*baseObject, []unistring.String) {
	switch g := r.globalObject.self.(type) {
	case *baseObject:
		return g, g.propNames
	case *templatedObject:
		if g.propNames == nil {
			return &g.baseObject, g.tmpl.propNames
		}
		return &g.baseObject, g.propNames
	}
	return nil, nil
}

// imagePrograms lists a compiled program and the functions in it, in the
// compiler's order: the index of a function's code in this list is how an
// image refers to it.
func imagePrograms(p *Program) []*Program {
	list := []*Program{p}
	for i := 0; i < len(list); i++ {
		for _, ins := range list[i].code {
			if f, ok := ins.(interface{ getPrg() *Program }); ok {
				list = append(list, f.getPrg())
			}
		}
	}
	return list
}

type imageWriter struct {
	r        *Runtime
	base     imageBase
	out      []byte
	prgs     map[*Program]uint64
	builtins map[*Object]uint64
	natives  map[*Object]string
	objIDs   map[*Object]uint64
	stashIDs map[*stash]uint64
	imported map[*importedString]uint64
	caps     map[*promiseCapability]uint64 // mustard_image_rest.go
	runners  map[*asyncRunner]uint64
	elements map[*combinatorElement]uint64
	combs    map[*combinator]uint64
	queue    []any // objects and scopes whose bodies are still to write
	err      error
}

// init makes w a writer of r's state into buf, p being the program it
// runs, base its realm before guest code ran and named the embedder's
// objects (which take precedence over the global host functions' names).
// (A method on the caller's value: a writer a function returned would be
// allocated on the heap at every checkpoint.)
func (w *imageWriter) init(buf []byte, r *Runtime, p *Program, base imageBase, named map[*Object]string) {
	*w = imageWriter{r: r, base: base, out: buf, prgs: map[*Program]uint64{},
		builtins: map[*Object]uint64{}, natives: map[*Object]string{},
		objIDs: map[*Object]uint64{}, stashIDs: map[*stash]uint64{}, imported: map[*importedString]uint64{}}
	for i, prg := range imagePrograms(p) {
		w.prgs[prg] = uint64(i)
	}
	for i, b := range imageBuiltins {
		if o := b.made(r); o != nil {
			w.builtins[o] = uint64(i)
		}
	}
	for _, m := range base.made {
		if o, ok := m.value.(*Object); ok {
			if _, ok := o.self.(*nativeFuncObject); ok {
				w.natives[o] = string(base.names[m.at])
			}
		}
	}
	for o, name := range named {
		w.natives[o] = name
	}
}

// realmUnsupported reports what of r's realm no image holds: registered
// symbols and built-ins the guest changed.
func realmUnsupported(r *Runtime) error {
	if len(r.symbolRegistry) > 0 {
		return fmt.Errorf("%w: registered symbols", errImageUnsupported)
	}
	for _, o := range r.builtinsWritten {
		if o != r.globalObject {
			return fmt.Errorf("%w: a built-in the guest changed", errImageUnsupported)
		}
	}
	return nil
}

// appendImage appends to buf the state of a runtime suspended in a host
// function called from guest code with n arguments, with the embedder's
// objects named by named (which take precedence over the global host
// functions' names). callee, if not nil, is the host function: the
// guest's call instruction must be calling it, not a built-in that
// called it.
func appendImage(buf []byte, r *Runtime, p *Program, base imageBase, n int, named map[*Object]string, callee *Object) ([]byte, error) {
	var w imageWriter
	w.init(buf, r, p, base, named)
	vm := r.vm
	if len(r.jobQueue) > 0 ||
		vm.curAsyncRunner != nil || len(vm.callStack) < 2 || vm.prg != nil {
		return nil, fmt.Errorf("%w: iterators, promise jobs or a built-in's call", errImageUnsupported)
	}
	if err := realmUnsupported(r); err != nil {
		return nil, err
	}
	if callee != nil && (n < 0 || vm.sp < n+2 || vm.stack[vm.sp-n-1] != callee) {
		return nil, fmt.Errorf("%w: a host call made by a built-in", errImageUnsupported)
	}
	// callStack[0] is RunProgram's; the last frame is the guest code
	// that called the host function.
	frames := vm.callStack[1:]
	w.uint(uint64(len(frames)))
	for i := range frames {
		w.context(&frames[i])
	}
	w.uint(uint64(n))
	w.uint(uint64(vm.sp))
	for _, v := range vm.stack[:vm.sp] {
		w.value(v)
	}
	w.frameStacks(vm.tryStack, vm.refStack, vm.iterStack)
	if err := w.globals(); err != nil {
		return nil, err
	}
	w.drain()
	return w.out, w.err
}

// frameStacks writes the try frames, references and loops in flight
// of the interpreter or of a suspended function.
func (w *imageWriter) frameStacks(tries []tryFrame, refs []ref, iters []iterStackItem) {
	w.tries(tries)
	w.refs(refs)
	w.iters(iters)
}

// tries writes the interpreter's try frames.
func (w *imageWriter) tries(ts []tryFrame) {
	w.uint(uint64(len(ts)))
	for i := range ts {
		t := &ts[i]
		if t.exception != nil || t.privEnv != nil {
			w.fail("a finally block in flight")
			return
		}
		w.uint(uint64(t.callStackLen))
		w.uint(uint64(t.iterLen))
		w.uint(uint64(t.refLen))
		w.int(int64(t.sp))
		w.stash(t.stash)
		w.int(int64(t.catchPos))
		w.int(int64(t.finallyPos))
		w.int(int64(t.finallyRet))
	}
}

// refs writes the references being assigned through (s += f(), where s
// is global).
func (w *imageWriter) refs(refs []ref) {
	w.uint(uint64(len(refs)))
	for _, ref := range refs {
		w.ref(ref)
	}
}

// iters writes the iterators of the for-of loops in flight: an array's
// own, whose next method the reader finds again on its (unwritten)
// prototype.
func (w *imageWriter) iters(items []iterStackItem) {
	r := w.r
	w.uint(uint64(len(items)))
	for i := range items {
		it := &items[i]
		if it.f != nil || it.aiter != nil || it.iter == nil || it.iter.iterator == nil {
			w.fail("a for-in or for-await loop in flight")
			return
		}
		ai, ok := it.iter.iterator.self.(*arrayIterObject)
		if !ok || ai.prototype != r.global.ArrayIteratorPrototype || ai.getOwnPropStr("next") != nil {
			w.fail("an iterator other than an array's in flight")
			return
		}
		w.value(it.val)
		w.value(it.iter.iterator)
	}
}

// globals writes the global scope's declarations (let, const, class) and
// the global object's (var, function): the base's first, in their
// order, as they were; what the guest added follows.
func (w *imageWriter) globals() error {
	r, base := w.r, w.base
	gs := &r.global.stash
	if gs.obj != nil || len(gs.extraArgs) > 0 {
		return fmt.Errorf("%w: the global scope's shape", errImageUnsupported)
	}
	w.names(gs.names)
	w.values(gs.values)
	g, globals := imageGlobal(r)
	if g == nil {
		return fmt.Errorf("%w: the global object's kind", errImageUnsupported)
	}
	if len(globals) < len(base.names) {
		return fmt.Errorf("%w: a global property deleted", errImageUnsupported)
	}
	made := 0
	for i, name := range base.names {
		if globals[i] != name {
			return fmt.Errorf("%w: a global property deleted", errImageUnsupported)
		}
		if !base.unchanged(r, i, name, g.values.get(name), &made) {
			return fmt.Errorf("%w: global %s changed", errImageUnsupported, name)
		}
	}
	added := globals[len(base.names):]
	w.uint(uint64(len(added)))
	for _, name := range added {
		w.string(string(name))
		w.value(g.values.get(name))
	}
	return nil
}

// drain writes the bodies of the objects and scopes reached, in the
// order first reached (the bodies reach more).
func (w *imageWriter) drain() {
	for len(w.queue) > 0 && w.err == nil {
		item := w.queue[0]
		w.queue = w.queue[1:]
		switch item := item.(type) {
		case *Object:
			w.out = append(w.out, imgBodyObject)
			w.objectBody(item)
		case *stash:
			w.out = append(w.out, imgBodyStash)
			w.stashBody(item)
		}
	}
}

func (w *imageWriter) uint(u uint64) { w.out = binary.AppendUvarint(w.out, u) }
func (w *imageWriter) int(i int64)   { w.out = binary.AppendVarint(w.out, i) }
func (w *imageWriter) string(s string) {
	w.uint(uint64(len(s)))
	w.out = append(w.out, s...)
}

func (w *imageWriter) fail(what string) {
	if w.err == nil {
		w.err = fmt.Errorf("%w: %s", errImageUnsupported, what)
	}
}

func (w *imageWriter) context(c *context) {
	if c.privEnv != nil {
		w.fail("private names")
	}
	// A frame without code is a built-in's, which holds guest code's
	// call on its Go stack.
	if id, ok := w.prgs[c.prg]; ok {
		w.uint(id)
	} else {
		w.fail("a built-in's frame")
	}
	w.stash(c.stash)
	w.value(c.newTarget)
	w.value(c.result)
	w.int(int64(c.pc))
	w.int(int64(c.sb))
	w.int(int64(c.args))
}

// Reference kinds.
const (
	imgStashRef byte = iota + 1
	imgStashRefLex
	imgStashRefConst
	imgObjStrRef
)

func (w *imageWriter) ref(ref ref) {
	switch ref := ref.(type) {
	case *stashRef:
		w.out = append(w.out, imgStashRef)
		w.slot(ref)
	case *stashRefLex:
		w.out = append(w.out, imgStashRefLex)
		w.slot(&ref.stashRef)
	case *stashRefConst:
		w.out = append(w.out, imgStashRefConst, boolByte(ref.strictConst))
		w.slot(&ref.stashRef)
	case *objStrRef:
		w.out = append(w.out, imgObjStrRef)
		w.value(ref.base)
		w.string(string(ref.name))
		w.value(ref.this)
		w.out = append(w.out, boolByte(ref.strict), boolByte(ref.binding))
	default:
		w.fail(fmt.Sprintf("a reference of type %T", ref))
	}
}

func (w *imageWriter) slot(ref *stashRef) {
	// A scope's slot: the scope is the one whose values it points into.
	var s *stash
	if ref.v == &w.r.global.stash.values {
		s = &w.r.global.stash
	}
	for t := range w.stashIDs {
		if ref.v == &t.values {
			s = t
		}
	}
	if s == nil {
		w.fail("a reference into a scope not yet reached")
		return
	}
	w.string(string(ref.n))
	w.stash(s)
	w.uint(uint64(ref.idx))
}

// stash writes a scope by number: 0 none, 1 the global scope, then the
// guest's in the order first reached.
func (w *imageWriter) stash(s *stash) {
	switch {
	case s == nil:
		w.uint(0)
	case s == &w.r.global.stash:
		w.uint(1)
	default:
		id, ok := w.stashIDs[s]
		if !ok {
			id = uint64(len(w.stashIDs) + 2)
			w.stashIDs[s] = id
			w.queue = append(w.queue, s)
		}
		w.uint(id)
	}
}

func (w *imageWriter) stashBody(s *stash) {
	if s.obj != nil {
		w.fail("a with scope")
	}
	w.out = append(w.out, byte(s.funcType))
	w.names(s.names)
	w.values(s.values)
	w.values(s.extraArgs)
	w.stash(s.outer)
}

// names writes a scope's dynamic names in the order of their slots.
func (w *imageWriter) names(m map[unistring.String]uint32) {
	names := make([]unistring.String, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b unistring.String) int {
		if d := int(m[a]) - int(m[b]); d != 0 {
			return d
		}
		return strings.Compare(string(a), string(b))
	})
	w.uint(uint64(len(names)))
	for _, n := range names {
		w.string(string(n))
		w.uint(uint64(m[n]))
	}
}

func (w *imageWriter) values(vs []Value) {
	w.uint(uint64(len(vs)))
	for _, v := range vs {
		w.value(v)
	}
}

func (w *imageWriter) value(v Value) {
	switch v := v.(type) {
	case nil:
		w.out = append(w.out, imgNil)
	case valueUndefined:
		w.out = append(w.out, imgUndefined)
	case valueNull:
		w.out = append(w.out, imgNull)
	case valueBool:
		if v {
			w.out = append(w.out, imgTrue)
		} else {
			w.out = append(w.out, imgFalse)
		}
	case valueInt:
		w.out = append(w.out, imgInt)
		w.int(int64(v))
	case valueFloat:
		w.out = append(w.out, imgFloat)
		w.out = binary.LittleEndian.AppendUint64(w.out, math.Float64bits(float64(v)))
	case asciiString:
		w.out = append(w.out, imgASCII)
		w.string(string(v))
	case unicodeString:
		w.out = append(w.out, imgUnicode)
		w.uint(uint64(len(v)))
		for _, u := range v {
			w.out = binary.LittleEndian.AppendUint16(w.out, u)
		}
	case *importedString:
		// An answer the guest keeps, often held twice (a variable and a
		// call's arguments): written once, and read back as one string
		// in the form it had, so that the heap figure and the charges
		// that depend on the form (a scanned string's kind) are the hot
		// run's.
		if id, ok := w.imported[v]; ok {
			w.out = append(w.out, imgShared)
			w.uint(id)
			return
		}
		w.imported[v] = uint64(len(w.imported) + 1)
		w.out = append(w.out, imgImported)
		if v.scanned || v.measured { // read back scanned, as it would have been
			w.out = append(w.out, 1)
		} else {
			w.out = append(w.out, 0)
		}
		w.string(v.s)
	case *Symbol:
		if v != variadicMarker {
			w.fail("a symbol")
			return
		}
		w.out = append(w.out, imgVariadic)
	case *valueProperty:
		if v.getterFunc != nil || v.setterFunc != nil || v.accessor {
			w.fail("an accessor")
			return
		}
		w.out = append(w.out, imgProperty)
		var flags byte
		if v.writable {
			flags |= 1
		}
		if v.enumerable {
			flags |= 2
		}
		if v.configurable {
			flags |= 4
		}
		w.out = append(w.out, flags)
		w.value(v.value)
	case *Object:
		if id, ok := w.builtins[v]; ok {
			w.out = append(w.out, imgBuiltin)
			w.uint(id)
			return
		}
		if name, ok := w.natives[v]; ok {
			w.out = append(w.out, imgNative)
			w.string(name)
			return
		}
		if v.builtin != 0 {
			w.member(v)
			return
		}
		id, ok := w.objIDs[v]
		if !ok {
			id = uint64(len(w.objIDs) + 1)
			w.objIDs[v] = id
			w.queue = append(w.queue, v)
		}
		w.out = append(w.out, imgObject)
		w.uint(id)
	default:
		w.fail(fmt.Sprintf("a value of type %T", v))
	}
}

// member writes a built-in as the property of one of imageBuiltins that
// holds it (Array.prototype.push, say).
func (w *imageWriter) member(v *Object) {
	for i, b := range imageBuiltins {
		holder := b.made(w.r)
		if holder == nil {
			continue
		}
		b, ok := holder.self.(interface{ mustardBase() *baseObject })
		if !ok {
			continue
		}
		for _, name := range imageOwnNames(holder) {
			// Only properties already made: the guest read the built-in
			// from its holder, which made it; reading the others here
			// would make every one of them in the runtime written.
			made := b.mustardBase().values.get(name)
			if p, ok := made.(*valueProperty); ok && !p.accessor {
				made = p.value
			}
			if made == v {
				w.out = append(w.out, imgMember)
				w.uint(uint64(i))
				w.string(string(name))
				return
			}
		}
	}
	w.fail("a built-in the image cannot name")
}

// imageOwnNames are a built-in's own property names: its template's, or
// its own.
func imageOwnNames(o *Object) []unistring.String {
	switch self := o.self.(type) {
	case interface{ mustardTemplate() *objectTemplate }:
		return self.mustardTemplate().propNames
	case *baseObject:
		return self.propNames
	}
	return nil
}

// imageOwnValue is o's own property name, made if its template has not
// made it yet (the reader's side of imgMember and imgNative).
func imageOwnValue(o *Object, name unistring.String) Value {
	v := o.self.getOwnPropStr(name)
	if p, ok := v.(*valueProperty); ok && !p.accessor {
		return p.value
	}
	return v
}

// ownProps writes the properties of o other than skip, in order.
func (w *imageWriter) ownProps(o *baseObject, skip ...unistring.String) {
	if o.symValues != nil && o.symValues.size > 0 || len(o.privateElements) > 0 {
		w.fail("symbol-keyed or private properties")
	}
	w.out = append(w.out, boolByte(o.extensible))
	w.value(o.prototype)
	n := 0
	for _, name := range o.propNames {
		if !slices.Contains(skip, name) {
			n++
		}
	}
	w.uint(uint64(n))
	for _, name := range o.propNames {
		if !slices.Contains(skip, name) {
			w.string(string(name))
			w.value(o.values.get(name))
		}
	}
}

func (w *imageWriter) objectBody(o *Object) {
	switch self := o.self.(type) {
	case *baseObject:
		if self.class != classObject {
			w.fail("an object of class " + self.class)
		}
		w.out = append(w.out, imgPlain)
		w.ownProps(self)
	case *arrayObject:
		if len(self.propNames) != 1 || !self.lengthProp.writable {
			w.fail("an array's named properties")
		}
		// Its capacity too: the heap figure counts it
		// (mustard_retained.go), so a continued execution must hold
		// what the original held. Far more room than length (a long
		// array emptied) is refused: a reader makes no more than twice
		// what the image holds.
		if c := cap(self.values); c > imageArrayRoom(len(self.values)) {
			w.fail("an array with room for far more than it holds")
		}
		w.out = append(w.out, imgArray)
		w.ownProps(&self.baseObject, "length")
		w.uint(uint64(self.length))
		w.values(self.values)
		w.uint(uint64(cap(self.values)))
	case *funcObject:
		w.out = append(w.out, imgFunc)
		w.jsFunc(&self.baseJsFuncObject)
	case *mapObject:
		w.out = append(w.out, imgMap)
		w.ownProps(&self.baseObject)
		w.entries(self.m)
	case *setObject:
		w.out = append(w.out, imgSet)
		w.ownProps(&self.baseObject)
		w.entries(self.m)
	case *arrayIterObject:
		w.out = append(w.out, imgArrayIter)
		w.ownProps(&self.baseObject)
		w.optional(self.obj) // nil: done
		w.int(self.nextIdx)
		w.out = append(w.out, byte(self.kind))
		w.int(self.pairs)
	case *arrowFuncObject:
		w.out = append(w.out, imgArrow)
		w.arrow(self)
	case *Promise:
		w.promise(self)
	case *asyncFuncObject:
		w.out = append(w.out, imgAsyncFunc)
		w.jsFunc(&self.baseJsFuncObject)
	case *asyncArrowFuncObject:
		w.out = append(w.out, imgAsyncArrow)
		w.arrow(&self.arrowFuncObject)
	case *nativeFuncObject:
		w.nativeFunc(self)
	default:
		w.fail(fmt.Sprintf("an object of kind %T", self))
	}
}

// entries writes a Map's or Set's entries in their order, and the largest
// size it has had (what its growth is charged from).
func (w *imageWriter) entries(m *orderedMap) {
	w.uint(uint64(m.size))
	n := 0
	for e := m.iterFirst; e != nil; e = e.iterNext {
		if e.key == nil {
			w.fail("a Map or Set iterated while changed")
			return
		}
		w.value(e.key)
		w.value(e.value)
		n++
	}
	if n != m.size {
		w.fail("a Map or Set whose entries do not add up")
	}
	w.uint(uint64(m.high))
}

// optional writes an object or none (a nil *Object as a Value is not
// nil, and would be written as an object).
func (w *imageWriter) optional(o *Object) {
	if o == nil {
		w.value(nil)
		return
	}
	w.value(o)
}

func (w *imageWriter) arrow(f *arrowFuncObject) {
	w.jsFunc(&f.baseJsFuncObject)
	w.optional(f.funcObj)
	w.value(f.newTarget)
}

func (w *imageWriter) jsFunc(f *baseJsFuncObject) {
	id, ok := w.prgs[f.prg]
	if !ok || f.privEnv != nil {
		w.fail("a function outside the program")
	}
	w.uint(id)
	w.out = append(w.out, boolByte(f.strict))
	w.stash(f.stash)
	w.value(f.lenProp.value)
	w.value(f.nameProp.value)
	w.ownProps(&f.baseObject, "length", "name")
}

// imageArrayRoom is the most capacity an image gives an array of n
// values: what appending one at a time leaves, and some.
func imageArrayRoom(n int) int { return 2*n + 64 }

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// imageReader continues a suspension from an image, in a new runtime
// whose realm is as the writer's base was (the host functions installed)
// and with the program compiled again.
type imageReader struct {
	r       *Runtime
	in      []byte
	prgs    []*Program
	objs    []*Object
	filled  int // objects whose bodies were read
	stashes []*stash
	stashed int
	slots   []*stashRef
	named   func(string) *Object // the embedder's objects, by name
	strs    []*importedString    // the imported strings read, by number
	loops   []imageLoop
	rest    imageRestReader // mustard_image_rest.go
	err     error
}

func (d *imageReader) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("image: "+format, args...)
	}
}

func (d *imageReader) byte() byte {
	if len(d.in) == 0 {
		d.fail("truncated")
		return 0
	}
	b := d.in[0]
	d.in = d.in[1:]
	return b
}

func (d *imageReader) uint() uint64 {
	u, n := binary.Uvarint(d.in)
	if n <= 0 {
		d.fail("bad integer")
		d.in = nil
		return 0
	}
	d.in = d.in[n:]
	return u
}

func (d *imageReader) int() int64 {
	i, n := binary.Varint(d.in)
	if n <= 0 {
		d.fail("bad integer")
		d.in = nil
		return 0
	}
	d.in = d.in[n:]
	return i
}

// count reads a length, bounded by the bytes left (each item takes one).
func (d *imageReader) count() int {
	n := d.uint()
	if n > uint64(len(d.in)) {
		d.fail("count %d past the end", n)
		return 0
	}
	return int(n)
}

func (d *imageReader) string() string {
	n := d.count()
	s := string(d.in[:n])
	d.in = d.in[n:]
	return s
}

func (d *imageReader) stash() *stash {
	id := d.uint()
	switch {
	case id == 0:
		return nil
	case id == 1:
		return &d.r.global.stash
	case id-2 < uint64(len(d.stashes)):
		return d.stashes[id-2]
	case id-2 == uint64(len(d.stashes)):
		s := &stash{}
		d.stashes = append(d.stashes, s)
		return s
	}
	d.fail("scope %d out of order", id)
	return nil
}

func (d *imageReader) object(id uint64) *Object {
	switch {
	case id >= 1 && id-1 < uint64(len(d.objs)):
		return d.objs[id-1]
	case id == uint64(len(d.objs))+1:
		o := &Object{runtime: d.r}
		d.objs = append(d.objs, o)
		return o
	}
	d.fail("object %d out of order", id)
	return nil
}

func (d *imageReader) value() Value {
	switch t := d.byte(); t {
	case imgNil:
		return nil
	case imgUndefined:
		return _undefined
	case imgNull:
		return _null
	case imgTrue:
		return valueTrue
	case imgFalse:
		return valueFalse
	case imgInt:
		return valueInt(d.int())
	case imgFloat:
		if len(d.in) < 8 {
			d.fail("truncated")
			return nil
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64(d.in))
		d.in = d.in[8:]
		return valueFloat(f)
	case imgASCII:
		return asciiString(d.string())
	case imgUnicode:
		n := d.count()
		if 2*n > len(d.in) {
			d.fail("truncated")
			return nil
		}
		s := make(unicodeString, n)
		for i := range s {
			s[i] = binary.LittleEndian.Uint16(d.in[2*i:])
		}
		d.in = d.in[2*n:]
		return s
	case imgImported:
		scanned := d.byte()
		if scanned > 1 {
			d.fail("bad string form %d", scanned)
			return nil
		}
		v := &importedString{s: d.string()}
		if scanned == 1 {
			v.scan()
		}
		d.strs = append(d.strs, v)
		return v
	case imgShared:
		id := d.uint()
		if id == 0 || id > uint64(len(d.strs)) {
			d.fail("string %d not read before", id)
			return nil
		}
		return d.strs[id-1]
	case imgProperty:
		flags := d.byte()
		return &valueProperty{writable: flags&1 != 0, enumerable: flags&2 != 0,
			configurable: flags&4 != 0, value: d.value()}
	case imgObject:
		if o := d.object(d.uint()); o != nil {
			return o
		}
	case imgBuiltin:
		if i := d.uint(); i < uint64(len(imageBuiltins)) {
			return imageBuiltins[i].get(d.r)
		}
		d.fail("unknown built-in")
	case imgVariadic:
		return variadicMarker
	case imgMember:
		i := d.uint()
		name := unistring.NewFromString(d.string())
		if i < uint64(len(imageBuiltins)) {
			if o, ok := imageOwnValue(imageBuiltins[i].get(d.r), name).(*Object); ok && o.builtin != 0 {
				return o
			}
		}
		d.fail("unknown built-in %q", name)
	case imgNative:
		name := d.string()
		if d.named != nil {
			if o := d.named(name); o != nil {
				return o
			}
		}
		if o, ok := imageOwnValue(d.r.globalObject, unistring.NewFromString(name)).(*Object); ok {
			if _, ok := o.self.(*nativeFuncObject); ok {
				return o
			}
		}
		d.fail("no host function %q", name)
	default:
		d.fail("unknown value tag %d", t)
	}
	return nil
}

func (d *imageReader) context() context {
	var c context
	id := d.uint()
	if id >= uint64(len(d.prgs)) {
		d.fail("unknown function")
		return c
	}
	c.prg = d.prgs[id]
	c.stash = d.stash()
	c.newTarget = d.value()
	c.result = d.value()
	c.pc, c.sb, c.args = int(d.int()), int(d.int()), int(d.int())
	if c.pc < 0 || c.pc >= len(c.prg.code) {
		d.fail("frame outside its code")
	}
	return c
}

func (d *imageReader) ref() ref {
	switch d.byte() {
	case imgStashRef:
		r := &stashRef{}
		d.slot(r)
		return r
	case imgStashRefLex:
		r := &stashRefLex{}
		d.slot(&r.stashRef)
		return r
	case imgStashRefConst:
		r := &stashRefConst{strictConst: d.byte() != 0}
		d.slot(&r.stashRef)
		return r
	case imgObjStrRef:
		base, ok := d.value().(*Object)
		if !ok {
			d.fail("a reference without its object")
			return nil
		}
		r := &objStrRef{base: base, name: unistring.NewFromString(d.string()), this: d.value()}
		r.strict, r.binding = d.byte() != 0, d.byte() != 0
		return r
	}
	d.fail("unknown reference kind")
	return nil
}

func (d *imageReader) slot(r *stashRef) {
	r.n = unistring.NewFromString(d.string())
	s := d.stash()
	r.idx = int(d.uint())
	if s == nil {
		d.fail("a reference without its scope")
		s = &stash{}
	}
	r.v = &s.values
	d.slots = append(d.slots, r)
}

func (d *imageReader) names() map[unistring.String]uint32 {
	n := d.count()
	if n == 0 {
		return nil
	}
	m := make(map[unistring.String]uint32, n)
	for range n {
		name := unistring.NewFromString(d.string())
		m[name] = uint32(d.uint())
	}
	return m
}

func (d *imageReader) values() []Value {
	n := d.count()
	if n == 0 {
		return nil
	}
	vs := make([]Value, n)
	for i := range vs {
		vs[i] = d.value()
	}
	return vs
}

func (d *imageReader) ownProps(o *baseObject) {
	o.extensible = d.byte() != 0
	if p, ok := d.value().(*Object); ok {
		o.prototype = p
	} else {
		o.prototype = nil
	}
	for range d.count() {
		name := unistring.NewFromString(d.string())
		o._put(name, d.value())
	}
}

func (d *imageReader) objectBody() {
	if d.filled >= len(d.objs) {
		d.fail("body of an object never referred to")
		return
	}
	o := d.objs[d.filled]
	d.filled++
	switch kind := d.byte(); kind {
	case imgPlain:
		b := &baseObject{class: classObject, val: o, extensible: true}
		o.self = b
		b.init()
		d.ownProps(b)
	case imgArray:
		a := &arrayObject{baseObject: baseObject{class: classArray, val: o, extensible: true}}
		o.self = a
		a.init()
		d.ownProps(&a.baseObject)
		length := d.uint()
		a.values = d.values()
		room := d.uint()
		if length > math.MaxUint32 || uint64(len(a.values)) > length ||
			room < uint64(len(a.values)) || room > uint64(imageArrayRoom(len(a.values))) {
			d.fail("array length")
			return
		}
		if int(room) > len(a.values) {
			a.values = append(make([]Value, 0, room), a.values...)
		}
		a.length = uint32(length)
		a.lengthProp.value = intToValue(int64(length))
		for _, v := range a.values {
			if v != nil {
				a.objCount++
			}
		}
	case imgFunc:
		f := &funcObject{}
		d.jsFunc(o, &f.baseJsFuncObject, f)
	case imgMap:
		mo := &mapObject{}
		mo.class, mo.val, mo.extensible = classObject, o, true
		o.self = mo
		mo.init()
		d.ownProps(&mo.baseObject)
		d.entries(mo.m)
	case imgSet:
		so := &setObject{}
		so.class, so.val, so.extensible = classObject, o, true
		o.self = so
		so.init()
		d.ownProps(&so.baseObject)
		d.entries(so.m)
	case imgArrayIter:
		ai := &arrayIterObject{}
		ai.class, ai.val, ai.extensible = classObject, o, true
		o.self = ai
		ai.init()
		d.ownProps(&ai.baseObject)
		if obj, ok := d.value().(*Object); ok {
			ai.obj = obj
		}
		ai.nextIdx = d.int()
		ai.kind = iterationKind(d.byte())
		ai.pairs = d.int()
		if ai.nextIdx < 0 || ai.pairs < 0 || ai.kind > iterationKindKeyValue {
			d.fail("an array iterator's state")
		}
	case imgArrow:
		d.arrow(o, &arrowFuncObject{}, nil)
	case imgPromise:
		d.promise(o)
	case imgAsyncFunc:
		f := &asyncFuncObject{}
		d.jsFunc(o, &f.baseJsFuncObject, f)
	case imgAsyncArrow:
		f := &asyncArrowFuncObject{}
		d.arrow(o, &f.arrowFuncObject, f)
		f.class = classObject // as newAsyncArrowFunc makes it
	case imgResolving:
		d.resolving(o)
	case imgElement:
		d.elementFunc(o)
	default:
		d.fail("unknown object kind %d", kind)
	}
}

// entries reads what imageWriter.entries wrote into m, which is new. The
// growth is not charged again: the original paid for it.
func (d *imageReader) entries(m *orderedMap) {
	r := m.r
	m.r = nil
	n := d.count()
	for range n {
		k, v := d.value(), d.value()
		if k == nil || d.err != nil {
			d.fail("a Map or Set entry")
			return
		}
		m.set(k, v)
	}
	high := d.uint()
	if m.size != n || high < uint64(n) || high > math.MaxInt32 {
		d.fail("a Map or Set's size")
		return
	}
	m.r, m.high = r, int(high)
}

// arrow reads an arrow function into f, whose object is self (f if nil).
func (d *imageReader) arrow(o *Object, f *arrowFuncObject, self objectImpl) {
	if self == nil {
		self = f
	}
	d.jsFunc(o, &f.baseJsFuncObject, self)
	if fo, ok := d.value().(*Object); ok {
		f.funcObj = fo
	}
	f.newTarget = d.value()
}

func (d *imageReader) jsFunc(o *Object, f *baseJsFuncObject, self objectImpl) {
	id := d.uint()
	if id >= uint64(len(d.prgs)) {
		d.fail("unknown function")
		return
	}
	d.r.initBaseJsFunction(f, d.byte() != 0)
	f.val = o
	o.self = self
	f.prg = d.prgs[id]
	f.stash = d.stash()
	length, name := d.value(), d.value()
	f.init(unistring.String(""), length)
	f.nameProp.value = name
	d.ownProps(&f.baseObject)
}

func (d *imageReader) stashBody() {
	if d.stashed >= len(d.stashes) {
		d.fail("body of a scope never referred to")
		return
	}
	s := d.stashes[d.stashed]
	d.stashed++
	s.funcType = funcType(d.byte())
	s.names = d.names()
	s.values = d.values()
	s.extraArgs = d.values()
	s.outer = d.stash()
}

// imageState is an image read into a runtime: the interpreter's frames,
// stack and try frames, the objects and scopes already in place.
type imageState struct {
	r      *Runtime
	frames []context
	n      int
	stack  valueStack
	tries  []tryFrame
	refs   []ref
	iters  []iterStackItem
}

// readImageNamed reads an image into r, a new runtime whose realm is as
// the writer's base was, with p the program compiled again and the
// embedder's objects found by named.
func readImageNamed(r *Runtime, p *Program, image []byte, named func(string) *Object) (*imageState, error) {
	d := newImageReader(r, p, image, named)
	st := &imageState{r: r}
	st.frames = make([]context, d.count())
	for i := range st.frames {
		st.frames[i] = d.context()
	}
	st.n = int(d.uint())
	sp := d.count()
	st.stack = make(valueStack, sp, sp+16)
	for i := range st.stack {
		st.stack[i] = d.value()
	}
	st.tries, st.refs, st.iters = d.frameStacks(len(st.frames), sp)
	d.globals()
	d.bodies()
	if d.err == nil && (len(st.frames) == 0 || st.n+2 > sp || st.frames[len(st.frames)-1].sb > sp) {
		d.fail("frames do not match the stack")
	}
	if d.err == nil {
		// The guest frame must be at the call that made the host call,
		// with its arguments on the stack.
		last := &st.frames[len(st.frames)-1]
		switch ins := last.prg.code[last.pc].(type) {
		case call:
			if int(ins) != st.n {
				d.fail("the call takes %d arguments, not %d", ins, st.n)
			}
		case _callVariadic:
			if st.stack[sp-st.n-3] != variadicMarker || slices.Contains(st.stack[sp-st.n-2:], variadicMarker) {
				d.fail("the call's arguments do not match the stack")
			}
		default:
			d.fail("the frame is not at a call")
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	return st, nil
}

func newImageReader(r *Runtime, p *Program, image []byte, named func(string) *Object) *imageReader {
	return &imageReader{r: r, in: image, prgs: imagePrograms(p), named: named}
}

// frameStacks reads what imageWriter.frameStacks wrote, of a state with
// frames call frames and sp values on its stack: each try frame within
// the references and loops read.
func (d *imageReader) frameStacks(frames, sp int) ([]tryFrame, []ref, []iterStackItem) {
	tries := d.tries(frames, sp)
	refs := d.refs()
	iters := d.iters()
	for i := range tries {
		if int(tries[i].refLen) > len(refs) || int(tries[i].iterLen) > len(iters) {
			d.fail("try frame out of its references or loops")
		}
	}
	return tries, refs, iters
}

// tries reads try frames of a state with frames call frames and sp
// values on its stack.
func (d *imageReader) tries(frames, sp int) []tryFrame {
	tries := make([]tryFrame, d.count())
	for i := range tries {
		t := &tries[i]
		t.callStackLen = uint32(d.uint())
		t.iterLen = uint32(d.uint())
		t.refLen = uint32(d.uint())
		t.sp = int32(d.int())
		t.stash = d.stash()
		t.catchPos, t.finallyPos, t.finallyRet = int32(d.int()), int32(d.int()), int32(d.int())
		if int(t.callStackLen) > frames || int(t.sp) > sp || t.sp < 0 {
			d.fail("try frame out of its frames")
		}
	}
	return tries
}

func (d *imageReader) refs() []ref {
	refs := make([]ref, d.count())
	for i := range refs {
		refs[i] = d.ref()
	}
	return refs
}

// iters reads the loops in flight; their iterators' next methods are
// found once the bodies are read (bodies).
func (d *imageReader) iters() []iterStackItem {
	items := make([]iterStackItem, d.count())
	for i := range items {
		items[i].val = d.value()
		it, _ := d.value().(*Object)
		if it == nil {
			d.fail("a loop without its iterator")
		}
		d.loops = append(d.loops, imageLoop{items, i, it})
	}
	return items
}

// imageLoop is a loop in flight whose iterator's body is still to read.
type imageLoop struct {
	items []iterStackItem
	i     int
	it    *Object
}

// globals reads the global scope's declarations and the global object's
// properties the guest added.
func (d *imageReader) globals() {
	r := d.r
	gs := &r.global.stash
	gs.names = d.names()
	gs.values = d.values()
	g, _ := imageGlobal(r)
	if n := d.count(); n > 0 {
		// As the guest's first global did in the original.
		if t, ok := r.globalObject.self.(*templatedObject); ok {
			t.materialisePropNames()
		}
		for range n {
			if d.err != nil {
				break
			}
			name := unistring.NewFromString(d.string())
			g._put(name, d.value())
		}
	}
}

// bodies reads the objects' and scopes' bodies to the end of the image,
// then completes what needed them.
func (d *imageReader) bodies() {
	r := d.r
	for len(d.in) > 0 && d.err == nil {
		switch d.byte() {
		case imgBodyObject:
			d.objectBody()
		case imgBodyStash:
			d.stashBody()
		default:
			d.fail("unknown record")
		}
	}
	if d.err == nil && (d.filled != len(d.objs) || d.stashed != len(d.stashes)) {
		d.fail("an object or scope without its body")
	}
	for _, l := range d.loops {
		// An array's iterator, its next method its prototype's.
		if d.err != nil {
			break
		}
		ai, ok := l.it.self.(*arrayIterObject)
		if !ok || ai.prototype != r.getArrayIteratorPrototype() {
			d.fail("a loop's iterator is not an array's")
			break
		}
		next, ok := ai.prototype.self.getStr("next", nil).(*Object)
		var call func(FunctionCall) Value
		if ok {
			call, ok = next.self.assertCallable()
		}
		if !ok {
			d.fail("an array iterator without its next method")
			break
		}
		l.items[l.i].iter = &iteratorRecord{iterator: l.it, next: call}
	}
	for _, ref := range d.slots {
		if ref.idx >= len(*ref.v) {
			d.fail("a reference past its scope")
		}
	}
	if d.err == nil {
		d.completeRest()
	}
}

// run continues the suspension with the host function's outcome
// (outcome returns the answer or throws the error), to the end of the
// program, as RunProgram would have. The guest frame is restored at the
// call instruction and the call made again, to a function that is the
// outcome: the instruction then does what it does after any host function
// returns or throws, try blocks included. An installed StepMeter counted
// that instruction when it first ran, so its count is taken back first.
func (st *imageState) run(outcome func(FunctionCall) Value) (result Value, err error) {
	r := st.r
	vm := r.vm
	if len(vm.callStack) > 0 {
		return nil, errors.New("image: the runtime is running")
	}
	last := st.frames[len(st.frames)-1]
	vm.callStack = append(append(vm.callStack[:0], context{}), st.frames[:len(st.frames)-1]...)
	vm.restoreCtx(&last)
	vm.stack = st.stack
	vm.sp = len(st.stack)
	vm.tryStack = st.tries
	vm.refStack = st.refs
	vm.iterStack = st.iters
	vm.stack[vm.sp-st.n-1] = r.newNativeFunc(outcome, "", 0)
	if steps := vm.stepc.steps; steps != nil && *steps > 0 {
		*steps--
	}
	defer func() {
		// As RunProgram: an interrupt unwinds to here. So does a state
		// the interpreter cannot run (an index out of its range): the
		// reader checks the image's shape, not every value against every
		// instruction that will read it.
		vm.callStack = vm.callStack[:0]
		if x := recover(); x != nil {
			ex := asUncatchableException(x)
			if ex == nil {
				if _, ok := x.(runtime.Error); !ok {
					panic(x)
				}
				result, err = nil, ErrImageState
				r.leaveAbrupt()
				return
			}
			result, err = nil, ex
			r.leaveAbrupt()
		}
	}()
	var ex *Exception
	for {
		ex = vm.runTryInner()
		if ex != nil || vm.halted() {
			break
		}
	}
	vm.popTryFrame()
	vm.prg = nil
	vm.sb = -1
	if ex != nil {
		r.leaveAbrupt()
		return nil, ex
	}
	result = vm.result
	r.leave()
	return result, nil
}

// ImageBase is what a realm holds before guest code runs, which an image
// leaves out: the global object's own properties.
type ImageBase struct{ globals imageBase }

// MustardImageBase records r's realm as it is before guest code runs; an
// image of a later suspension writes what the guest added since, and is
// read into a realm made again to this point.
func (r *Runtime) MustardImageBase() *ImageBase {
	return &ImageBase{globals: newImageBase(r)}
}

// MustardWriteImage appends to buf the image of r suspended in the host
// function callee, which guest code called directly with nargs arguments
// (an image of a call a built-in made is refused), p being the program it
// runs and base its realm before guest code ran. named
// names the embedder's objects the guest may hold (host functions and
// frozen objects made after base), which the reader's realm must have
// under the same names. A state an image cannot hold is an error wrapping
// ErrImageUnsupported. Writing changes nothing in r.
func (r *Runtime) MustardWriteImage(buf []byte, p *Program, base *ImageBase, callee *Object, nargs int, named map[*Object]string) ([]byte, error) {
	if callee == nil {
		return nil, fmt.Errorf("%w: no host function", errImageUnsupported)
	}
	return appendImage(buf, r, p, base.globals, nargs, named, callee)
}

// Image is an image read into a runtime, ready to continue.
type Image struct{ st *imageState }

// MustardReadImage reads an image into r, a runtime that has run no
// guest code, whose realm is as the writer's base was, with p the
// program compiled again and named giving the embedder's objects by the
// names the writer used. Damaged or hostile bytes are an error, never a
// panic; what the image made is then garbage and r must not be used.
func (r *Runtime) MustardReadImage(p *Program, image []byte, named func(string) *Object) (*Image, error) {
	st, err := readImageNamed(r, p, image, named)
	if err != nil {
		return nil, err
	}
	return &Image{st: st}, nil
}

// Run continues the image to the end of its program, as RunProgram does
// for a program run from its start. outcome is what the host function the
// execution was suspended in gives the guest: its return value, or a
// panic with a Value, which the guest sees thrown.
func (im *Image) Run(outcome func(FunctionCall) Value) (Value, error) {
	return im.st.run(outcome)
}
