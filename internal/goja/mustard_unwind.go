package goja

// recovering runs f and handles what it throws as try and runTryInner
// did, except for a value no try frame here catches (ex is nil: an
// uncatchable error, such as a limit's): that is returned for the caller
// to throw on, rather than thrown from inside the deferred call. A panic
// raised in a deferred call starts with every frame of the panic it
// recovered still on the stack, so an error thrown through n nested
// native calls (a callback of a callback of ...) walked the stack n
// times: quadratic in the depth, and not guest work the instruction
// budget counts. Thrown after the recovery, each level walks only its
// own frames.
func (vm *vm) recovering(f func()) (ex *Exception, uncaught any) {
	defer func() {
		if x := recover(); x != nil {
			ex, uncaught = vm.handleThrowCaught(x)
		}
	}()
	f()
	return nil, nil
}

// handleThrowCaught is handleThrow returning, instead of throwing, a value
// no try frame catches.
func (vm *vm) handleThrowCaught(arg any) (ex *Exception, uncaught any) {
	defer func() {
		if ex == nil && uncaught == nil {
			// handleThrow threw it on.
			uncaught = recover()
		}
	}()
	return vm.handleThrow(arg), nil
}
