'use strict';

// FileMustardExecutorStore keeps the executor's jobs in a directory, so
// that they survive the host process: a job record and its saved
// progress are files, each written whole and atomically (a temporary
// file, fsync, rename over the old one, fsync of the directory), so a
// crash at any point (SIGKILL, power loss) leaves the old file or the new
// one, never a mix. Claims are files too: a worker that dies holding one
// (a SIGKILL, a crash) leaves it behind, and the claim is taken over once
// it is stale: at once on the same machine when the process that wrote it
// is gone, after its lease elsewhere. Such a job is picked up again
// whatever its state, `running` included, and the executor continues it
// from its saved progress.
//
//   <dir>/jobs/<name>.json       the job record
//   <dir>/progress/<name>.json   the saved progress (bytes in base64)
//   <dir>/claims/<name>.json     the worker holding the job
//   <dir>/cancel/<name>          a cancellation request
//
// <name> is the job id in base64url.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { TERMINAL_STATES, TRANSITIONS } = require('./jobstates.js');
// running: a job whose worker died while it ran (its claim is stale).
const CLAIMABLE_STATES = new Set(['queued', 'waiting', 'running']);
const DEFAULT_LEASE_MS = 60000;
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

class FileMustardExecutorStore {
  // dir is created if needed. leaseMs bounds how long a claim written on
  // another machine holds after its last renewal (every write of the job
  // renews it); on the same machine a claim holds while its process lives.
  constructor(dir, options = {}) {
    if (typeof dir !== 'string' || dir.length === 0) throw new TypeError('FileMustardExecutorStore needs a directory path');
    if (options === null || typeof options !== 'object') throw new TypeError('FileMustardExecutorStore options must be an object');
    const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    if (!Number.isInteger(leaseMs) || leaseMs <= 0) throw new TypeError('FileMustardExecutorStore options.leaseMs must be a positive integer');
    this.dir = path.resolve(dir);
    this.leaseMs = leaseMs;
    this.host = os.hostname();
    for (const sub of ['jobs', 'progress', 'claims', 'cancel']) fs.mkdirSync(path.join(this.dir, sub), { recursive: true, mode: 0o700 });
    this._held = new Map(); // jobId -> workerId, the claims this process holds
  }

  _file(kind, jobId) {
    const ext = kind === 'cancel' ? '' : '.json';
    return path.join(this.dir, kind, `${nameOf(jobId)}${ext}`);
  }

  _claimData(workerId) {
    return JSON.stringify({ workerId, pid: process.pid, host: this.host, expiresAt: Date.now() + this.leaseMs });
  }

  _stale(claim, now) {
    if (claim === null || typeof claim !== 'object') return true;
    if (claim.host === this.host && Number.isInteger(claim.pid)) {
      if (claim.pid === process.pid) return false;
      return !pidAlive(claim.pid);
    }
    return !(claim.expiresAt > now);
  }

  // _renew extends this process's claim on jobId.
  _renew(jobId) {
    const workerId = this._held.get(jobId);
    if (workerId !== undefined) writeAtomic(this._file('claims', jobId), this._claimData(workerId));
  }

  async enqueue(record) {
    const created = createAtomic(this._file('jobs', record.jobId), encodeRecord(record));
    return { jobId: record.jobId, inserted: created };
  }

  async get(jobId) {
    return readJSON(this._file('jobs', jobId));
  }

  // list returns the ids of the stored jobs.
  async list() {
    return fs
      .readdirSync(path.join(this.dir, 'jobs'))
      .filter((f) => f.endsWith('.json'))
      .map((f) => idOf(f.slice(0, -5)));
  }

  // claimRunnable claims up to limit jobs that are queued, waiting, or
  // running with no live claim (their worker died), oldest first.
  async claimRunnable(limit, workerId, now = Date.now()) {
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
      if (this._tryClaim(record.jobId, workerId, now)) claimed.push(record.jobId);
    }
    return claimed;
  }

  _tryClaim(jobId, workerId, now) {
    const file = this._file('claims', jobId);
    if (createAtomic(file, this._claimData(workerId))) {
      this._held.set(jobId, workerId);
      return true;
    }
    let claim;
    try {
      claim = readJSON(file);
    } catch {
      claim = null; // torn or foreign: stale
    }
    if (!this._stale(claim, now)) return false;
    // Take the stale claim over: move it aside, check that what was moved
    // is the stale claim (not a fresh one another worker wrote
    // meanwhile, which goes back), then claim.
    const aside = `${file}.stale-${process.pid}-${crypto.randomBytes(6).toString('hex')}`;
    try {
      fs.renameSync(file, aside);
    } catch (error) {
      if (error.code === 'ENOENT') return false;
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
      return false;
    }
    removeFile(aside);
    if (!createAtomic(file, this._claimData(workerId))) return false;
    this._held.set(jobId, workerId);
    return true;
  }

  async releaseClaim(jobId, workerId) {
    if (this._held.get(jobId) !== workerId) return;
    this._held.delete(jobId);
    removeFile(this._file('claims', jobId));
  }

  async update(jobId, patch) {
    const file = this._file('jobs', jobId);
    const current = readJSON(file);
    if (current === null) throw new Error(`unknown job id ${jobId}`);
    const next = patch.state ?? current.state;
    if (next !== current.state && !TRANSITIONS.has(`${current.state}:${next}`)) {
      throw new Error(`invalid job transition from ${current.state} to ${next}`);
    }
    const record = { ...current, ...patch, state: next, updatedAt: Date.now() };
    writeAtomic(file, encodeRecord(record));
    if (TERMINAL_STATES.has(next)) removeFile(this._file('cancel', jobId));
    this._renew(jobId);
  }

  async saveProgress(jobId, progress) {
    const record = readJSON(this._file('jobs', jobId));
    if (record === null) throw new Error(`unknown job id ${jobId}`);
    if (TERMINAL_STATES.has(record.state)) throw new Error(`cannot save progress for terminal job ${jobId}`);
    writeAtomic(this._file('progress', jobId), encodeProgress(progress));
  }

  async loadProgress(jobId) {
    const data = readJSON(this._file('progress', jobId));
    return data === null ? null : decodeProgress(data);
  }

  async deleteProgress(jobId) {
    if (removeFile(this._file('progress', jobId))) fsyncDir(path.join(this.dir, 'progress'));
  }

  async requestCancel(jobId) {
    const file = this._file('jobs', jobId);
    const record = readJSON(file);
    if (record === null || TERMINAL_STATES.has(record.state)) return 'ignored';
    if (record.state === 'queued' && !fs.existsSync(this._file('claims', jobId))) {
      const { capability, args, result, ...rest } = record;
      void capability;
      void args;
      void result;
      writeAtomic(file, encodeRecord({ ...rest, state: 'cancelled', error: { name: 'MustardLimitError', message: 'execution cancelled' }, updatedAt: Date.now() }));
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
