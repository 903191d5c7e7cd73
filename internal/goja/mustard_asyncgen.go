package goja

import "github.com/mustard-sidecar/mustard-sidecar/internal/goja/unistring"

// Async generators and async iteration (a mustard-sidecar addition to goja;
// see PATCHES.md): `async function*` (declarations, expressions, object
// and class methods), their AsyncGenerator objects, %AsyncIteratorPrototype%,
// Symbol.asyncIterator and CreateAsyncFromSyncIterator, to ECMAScript
// 2024 (ECMA-262 27.1.4, 27.1.6, 27.4, 27.6), which V8 implements. The
// compiler side (for await, await in yield and return) is in
// mustard_forawait.go.
//
// An async generator's body runs on goja's generator machinery (generator,
// as sync generators and async functions use it): the body stops at every
// await and yield with a marker, and the Go code here decides what comes
// next. Every step of the specification's algorithms that waits for a
// promise is a reaction on that promise; every other step runs at once, in
// a loop (drive) rather than by recursion, so that no chain of steps,
// however long, deepens the Go stack.

// SymAsyncIterator is Symbol.asyncIterator.
var SymAsyncIterator = newSymbol(asciiString("Symbol.asyncIterator"))

const (
	classAsyncGenerator         = "AsyncGenerator"
	classAsyncGeneratorFunction = "AsyncGeneratorFunction"
)

// mustardAsyncIter holds the intrinsics, made when first needed.
type mustardAsyncIter struct {
	AsyncIteratorPrototype          *Object
	AsyncGeneratorFunctionPrototype *Object
	AsyncGeneratorFunction          *Object
	AsyncGeneratorPrototype         *Object
	AsyncFromSyncIteratorPrototype  *Object
}

// The async generator function objects: as the generator ones, with
// AsyncGenerator objects in place of Generator objects.

type asyncGeneratorFuncObject struct {
	baseJsFuncObject
}

type asyncGeneratorMethodFuncObject struct {
	methodFuncObject
}

func (r *Runtime) newAsyncGeneratorFunc(name unistring.String, length int, strict bool) (f *asyncGeneratorFuncObject) {
	f = &asyncGeneratorFuncObject{}
	r.initBaseJsFunction(&f.baseJsFuncObject, strict)
	f.prototype = r.getAsyncGeneratorFunctionPrototype()
	f.val.self = f
	f.init(name, intToValue(int64(length)))
	f._putProp("prototype", r.newBaseObject(r.getAsyncGeneratorPrototype(), classObject).val, true, false, false)
	return
}

func (r *Runtime) newAsyncGeneratorMethod(name unistring.String, length int, strict bool) (f *asyncGeneratorMethodFuncObject) {
	f = &asyncGeneratorMethodFuncObject{}
	r.initBaseJsFunction(&f.baseJsFuncObject, strict)
	f.prototype = r.getAsyncGeneratorFunctionPrototype()
	f.val.self = f
	f.init(name, intToValue(int64(length)))
	f._putProp("prototype", r.newBaseObject(r.getAsyncGeneratorPrototype(), classObject).val, true, false, false)
	return
}

func (f *asyncGeneratorFuncObject) vmCall(vm *vm, nArgs int) {
	vm.push(f.asyncGeneratorCall(f.baseJsFuncObject.vmCall, nArgs))
	vm.pc++
}

func (f *asyncGeneratorFuncObject) Call(call FunctionCall) Value {
	f.prepareForVmCall(call)
	return f.asyncGeneratorCall(f.baseJsFuncObject.vmCall, len(call.Arguments))
}

func (f *asyncGeneratorFuncObject) assertCallable() (func(FunctionCall) Value, bool) {
	return f.Call, true
}

func (f *asyncGeneratorFuncObject) export(*objectExportCtx) interface{} {
	return f.Call
}

func (f *asyncGeneratorFuncObject) assertConstructor() func(args []Value, newTarget *Object) *Object {
	return nil
}

func (f *asyncGeneratorMethodFuncObject) vmCall(vm *vm, nArgs int) {
	vm.push(f.asyncGeneratorCall(f.methodFuncObject.vmCall, nArgs))
	vm.pc++
}

func (f *asyncGeneratorMethodFuncObject) Call(call FunctionCall) Value {
	f.prepareForVmCall(call)
	return f.asyncGeneratorCall(f.methodFuncObject.vmCall, len(call.Arguments))
}

func (f *asyncGeneratorMethodFuncObject) assertCallable() (func(FunctionCall) Value, bool) {
	return f.Call, true
}

func (f *asyncGeneratorMethodFuncObject) export(*objectExportCtx) interface{} {
	return f.Call
}

// asyncGeneratorCall runs the function's parameter initialisation (errors
// there throw at the call, as for generators) and returns the AsyncGenerator
// suspended at the start of the body.
func (f *baseJsFuncObject) asyncGeneratorCall(vmCall func(*vm, int), nArgs int) Value {
	r := f.val.runtime
	o := &Object{runtime: r}
	g := &asyncGeneratorObject{
		baseObject: baseObject{
			class:      classObject,
			val:        o,
			extensible: true,
		},
	}
	o.self = g
	g.init(vmCall, nArgs)
	g.prototype = r.getPrototypeFromCtor(f.val, nil, r.getAsyncGeneratorPrototype())
	return o
}

type asyncGenState uint8

const (
	asyncGenSuspendedStart asyncGenState = iota
	asyncGenSuspendedYield
	asyncGenExecuting
	asyncGenAwaitingReturn
	asyncGenCompleted
)

// completionKind is a completion record's type.
type completionKind uint8

const (
	completionNormal completionKind = iota
	completionThrow
	completionReturn
)

// asyncGenRequest is an AsyncGeneratorRequest: a next, throw or return
// call waiting its turn, and the promise it returned.
type asyncGenRequest struct {
	kind  completionKind
	value Value
	cap   *promiseCapability
}

type asyncGeneratorObject struct {
	baseObject
	gen   generator
	state asyncGenState
	queue []asyncGenRequest
	// yieldRes: the body is suspended at a yield whose value it uses.
	yieldRes bool
	// delegate is the inner async iterator of the yield* the body is
	// suspended in, nil outside one.
	delegate *iteratorRecord
}

// asyncGenReturn is the value of the exception that carries a return
// completion through an async generator's body: resumed with return(v) at
// a yield, the body unwinds as if `return v` stood there, running its
// finally blocks and closing its loops' iterators (an await or yield in a
// finally block suspends it as anywhere else, and a throw there replaces
// the return). handleThrow skips catch blocks for it; it never reaches
// guest code, and leaves the body as its return value.
type asyncGenReturn struct {
	valueNull
	value Value
}

func isReturnCompletion(ex *Exception) bool {
	if ex == nil {
		return false
	}
	_, ok := ex.val.(*asyncGenReturn)
	return ok
}

func (g *asyncGeneratorObject) init(vmCall func(*vm, int), nArgs int) {
	g.baseObject.init()
	r := g.val.runtime
	vm := r.vm
	g.gen.vm = vm
	r.async++ // the body, parameters included, runs in async context
	defer func() { r.async-- }()
	g.gen.enter()
	vmCall(vm, nArgs)
	_, _, ex := g.gen.step()
	vm.popTryFrame()
	if ex != nil {
		panic(ex)
	}
	g.state = asyncGenSuspendedStart
	vm.popCtx()
}

// agAction is one step of the specification's algorithms; it returns the
// step to run next at once, or nil when the generator waits (for a promise,
// or for a request).
type agAction func() agAction

// drive runs actions until one waits. The body runs in async context
// (Runtime.MustardInAsync).
func (g *asyncGeneratorObject) drive(a agAction) {
	r := g.val.runtime
	r.async++
	defer func() { r.async-- }()
	for i := 0; a != nil; i++ {
		r.tick(i)
		a = a()
	}
}

// resolveIntrinsic is PromiseResolve(%Promise%, x).
func (r *Runtime) resolveIntrinsic(x Value) *Promise {
	return r.promiseResolve(r.getPromise(), x).self.(*Promise)
}

// await waits for v as Await(v) does: onFulfilled or onRejected runs, as
// a promise job, with the outcome. A throw from PromiseResolve (a getter
// of v.constructor) is a rejection at once.
func (g *asyncGeneratorObject) await(v Value, onFulfilled, onRejected func(Value) agAction) agAction {
	r := g.val.runtime
	var p *Promise
	if ex := r.vm.try(func() { p = r.resolveIntrinsic(v) }); ex != nil {
		return func() agAction { return onRejected(ex.val) }
	}
	p.addReactions(&promiseReaction{
		typ: promiseReactionFulfill,
		handler: &jobCallback{callback: func(call FunctionCall) Value {
			g.drive(func() agAction { return onFulfilled(call.Argument(0)) })
			return _undefined
		}, holds: g.holds},
	}, &promiseReaction{
		typ: promiseReactionReject,
		handler: &jobCallback{callback: func(call FunctionCall) Value {
			g.drive(func() agAction { return onRejected(call.Argument(0)) })
			return _undefined
		}, holds: g.holds},
	})
	return nil
}

// resumeBody resumes the body: with thrown nil, with next (v: the value
// the suspended expression evaluates to, or nil); otherwise by throwing
// thrown (a Value, or an *Exception) into it.
func (g *asyncGeneratorObject) resumeBody(v Value, thrown interface{}) agAction {
	return func() agAction {
		g.state = asyncGenExecuting
		var res Value
		var typ resultType
		var ex *Exception
		if thrown != nil {
			res, typ, ex = g.gen.nextThrow(thrown)
		} else {
			res, typ, ex = g.gen.next(v)
		}
		return g.onStep(res, typ, ex)
	}
}

func (g *asyncGeneratorObject) stepNext(v Value) agAction {
	if !g.yieldRes {
		v = nil
	}
	return g.resumeBody(v, nil)
}

// stepNextValue resumes an await with its value: awaits always use it.
func (g *asyncGeneratorObject) stepNextValue(v Value) agAction {
	return g.resumeBody(v, nil)
}

func (g *asyncGeneratorObject) throwInto(v Value) agAction {
	return g.resumeBody(nil, v)
}

func (g *asyncGeneratorObject) throwEx(ex *Exception) agAction {
	return g.resumeBody(nil, ex)
}

func (g *asyncGeneratorObject) returnInto(v Value) agAction {
	return g.resumeBody(nil, &Exception{val: &asyncGenReturn{value: v}})
}

// onStep continues after the body stopped: at an await, a yield, a yield*,
// or at its end.
func (g *asyncGeneratorObject) onStep(res Value, typ resultType, ex *Exception) agAction {
	if ex != nil {
		if ret, ok := ex.val.(*asyncGenReturn); ok {
			return g.finish(completionNormal, ret.value)
		}
		return g.finish(completionThrow, ex.val)
	}
	switch typ {
	case resultAwait:
		return g.await(res, g.stepNextValue, g.throwInto)
	case resultYield, resultYieldRes:
		// The compiled yield awaited its operand already.
		g.yieldRes = typ == resultYieldRes
		return g.yield(res)
	case resultYieldDelegate, resultYieldDelegateRes:
		g.yieldRes = typ == resultYieldDelegateRes
		return g.startDelegate(res)
	default:
		return g.finish(completionNormal, res)
	}
}

// finish: the body has completed (AsyncGeneratorStart steps 4.e-i).
func (g *asyncGeneratorObject) finish(kind completionKind, v Value) agAction {
	g.state = asyncGenCompleted
	g.delegate = nil
	g.completeStep(kind, v, true)
	return g.drainQueue
}

// completeStep settles the oldest request (AsyncGeneratorCompleteStep).
func (g *asyncGeneratorObject) completeStep(kind completionKind, v Value, done bool) {
	req := g.queue[0]
	g.queue[0] = asyncGenRequest{}
	g.queue = g.queue[1:]
	if kind == completionThrow {
		req.cap.reject(v)
	} else {
		req.cap.resolve(g.val.runtime.createIterResultObject(v, done))
	}
}

// yield hands v to the oldest request and goes on with the next one, or
// suspends (AsyncGeneratorYield).
func (g *asyncGeneratorObject) yield(v Value) agAction {
	g.completeStep(completionNormal, v, false)
	if len(g.queue) > 0 {
		req := g.queue[0]
		return g.resumeAtYield(req.kind, req.value)
	}
	g.state = asyncGenSuspendedYield
	return nil
}

// resumeAtYield resumes a generator suspended at a yield (or inside a
// yield*) with a request's completion; a return completion's value is
// awaited first (AsyncGeneratorUnwrapYieldResumption).
func (g *asyncGeneratorObject) resumeAtYield(kind completionKind, v Value) agAction {
	g.state = asyncGenExecuting
	if kind == completionReturn {
		return g.await(v, func(w Value) agAction {
			return g.received(completionReturn, w)
		}, func(e Value) agAction {
			return g.received(completionThrow, e)
		})
	}
	return g.received(kind, v)
}

func (g *asyncGeneratorObject) received(kind completionKind, v Value) agAction {
	if g.delegate != nil {
		return g.delegateStep(kind, v)
	}
	switch kind {
	case completionThrow:
		return g.throwInto(v)
	case completionReturn:
		return g.returnInto(v)
	default:
		return g.stepNext(v)
	}
}

// drainQueue settles the requests made of a completed generator
// (AsyncGeneratorDrainQueue).
func (g *asyncGeneratorObject) drainQueue() agAction {
	r := g.val.runtime
	for i := 0; len(g.queue) > 0; i++ {
		r.tick(i)
		req := g.queue[0]
		if req.kind == completionReturn {
			g.state = asyncGenAwaitingReturn
			return g.awaitReturn
		}
		v := req.value
		if req.kind == completionNormal {
			v = _undefined
		}
		g.completeStep(req.kind, v, true)
	}
	return nil
}

// awaitReturn settles a return request made before the body started or
// after it completed (AsyncGeneratorAwaitReturn).
func (g *asyncGeneratorObject) awaitReturn() agAction {
	r := g.val.runtime
	req := g.queue[0]
	var p *Promise
	if ex := r.vm.try(func() { p = r.resolveIntrinsic(req.value) }); ex != nil {
		g.state = asyncGenCompleted
		g.completeStep(completionThrow, ex.val, true)
		return g.drainQueue
	}
	g.await(p.val, func(v Value) agAction {
		g.state = asyncGenCompleted
		g.completeStep(completionNormal, v, true)
		return g.drainQueue
	}, func(e Value) agAction {
		g.state = asyncGenCompleted
		g.completeStep(completionThrow, e, true)
		return g.drainQueue
	})
	return nil
}

// enqueue adds a request; with start set it also starts on it
// (AsyncGeneratorEnqueue and the resumptions of next/return/throw).
func (g *asyncGeneratorObject) request(kind completionKind, v Value) Value {
	r := g.val.runtime
	cap := r.newPromiseCapability(r.getPromise())
	state := g.state
	switch kind {
	case completionNormal:
		if state == asyncGenCompleted {
			cap.resolve(r.createIterResultObject(_undefined, true))
			return cap.promise
		}
	case completionThrow:
		if state == asyncGenSuspendedStart {
			g.state = asyncGenCompleted
			state = asyncGenCompleted
		}
		if state == asyncGenCompleted {
			cap.reject(v)
			return cap.promise
		}
	}
	g.queue = append(g.queue, asyncGenRequest{kind: kind, value: v, cap: cap})
	switch state {
	case asyncGenSuspendedStart:
		if kind == completionReturn {
			g.state = asyncGenAwaitingReturn
			g.drive(g.awaitReturn)
		} else {
			g.drive(g.resumeBody(nil, nil))
		}
	case asyncGenSuspendedYield:
		g.drive(g.resumeAtYield(kind, v))
	case asyncGenCompleted:
		// Only a return request gets here.
		g.state = asyncGenAwaitingReturn
		g.drive(g.awaitReturn)
	}
	return cap.promise
}

// yield*: the steps of YieldExpression : yield * AssignmentExpression for
// an async generator (ECMA-262 15.5.5), on the inner iterator g.delegate.

func (g *asyncGeneratorObject) startDelegate(iterable Value) agAction {
	r := g.val.runtime
	var rec *iteratorRecord
	if ex := r.vm.try(func() { rec = r.getAsyncIterator(iterable) }); ex != nil {
		return g.throwEx(ex)
	}
	g.delegate = rec
	return g.delegateStep(completionNormal, _undefined)
}

// leaveDelegate ends the yield* with an exception thrown at it.
func (g *asyncGeneratorObject) leaveDelegate(ex *Exception) agAction {
	g.delegate = nil
	return g.throwEx(ex)
}

func (g *asyncGeneratorObject) leaveDelegateValue(v Value) agAction {
	g.delegate = nil
	return g.throwInto(v)
}

func (g *asyncGeneratorObject) delegateStep(kind completionKind, v Value) agAction {
	r := g.val.runtime
	d := g.delegate
	// Each step through a yield* makes a promise, its reactions and a
	// result, as a promise combinator's element does: no guest code is
	// metered for it, and a chain of n yield* makes n steps per value.
	r.alloc(promiseElementBytes)
	var res Value
	switch kind {
	case completionNormal:
		if ex := r.vm.try(func() { res = d.callNext(v) }); ex != nil {
			return g.leaveDelegate(ex)
		}
		return g.await(res, g.delegateResult, g.leaveDelegateValue)
	case completionThrow:
		var throw func(FunctionCall) Value
		if ex := r.vm.try(func() { throw = toMethod(d.iterator.self.getStr("throw", nil)) }); ex != nil {
			return g.leaveDelegate(ex)
		}
		if throw == nil {
			// Close the inner iterator, then fail: it cannot take a throw.
			g.delegate = nil
			return g.closeDelegate(d)
		}
		if ex := r.vm.try(func() { res = throw(FunctionCall{This: d.iterator, Arguments: []Value{v}}) }); ex != nil {
			return g.leaveDelegate(ex)
		}
		return g.await(res, g.delegateResult, g.leaveDelegateValue)
	default:
		var ret func(FunctionCall) Value
		if ex := r.vm.try(func() { ret = toMethod(d.iterator.self.getStr("return", nil)) }); ex != nil {
			return g.leaveDelegate(ex)
		}
		if ret == nil {
			g.delegate = nil
			return g.await(v, g.returnInto, g.throwInto)
		}
		if ex := r.vm.try(func() { res = ret(FunctionCall{This: d.iterator, Arguments: []Value{v}}) }); ex != nil {
			return g.leaveDelegate(ex)
		}
		return g.await(res, g.delegateReturnResult, g.leaveDelegateValue)
	}
}

// innerResult reads an inner iterator result: done, and the value.
func (g *asyncGeneratorObject) innerResult(res Value) (done bool, value Value, ex *Exception) {
	r := g.val.runtime
	ex = r.vm.try(func() {
		obj, ok := res.(*Object)
		if !ok {
			panic(r.NewTypeError("Iterator result %s is not an object", res.String()))
		}
		done = iteratorComplete(obj)
		value = iteratorValue(obj)
	})
	return
}

// delegateResult continues with the awaited result of the inner
// iterator's next or throw: the yield* ends with its value, or yields it.
func (g *asyncGeneratorObject) delegateResult(res Value) agAction {
	done, value, ex := g.innerResult(res)
	if ex != nil {
		return g.leaveDelegate(ex)
	}
	if done {
		g.delegate = nil
		return g.stepNext(value)
	}
	return g.yield(value)
}

// delegateReturnResult continues with the awaited result of the inner
// iterator's return: the generator returns its value (not awaited again),
// or yields it.
func (g *asyncGeneratorObject) delegateReturnResult(res Value) agAction {
	done, value, ex := g.innerResult(res)
	if ex != nil {
		return g.leaveDelegate(ex)
	}
	if done {
		g.delegate = nil
		return g.returnInto(value)
	}
	return g.yield(value)
}

// closeDelegate is AsyncIteratorClose(d, normal completion) followed by
// the TypeError of a yield* whose inner iterator has no throw method.
func (g *asyncGeneratorObject) closeDelegate(d *iteratorRecord) agAction {
	r := g.val.runtime
	fail := func(Value) agAction {
		return g.throwInto(r.NewTypeError("The iterator does not provide a 'throw' method"))
	}
	var ret func(FunctionCall) Value
	if ex := r.vm.try(func() { ret = toMethod(d.iterator.self.getStr("return", nil)) }); ex != nil {
		return g.throwEx(ex)
	}
	if ret == nil {
		return fail(nil)
	}
	var res Value
	if ex := r.vm.try(func() { res = ret(FunctionCall{This: d.iterator}) }); ex != nil {
		return g.throwEx(ex)
	}
	return g.await(res, func(v Value) agAction {
		if _, ok := v.(*Object); !ok {
			return g.throwInto(r.NewTypeError("Iterator result %s is not an object", v.String()))
		}
		return fail(nil)
	}, g.throwInto)
}

// AsyncGenerator.prototype methods.

func (r *Runtime) asyncGenRequest(call FunctionCall, kind completionKind, name string) Value {
	if o, ok := call.This.(*Object); ok {
		if g, ok := o.self.(*asyncGeneratorObject); ok {
			return g.request(kind, call.Argument(0))
		}
	}
	cap := r.newPromiseCapability(r.getPromise())
	cap.reject(r.NewTypeError("Method [AsyncGenerator].prototype.%s called on incompatible receiver %s", name, r.objectproto_toString(FunctionCall{This: call.This})))
	return cap.promise
}

func (r *Runtime) asyncGenProto_next(call FunctionCall) Value {
	return r.asyncGenRequest(call, completionNormal, "next")
}

func (r *Runtime) asyncGenProto_return(call FunctionCall) Value {
	return r.asyncGenRequest(call, completionReturn, "return")
}

func (r *Runtime) asyncGenProto_throw(call FunctionCall) Value {
	return r.asyncGenRequest(call, completionThrow, "throw")
}

// The intrinsics.

func (r *Runtime) getAsyncIteratorPrototype() *Object {
	o := r.global.AsyncIteratorPrototype
	if o == nil {
		defer r.makingBuiltins()() // mustard_retained.go
		o = &Object{runtime: r}
		r.global.AsyncIteratorPrototype = o
		b := newBaseObjectObj(o, r.global.ObjectPrototype, classObject)
		b._putSym(SymAsyncIterator, valueProp(r.newNativeFunc(r.returnThis, "[Symbol.asyncIterator]", 0), true, false, true))
	}
	return o
}

func (r *Runtime) getAsyncGeneratorPrototype() *Object {
	o := r.global.AsyncGeneratorPrototype
	if o == nil {
		defer r.makingBuiltins()() // mustard_retained.go
		o = &Object{runtime: r}
		r.global.AsyncGeneratorPrototype = o
		b := newBaseObjectObj(o, r.getAsyncIteratorPrototype(), classObject)
		b._putProp("constructor", r.getAsyncGeneratorFunctionPrototype(), false, false, true)
		b._putProp("next", r.newNativeFunc(r.asyncGenProto_next, "next", 1), true, false, true)
		b._putProp("return", r.newNativeFunc(r.asyncGenProto_return, "return", 1), true, false, true)
		b._putProp("throw", r.newNativeFunc(r.asyncGenProto_throw, "throw", 1), true, false, true)
		b._putSym(SymToStringTag, valueProp(asciiString(classAsyncGenerator), false, false, true))
	}
	return o
}

func (r *Runtime) getAsyncGeneratorFunctionPrototype() *Object {
	o := r.global.AsyncGeneratorFunctionPrototype
	if o == nil {
		defer r.makingBuiltins()() // mustard_retained.go
		o = &Object{runtime: r}
		r.global.AsyncGeneratorFunctionPrototype = o
		b := newBaseObjectObj(o, r.getFunctionPrototype(), classObject)
		b._putProp("prototype", r.getAsyncGeneratorPrototype(), false, false, true)
		r.stubbedConstructor(b, r.getAsyncGeneratorFunction(), false)
		b._putSym(SymToStringTag, valueProp(asciiString(classAsyncGeneratorFunction), false, false, true))
	}
	return o
}

func (r *Runtime) builtin_asyncGeneratorFunction(args []Value, proto *Object) *Object {
	return r.functionCtor(args, proto, true, true)
}

func (r *Runtime) getAsyncGeneratorFunction() *Object {
	o := r.global.AsyncGeneratorFunction
	if o == nil {
		defer r.makingBuiltins()() // mustard_retained.go
		o = &Object{runtime: r}
		r.global.AsyncGeneratorFunction = o
		o.self = r.newNativeFuncConstructObj(o, r.builtin_asyncGeneratorFunction, classAsyncGeneratorFunction, r.getAsyncGeneratorFunctionPrototype(), 1)
	}
	return o
}

// Async iterators.

// getAsyncIterator is GetIterator(obj, async): obj's Symbol.asyncIterator
// method, or else its Symbol.iterator one wrapped by
// CreateAsyncFromSyncIterator.
func (r *Runtime) getAsyncIterator(obj Value) *iteratorRecord {
	method := toMethod(r.getV(obj, SymAsyncIterator))
	if method == nil {
		syncMethod := toMethod(r.getV(obj, SymIterator))
		if syncMethod == nil {
			panic(r.NewTypeError("object is not async iterable"))
		}
		return r.createAsyncFromSyncIterator(r.getIterator(obj, syncMethod))
	}
	return r.iteratorRecordOf(r.toObject(method(FunctionCall{This: obj})))
}

// iteratorRecordOf is the iterator record of iter, as getIterator makes
// it: a next that is not callable fails when called.
func (r *Runtime) iteratorRecordOf(iter *Object) *iteratorRecord {
	var next func(FunctionCall) Value
	if obj, ok := iter.self.getStr("next", nil).(*Object); ok {
		if call, ok := obj.self.assertCallable(); ok {
			next = call
		}
	}
	return &iteratorRecord{iterator: iter, next: next}
}

// callNext calls the iterator's next method, with v unless v is nil.
func (ir *iteratorRecord) callNext(v Value) Value {
	if ir.next == nil {
		panic(ir.iterator.runtime.NewTypeError("iterator.next is missing or not a function"))
	}
	var args []Value
	if v != nil {
		args = []Value{v}
	}
	return ir.next(FunctionCall{This: ir.iterator, Arguments: args})
}

// asyncFromSyncIterator is the object CreateAsyncFromSyncIterator makes.
// Guest code never sees it: only for await and yield* call its methods.
type asyncFromSyncIterator struct {
	baseObject
	sync *iteratorRecord
}

func (r *Runtime) createAsyncFromSyncIterator(sync *iteratorRecord) *iteratorRecord {
	o := &Object{runtime: r}
	it := &asyncFromSyncIterator{sync: sync}
	it.class = classObject
	it.val = o
	it.extensible = true
	it.prototype = r.getAsyncFromSyncIteratorPrototype()
	o.self = it
	it.init()
	return r.iteratorRecordOf(o)
}

func (r *Runtime) getAsyncFromSyncIteratorPrototype() *Object {
	o := r.global.AsyncFromSyncIteratorPrototype
	if o == nil {
		defer r.makingBuiltins()() // mustard_retained.go
		o = &Object{runtime: r}
		r.global.AsyncFromSyncIteratorPrototype = o
		b := newBaseObjectObj(o, r.getAsyncIteratorPrototype(), classObject)
		b._putProp("next", r.newNativeFunc(r.asyncFromSyncIteratorProto_next, "next", 1), true, false, true)
		b._putProp("return", r.newNativeFunc(r.asyncFromSyncIteratorProto_return, "return", 1), true, false, true)
		b._putProp("throw", r.newNativeFunc(r.asyncFromSyncIteratorProto_throw, "throw", 1), true, false, true)
	}
	return o
}

func (r *Runtime) asyncFromSyncThis(call FunctionCall) *asyncFromSyncIterator {
	if o, ok := call.This.(*Object); ok {
		if it, ok := o.self.(*asyncFromSyncIterator); ok {
			return it
		}
	}
	panic(r.NewTypeError("not an async-from-sync iterator"))
}

// continuation is AsyncFromSyncIteratorContinuation: the promise of the
// sync result's value, repackaged as a result. As in V8 (and ECMAScript
// before 2025), a rejected value does not close the sync iterator.
func (r *Runtime) asyncFromSyncContinuation(result Value, cap *promiseCapability) Value {
	var done bool
	var wrapper *Promise
	ex := r.vm.try(func() {
		obj, ok := result.(*Object)
		if !ok {
			panic(r.NewTypeError("Iterator result %s is not an object", result.String()))
		}
		done = iteratorComplete(obj)
		wrapper = r.resolveIntrinsic(iteratorValue(obj))
	})
	if ex != nil {
		cap.reject(ex.val)
		return cap.promise
	}
	wrapper.addReactions(&promiseReaction{
		capability: cap,
		typ:        promiseReactionFulfill,
		handler: &jobCallback{callback: func(call FunctionCall) Value {
			return r.createIterResultObject(call.Argument(0), done)
		}},
	}, &promiseReaction{
		capability: cap,
		typ:        promiseReactionReject,
	})
	return cap.promise
}

func (r *Runtime) asyncFromSyncIteratorProto_next(call FunctionCall) Value {
	it := r.asyncFromSyncThis(call)
	cap := r.newPromiseCapability(r.getPromise())
	var result Value
	if ex := r.vm.try(func() {
		if len(call.Arguments) > 0 {
			result = it.sync.callNext(call.Arguments[0])
		} else {
			result = it.sync.callNext(nil)
		}
	}); ex != nil {
		cap.reject(ex.val)
		return cap.promise
	}
	return r.asyncFromSyncContinuation(result, cap)
}

func (r *Runtime) asyncFromSyncIteratorProto_return(call FunctionCall) Value {
	it := r.asyncFromSyncThis(call)
	cap := r.newPromiseCapability(r.getPromise())
	var result Value
	var missing bool
	if ex := r.vm.try(func() {
		ret := toMethod(it.sync.iterator.self.getStr("return", nil))
		if ret == nil {
			missing = true
			return
		}
		result = ret(FunctionCall{This: it.sync.iterator, Arguments: call.Arguments})
		if _, ok := result.(*Object); !ok {
			panic(r.NewTypeError("Iterator result %s is not an object", result.String()))
		}
	}); ex != nil {
		cap.reject(ex.val)
		return cap.promise
	}
	if missing {
		cap.resolve(r.createIterResultObject(call.Argument(0), true))
		return cap.promise
	}
	return r.asyncFromSyncContinuation(result, cap)
}

func (r *Runtime) asyncFromSyncIteratorProto_throw(call FunctionCall) Value {
	it := r.asyncFromSyncThis(call)
	cap := r.newPromiseCapability(r.getPromise())
	var result Value
	var missing bool
	if ex := r.vm.try(func() {
		throw := toMethod(it.sync.iterator.self.getStr("throw", nil))
		if throw == nil {
			missing = true
			return
		}
		result = throw(FunctionCall{This: it.sync.iterator, Arguments: call.Arguments})
		if _, ok := result.(*Object); !ok {
			panic(r.NewTypeError("Iterator result %s is not an object", result.String()))
		}
	}); ex != nil {
		cap.reject(ex.val)
		return cap.promise
	}
	if missing {
		// ECMAScript 2024: reject with the value; 2025 closes the sync
		// iterator and rejects with a TypeError. V8 (Node 20) does the
		// former.
		cap.reject(call.Argument(0))
		return cap.promise
	}
	return r.asyncFromSyncContinuation(result, cap)
}
