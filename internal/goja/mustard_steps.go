package goja

import (
	"sync/atomic"

	js_ast "github.com/mustard-sidecar/mustard-sidecar/internal/goja/ast"
)

// Instruction counting (a mustard-sidecar addition; see PATCHES.md). An
// embedder that bounds the work of hostile code needs a unit that means
// work: the interpreter counts every instruction it executes, as the
// reference implementation's VM does, into a counter the embedder owns.
// Nothing is inserted into the guest's source, so no function's text, no
// name and no stack position changes; code compiled by MustardCompile also
// reports each object it creates with a literal or `new`, and the job loop
// reports each promise job before it runs. Without a StepMeter the
// interpreter runs exactly as upstream.

// A StepMeter is told when the instruction count passes its due point and
// of the allocations and promise jobs it charges for. Its methods run on
// the goroutine running the script; any of them may call Runtime.Interrupt,
// which then takes effect before the next instruction (or job) runs.
type StepMeter interface {
	// StepsDue is called before the instruction that takes the count past
	// the due point (see SetStepMeter); the embedder looks at its budgets
	// and moves the due point on.
	StepsDue()
	// Allocation is called where code compiled by MustardCompile evaluates
	// an object literal, an array literal or a new expression, before the
	// object is created.
	Allocation()
	// Job is called before each promise job runs.
	Job()
}

// stepCounter is the vm's view of an installed StepMeter.
type stepCounter struct {
	meter StepMeter
	steps *uint64
	due   *atomic.Uint64
}

// SetStepMeter makes the interpreter count every instruction it executes
// into *steps, calling m.StepsDue before an instruction that takes *steps
// past *due. Both belong to the embedder, which may change *due from any
// goroutine (zero asks for a StepsDue at the next instruction) and *steps
// from the script's goroutine (work of its own it charges in the same
// unit). A nil m turns counting off.
func (r *Runtime) SetStepMeter(m StepMeter, steps *uint64, due *atomic.Uint64) {
	if m == nil {
		r.vm.stepc = stepCounter{}
		return
	}
	r.vm.stepc = stepCounter{meter: m, steps: steps, due: due}
}

// runCounted is run with a StepMeter installed.
func (vm *vm) runCounted() {
	m, steps, due := vm.stepc.meter, vm.stepc.steps, vm.stepc.due
	for {
		if atomic.LoadUint32(&vm.interrupted) != 0 {
			vm.interruptNow()
		}
		pc := vm.pc
		if pc < 0 || pc >= len(vm.prg.code) {
			return
		}
		*steps++
		if *steps > due.Load() {
			m.StepsDue()
			if atomic.LoadUint32(&vm.interrupted) != 0 {
				vm.interruptNow()
			}
		}
		vm.prg.code[pc].exec(vm)
	}
}

// interruptNow raises the pending interrupt, as run does when it sees one.
func (vm *vm) interruptNow() {
	vm.interruptLock.Lock()
	v := &InterruptedError{
		iface: vm.interruptVal,
	}
	v.stack = vm.captureStack(nil, 0)
	vm.interruptLock.Unlock()
	panic(v)
}

// chargeJob reports a promise job about to run and raises an interrupt
// the StepMeter asked for, so the job does not run.
func (r *Runtime) chargeJob() {
	if m := r.vm.stepc.meter; m != nil {
		m.Job()
		r.vm.checkInterrupt()
	}
}

// meterAllocation reports an object about to be created by a literal or a
// new expression. It is not an instruction of the guest's: it is not
// counted.
type meterAllocation struct{}

func (meterAllocation) exec(vm *vm) {
	if c := &vm.stepc; c.meter != nil {
		*c.steps--
		c.meter.Allocation()
	}
	vm.pc++
}

// MustardCompileOptions are what MustardCompile adds to CompileAST.
type MustardCompileOptions struct {
	// Metered compiles a report to the StepMeter (Allocation) before each
	// object literal, array literal and new expression creates its object.
	Metered bool
	// Completion, if set, is a function literal in the program whose body
	// is compiled as a script's: it returns the completion value of its
	// statements (the value a script would end with) instead of
	// undefined. An embedder runs a script with top-level await as the
	// body of an async arrow function this way.
	Completion *js_ast.ArrowFunctionLiteral
}

// MustardCompile compiles like CompileAST, with the options' additions.
func MustardCompile(prg *js_ast.Program, strict bool, o MustardCompileOptions) (p *Program, err error) {
	c := newCompiler()
	c.mustard = o
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
	p = c.p
	return
}

// emitMeterAllocation compiles an allocation report, in metered code.
func (c *compiler) emitMeterAllocation() {
	if c.mustard.Metered {
		c.emit(meterAllocation{})
	}
}

// completionBody reports whether the function being compiled is the one
// whose body returns its completion value.
func (e *compiledFunctionLiteral) completionBody() bool {
	return e.arrow != nil && e.arrow == e.c.mustard.Completion
}
