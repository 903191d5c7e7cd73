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

const { TERMINAL_STATES, JOB_STATES, TRANSITIONS, DEFAULT_LEASE_MS, MustardLeaseLostError, isLeaseLost, nextToken } = require('./jobstates.js');
const { transient, isTransient, normalizeRetry, shouldRetry, backoffMs } = require('./retry.js');
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

// statusOf is a job's status as a listing reports it: its state, the time
// of its last step (updatedAt) and, while an executor holds its lease,
// the holder and when the lease ends unrenewed.
function statusOf(record, lease, now) {
  const out = { jobId: record.jobId, state: record.state, attempts: record.attempts, createdAt: record.createdAt, updatedAt: record.updatedAt };
  if (record.capability !== undefined) out.capability = record.capability;
  if (record.error !== undefined) out.error = structuredClone(record.error);
  if (lease && lease.expiresAt > now) {
    out.owner = lease.owner;
    out.leaseExpiresAt = lease.expiresAt;
  }
  return out;
}

function wantedStates(options, label) {
  if (options === undefined) return null;
  if (options === null || typeof options !== 'object') throw new TypeError(`${label} options must be an object`);
  let states = options.states ?? (options.state !== undefined ? [options.state] : undefined);
  if (states === undefined) return null;
  if (!Array.isArray(states)) throw new TypeError(`${label} options.states must be an array of job states`);
  for (const s of states) if (!JOB_STATES.has(s)) throw new TypeError(`${label}: unknown job state ${String(s)}`);
  return new Set(states);
}

// InMemoryMustardExecutorStore keeps jobs in memory (the reference's
// store). A store of your own must keep every field of the progress it is
// given, `answer` included.
//
// Leases: a job is held by one worker at a time (claimRunnable takes its
// lease, acquireLease takes or renews it), until the lease is released
// or expires; writes that carry the fencing token of a lease that is no
// longer the job's fail with MustardLeaseLostError. options.now is the
// clock (Date.now), options.leaseMs a claim's lease before the executor
// renews it.
class InMemoryMustardExecutorStore {
  constructor(options = {}) {
    if (options === null || typeof options !== 'object') throw new TypeError('InMemoryMustardExecutorStore options must be an object');
    const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    if (!Number.isInteger(leaseMs) || leaseMs <= 0) throw new TypeError('InMemoryMustardExecutorStore options.leaseMs must be a positive integer');
    if (options.now !== undefined && typeof options.now !== 'function') throw new TypeError('InMemoryMustardExecutorStore options.now must be a function');
    this._clock = options.now !== undefined;
    this._now = options.now ?? Date.now;
    this._leaseMs = leaseMs;
    this._jobs = new Map();
    this._progress = new Map();
    this._leases = new Map(); // jobId -> { owner, token, expiresAt }
    this._fences = new Map(); // jobId -> the last fence a write carried
    this._token = 0;
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

  _active(jobId, now) {
    const lease = this._leases.get(jobId);
    return lease !== undefined && lease.expiresAt > now ? lease : null;
  }

  _take(jobId, owner, ttlMs, now) {
    const held = this._active(jobId, now);
    if (held !== null && held.owner !== owner) return null;
    this._token = nextToken(this._token, this._leases.get(jobId)?.token ?? 0, this._fences.get(jobId) ?? 0);
    const lease = { jobId, owner, token: this._token, expiresAt: now + ttlMs };
    this._leases.set(jobId, lease);
    return { ...lease };
  }

  // claimRunnable takes the lease of up to limit jobs that are not
  // finished and whose lease is free: queued, waiting, and running ones
  // whose worker stopped holding them.
  async claimRunnable(limit, workerId, at = undefined) {
    // A store given a clock keeps to it; else the caller's time counts.
    const now = this._clock || at === undefined ? this._now() : at;
    const claimed = [];
    for (const [jobId, record] of this._jobs) {
      if (claimed.length >= limit) break;
      if (TERMINAL_STATES.has(record.state) || this._active(jobId, now) !== null) continue;
      if (this._take(jobId, workerId, this._leaseMs, now) !== null) claimed.push(jobId);
    }
    return claimed;
  }

  async releaseClaim(jobId, workerId) {
    if (this._leases.get(jobId)?.owner === workerId) this._leases.delete(jobId);
  }

  // acquireLease takes the lease of jobId for owner (a new fencing token),
  // or returns null while another owner's lease is active.
  async acquireLease(jobId, owner, ttlMs) {
    return this._take(jobId, owner, ttlMs, this._now());
  }

  // renewLease extends lease; it fails with MustardLeaseLostError if
  // lease is no longer the job's.
  async renewLease(jobId, lease, ttlMs) {
    const current = this._leases.get(jobId);
    if (current === undefined || current.token !== lease.token) throw new MustardLeaseLostError(jobId);
    current.expiresAt = this._now() + ttlMs;
    return { ...current };
  }

  async releaseLease(jobId, lease) {
    if (this._leases.get(jobId)?.token === lease.token) this._leases.delete(jobId);
  }

  // _fence checks a write's fencing token: the job's lease's, or with no
  // lease held, at least the last token a write carried. A write with no
  // fence is not checked (a store used without leases).
  _fence(jobId, fence) {
    if (fence === undefined || fence === null) return;
    const lease = this._leases.get(jobId);
    const ok = lease !== undefined ? lease.token === fence : (this._fences.get(jobId) ?? 0) <= fence;
    if (!ok) throw new MustardLeaseLostError(jobId);
    this._fences.set(jobId, fence);
  }

  async update(jobId, patch, fence) {
    const current = this._jobs.get(jobId);
    if (!current) throw new Error(`unknown job id ${jobId}`);
    this._fence(jobId, fence);
    const next = patch.state ?? current.state;
    if (next !== current.state && !TRANSITIONS.has(`${current.state}:${next}`)) {
      throw new Error(`invalid job transition from ${current.state} to ${next}`);
    }
    this._jobs.set(jobId, { ...structuredClone({ ...current, ...patch }), state: next, updatedAt: this._now() });
  }

  async saveProgress(jobId, progress, fence) {
    const record = this._jobs.get(jobId);
    if (!record) throw new Error(`unknown job id ${jobId}`);
    if (TERMINAL_STATES.has(record.state)) throw new Error(`cannot save progress for terminal job ${jobId}`);
    this._fence(jobId, fence);
    this._progress.set(jobId, cloneProgress(progress));
  }

  async loadProgress(jobId) {
    const progress = this._progress.get(jobId);
    return progress ? cloneProgress(progress) : null;
  }

  async deleteProgress(jobId, fence) {
    this._fence(jobId, fence);
    this._progress.delete(jobId);
  }

  // listJobs lists the jobs in one of options.states (every job if none
  // are given), ordered by id, with their last step time.
  async listJobs(options) {
    const states = wantedStates(options, 'InMemoryMustardExecutorStore.listJobs()');
    const now = this._now();
    const out = [];
    for (const [jobId, record] of this._jobs) {
      if (states === null || states.has(record.state)) out.push(statusOf(record, this._leases.get(jobId), now));
    }
    return out.sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0));
  }

  async jobStatus(jobId) {
    const record = this._jobs.get(jobId);
    return record ? statusOf(record, this._leases.get(jobId), this._now()) : null;
  }

  // deleteJob deletes a job and its progress; false if it is unknown or
  // an executor holds its lease.
  async deleteJob(jobId) {
    if (!this._jobs.has(jobId) || this._active(jobId, this._now()) !== null) return false;
    this._jobs.delete(jobId);
    this._progress.delete(jobId);
    this._leases.delete(jobId);
    this._cancellationRequests.delete(jobId);
    return true;
  }

  async requestCancel(jobId) {
    const record = this._jobs.get(jobId);
    if (!record || TERMINAL_STATES.has(record.state)) return 'ignored';
    if (record.state === 'queued' && this._active(jobId, this._now()) === null) {
      this._jobs.set(jobId, {
        ...record,
        state: 'cancelled',
        capability: undefined,
        args: undefined,
        result: undefined,
        error: { name: 'MustardLimitError', message: 'execution cancelled' },
        updatedAt: this._now(),
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
    const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    if (!Number.isInteger(leaseMs) || leaseMs < 3) throw new TypeError('MustardExecutor options.leaseMs must be an integer of at least 3');
    this._leaseMs = leaseMs;
    // A store with leases gives each job one executor at a time; one
    // without (the older interface) relies on its claims alone, which
    // hold within one process.
    this._leases = ['acquireLease', 'renewLease', 'releaseLease'].every((m) => typeof store[m] === 'function');
    this._retry = normalizeRetry(options.retry, 'MustardExecutor options.retry');
    this._retryPerCapability = Object.create(null);
    if (options.retryPerCapability !== undefined) {
      assertPlainObject(options.retryPerCapability, 'MustardExecutor options.retryPerCapability');
      for (const [name, policy] of Object.entries(options.retryPerCapability)) {
        this._retryPerCapability[name] = normalizeRetry(policy, `MustardExecutor options.retryPerCapability.${name}`);
      }
    }
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

  // list lists the store's jobs, in options.states (or options.state) if
  // given, each with its state, the time of its last step (updatedAt)
  // and, while an executor holds it, its lease's owner and expiry. It
  // needs a store with listJobs().
  async list(options = undefined) {
    if (typeof this._store.listJobs !== 'function') throw new TypeError('MustardExecutor.list() needs a store with listJobs()');
    wantedStates(options, 'MustardExecutor.list()');
    return this._store.listJobs(options);
  }

  // status reads one job's status without running it; null if the store
  // does not know the job.
  async status(jobId) {
    if (typeof this._store.jobStatus === 'function') return this._store.jobStatus(jobId);
    const record = await this._store.get(jobId);
    return record === null ? null : statusOf(record, null, Date.now());
  }

  // delete deletes a finished job (completed, failed or cancelled) from
  // the store; false if the job is unknown or not finished.
  async delete(jobId) {
    if (typeof this._store.deleteJob !== 'function') throw new TypeError('MustardExecutor.delete() needs a store with deleteJob()');
    const record = await this._store.get(jobId);
    if (record === null || !TERMINAL_STATES.has(record.state)) return false;
    return this._store.deleteJob(jobId);
  }

  // prune deletes the finished jobs whose last step is older than the
  // retention of their state (milliseconds; a state without one is kept)
  // and returns their ids. Unfinished jobs are always kept.
  async prune(retention) {
    if (retention === null || typeof retention !== 'object') throw new TypeError('MustardExecutor.prune() retention must be an object');
    const keep = {};
    for (const state of TERMINAL_STATES) {
      const ms = retention[state];
      if (ms === undefined) continue;
      if (typeof ms !== 'number' || !(ms >= 0)) throw new TypeError(`MustardExecutor.prune() retention.${state} must be a non-negative number of milliseconds`);
      keep[state] = ms;
    }
    const now = retention.now ?? Date.now();
    const gone = [];
    for (const job of await this.list({ states: Object.keys(keep) })) {
      if (!Number.isFinite(job.updatedAt) || now - job.updatedAt < keep[job.state]) continue;
      if (await this._store.deleteJob(job.jobId)) gone.push(job.jobId);
    }
    return gone;
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

  // _processClaimedJob runs a claimed job. With a store that has leases,
  // it first takes the job's lease (or leaves the job, held by another
  // executor), renews it every third of leaseMs while it works, and every
  // write carries its fencing token; a lost lease stops the job's work
  // here as an abort of the worker does.
  async _processClaimedJob(jobId, workerId, stop) {
    let lease = null;
    if (this._leases) {
      lease = await this._store.acquireLease(jobId, workerId, this._leaseMs);
      if (lease === null) {
        await this._store.releaseClaim(jobId, workerId);
        return;
      }
    }
    const halt = new AbortController();
    const onStop = () => halt.abort(stop.reason);
    if (stop) {
      if (stop.aborted) halt.abort(stop.reason);
      else stop.addEventListener('abort', onStop, { once: true });
    }
    const scope = new CallScope(halt.signal);
    let renewing = Promise.resolve();
    let timer = null;
    let lost = false;
    if (lease !== null) {
      scope.fence = lease.token;
      timer = setInterval(() => {
        renewing = renewing.then(async () => {
          // Renewed until the job's work here ends (a stopped worker
          // finishes what it is doing first), or the lease is lost.
          if (lost) return;
          try {
            lease = await this._store.renewLease(jobId, lease, this._leaseMs);
          } catch (error) {
            if (isLeaseLost(error)) {
              lost = true;
              halt.abort(error);
            }
            // Another failure: the next renewal tries again.
          }
        });
      }, Math.floor(this._leaseMs / 3));
    }
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
          await this._store.update(jobId, { attempts: record.attempts + 1 }, scope.fence);
          await this._drive(jobId, null, 0, scope);
        }
      }
    } catch (error) {
      if (!isLeaseLost(error)) throw error;
      // The job is another executor's now: it continues it.
      lost = true;
    } finally {
      if (timer !== null) clearInterval(timer);
      if (stop) stop.removeEventListener('abort', onStop);
      scope.end();
      await renewing;
      if (lease !== null && !lost) {
        await this._store.releaseLease(jobId, lease).catch(() => {});
      }
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
    }, scope.fence);
    let step;
    try {
      step = await this._program.startAsync({ inputs: record.input, ...this._policy(jobId), pool: this._pool });
    } catch (error) {
      await this._finish(jobId, 'failed', error, scope);
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
        await this._store.update(jobId, { state: 'completed', capability: undefined, args: undefined, calls: undefined, result: step, error: undefined }, scope.fence);
        await this._store.deleteProgress(jobId, scope.fence);
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
        await this._store.saveProgress(jobId, dumped, scope.fence);
        await this._store.update(jobId, patch, scope.fence);
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
      await this._finish(jobId, 'failed', new MustardSerializationError(`missing stored progress for job ${jobId}`), scope);
      return undefined;
    }
    let progress;
    try {
      // The store's claim, not the process, decides who resumes a job: a
      // stored dump may be loaded again here after an earlier worker of
      // this process stopped before resuming it.
      progress = Progress.load(dumped, { ...this._policy(jobId), multiUse: true });
    } catch (error) {
      await this._finish(jobId, 'failed', error, scope);
      return undefined;
    }
    const callId = Number.isInteger(dumped.callId) ? dumped.callId : 1;
    let payload;
    try {
      payload = progress.calls ? await this._callAll(jobId, dumped, progress, scope) : await this._callOne(jobId, dumped, progress, callId, scope);
    } catch (error) {
      await this._finish(jobId, 'failed', error, scope);
      return undefined;
    }
    if (payload === undefined) return undefined; // stopped: left for another worker
    await this._store.update(jobId, { state: 'running', capability: undefined, args: undefined, calls: undefined }, scope.fence);
    try {
      return [await progress[RESUME_WIRE](payload, { pool: this._pool }), callId + 1];
    } catch (error) {
      await this._finish(jobId, isCancellation(error) ? 'cancelled' : 'failed', error, scope);
      return undefined;
    }
  }

  // _callOne answers a one-call suspension: the stored answer, else the
  // capability's, stored before it is sent.
  async _callOne(jobId, dumped, progress, callId, scope) {
    if (await this._store.consumeCancel(jobId)) return { type: 'cancelled' };
    if (dumped.answer !== undefined) return dumped.answer;
    if (typeof this._capabilities[progress.capability] !== 'function') throw new MustardRuntimeError(`Missing capability: ${progress.capability}`);
    const outcome = await this._call(jobId, progress.capability, progress.args, callId, scope);
    if (scope.parent?.aborted) return undefined;
    let payload = toPayload(outcome, progress.capability);
    if (await this._store.consumeCancel(jobId)) payload = { type: 'cancelled' };
    await this._store.saveProgress(jobId, { ...dumped, answer: payload }, scope.fence);
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
        const outcome = await this._call(jobId, c.capability, c.args, c.callId, scope);
        if (scope.parent?.aborted) return;
        answers[c.callId] = toPayload(outcome, c.capability);
        const snapshot = { ...dumped, answers: { ...answers } };
        saving = saving.then(() => this._store.saveProgress(jobId, snapshot, scope.fence));
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

  // _call runs one capability call, with the retries of its policy: each
  // try with the same call id, this.attempt counting them. It returns the
  // last try's outcome (an error one goes to the guest).
  async _call(jobId, capability, args, callId, scope) {
    const policy = this._retryFor(capability);
    for (let attempt = 1; ; attempt += 1) {
      const outcome = await settle(this._capabilities[capability], args, undefined, scope.context(callId, { jobId, attempt }));
      if (outcome.type !== 'error' || scope.parent?.aborted || !shouldRetry(policy, attempt, outcome.error)) return outcome;
      try {
        await delay(backoffMs(policy, attempt), undefined, scope.parent ? { signal: scope.parent } : undefined);
      } catch (error) {
        if (error?.name !== 'AbortError') throw error;
        return outcome;
      }
    }
  }

  _retryFor(capability) {
    return Object.hasOwn(this._retryPerCapability, capability) ? this._retryPerCapability[capability] : this._retry;
  }

  // _finish ends a job. A store error that says the lease was lost is
  // thrown on: the job is another executor's now.
  async _finish(jobId, state, error, scope) {
    if (isLeaseLost(error)) throw error;
    await this._store.update(jobId, { state, capability: undefined, args: undefined, calls: undefined, result: undefined, error: sanitizeFailure(error) }, scope.fence);
    await this._store.deleteProgress(jobId, scope.fence);
  }
}

module.exports = { MustardExecutor, InMemoryMustardExecutorStore, MustardLeaseLostError, transient, isTransient };

const { FileMustardExecutorStore } = require('./filestore.js');

module.exports.FileMustardExecutorStore = FileMustardExecutorStore;
