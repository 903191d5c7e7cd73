'use strict';

// FileMustardExecutorStore keeps the executor's jobs in a directory, so
// that they survive the host process: a job record and its saved
// progress are files, each written whole and atomically (a temporary
// file, fsync, rename over the old one, fsync of the directory), so a
// crash at any point (SIGKILL, power loss) leaves the old file or the new
// one, never a mix.
//
// Leases: a job is held by one executor at a time, across the processes
// (and machines) sharing the directory, through its lease file: created
// with its whole content only if there is none (a synced temporary file
// hard-linked to the name, which fails if the name exists: an exclusive
// create that is never seen half-written), renewed by an atomic rename
// over it, removed on release. It holds the owner (workerId), a fencing
// token (new and greater at every acquisition), its expiry, and the
// holder's host and pid. A lease is taken over once it is stale:
// expired (its holder stopped renewing it), or at once on the same machine when the process
// holding it is gone (a SIGKILL, a crash). Such a job is picked up again
// whatever its state, `running` included, and the executor continues it
// from its saved progress. Every write of the executor carries its
// lease's token and is refused (MustardLeaseLostError) when the lease
// file holds another's, or, with no lease file, when the record was
// last written under a greater token; the record keeps that token.
//
//   <dir>/jobs/<name>.json       the job record
//   <dir>/progress/<name>.json   the saved progress (bytes in base64)
//   <dir>/claims/<name>.json     the job's lease (the worker holding it)
//   <dir>/cancel/<name>          a cancellation request
//
// <name> is the job id in base64url.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { TERMINAL_STATES, JOB_STATES, TRANSITIONS, DEFAULT_LEASE_MS, MustardLeaseLostError, nextToken } = require('./jobstates.js');
// running: a job whose worker died while it ran (its lease is stale).
const CLAIMABLE_STATES = new Set(['queued', 'waiting', 'running']);
const MAX_ID_BYTES = 180;

function nameOf(jobId) {
  if (typeof jobId !== 'string' || jobId.length === 0) throw new TypeError('a job id must be a non-empty string');
  const bytes = Buffer.from(jobId, 'utf8');
  if (bytes.length > MAX_ID_BYTES) throw new TypeError(`a job id of the file store must be at most ${MAX_ID_BYTES} bytes`);
  return bytes.toString('base64url');
}

function idOf(name) {
  return Buffer.from(name, 'base64url').toString('utf8');
}

function fsyncDir(dir) {
  let fd;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Some platforms cannot sync a directory; the rename stands.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

// writeTemp writes data to a new temporary file next to file, synced.
function writeTemp(file, data) {
  const tmp = `${file}.tmp-${process.pid}-${crypto.randomBytes(6).toString('hex')}`;
  const fd = fs.openSync(tmp, 'wx', 0o600);
  try {
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw error;
  }
  fs.closeSync(fd);
  return tmp;
}

// writeAtomic replaces file with data: the old bytes or the new, never a mix.
function writeAtomic(file, data) {
  const tmp = writeTemp(file, data);
  try {
    fs.renameSync(tmp, file);
  } catch (error) {
    fs.rmSync(tmp, { force: true });
    throw error;
  }
  fsyncDir(path.dirname(file));
}

// createAtomic writes file only if it does not exist; false if it did.
function createAtomic(file, data) {
  const tmp = writeTemp(file, data);
  try {
    fs.linkSync(tmp, file);
  } catch (error) {
    if (error.code === 'EEXIST') return false;
    throw error;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  fsyncDir(path.dirname(file));
  return true;
}

function readJSON(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if (error.code === 'ENOENT') return null;
    throw error;
  }
  return JSON.parse(text);
}

function removeFile(file) {
  try {
    fs.unlinkSync(file);
    return true;
  } catch (error) {
    if (error.code === 'ENOENT') return false;
    throw error;
  }
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

// Job records hold JSON values (the input, the result, the calls'
// arguments); undefined fields are left out, as JSON does.
function encodeRecord(record) {
  return JSON.stringify(record);
}

function encodeProgress(progress) {
  const out = {};
  for (const [k, v] of Object.entries(progress)) {
    if (v === undefined) continue;
    if (Buffer.isBuffer(v) || v instanceof Uint8Array) out[k] = { $bytes: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') };
    else out[k] = v;
  }
  return JSON.stringify(out);
}

function decodeProgress(data) {
  const out = {};
  for (const [k, v] of Object.entries(data)) {
    out[k] = v !== null && typeof v === 'object' && typeof v.$bytes === 'string' ? Buffer.from(v.$bytes, 'base64') : v;
  }
  return out;
}

// withoutFence is a record as hosts see it: the fencing token it keeps is
// the store's.
function withoutFence(record) {
  if (record === null || record.fence === undefined) return record;
  const { fence, ...rest } = record;
  void fence;
  return rest;
}

class FileMustardExecutorStore {
  // dir is created if needed. leaseMs is how long a claim holds before
  // the executor renews it as its lease (the executor's own leaseMs then
  // applies); options.now is the clock (Date.now).
  constructor(dir, options = {}) {
    if (typeof dir !== 'string' || dir.length === 0) throw new TypeError('FileMustardExecutorStore needs a directory path');
    if (options === null || typeof options !== 'object') throw new TypeError('FileMustardExecutorStore options must be an object');
    const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    if (!Number.isInteger(leaseMs) || leaseMs <= 0) throw new TypeError('FileMustardExecutorStore options.leaseMs must be a positive integer');
    if (options.now !== undefined && typeof options.now !== 'function') throw new TypeError('FileMustardExecutorStore options.now must be a function');
    this.dir = path.resolve(dir);
    this.leaseMs = leaseMs;
    this.host = os.hostname();
    this._clock = options.now !== undefined;
    this._now = options.now ?? Date.now;
    for (const sub of ['jobs', 'progress', 'claims', 'cancel']) fs.mkdirSync(path.join(this.dir, sub), { recursive: true, mode: 0o700 });
    this._held = new Map(); // jobId -> the lease this store object took
  }

  _file(kind, jobId) {
    const ext = kind === 'cancel' ? '' : '.json';
    return path.join(this.dir, kind, `${nameOf(jobId)}${ext}`);
  }

  _leaseData(lease) {
    return JSON.stringify({ workerId: lease.owner, token: lease.token, expiresAt: lease.expiresAt, pid: process.pid, host: this.host });
  }

  _readLease(jobId) {
    try {
      return readJSON(this._file('claims', jobId));
    } catch {
      return null; // torn or foreign: stale
    }
  }

  // _stale reports whether a lease file no longer holds its job: torn,
  // expired, or its holder a process of this machine that is gone.
  _stale(claim, now) {
    if (claim === null || typeof claim !== 'object') return true;
    if (!(claim.expiresAt > now)) return true;
    if (claim.host === this.host && Number.isInteger(claim.pid) && claim.pid !== process.pid) return !pidAlive(claim.pid);
    return false;
  }

  async enqueue(record) {
    const created = createAtomic(this._file('jobs', record.jobId), encodeRecord(record));
    return { jobId: record.jobId, inserted: created };
  }

  async get(jobId) {
    return withoutFence(readJSON(this._file('jobs', jobId)));
  }

  // list returns the ids of the stored jobs.
  async list() {
    return fs
      .readdirSync(path.join(this.dir, 'jobs'))
      .filter((f) => f.endsWith('.json'))
      .map((f) => idOf(f.slice(0, -5)));
  }

  // claimRunnable takes the lease of up to limit jobs that are queued,
  // waiting, or running with no live lease (their worker died), oldest
  // first.
  async claimRunnable(limit, workerId, at = undefined) {
    // A store given a clock keeps to it; else the caller's time counts.
    const now = this._clock || at === undefined ? this._now() : at;
    const candidates = [];
    for (const f of fs.readdirSync(path.join(this.dir, 'jobs'))) {
      if (!f.endsWith('.json')) continue;
      const jobId = idOf(f.slice(0, -5));
      if (this._held.has(jobId)) continue;
      let record;
      try {
        record = readJSON(path.join(this.dir, 'jobs', f));
      } catch {
        continue;
      }
      if (record === null || !CLAIMABLE_STATES.has(record.state)) continue;
      candidates.push(record);
    }
    candidates.sort((a, b) => a.createdAt - b.createdAt);
    const claimed = [];
    for (const record of candidates) {
      if (claimed.length >= limit) break;
      if (this._tryClaim(record.jobId, workerId, now, this.leaseMs, record.fence) !== null) claimed.push(record.jobId);
    }
    return claimed;
  }

  // _tryClaim takes the lease of jobId for owner if it is free or stale;
  // it returns the lease, or null.
  _tryClaim(jobId, owner, now, ttlMs, fence = 0) {
    const file = this._file('claims', jobId);
    const lease = { jobId, owner, token: nextToken(fence), expiresAt: now + ttlMs };
    if (createAtomic(file, this._leaseData(lease))) {
      this._held.set(jobId, lease);
      return { ...lease };
    }
    const claim = this._readLease(jobId);
    if (!this._stale(claim, now)) return null;
    // Take the stale lease over: move it aside, check that what was moved
    // is the stale lease (not a fresh one another worker wrote
    // meanwhile, which goes back), then create the new one.
    const aside = `${file}.stale-${process.pid}-${crypto.randomBytes(6).toString('hex')}`;
    try {
      fs.renameSync(file, aside);
    } catch (error) {
      if (error.code === 'ENOENT') return null;
      throw error;
    }
    let moved;
    try {
      moved = readJSON(aside);
    } catch {
      moved = null;
    }
    if (!this._stale(moved, now)) {
      try {
        fs.linkSync(aside, file);
      } catch {
        // A third worker claimed meanwhile: it holds the job.
      }
      removeFile(aside);
      return null;
    }
    removeFile(aside);
    lease.token = nextToken(fence, moved?.token ?? 0);
    if (!createAtomic(file, this._leaseData(lease))) return null;
    this._held.set(jobId, lease);
    return { ...lease };
  }

  async releaseClaim(jobId, workerId) {
    const held = this._held.get(jobId);
    if (held === undefined || held.owner !== workerId) return;
    await this.releaseLease(jobId, held);
  }

  // acquireLease takes the lease of jobId for owner, or renews the one
  // owner holds through this store object (its claim); null while
  // another owner's lease is active.
  async acquireLease(jobId, owner, ttlMs) {
    const held = this._held.get(jobId);
    if (held !== undefined && held.owner === owner) {
      try {
        return await this.renewLease(jobId, held, ttlMs);
      } catch {
        this._held.delete(jobId);
      }
    }
    const record = readJSON(this._file('jobs', jobId));
    return this._tryClaim(jobId, owner, this._now(), ttlMs, record?.fence ?? 0);
  }

  // renewLease extends lease by ttlMs from now; it fails with
  // MustardLeaseLostError if the lease file holds another's.
  async renewLease(jobId, lease, ttlMs) {
    const claim = this._readLease(jobId);
    if (claim === null || claim.token !== lease.token) {
      this._held.delete(jobId);
      throw new MustardLeaseLostError(jobId);
    }
    const next = { jobId, owner: lease.owner, token: lease.token, expiresAt: this._now() + ttlMs };
    writeAtomic(this._file('claims', jobId), this._leaseData(next));
    this._held.set(jobId, next);
    return { ...next };
  }

  async releaseLease(jobId, lease) {
    if (this._held.get(jobId)?.token === lease.token) this._held.delete(jobId);
    const claim = this._readLease(jobId);
    if (claim !== null && claim.token === lease.token) removeFile(this._file('claims', jobId));
  }

  // _fence checks a write's fencing token against the job's lease file,
  // or with none, the token the record was last written under. A write
  // with no fence is not checked (a store used without leases).
  _fence(jobId, record, fence) {
    if (fence === undefined || fence === null) return;
    const claim = this._readLease(jobId);
    const ok = claim !== null ? claim.token === fence : (record?.fence ?? 0) <= fence;
    if (!ok || (record?.fence ?? 0) > fence) throw new MustardLeaseLostError(jobId);
  }

  async update(jobId, patch, fence) {
    const file = this._file('jobs', jobId);
    const current = readJSON(file);
    if (current === null) throw new Error(`unknown job id ${jobId}`);
    this._fence(jobId, current, fence);
    const next = patch.state ?? current.state;
    if (next !== current.state && !TRANSITIONS.has(`${current.state}:${next}`)) {
      throw new Error(`invalid job transition from ${current.state} to ${next}`);
    }
    const record = { ...current, ...patch, state: next, updatedAt: this._now() };
    if (fence !== undefined && fence !== null) record.fence = fence;
    writeAtomic(file, encodeRecord(record));
    if (TERMINAL_STATES.has(next)) {
      // A finished job's progress and cancellation request are of no more
      // use, also when its worker dies before it deletes them.
      removeFile(this._file('cancel', jobId));
      removeFile(this._file('progress', jobId));
    }
  }

  async saveProgress(jobId, progress, fence) {
    const record = readJSON(this._file('jobs', jobId));
    if (record === null) throw new Error(`unknown job id ${jobId}`);
    if (TERMINAL_STATES.has(record.state)) throw new Error(`cannot save progress for terminal job ${jobId}`);
    this._fence(jobId, record, fence);
    writeAtomic(this._file('progress', jobId), encodeProgress(progress));
  }

  async loadProgress(jobId) {
    const data = readJSON(this._file('progress', jobId));
    return data === null ? null : decodeProgress(data);
  }

  async deleteProgress(jobId, fence) {
    if (fence !== undefined && fence !== null) this._fence(jobId, readJSON(this._file('jobs', jobId)), fence);
    if (removeFile(this._file('progress', jobId))) fsyncDir(path.join(this.dir, 'progress'));
  }

  _status(jobId, record, now) {
    const claim = this._readLease(jobId);
    const lease = claim !== null && !this._stale(claim, now) ? claim : null;
    const out = { jobId, state: record.state, attempts: record.attempts, createdAt: record.createdAt, updatedAt: record.updatedAt };
    if (record.capability !== undefined) out.capability = record.capability;
    if (record.error !== undefined) out.error = record.error;
    if (lease !== null) {
      out.owner = lease.workerId;
      out.leaseExpiresAt = lease.expiresAt;
    }
    return out;
  }

  // listJobs lists the jobs in one of options.states (or options.state;
  // every job if none are given), ordered by id, with the time of their
  // last step (updatedAt) and their lease's owner while one is held.
  async listJobs(options = {}) {
    if (options === null || typeof options !== 'object') throw new TypeError('FileMustardExecutorStore.listJobs() options must be an object');
    const wanted = options.states ?? (options.state !== undefined ? [options.state] : null);
    if (wanted !== null && (!Array.isArray(wanted) || wanted.some((s) => !JOB_STATES.has(s)))) {
      throw new TypeError('FileMustardExecutorStore.listJobs() options.states must be an array of job states');
    }
    const now = this._now();
    const out = [];
    for (const jobId of await this.list()) {
      let record;
      try {
        record = readJSON(this._file('jobs', jobId));
      } catch {
        continue;
      }
      if (record === null || (wanted !== null && !wanted.includes(record.state))) continue;
      out.push(this._status(jobId, record, now));
    }
    return out.sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0));
  }

  async jobStatus(jobId) {
    const record = readJSON(this._file('jobs', jobId));
    return record === null ? null : this._status(jobId, record, this._now());
  }

  // deleteJob removes a job's files; false if it is unknown or its lease
  // is held.
  async deleteJob(jobId) {
    const file = this._file('jobs', jobId);
    if (!fs.existsSync(file)) return false;
    if (!this._stale(this._readLease(jobId), this._now())) return false;
    removeFile(this._file('progress', jobId));
    removeFile(this._file('cancel', jobId));
    removeFile(this._file('claims', jobId));
    const removed = removeFile(file);
    fsyncDir(path.join(this.dir, 'jobs'));
    return removed;
  }

  async requestCancel(jobId) {
    const file = this._file('jobs', jobId);
    const record = readJSON(file);
    if (record === null || TERMINAL_STATES.has(record.state)) return 'ignored';
    if (record.state === 'queued' && this._stale(this._readLease(jobId), this._now())) {
      const { capability, args, result, ...rest } = record;
      void capability;
      void args;
      void result;
      writeAtomic(file, encodeRecord({ ...rest, state: 'cancelled', error: { name: 'MustardLimitError', message: 'execution cancelled' }, updatedAt: this._now() }));
      await this.deleteProgress(jobId);
      return 'cancelled';
    }
    createAtomic(this._file('cancel', jobId), '');
    return 'requested';
  }

  async consumeCancel(jobId) {
    return removeFile(this._file('cancel', jobId));
  }
}

module.exports = { FileMustardExecutorStore, writeAtomic };
