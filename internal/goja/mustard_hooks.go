package goja

import (
	"errors"
	"sync"
	"sync/atomic"

	js_ast "github.com/mustard-sidecar/mustard-sidecar/internal/goja/ast"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/unistring"
)

// Hook calls (a mustard-sidecar addition; see PATCHES.md). An embedder that
// inserts calls to its own Go functions into compiled code (a meter called
// at every function entry and loop iteration) pays goja's whole call
// machinery for each: a lookup of the name through every scope, a call
// frame, the argument slice. A hook call is such a call compiled to run the
// Go function directly: no lookup, no frame. It behaves as the ordinary
// call it replaces, including the call-depth limit (checked as if a frame
// were pushed) and falls back to the ordinary call whenever it cannot be
// sure the name means the hooked function.

// A Hook names a function that compiled code may call as a hook call.
type Hook struct {
	// Name is the global const binding (see Runtime.SetHooks) that holds
	// the function.
	Name string
	// Args is the argument count: only a call with exactly this many
	// arguments (and no spread) is compiled as a hook call.
	Args int
}

// CompileASTWithHooks compiles like CompileAST, and compiles each call
// name(args...) of a hook (matching argument count, no spread, no optional
// chaining) whose name no enclosing scope binds, and that no with statement
// or sloppy direct eval can rebind, as a hook call. A hook call runs the Go
// function directly when the Runtime has it set (Runtime.SetHooks), and is
// the ordinary call otherwise, with the same results, errors and stack
// positions.
func CompileASTWithHooks(prg *js_ast.Program, strict bool, hooks ...Hook) (p *Program, err error) {
	c := newCompiler()
	c.hooks = &hookCompiler{args: map[unistring.String]hookSpec{}}
	for _, h := range hooks {
		// eval and arguments are bound by the compiler itself, not in
		// any scope's names: they are never hook calls.
		if h.Name != "eval" && h.Name != "arguments" {
			c.hooks.args[unistring.NewFromString(h.Name)] = hookSpec{hookKeyOf(h.Name), h.Args}
		}
	}

	// As compileAST.
	defer func() {
		if x := recover(); x != nil {
			p = nil
			switch x1 := x.(type) {
			case *CompilerSyntaxError:
				err = x1
			default:
				panic(x)
			}
		}
	}()

	c.compile(prg, strict, true, nil)
	c.hooks.settle()
	p = c.p
	return
}

// hookCompiler is the compiler's hook state.
type hookCompiler struct {
	args  map[unistring.String]hookSpec
	sites []hookSite
}

type hookSpec struct {
	key  *hookKey
	args int
}

// A hookKey stands for a hook's name: compiled hook calls find their hook
// in a Runtime by comparing keys, one pointer, not names.
type hookKey struct {
	name unistring.String
}

// hookKeys interns the keys of every name used as a hook (a few names per
// embedder), so that programs and runtimes agree on them.
var hookKeys sync.Map // string → *hookKey

func hookKeyOf(name string) *hookKey {
	if k, ok := hookKeys.Load(name); ok {
		return k.(*hookKey)
	}
	k, _ := hookKeys.LoadOrStore(name, &hookKey{name: unistring.NewFromString(name)})
	return k.(*hookKey)
}

type hookSite struct {
	callee *hookCallee
	scope  *scope
}

// settle turns back into ordinary calls the hook calls that a sloppy direct
// eval compiled after them (later in the text) may have rebound: such an
// eval marks its function scope dynamic only when it is compiled.
func (h *hookCompiler) settle() {
	for _, s := range h.sites {
		if !staticGlobal(s.scope, s.callee.key.name) {
			s.callee.dynamic = true
		}
	}
}

// staticGlobal reports whether name, looked up from s, can only be a global
// binding: no scope up to the global one binds it, and none is dynamic (a
// with statement, or a function with a sloppy direct eval), which could
// give it a binding at run time. It only reads the scopes: a lookup would
// move bindings to the stash.
func staticGlobal(s *scope, name unistring.String) bool {
	for ; s.outer != nil; s = s.outer {
		if _, bound := s.boundNames[name]; bound || s.dynamic {
			return false
		}
	}
	return true
}

// emitHookCall compiles e as a hook call if it is one, and reports whether
// it did. The instructions are those of the ordinary call, in the same
// places with the same source positions: the callee (hookCallee, as
// loadDynamicCallee), the arguments, the call (hookCall, as call) and the
// pop of an unused value.
func (e *compiledCallExpr) emitHookCall(putOnStack bool) bool {
	c := e.c
	if c.hooks == nil || e.isVariadic {
		return false
	}
	id, ok := e.callee.(*compiledIdentifierExpr)
	if !ok {
		return false
	}
	h, ok := c.hooks.args[id.name]
	if !ok || h.args != len(e.args) || !staticGlobal(c.scope, id.name) {
		return false
	}
	callee := &hookCallee{key: h.key, args: len(e.args), void: !putOnStack}
	c.hooks.sites = append(c.hooks.sites, hookSite{callee: callee, scope: c.scope})
	id.addSrcMap()
	c.emit(callee)
	for _, a := range e.args {
		a.emitGetter(true)
	}
	e.addSrcMap()
	c.emit(hookCall{key: h.key, args: uint32(len(e.args))})
	if !putOnStack {
		c.emit(pop)
	}
	return true
}

// hookCallee pushes the callee of a hook call, as loadDynamicCallee does:
// this (undefined) and the function. With the hook set, the name needs no
// lookup; a call with no arguments then runs at once, doing the work of the
// hookCall (and pop) after it.
type hookCallee struct {
	key     *hookKey
	args    int
	void    bool // the call's value is popped
	dynamic bool // the name may be rebound at run time: an ordinary call
}

func (h *hookCallee) exec(vm *vm) {
	var k *hook
	if !h.dynamic {
		k = vm.r.hook(h.key)
	}
	if k == nil {
		loadDynamicCallee(h.key.name).exec(vm)
		return
	}
	// Past the call-depth limit, hookCall raises the error, at its own
	// position, as the call would.
	if h.args > 0 || len(vm.callStack) > vm.maxCallStackSize {
		vm.push(_undefined)
		vm.push(k.obj)
		vm.pc++
		return
	}
	ret := k.fn(FunctionCall{This: _undefined})
	// Past the pop of an unused value too, unless the hook interrupted:
	// the interpreter must see the interrupt at the pop, as it would after
	// an ordinary call.
	if h.void && atomic.LoadUint32(&vm.interrupted) == 0 {
		vm.pc += 3
		return
	}
	if ret == nil {
		ret = _undefined
	}
	vm.push(ret)
	vm.pc += 2 // past the hookCall
}

// hookCall is call(args) that runs a hook's function directly when the
// callee is the hooked function, however it was found.
type hookCall struct {
	key  *hookKey
	args uint32
}

func (h hookCall) exec(vm *vm) {
	n := int(h.args)
	k := vm.r.hook(h.key)
	if k == nil || vm.stack[vm.sp-n-1] != Value(k.obj) {
		call(h.args).exec(vm)
		return
	}
	if len(vm.callStack) > vm.maxCallStackSize {
		// As pushCtx: the frame this call would push is one too many.
		ex := &StackOverflowError{}
		ex.stack = vm.captureStack(nil, 0)
		panic(ex)
	}
	ret := k.fn(FunctionCall{This: vm.stack[vm.sp-n-2], Arguments: vm.stack[vm.sp-n : vm.sp]})
	if ret == nil {
		ret = _undefined
	}
	vm.stack[vm.sp-n-2] = ret
	vm.sp -= n + 1
	vm.pc++
}

// hook is a hooked function: the value of a global const and its Go code.
type hook struct {
	key *hookKey
	obj *Object
	fn  func(FunctionCall) Value
}

// hook returns the hook set for name, or nil. A Runtime has a few hooks at
// most: a scan is cheaper than a map.
func (r *Runtime) hook(key *hookKey) *hook {
	for i := range r.hooks {
		if r.hooks[i].key == key {
			return &r.hooks[i]
		}
	}
	return nil
}

// SetHooks makes hook calls of the named functions (see
// CompileASTWithHooks) run them directly, replacing any hooks set before;
// no names clears them. Each name must be a global const binding, already
// initialised, holding a Go function (ToValue of a func(FunctionCall)
// Value): being const and global, it cannot change or be shadowed by any
// script run later. The function then runs without a call frame of its
// own, so it must not depend on one (a stack it captures does not show it);
// its This is undefined.
func (r *Runtime) SetHooks(names ...string) error {
	hooks := make([]hook, 0, len(names))
	s := &r.global.stash
	for _, name := range names {
		key := hookKeyOf(name)
		idx, exists := s.names[key.name]
		if !exists || idx&maskVar != 0 || idx&maskConst == 0 {
			return errors.New("goja: hook " + name + " is not a global const")
		}
		obj, _ := s.values[idx&^maskTyp].(*Object)
		if obj == nil {
			return errors.New("goja: hook " + name + " is not initialised to a function")
		}
		f, ok := obj.self.(*nativeFuncObject)
		if !ok || f.f == nil {
			return errors.New("goja: hook " + name + " is not a Go function")
		}
		hooks = append(hooks, hook{key: key, obj: obj, fn: f.f})
	}
	r.hooks = hooks
	return nil
}
