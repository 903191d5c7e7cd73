package goja

// MustardForgetTransients drops the references the interpreter keeps to
// values the guest can no longer reach, so that a collection tells live
// memory from garbage (a mustard-sidecar addition; see PATCHES.md):
//
//   - the stack slots above its top: an instruction that pops a value (a
//     finished call's frame, a consumed operand) leaves it in its slot
//     until a later push overwrites it; nothing reads a slot above the top
//     before writing it;
//   - the String object that property reads on a primitive string go
//     through (`s.length`, `s[0]`, `s.slice`): it holds the last string
//     read that way, a 3 MB concatenation read once included, until the
//     next such read. It is reset as a property read on the empty string
//     would, which guest code can cause between any two of its uses.
func (r *Runtime) MustardForgetTransients() {
	vm := r.vm
	if vm != nil {
		s := vm.stack[:cap(vm.stack)]
		clear(s[min(max(vm.sp, 0), len(s)):])
	}
	if ss := r.stringSingleton; ss != nil {
		ss.value = stringEmpty
		ss.setLength()
	}
}

// trimStackSlots and trimCallFrames are the room MustardTrimStacks always
// leaves: what a program that never recursed deeply grows its stacks to.
const (
	trimStackSlots = 1024
	trimCallFrames = 64
)

// MustardTrimStacks gives back the interpreter's stack room beyond what is
// in use, when it is over four times that: its value stack and its call
// stack keep the capacity the deepest call so far grew them to, and a
// suspended execution that once recursed deeply (through callbacks, each
// level a few hundred bytes of frames and slots) would keep it while it
// waits. The sidecar calls it when an execution suspends. Only the
// capacity changes: the slots in use and the frames are copied, the slots
// above the top are dead (MustardForgetTransients), and a later push grows
// the stacks again as a first one did. A native call in progress keeps its
// arguments, which point into the old stack, as when a push grows it; no
// instruction holds a pointer into either stack across a call.
func (r *Runtime) MustardTrimStacks() {
	vm := r.vm
	if vm == nil {
		return
	}
	if sp := max(vm.sp, 0); cap(vm.stack) > trimStackSlots && cap(vm.stack) > 4*sp {
		s := make(valueStack, sp, max(2*sp, trimStackSlots))
		copy(s, vm.stack[:sp])
		vm.stack = s
	}
	// The try stack is left: an instruction may hold a pointer to its top
	// frame across guest code it calls (handleThrow closing iterators).
	if n := len(vm.callStack); cap(vm.callStack) > trimCallFrames && cap(vm.callStack) > 4*n {
		c := make([]context, n, max(2*n, trimCallFrames))
		copy(c, vm.callStack)
		vm.callStack = c
	}
}
