'use strict';

// The context a capability is called with, as `this`: { callId, signal }
// (and jobId in the executor). The call signature stays the reference's,
// `(...args)`: a capability written as a method or a function reads the
// context from `this`; an arrow function ignores it.
//
// callId numbers the execution's capability calls from 1, the same on
// every attempt: in batch mode it is the sidecar's call id (guest call
// order), in one-call mode the call's place in the order calls were
// answered. signal aborts when the execution's run ends (its own signal
// aborted, it failed, or another call's error stopped it); it is made on
// first use, so a capability that never reads it costs nothing.

class CallScope {
  constructor(parent) {
    this.parent = parent ?? null;
    this.controller = null;
    this.ended = false;
    this.onParentAbort = null;
  }

  get signal() {
    if (this.controller === null) {
      const controller = new AbortController();
      this.controller = controller;
      if (this.ended) controller.abort();
      else if (this.parent !== null) {
        if (this.parent.aborted) controller.abort(this.parent.reason);
        else {
          this.onParentAbort = () => controller.abort(this.parent.reason);
          this.parent.addEventListener('abort', this.onParentAbort, { once: true });
        }
      }
    }
    return this.controller.signal;
  }

  context(callId, extra = undefined) {
    return new CallContext(this, callId, extra);
  }

  // end aborts the signal handed out, if any.
  end() {
    if (this.ended) return;
    this.ended = true;
    if (this.onParentAbort !== null) this.parent.removeEventListener('abort', this.onParentAbort);
    if (this.controller !== null && !this.controller.signal.aborted) this.controller.abort();
  }
}

class CallContext {
  #scope;

  constructor(scope, callId, extra) {
    this.#scope = scope;
    this.callId = callId;
    if (extra !== undefined) Object.assign(this, extra);
  }

  get signal() {
    return this.#scope.signal;
  }
}

module.exports = { CallScope, CallContext };
