'use strict';

// The synchronous API (the reference's: new Mustard() compiles, start()
// and resume() return the next step) over processes that answer through
// pipes: a helper thread owns a pool of sidecar processes and does the
// I/O, while the calling thread waits on a shared flag
// (Atomics.wait) and takes the answer from a message port
// (receiveMessageOnPort). The helper thread starts on the first
// synchronous call and never keeps the Node process alive.

const path = require('node:path');
const { Worker, MessageChannel, receiveMessageOnPort } = require('node:worker_threads');

const {
  KIND_CLASSES,
  MustardError,
  MustardSidecarError,
  MustardRequestTooLargeError,
  MustardProcessError,
  toLogLines,
} = require('./errors.js');
const { DirectPath, FALLBACK, supported } = require('./sync-direct.js');
const { portable } = require('./ops.js');

function rebuildError(e) {
  const options = { code: e.code, logs: e.logs === undefined ? undefined : toLogLines(e.logs) };
  if (e.name === 'MustardRequestTooLargeError') return new MustardRequestTooLargeError(e.message, options);
  if (e.kind && KIND_CLASSES[e.kind]) return new KIND_CLASSES[e.kind](e.message, options);
  if (e.kind === 'Sidecar') return new MustardSidecarError(e.message, options);
  if (e.kind === 'Process') return new MustardProcessError(e.message, options);
  if (e.kind) return new MustardError(e.kind, e.message, options);
  if (e.type === 'TypeError') return new TypeError(e.message);
  if (e.type === 'RangeError') return new RangeError(e.message);
  return new Error(e.message);
}

class SyncBridge {
  constructor(poolOptions) {
    this.poolOptions = poolOptions;
    this.flag = new Int32Array(new SharedArrayBuffer(4));
    this.worker = null;
    this.broken = null;
    // The direct path, where the platform has it: compile, start and
    // resume without the helper thread (lib/sync-direct.js).
    this.direct = supported(poolOptions) ? new DirectPath(poolOptions) : null;
  }

  // startWorker starts the helper thread, on the first call that needs it.
  startWorker() {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(path.join(__dirname, 'sync-worker.js'), {
      workerData: { flag: this.flag.buffer, port: port2, pool: this.poolOptions },
      transferList: [port2],
    });
    this.worker.on('error', (error) => {
      this.broken = new MustardProcessError(`the helper thread of the synchronous API failed: ${error.message}`);
    });
    this.worker.on('exit', () => {
      this.broken ??= new MustardProcessError('the helper thread of the synchronous API has stopped');
    });
    this.worker.unref();
    this.port.unref();
  }

  // call runs op (on the direct path if it can, else on the helper
  // thread) and blocks until it answers.
  call(op, args) {
    if (this.direct !== null && (op === 'compile' || op === 'start' || op === 'resume')) {
      const out = this.direct.call(op, args);
      if (out !== FALLBACK) return out;
    }
    if (op === 'processes' && this.worker === null) return this.direct === null ? [] : this.direct.processes();
    const value = this.callWorker(op, args);
    if (op === 'processes' && this.direct !== null) return [...this.direct.processes(), ...value];
    return value;
  }

  callWorker(op, args) {
    if (this.broken) throw this.broken;
    if (this.worker === null) this.startWorker();
    Atomics.store(this.flag, 0, 0);
    this.worker.postMessage({ op, args: portable(args) });
    for (;;) {
      Atomics.wait(this.flag, 0, 0, 1000);
      const m = receiveMessageOnPort(this.port);
      if (m !== undefined) {
        if (m.message.ok) return m.message.value;
        throw rebuildError(m.message.error);
      }
      if (this.broken) throw this.broken;
    }
  }

  async close() {
    if (this.direct !== null) this.direct.close();
    if (this.broken || this.worker === null) return;
    try {
      this.callWorker('close', {});
    } finally {
      await this.worker.terminate();
    }
  }
}

module.exports = { SyncBridge, rebuildError };
