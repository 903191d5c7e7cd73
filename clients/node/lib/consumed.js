'use strict';

// The snapshots this process has resumed, so that a dumped Progress is
// single-use as in the reference: once a suspended execution went on, in
// this process, its dump cannot be loaded and resumed again here (which
// would run the rest of the program, and its tools' effects, twice).
//
// Only snapshots whose bytes left the package (Progress.dump(), the
// snapshot getter, Progress.load()) are recorded: no other can come back.
// They are recorded in memory, shared by every copy of the package loaded
// in the process, and as empty files under the temporary directory, one
// directory per process, shared with its worker threads (the reference's
// registry); the main thread removes that directory when the process
// exits.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { isMainThread } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');

const KEY = Symbol.for('mustard-sidecar.consumedSnapshots');
const shared = (globalThis[KEY] ??= {
  ids: new Set(),
  root: path.join(os.tmpdir(), 'mustard-sidecar-progress', `${process.pid}-${Math.round(performance.timeOrigin)}`),
  cleanup: false,
});

function file(id) {
  // Snapshot ids are hex SHA-256 digests; anything else is hashed into one.
  const name = /^[0-9a-f]{64}$/.test(id) ? id : require('node:crypto').createHash('sha256').update(String(id)).digest('hex');
  return path.join(shared.root, name);
}

function ensureRoot() {
  fs.mkdirSync(shared.root, { recursive: true, mode: 0o700 });
  if (isMainThread && !shared.cleanup) {
    shared.cleanup = true;
    process.once('exit', () => {
      try {
        fs.rmSync(shared.root, { recursive: true, force: true });
      } catch {
        // Best effort: the directory is the process's own.
      }
    });
  }
}

// used tells whether the snapshot was resumed (or claimed by a load) in
// this process.
function used(id) {
  if (shared.ids.has(id)) return true;
  try {
    return fs.existsSync(file(id));
  } catch {
    return false;
  }
}

// claim records the snapshot as used; it returns false when it already was.
function claim(id) {
  if (shared.ids.has(id)) return false;
  try {
    ensureRoot();
    fs.closeSync(fs.openSync(file(id), 'wx', 0o600));
  } catch (error) {
    if (error && error.code === 'EEXIST') {
      shared.ids.add(id);
      return false;
    }
    // A registry that cannot be written still holds in this thread.
  }
  shared.ids.add(id);
  return true;
}

// release undoes a claim whose resume did not run (the process died
// before answering, or the answer could not be sent).
function release(id) {
  shared.ids.delete(id);
  try {
    fs.rmSync(file(id), { force: true });
  } catch {
    // Best effort.
  }
}

module.exports = { used, claim, release };
