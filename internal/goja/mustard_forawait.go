package goja

import (
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/ast"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/unistring"
)

// The compiler's side of async iteration (a mustard-sidecar addition to
// goja; see PATCHES.md and mustard_asyncgen.go): for await loops, and the
// awaits an async generator's yield and return perform.
//
// for await (x of src) body compiles to
//
//	      <src>; asyncIterate                 GetIterator(src, async) onto the iterator stack
//	next: asyncIterNext; await; asyncIterStep(end)   Await(next()); done: pop it, go to end
//	      asyncIterTry(handler)               a try frame around the binding and the body
//	      <x = value>; <body>
//	      asyncIterLeaveTry; jump next
//	handler:                                  an exception (or an async generator's return
//	      asyncIterClose{handler}; await;     completion) left the body: AsyncIteratorClose,
//	      asyncIterCloseCheck{handler}        then go on with it
//	      asyncIterCloseLeave
//	break: asyncIterClose; await; asyncIterCloseCheck    break, and any jump out of the loop
//	end:
//
// A jump out of the body (break, continue to an outer loop, return) pops
// the try frame and closes the iterator in place, as a sync for-of's
// enumPopClose does; return awaits the close before leaving. Errors of
// next(), of the await of its result and of reading done and value leave
// the loop without closing, as the specification says. The iterator is in
// the iterator stack's aiter, which restoreStacks never closes: only this
// code closes it, because closing awaits.

// blockAsyncIterBody (compiler.go) is the block of a for await loop's
// binding and body: leaving it pops the loop's try frame.

// mustardInAsyncGenerator reports whether the code being compiled is the
// body of an async generator (not of a function nested in it).
func (c *compiler) mustardInAsyncGenerator() bool {
	s := c.scope.nearestFunction()
	return s != nil && s.asyncGenerator
}

// mustardAwaitInAsyncGenerator emits the await that yield and return
// perform on their operand in an async generator.
func (c *compiler) mustardAwaitInAsyncGenerator() {
	if c.mustardInAsyncGenerator() {
		c.emit(await)
	}
}

// emitLoopEnumClose closes the iterator of an enumerating loop left by a
// jump out of it.
func (c *compiler) emitLoopEnumClose(b *block) {
	if b.asyncIter {
		c.emitAsyncIterClose(false)
		return
	}
	c.emit(enumPopClose)
}

// emitAsyncIterClose emits AsyncIteratorClose of the innermost for await
// loop's iterator: call its return method, if any, and await the result.
func (c *compiler) emitAsyncIterClose(handler bool) {
	c.emit(asyncIterClose{skip: 3, handler: handler}, await, asyncIterCloseCheck{handler: handler})
}

func (c *compiler) compileForAwaitOf(into ast.ForInto, source ast.Expression, body ast.Statement, needResult bool, label unistring.String) {
	c.block = &block{
		typ:        blockLoopEnum,
		outer:      c.block,
		label:      label,
		needResult: needResult,
		asyncIter:  true,
	}
	// The head's lexical bindings are in their TDZ while src is evaluated,
	// exactly as in compileLabeledForInOfStatement.
	enterPos := -1
	if forDecl, ok := into.(*ast.ForDeclaration); ok {
		c.block = &block{
			typ:        blockScope,
			outer:      c.block,
			needResult: false,
		}
		c.newBlockScope()
		enterPos = len(c.p.code)
		c.emit(jump(1))
		c.createLexicalBinding(forDecl.Target, forDecl.IsConst)
	}
	c.compileExpression(source).emitGetter(true)
	if enterPos != -1 {
		s := c.scope
		used := len(c.block.breaks) > 0 || s.isDynamic()
		if !used {
			for _, b := range s.bindings {
				if b.useCount() > 0 {
					used = true
					break
				}
			}
		}
		if used {
			for _, b := range s.bindings {
				b.moveToStash()
			}
			enter := &enterBlock{}
			c.p.code[enterPos] = enter
			c.leaveScopeBlock(enter)
		} else {
			c.block = c.block.outer
		}
		c.popScope()
	}
	c.emit(asyncIterate)
	if needResult {
		c.emit(clearResult)
	}
	start := len(c.p.code)
	c.block.cont = start
	c.emit(asyncIterNext, await)
	stepPos := len(c.p.code)
	c.emit(nil)
	tryPos := len(c.p.code)
	c.emit(nil)
	c.block = &block{
		typ:   blockAsyncIterBody,
		outer: c.block,
	}
	enterIterBlock := c.compileForInto(into, needResult)
	if needResult {
		c.emit(clearResult)
	}
	c.compileStatement(body, needResult)
	if enterIterBlock != nil {
		c.leaveScopeBlock(enterIterBlock)
		c.popScope()
	}
	c.block = c.block.outer
	c.emit(asyncIterLeaveTry)
	c.emit(jump(start - len(c.p.code)))
	c.p.code[tryPos] = asyncIterTry(len(c.p.code) - tryPos)
	c.emitAsyncIterClose(true)
	c.emit(asyncIterCloseLeave{})
	c.leaveBlock() // break lands here
	c.emitAsyncIterClose(false)
	c.p.code[stepPos] = asyncIterStep(len(c.p.code) - stepPos)
}

// The instructions.

type _asyncIterate struct{}

var asyncIterate _asyncIterate

func (_asyncIterate) exec(vm *vm) {
	rec := vm.r.getAsyncIterator(vm.stack[vm.sp-1])
	vm.iterStack = append(vm.iterStack, iterStackItem{aiter: rec})
	vm.sp--
	vm.pc++
}

type _asyncIterNext struct{}

var asyncIterNext _asyncIterNext

func (_asyncIterNext) exec(vm *vm) {
	rec := vm.iterStack[len(vm.iterStack)-1].aiter
	vm.push(rec.callNext(nil))
	vm.pc++
}

// asyncIterStep reads the awaited result of next(): when done it pops the
// iterator and jumps, otherwise it keeps the value for the binding.
type asyncIterStep int32

func (j asyncIterStep) exec(vm *vm) {
	res := vm.r.toObject(vm.stack[vm.sp-1])
	l := len(vm.iterStack) - 1
	if iteratorComplete(res) {
		vm.iterStack[l] = iterStackItem{}
		vm.iterStack = vm.iterStack[:l]
		vm.sp--
		vm.pc += int(j)
		return
	}
	vm.iterStack[l].val = iteratorValue(res)
	vm.sp--
	vm.pc++
}

// asyncIterTry pushes the try frame whose finally position is the
// loop's handler.
type asyncIterTry int32

func (j asyncIterTry) exec(vm *vm) {
	vm.pushTryFrame(-1, int32(vm.pc)+int32(j))
	vm.pc++
}

type _asyncIterLeaveTry struct{}

var asyncIterLeaveTry _asyncIterLeaveTry

func (_asyncIterLeaveTry) exec(vm *vm) {
	vm.popTryFrame()
	vm.pc++
}

// asyncIterClose pops the loop's iterator and calls its return method,
// leaving the result on the stack for the await; without one it skips the
// await and the check. In the handler for an exception, the close cannot
// change the outcome: errors of the call are ignored, and so is a
// rejection of the await, which goes to asyncIterCloseLeave.
type asyncIterClose struct {
	skip    int32
	handler bool
}

func (c asyncIterClose) exec(vm *vm) {
	l := len(vm.iterStack) - 1
	rec := vm.iterStack[l].aiter
	vm.iterStack[l] = iterStackItem{}
	vm.iterStack = vm.iterStack[:l]
	if c.handler {
		// The loop's try frame stays until asyncIterCloseLeave; it no
		// longer covers the iterator.
		vm.tryStack[len(vm.tryStack)-1].iterLen = uint32(l)
	}
	if c.handler && !isReturnCompletion(vm.tryStack[len(vm.tryStack)-1].exception) {
		var res Value
		called := false
		vm.try(func() {
			if ret := toMethod(rec.iterator.self.getStr("return", nil)); ret != nil {
				res = ret(FunctionCall{This: rec.iterator})
				called = true
			}
		})
		if !called {
			vm.pc += int(c.skip)
			return
		}
		vm.push(res)
		vm.tryStack[len(vm.tryStack)-1].catchPos = int32(vm.pc) + c.skip
		vm.pc++
		return
	}
	ret := toMethod(rec.iterator.self.getStr("return", nil))
	if ret == nil {
		vm.pc += int(c.skip)
		return
	}
	vm.push(ret(FunctionCall{This: rec.iterator}))
	vm.pc++
}

// asyncIterCloseCheck drops the awaited result of return(), which must be
// an object unless an exception is leaving the loop.
type asyncIterCloseCheck struct {
	handler bool
}

func (c asyncIterCloseCheck) exec(vm *vm) {
	v := vm.pop()
	if c.handler && !isReturnCompletion(vm.tryStack[len(vm.tryStack)-1].exception) {
		vm.pc++
		return
	}
	if _, ok := v.(*Object); !ok {
		panic(vm.r.NewTypeError("Iterator result %s is not an object", v.String()))
	}
	vm.pc++
}

// asyncIterCloseLeave ends the handler: the exception (or return
// completion) that left the body goes on.
type asyncIterCloseLeave struct{}

func (asyncIterCloseLeave) exec(vm *vm) {
	tf := &vm.tryStack[len(vm.tryStack)-1]
	ex := tf.exception
	vm.sp = int(tf.sp)
	vm.popTryFrame()
	vm.throw(ex)
}

// The function-making instructions of async generators.

type newAsyncGeneratorFunc struct {
	newFunc
}

func (n *newAsyncGeneratorFunc) exec(vm *vm) {
	obj := vm.r.newAsyncGeneratorFunc(n.name, n.length, n.strict)
	obj.prg = n.prg
	obj.stash = vm.stash
	obj.privEnv = vm.privEnv
	obj.src = n.source
	vm.push(obj.val)
	vm.pc++
}

type newAsyncGeneratorMethod struct {
	newMethod
}

func (n *newAsyncGeneratorMethod) exec(vm *vm) {
	obj := vm.r.newAsyncGeneratorMethod(n.name, n.length, n.strict)
	n._exec(vm, &obj.methodFuncObject)
}
