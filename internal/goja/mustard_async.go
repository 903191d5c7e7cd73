package goja

// An embedder whose Go functions behave differently in asynchronous code
// (mustard-sidecar's host calls: synchronous in plain top-level code, a
// promise everywhere else) needs to know where a call is made, and to
// settle the promises it handed out without running guest code at once.

// MustardInAsync reports whether the code running now is asynchronous: an
// async function's body (before its first await, and any plain function it
// calls), a Promise executor, or a promise job (a then/catch/finally
// callback, an await continuation, a thenable job). Plain code of a script,
// and functions it calls, are not.
func (r *Runtime) MustardInAsync() bool { return r.async > 0 }

// MustardNewPromise returns a pending promise of the intrinsic Promise and
// the object guest code sees.
func (r *Runtime) MustardNewPromise() (*Promise, *Object) {
	p := r.newPromise(r.getPromisePrototype())
	return p, p.val
}

// MustardSettle resolves p with v (rejected false: as its resolve function
// would, following a thenable) or rejects it with v, queueing the
// reactions without running them: MustardRunJobs, or the end of the
// running script, runs them. Several settlements thus run their reactions
// in the order they were settled, as one batch. The error is an
// exception, or an interrupt, from a guest getter of v's `then`.
func (r *Runtime) MustardSettle(p *Promise, v Value, rejected bool) (err error) {
	defer func() {
		if x := recover(); x != nil {
			if ex := asUncatchableException(x); ex != nil {
				err = ex
				if len(r.vm.callStack) == 0 {
					r.leaveAbrupt()
				}
			} else {
				panic(x)
			}
		}
	}()
	ex := r.vm.try(func() {
		already := false
		if rejected {
			p.rejectOnce(&already, v)
		} else {
			p.resolveOnce(&already, v)
		}
	})
	if ex != nil {
		return ex
	}
	return nil
}

// MustardRunJobs runs the promise jobs queued while no script was running,
// until none is left (jobs a job queues run too). The error is an
// interrupt; exceptions inside jobs reject their promises as usual.
func (r *Runtime) MustardRunJobs() error {
	return r.runWrapped(func() {})
}

// isPromiseObject is IsPromise. Upstream's promiseResolve skipped it, so
// `await {constructor: Promise}` handed a plain object to code that
// expects a promise (a Go panic), and Promise.resolve returned it.
func isPromiseObject(o *Object) bool {
	_, ok := o.self.(*Promise)
	return ok
}
