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
