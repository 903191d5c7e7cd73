package goja

// The image of an execution at rest (a mustard-sidecar addition; see
// PATCHES.md and docs/heap-image.md). Async code waits for a host call's
// answer with no guest frame anywhere: the script has returned its
// promise, the job queue is drained, every async function waiting at an
// await keeps its frame in its generator, and what continues each is a
// reaction of the promise it awaits. Such a state is written as the roots
// the embedder names (the promise it settles the outcome from, the
// promises of its outstanding calls), the interpreter's leftovers and the
// global scope, then the objects they reach, promises and async functions
// among them. The reactions an image holds are async functions'
// continuations and then callbacks: the guest's functions, and the
// native ones made to be named (below: Promise.all's, allSettled's and
// any's element functions, a capability's resolving functions, which are
// also those of a new Promise and of a thenable job). Any other (an async
// generator's) makes the writer refuse.

import (
	"fmt"
	"math"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/unistring"
)

// Reaction kinds.
const (
	imgReactAwait byte = iota + 1 // an async function's continuation
	imgReactThen                  // a then callback (or none) and its result's capability
)

// appendRestImage appends to buf the state of r at rest, with roots
// (values only the embedder holds) written first.
func appendRestImage(buf []byte, r *Runtime, p *Program, base imageBase, named map[*Object]string, roots []Value) ([]byte, error) {
	vm := r.vm
	if len(r.jobQueue) > 0 || len(r.queued) > 0 || r.async != 0 || vm.curAsyncRunner != nil ||
		len(vm.callStack) > 0 || vm.prg != nil || len(vm.tryStack) > 0 || len(vm.iterStack) > 0 || len(vm.refStack) > 0 {
		return nil, fmt.Errorf("%w: not at rest", errImageUnsupported)
	}
	if err := realmUnsupported(r); err != nil {
		return nil, err
	}
	var w imageWriter
	w.init(buf, r, p, base, named)
	w.uint(0) // no frame: at rest
	w.values(roots)
	w.value(vm.result)
	w.values(vm.stack[:max(vm.sp, 0)])
	if err := w.globals(); err != nil {
		return nil, err
	}
	w.drain()
	return w.out, w.err
}

// promise writes a promise's body: its state, result and reactions.
func (w *imageWriter) promise(p *Promise) {
	w.out = append(w.out, imgPromise)
	w.ownProps(&p.baseObject)
	w.out = append(w.out, byte(p.state), boolByte(p.handled))
	w.value(p.result)
	w.reactions(p.fulfillReactions)
	w.reactions(p.rejectReactions)
}

func (w *imageWriter) reactions(rs []*promiseReaction) {
	w.uint(uint64(len(rs)))
	for _, re := range rs {
		if re.asyncCtx != nil {
			w.fail("an async context")
			return
		}
		w.out = append(w.out, byte(re.typ))
		if ar := re.asyncRunner; ar != nil {
			if re.capability != nil {
				w.fail("an await with a capability")
				return
			}
			w.out = append(w.out, imgReactAwait)
			w.runner(ar)
			continue
		}
		h := re.handler
		if h != nil && (h.fn == nil || h.holds != nil) {
			w.fail("a promise reaction of a built-in")
			return
		}
		w.out = append(w.out, imgReactThen)
		w.capability(re.capability)
		if h == nil {
			w.value(nil)
		} else {
			w.value(h.fn)
		}
	}
}

// capability writes a promise capability by number: 0 none, then in the
// order first reached, its body where first reached. Only the intrinsic
// Promise's, with its resolving functions if it made them.
func (w *imageWriter) capability(c *promiseCapability) {
	if c == nil {
		w.uint(0)
		return
	}
	if c.own == nil || c.own.val != c.promise || !ownResolving(c) {
		w.fail("a promise capability of a subclass")
		return
	}
	if !writeNumber(w, &w.caps, c) {
		return
	}
	w.value(c.promise)
	w.out = append(w.out, boolByte(c.already))
	w.optional(c.resolveObj)
	w.optional(c.rejectObj)
}

// ownResolving reports whether c's resolving functions, if it has made
// them, are its own (capResolving).
func ownResolving(c *promiseCapability) bool {
	if c.resolveObj == nil && c.rejectObj == nil {
		return true
	}
	return isResolving(c.resolveObj, c, false) && isResolving(c.rejectObj, c, true)
}

func isResolving(o *Object, c *promiseCapability, reject bool) bool {
	if o == nil {
		return false
	}
	f, ok := o.self.(*nativeFuncObject)
	if !ok {
		return false
	}
	h, ok := f.holds.(*capResolving)
	return ok && h.pcap == c && h.reject == reject
}

// writeNumber writes k's number among the things of its kind, numbered
// from 1 in the order first reached, and reports whether k is reached
// for the first time: its body is then to be written where it is.
func writeNumber[K comparable](w *imageWriter, ids *map[K]uint64, k K) bool {
	if id, ok := (*ids)[k]; ok {
		w.uint(id)
		return false
	}
	if *ids == nil {
		*ids = map[K]uint64{}
	}
	id := uint64(len(*ids) + 1)
	(*ids)[k] = id
	w.uint(id)
	return true
}

// readNumber reads what writeNumber wrote: a thing read before, or a new
// one (fresh) whose body follows.
func readNumber[T any](d *imageReader, list *[]*T, what string) (t *T, fresh bool) {
	return numbered(d, d.uint(), list, what)
}

// numbered is readNumber with the number read.
func numbered[T any](d *imageReader, id uint64, list *[]*T, what string) (t *T, fresh bool) {
	switch {
	case id >= 1 && id <= uint64(len(*list)):
		return (*list)[id-1], false
	case id == uint64(len(*list))+1:
		t = new(T)
		*list = append(*list, t)
		return t, true
	}
	d.fail("%s %d out of order", what, id)
	return nil, false
}

// nativeFunc writes a native function the image names by what it holds:
// a capability's resolving function, or a combinator's element function.
func (w *imageWriter) nativeFunc(f *nativeFuncObject) {
	switch h := f.holds.(type) {
	case *capResolving:
		w.out = append(w.out, imgResolving)
		w.nativeBase(f)
		w.capability(h.pcap)
		w.out = append(w.out, boolByte(h.reject))
	case *elementFn:
		w.out = append(w.out, imgElement, h.kind)
		w.nativeBase(f)
		w.element(h.el)
	default:
		w.fail("a native function")
	}
}

// nativeBase writes a native function's length, name and other
// properties.
func (w *imageWriter) nativeBase(f *nativeFuncObject) {
	if f.construct != nil || f.class != classFunction ||
		f.values.get("length") != Value(&f.lenProp) || f.values.get("name") != Value(&f.nameProp) {
		w.fail("a native function's shape")
		return
	}
	w.value(f.lenProp.value)
	w.value(f.nameProp.value)
	w.ownProps(&f.baseObject, "length", "name")
}

// element writes a combinator's element by number, its body where first
// reached.
func (w *imageWriter) element(el *combinatorElement) {
	if !writeNumber(w, &w.elements, el) {
		return
	}
	if c := el.c; writeNumber(w, &w.combs, c) {
		w.capability(c.pcap)
		w.values(c.values)
		w.int(int64(c.remaining))
	}
	w.uint(uint64(el.index))
	w.out = append(w.out, boolByte(el.called))
}

// runner writes an async function's run by number, its body where first
// reached: the function, its result's capability and its saved frame.
func (w *imageWriter) runner(ar *asyncRunner) {
	if ar.gen.returning != nil {
		w.fail("an async function returning through finally")
		return
	}
	if !writeNumber(w, &w.runners, ar) {
		return
	}
	w.value(ar.f)
	w.capability(ar.promiseCap)
	c := &ar.gen.ctx
	w.context(&c.context)
	w.values(c.stack)
	w.frameStacks(c.tryStack, c.refStack, c.iterStack)
}

// imageRestReader is what the reader of promises and async functions
// keeps until every body is read.
type imageRestReader struct {
	caps     []*promiseCapability
	runners  []*asyncRunner
	handlers []*jobCallback // then callbacks: their functions' bodies may come later
	elements []*combinatorElement
	combs    []*combinator
}

func (d *imageReader) promise(o *Object) {
	p := &Promise{}
	p.class, p.val, p.extensible = classObject, o, true
	o.self = p
	p.init()
	d.ownProps(&p.baseObject)
	state := PromiseState(d.byte())
	p.handled = d.byte() != 0
	p.result = d.value()
	p.fulfillReactions = d.reactions()
	p.rejectReactions = d.reactions()
	switch {
	case state > PromiseStateRejected:
		d.fail("a promise's state")
	case state == PromiseStatePending && (p.result != nil || len(p.fulfillReactions) != len(p.rejectReactions)):
		d.fail("a pending promise's reactions")
	case state != PromiseStatePending && (p.result == nil || len(p.fulfillReactions)+len(p.rejectReactions) > 0):
		d.fail("a settled promise's result")
	}
	p.state = state
}

func (d *imageReader) reactions() []*promiseReaction {
	n := d.count()
	if n == 0 {
		return nil
	}
	rs := make([]*promiseReaction, n)
	for i := range rs {
		typ := promiseReactionType(d.byte())
		if typ != promiseReactionFulfill && typ != promiseReactionReject {
			d.fail("a reaction's type")
			return nil
		}
		re := &promiseReaction{typ: typ}
		switch d.byte() {
		case imgReactAwait:
			ar := d.runner()
			if ar == nil {
				d.fail("an await without its function")
				return nil
			}
			re.asyncRunner = ar
			if typ == promiseReactionFulfill {
				re.handler = &jobCallback{callback: ar.onFulfilled}
			} else {
				re.handler = &jobCallback{callback: ar.onRejected}
			}
		case imgReactThen:
			re.capability = d.capability()
			if fn := d.value(); fn != nil {
				re.handler = &jobCallback{fn: fn}
				d.rest.handlers = append(d.rest.handlers, re.handler)
			}
		default:
			d.fail("a reaction's kind")
			return nil
		}
		rs[i] = re
	}
	return rs
}

func (d *imageReader) capability() *promiseCapability {
	id := d.uint()
	if id == 0 {
		return nil
	}
	c, fresh := numbered(d, id, &d.rest.caps, "capability")
	if !fresh {
		return c
	}
	c.promise, _ = d.value().(*Object)
	c.already = d.byte() != 0
	c.resolveObj, _ = d.value().(*Object)
	c.rejectObj, _ = d.value().(*Object)
	if c.promise == nil {
		d.fail("a capability without its promise")
	}
	return c
}

// nativeFunc reads a native function's base into o; what it calls is
// set by the caller.
func (d *imageReader) nativeFunc(o *Object) *nativeFuncObject {
	f := &nativeFuncObject{baseFuncObject: baseFuncObject{baseObject: baseObject{class: classFunction, val: o,
		extensible: true, prototype: d.r.getFunctionPrototype()}}}
	o.self = f
	length, name := d.value(), d.value()
	f.init("", length)
	f.nameProp.value = name
	d.ownProps(&f.baseObject)
	return f
}

func (d *imageReader) resolving(o *Object) {
	f := d.nativeFunc(o)
	c := d.capability()
	reject := d.byte()
	if c == nil || reject > 1 {
		d.fail("a resolving function without its capability")
		return
	}
	h := &capResolving{pcap: c, reject: reject == 1}
	f.f, f.holds = h.call, h
}

func (d *imageReader) elementFunc(o *Object) {
	kind := d.byte()
	f := d.nativeFunc(o)
	el := d.element()
	if el == nil || kind < elementAll || kind > elementAnyRejected {
		d.fail("an element function")
		return
	}
	h := &elementFn{el: el, kind: kind}
	f.f, f.holds = h.call, h
}

func (d *imageReader) element() *combinatorElement {
	el, fresh := readNumber(d, &d.rest.elements, "element")
	if !fresh {
		return el
	}
	c, fresh := readNumber(d, &d.rest.combs, "combinator")
	if c == nil {
		return nil
	}
	if fresh {
		c.pcap = d.capability()
		c.values = d.values()
		c.remaining = int(d.int())
		if c.pcap == nil || c.remaining < 0 || c.remaining > len(c.values) {
			d.fail("a combinator's state")
			return nil
		}
	}
	el.c = c
	index := d.uint()
	el.called = d.byte() != 0
	if index >= uint64(len(el.c.values)) {
		d.fail("an element past its combinator's values")
		return nil
	}
	el.index = int(index)
	return el
}

func (d *imageReader) runner() *asyncRunner {
	ar, fresh := readNumber(d, &d.rest.runners, "async function")
	if !fresh {
		return ar
	}
	ar.gen.vm = d.r.vm
	ar.f, _ = d.value().(*Object)
	ar.promiseCap = d.capability()
	if ar.f == nil || ar.promiseCap == nil {
		d.fail("an async function's run")
		return nil
	}
	c := &ar.gen.ctx
	c.context = d.context()
	c.stack = d.values()
	// A saved try frame's count of call frames is set again when the
	// function continues (vm.resume); its stack position is relative.
	c.tryStack, c.refStack, c.iterStack = d.frameStacks(math.MaxUint32, len(c.stack))
	if len(c.stack) == 0 {
		d.fail("an async function's frame without its stack")
	}
	return ar
}

// completeRest completes what the reader of promises and async functions
// read before the bodies it refers to: the capabilities' promises, the
// callbacks' functions, the async functions' kinds.
func (d *imageReader) completeRest() {
	for _, c := range d.rest.caps {
		p, ok := c.promise.self.(*Promise)
		if !ok || !ownResolving(c) {
			d.fail("a capability's promise or resolving functions")
			return
		}
		c.own = p
	}
	for _, h := range d.rest.handlers {
		call, ok := assertCallable(h.fn)
		if !ok {
			d.fail("a callback that is not a function")
			return
		}
		h.callback = call
	}
	for _, ar := range d.rest.runners {
		switch f := ar.f.self.(type) {
		case *asyncFuncObject:
			ar.vmCall = f.baseJsFuncObject.vmCall
		case *asyncArrowFuncObject:
			ar.vmCall = f.arrowFuncObject.vmCall
		default:
			d.fail("an await outside an async function")
			return
		}
		if ar.gen.ctx.prg != ar.f.self.(interface{ mustardJs() *baseJsFuncObject }).mustardJs().prg {
			d.fail("an async function's frame outside its code")
			return
		}
	}
}

// RestImage is an image of an execution at rest read into a runtime.
type RestImage struct{ roots []Value }

// Roots are the values the writer was given, in order.
func (im *RestImage) Roots() []Value { return im.roots }

// MustardWriteRestImage appends to buf the image of r at rest (the
// script returned, its job queue drained, nothing running: async code
// waiting on promises), with roots, the values only the embedder holds
// (the program's result, its outstanding calls' promises), written
// first. p, base and named are as for MustardWriteImage. A state an
// image cannot hold is an error wrapping ErrImageUnsupported. Writing
// changes nothing in r.
func (r *Runtime) MustardWriteRestImage(buf []byte, p *Program, base *ImageBase, named map[*Object]string, roots ...Value) ([]byte, error) {
	return appendRestImage(buf, r, p, base.globals, named, roots)
}

// MustardReadRestImage reads an image MustardWriteRestImage wrote into r,
// as MustardReadImage does, and returns its roots. The runtime is then
// at rest as the writer's was: settling a root promise and running the
// jobs continues it. Damaged or hostile bytes are an error, never a
// panic; what the image made is then garbage and r must not be used.
func (r *Runtime) MustardReadRestImage(p *Program, image []byte, named func(string) *Object) (*RestImage, error) {
	vm := r.vm
	if len(vm.callStack) > 0 {
		return nil, fmt.Errorf("image: the runtime is running")
	}
	d := newImageReader(r, p, image, named)
	if d.uint() != 0 {
		d.fail("not an image at rest")
	}
	im := &RestImage{roots: d.values()}
	result := d.value()
	stack := d.values()
	d.globals()
	d.bodies()
	if d.err != nil {
		return nil, d.err
	}
	vm.result = result
	vm.stack = append(vm.stack[:0], stack...)
	vm.sp = len(stack)
	return im, nil
}

// Promise functions an image names. The resolving functions of a
// capability that hands them out (Promise.all's and Promise.race's
// reject, a resolve passed on, a new Promise's executor's arguments, a
// thenable job's) and the element functions of Promise.all,
// Promise.allSettled and Promise.any are native functions whose closures
// an image cannot write; made with these holders, the image writes what
// they hold instead, and the reader makes the same functions again.

// resolvingFunctions makes the resolving functions of a capability of
// the intrinsic Promise, sharing its already-resolved state, as
// upstream's createResolvingFunctions made them with closures.
func (pcap *promiseCapability) resolvingFunctions() (resolve, reject *Object) {
	res, rej := &capResolving{pcap: pcap}, &capResolving{pcap: pcap, reject: true}
	return res.function(), rej.function()
}

// capResolving is a capability's resolve or reject function.
type capResolving struct {
	pcap   *promiseCapability
	reject bool
}

func (c *capResolving) function() *Object {
	return holdingBy(c.pcap.promise.runtime.newNativeFunc(c.call, "", 1), c)
}

func (c *capResolving) call(call FunctionCall) Value {
	if c.reject {
		return c.pcap.own.rejectOnce(&c.pcap.already, call.Argument(0))
	}
	return c.pcap.own.resolveOnce(&c.pcap.already, call.Argument(0))
}

func (c *capResolving) hold(visit func(Value)) { visit(c.pcap.own.val) }

// combinator is the state a Promise.all, allSettled or any call shares
// between its element functions (any's values are the errors).
type combinator struct {
	pcap      *promiseCapability
	values    []Value
	remaining int
}

// combinatorElement is one element's: its index, and whether one of its
// functions was called (allSettled's two share it).
type combinatorElement struct {
	c      *combinator
	index  int
	called bool
}

// Element function kinds.
const (
	elementAll         byte = iota + 1 // Promise.all's
	elementFulfilled                   // Promise.allSettled's, fulfilled
	elementRejected                    // and rejected
	elementAnyRejected                 // Promise.any's, rejected
)

// elementFn is an element function of one of those kinds.
type elementFn struct {
	el   *combinatorElement
	kind byte
}

func (el *combinatorElement) function(kind byte) *Object {
	f := &elementFn{el: el, kind: kind}
	return holdingBy(el.c.pcap.promise.runtime.newNativeFunc(f.call, "", 1), f)
}

func (f *elementFn) call(call FunctionCall) Value {
	el := f.el
	if el.called {
		return _undefined
	}
	el.called = true
	c := el.c
	r := c.pcap.promise.runtime
	switch f.kind {
	case elementAll, elementAnyRejected:
		c.values[el.index] = call.Argument(0)
	default:
		status, key := asciiString("fulfilled"), "value"
		if f.kind == elementRejected {
			status, key = asciiString("rejected"), "reason"
		}
		obj := r.NewObject()
		obj.self._putProp("status", status, true, true, true)
		obj.self._putProp(unistring.String(key), call.Argument(0), true, true, true)
		c.values[el.index] = obj
	}
	c.remaining--
	switch {
	case c.remaining != 0:
	case f.kind == elementAnyRejected:
		c.pcap.reject(r.newAggregateErrorErrors(c.values))
	default:
		c.pcap.resolve(r.newArrayValues(c.values))
	}
	return _undefined
}

func (f *elementFn) hold(visit func(Value)) { holdValues(visit, f.el.c.pcap, f.el.c.values) }
