'use strict';

// MustardExecutor runs durable jobs, as the reference's does: each job's
// progress is saved to a store at every suspension, so a job survives the
// host process. In addition, each capability's answer is saved before it
// is sent, and a step whose sidecar process dies is resumed from the
// saved snapshot on another process with the saved answer: a capability
// is never called twice for one suspension because a process died.

const { createHmac, randomUUID } = require('node:crypto');
const { setTimeout: delay } = require('node:timers/promises');
const { types } = require('node:util');

const { MustardError, MustardSerializationError, MustardRuntimeError } = require('./errors.js');
const { Mustard, Progress, _internal } = require('./mustard.js');

const { normalizeSnapshotKey, normalizeSealKey, normalizeHostCalls, getPool, toPayload, settle, RESUME_WIRE } = _internal;
const { CallScope } = require('./callcontext.js');

const { TERMINAL_STATES, RUNNABLE_STATES, TRANSITIONS } = require('./jobstates.js');
const POLL_INTERVAL_MS = 25;
const JOB_KEY_LABEL = 'mustard-executor-job-snapshot-key';

function assertPlainObject(value, label) {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || types.isProxy(value)) {
    throw new TypeError(`${label} must be a plain object`);
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) {
    throw new TypeError(`${label} must be a plain object`);
  }
}

function cloneProgress(progress) {
  const out = structuredClone({ ...progress, snapshot: undefined, program: undefined });
  out.snapshot = Buffer.from(progress.snapshot);
  if (progress.program) out.program = Buffer.from(progress.program);
  return out;
}

// InMemoryMustardExecutorStore keeps jobs in memory (the reference's
// store). A store of your own must keep every field of the progress it is
// given, `answer` included.
class InMemoryMustardExecutorStore {
  constructor() {
    this._jobs = new Map();
    this._progress = new Map();
    this._claims = new Map();
    this._cancellationRequests = new Set();
  }

  async enqueue(record) {
    if (this._jobs.has(record.jobId)) return { jobId: record.jobId, inserted: false };
    this._jobs.set(record.jobId, structuredClone(record));
    return { jobId: record.jobId, inserted: true };
  }

  async get(jobId) {
    const record = this._jobs.get(jobId);
    return record ? structuredClone(record) : null;
  }

  async claimRunnable(limit, workerId) {
    const claimed = [];
    for (const [jobId, record] of this._jobs) {
      if (claimed.length >= limit) break;
      if (!RUNNABLE_STATES.has(record.state) || this._claims.has(jobId)) continue;
      this._claims.set(jobId, workerId);
      claimed.push(jobId);
    }
    return claimed;
  }

  async releaseClaim(jobId, workerId) {
    if (this._claims.get(jobId) === workerId) this._claims.delete(jobId);
  }

  async update(jobId, patch) {
    const current = this._jobs.get(jobId);
    if (!current) throw new Error(`unknown job id ${jobId}`);
    const next = patch.state ?? current.state;
    if (next !== current.state && !TRANSITIONS.has(`${current.state}:${next}`)) {
      throw new Error(`invalid job transition from ${current.state} to ${next}`);
    }
    this._jobs.set(jobId, { ...structuredClone({ ...current, ...patch }), state: next, updatedAt: Date.now() });
  }

  async saveProgress(jobId, progress) {
    const record = this._jobs.get(jobId);
    if (!record) throw new Error(`unknown job id ${jobId}`);
    if (TERMINAL_STATES.has(record.state)) throw new Error(`cannot save progress for terminal job ${jobId}`);
    this._progress.set(jobId, cloneProgress(progress));
  }

  async loadProgress(jobId) {
    const progress = this._progress.get(jobId);
    return progress ? cloneProgress(progress) : null;
  }

  async deleteProgress(jobId) {
    this._progress.delete(jobId);
  }

  async requestCancel(jobId) {
    const record = this._jobs.get(jobId);
    if (!record || TERMINAL_STATES.has(record.state)) return 'ignored';
    if (record.state === 'queued') {
      this._jobs.set(jobId, {
        ...record,
        state: 'cancelled',
        capability: undefined,
        args: undefined,
        result: undefined,
        error: { name: 'MustardLimitError', message: 'execution cancelled' },
        updatedAt: Date.now(),
      });
      this._progress.delete(jobId);
      return 'cancelled';
    }
    this._cancellationRequests.add(jobId);
    return 'requested';
  }

  async consumeCancel(jobId) {
    return this._cancellationRequests.delete(jobId);
  }
}

function sanitizeFailure(error) {
  if (error instanceof MustardError) {
    const out = { name: error.name, message: error.message };
    if (typeof error.code === 'string') out.code = error.code;
    return out;
  }
  if (error && typeof error === 'object') {
    const out = {
      name: typeof error.name === 'string' && error.name.length > 0 ? error.name : 'Error',
      message: typeof error.message === 'string' && error.message.length > 0 ? error.message : String(error),
    };
    if (typeof error.code === 'string') out.code = error.code;
    return out;
  }
  return { name: 'Error', message: String(error) };
}

function isCancellation(error) {
  return error instanceof MustardError && error.kind === 'Limit' && error.message.includes('execution cancelled');
}

class MustardExecutor {
  constructor(options) {
    if (options === null || typeof options !== 'object') throw new TypeError('MustardExecutor options must be an object');
    const { program, capabilities, snapshotKey, store, limits = {}, sealKey } = options;
    if (!(program instanceof Mustard)) throw new TypeError('MustardExecutor options.program must be a Mustard instance');
    assertPlainObject(capabilities, 'MustardExecutor options.capabilities');
    if (store === undefined || store === null || typeof store !== 'object') {
      throw new TypeError('MustardExecutor options.store must be a MustardExecutorStore');
    }
    for (const method of ['enqueue', 'get', 'claimRunnable', 'releaseClaim', 'update', 'saveProgress', 'loadProgress', 'deleteProgress', 'requestCancel', 'consumeCancel']) {
      if (typeof store[method] !== 'function') throw new TypeError(`MustardExecutor options.store is missing ${method}()`);
    }
    const maxConcurrentCalls = options.maxConcurrentCalls ?? 16;
    if (!Number.isInteger(maxConcurrentCalls) || maxConcurrentCalls <= 0) {
      throw new TypeError('MustardExecutor options.maxConcurrentCalls must be a positive integer');
    }
    this._program = program;
    this._capabilities = capabilities;
    this._snapshotKey = normalizeSnapshotKey(snapshotKey, 'MustardExecutor options.snapshotKey');
    this._sealKey = sealKey;
    normalizeSealKey(sealKey, 'MustardExecutor options.sealKey');
    this._hostCalls = normalizeHostCalls(options.hostCalls, 'MustardExecutor options.hostCalls');
    this._maxConcurrentCalls = maxConcurrentCalls;
    this._store = store;
    this._limits = { ...limits };
    this._pool = getPool(options, 'MustardExecutor options') || undefined;
  }

  async enqueue(input, options = {}) {
    assertPlainObject(input, 'MustardExecutor.enqueue() input');
    if (options === null || typeof options !== 'object') throw new TypeError('MustardExecutor.enqueue() options must be an object');
    const now = Date.now();
    const jobId = options.jobId ?? randomUUID();
    const result = await this._store.enqueue({
      jobId,
      state: 'queued',
      input: structuredClone(input),
      attempts: 0,
      createdAt: now,
      updatedAt: now,
    });
    return result.jobId;
  }

  async get(jobId) {
    const record = await this._store.get(jobId);
    // A job's outstanding calls are listed in batch mode only: the record
    // of a one-call job has the reference's keys and no others.
    if (record !== null && record.calls === undefined) delete record.calls;
    return record;
  }

  async cancel(jobId) {
    await this._store.requestCancel(jobId);
  }

  // runWorker claims and runs jobs until its signal aborts (or, with
  // drain, until none is left). An abort also aborts the signal of the
  // capability calls running: an answer that comes in after it is not
  // stored, and the job is left for the next worker, which calls again.
  async runWorker(options = {}) {
    if (options === null || typeof options !== 'object') throw new TypeError('MustardExecutor.runWorker() options must be an object');
    const workerId = randomUUID();
    const maxConcurrentJobs = options.maxConcurrentJobs ?? 1;
    if (!Number.isInteger(maxConcurrentJobs) || maxConcurrentJobs <= 0) {
      throw new TypeError('MustardExecutor.runWorker() maxConcurrentJobs must be a positive integer');
    }
    const { signal } = options;
    const drain = options.drain === true;
    const inFlight = new Set();
    while (!signal?.aborted) {
      const available = maxConcurrentJobs - inFlight.size;
      let claimed = [];
      if (available > 0) {
        claimed = await this._store.claimRunnable(available, workerId, Date.now());
        for (const jobId of claimed) {
          const task = this._processClaimedJob(jobId, workerId, signal).finally(() => inFlight.delete(task));
          inFlight.add(task);
        }
      }
      if (drain && inFlight.size === 0 && claimed.length === 0) return;
      if (inFlight.size === 0) {
        try {
          await delay(POLL_INTERVAL_MS, undefined, { signal });
        } catch (error) {
          if (error?.name !== 'AbortError') throw error;
        }
        continue;
      }
      if (claimed.length === 0 || inFlight.size >= maxConcurrentJobs) await Promise.race(inFlight);
    }
    await Promise.allSettled(inFlight);
  }

  _policy(jobId) {
    const snapshotKey = createHmac('sha256', this._snapshotKey).update(JOB_KEY_LABEL, 'utf8').update('\0', 'utf8').update(String(jobId), 'utf8').digest();
    const policy = { capabilities: this._capabilities, limits: this._limits, snapshotKey, hostCalls: this._hostCalls };
    if (this._sealKey !== undefined) policy.sealKey = this._sealKey;
    return policy;
  }

  async _processClaimedJob(jobId, workerId, stop) {
    const scope = new CallScope(stop);
    try {
      const record = await this._store.get(jobId);
      if (record === null || TERMINAL_STATES.has(record.state)) return;
      if (record.state === 'queued') {
        await this._start(jobId, record, scope);
      } else if (record.state === 'waiting') {
        await this._drive(jobId, null, 0, scope);
      } else if (record.state === 'running') {
        // Claimed while running: the worker that ran it died (a store
        // that outlives the host gives such jobs again once their claim
        // is stale). It continues from its saved progress, with the
        // answer saved there if there is one; with none saved it had
        // not reached its first capability call, and starts again.
        const dumped = await this._store.loadProgress(jobId);
        if (dumped === null) {
          await this._start(jobId, record, scope);
        } else {
          await this._store.update(jobId, { attempts: record.attempts + 1 });
          await this._drive(jobId, null, 0, scope);
        }
      }
    } finally {
      scope.end();
      await this._store.releaseClaim(jobId, workerId);
    }
  }

  async _start(jobId, record, scope) {
    await this._store.update(jobId, {
      state: 'running',
      attempts: record.attempts + 1,
      capability: undefined,
      args: undefined,
      calls: undefined,
      result: undefined,
      error: undefined,
    });
    let step;
    try {
      step = await this._program.startAsync({ inputs: record.input, ...this._policy(jobId), pool: this._pool });
    } catch (error) {
      await this._finish(jobId, 'failed', error);
      return;
    }
    await this._drive(jobId, step, 1, scope);
  }

  // _drive saves each suspension and answers it, until the job ends. With
  // step null the job is waiting: its stored progress is resumed. callId
  // is the id of step's call in one-call mode (the count of calls the
  // execution made so far, plus one).
  async _drive(jobId, step, callId, scope) {
    for (;;) {
      if (step !== null && !(step instanceof Progress)) {
        await this._store.update(jobId, { state: 'completed', capability: undefined, args: undefined, calls: undefined, result: step, error: undefined });
        await this._store.deleteProgress(jobId);
        return;
      }
      if (step !== null) {
        const dumped = step.dump();
        const patch = { state: 'waiting', capability: step.capability, args: structuredClone(step.args) };
        if (step.calls) {
          patch.calls = step.calls.map((c) => ({ callId: c.callId, capability: c.capability, args: structuredClone(c.args) }));
        } else {
          dumped.callId = callId;
        }
        await this._store.saveProgress(jobId, dumped);
        await this._store.update(jobId, patch);
      }
      const next = await this._answer(jobId, scope);
      if (next === undefined) return;
      [step, callId] = next;
    }
  }

  // _answer resumes a waiting job from its stored progress: with the
  // stored answers if there are, else the capabilities' (each stored
  // before it is sent). It returns [the next step, its call id], or
  // undefined once the job ended here or was left for another worker.
  async _answer(jobId, scope) {
    const dumped = await this._store.loadProgress(jobId);
    if (dumped === null) {
      await this._finish(jobId, 'failed', new MustardSerializationError(`missing stored progress for job ${jobId}`));
      return undefined;
    }
    let progress;
    try {
      // The store's claim, not the process, decides who resumes a job: a
      // stored dump may be loaded again here after an earlier worker of
      // this process stopped before resuming it.
      progress = Progress.load(dumped, { ...this._policy(jobId), multiUse: true });
    } catch (error) {
      await this._finish(jobId, 'failed', error);
      return undefined;
    }
    const callId = Number.isInteger(dumped.callId) ? dumped.callId : 1;
    let payload;
    try {
      payload = progress.calls ? await this._callAll(jobId, dumped, progress, scope) : await this._callOne(jobId, dumped, progress, callId, scope);
    } catch (error) {
      await this._finish(jobId, 'failed', error);
      return undefined;
    }
    if (payload === undefined) return undefined; // stopped: left for another worker
    await this._store.update(jobId, { state: 'running', capability: undefined, args: undefined, calls: undefined });
    try {
      return [await progress[RESUME_WIRE](payload, { pool: this._pool }), callId + 1];
    } catch (error) {
      await this._finish(jobId, isCancellation(error) ? 'cancelled' : 'failed', error);
      return undefined;
    }
  }

  // _callOne answers a one-call suspension: the stored answer, else the
  // capability's, stored before it is sent.
  async _callOne(jobId, dumped, progress, callId, scope) {
    if (await this._store.consumeCancel(jobId)) return { type: 'cancelled' };
    if (dumped.answer !== undefined) return dumped.answer;
    const handler = this._capabilities[progress.capability];
    if (typeof handler !== 'function') throw new MustardRuntimeError(`Missing capability: ${progress.capability}`);
    const outcome = await settle(handler, progress.args, undefined, scope.context(callId, { jobId }));
    if (scope.parent?.aborted) return undefined;
    let payload = toPayload(outcome, progress.capability);
    if (await this._store.consumeCancel(jobId)) payload = { type: 'cancelled' };
    await this._store.saveProgress(jobId, { ...dumped, answer: payload });
    return payload;
  }

  // _callAll answers a batch-mode suspension: every outstanding call
  // without a stored answer runs at once (at most maxConcurrentCalls),
  // each answer stored as it comes in; once all are in, the execution is
  // resumed with all of them.
  async _callAll(jobId, dumped, progress, scope) {
    const cancelled = () => [{ call_id: progress.calls[0].callId, payload: { type: 'cancelled' } }];
    if (await this._store.consumeCancel(jobId)) return cancelled();
    const answers = { ...(dumped.answers ?? {}) };
    const pending = progress.calls.filter((c) => answers[c.callId] === undefined);
    for (const c of pending) {
      if (typeof this._capabilities[c.capability] !== 'function') throw new MustardRuntimeError(`Missing capability: ${c.capability}`);
    }
    let saving = Promise.resolve();
    let next = 0;
    const lane = async () => {
      while (next < pending.length) {
        const c = pending[next];
        next += 1;
        const outcome = await settle(this._capabilities[c.capability], c.args, undefined, scope.context(c.callId, { jobId }));
        if (scope.parent?.aborted) return;
        answers[c.callId] = toPayload(outcome, c.capability);
        const snapshot = { ...dumped, answers: { ...answers } };
        saving = saving.then(() => this._store.saveProgress(jobId, snapshot));
        await saving;
      }
    };
    const lanes = [];
    for (let i = 0; i < Math.min(this._maxConcurrentCalls, pending.length); i += 1) lanes.push(lane());
    await Promise.all(lanes);
    await saving;
    if (scope.parent?.aborted) return undefined;
    if (await this._store.consumeCancel(jobId)) return cancelled();
    return progress.calls.map((c) => ({ call_id: c.callId, payload: answers[c.callId] }));
  }

  async _finish(jobId, state, error) {
    await this._store.update(jobId, { state, capability: undefined, args: undefined, calls: undefined, result: undefined, error: sanitizeFailure(error) });
    await this._store.deleteProgress(jobId);
  }
}

module.exports = { MustardExecutor, InMemoryMustardExecutorStore };

const { FileMustardExecutorStore } = require('./filestore.js');

module.exports.FileMustardExecutorStore = FileMustardExecutorStore;
