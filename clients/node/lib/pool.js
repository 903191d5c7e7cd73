'use strict';

// SidecarPool runs requests on up to `size` sidecar processes, each
// serving one execution step at a time. Processes start when first
// needed; one that dies is dropped and replaced when a place is next
// needed, after a backoff if processes keep dying young (a bad binary, a
// crash loop). A step that names the process holding its parked
// execution waits for that process while it lives.

const os = require('node:os');
const { setTimeout: delay } = require('node:timers/promises');

const { SidecarClient } = require('./client.js');
const { MustardProcessError } = require('./errors.js');

const BACKOFF_MIN_MS = 10;
const BACKOFF_MAX_MS = 5000;
const BACKOFF_RESET_MS = 30000;

function defaultPoolSize() {
  const n = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  return Math.max(1, Math.min(4, n));
}

class SidecarPool {
  constructor(options = {}) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError('SidecarPool options must be an object');
    }
    const size = options.size === undefined ? defaultPoolSize() : options.size;
    if (!Number.isInteger(size) || size <= 0) {
      throw new TypeError('SidecarPool options.size must be a positive integer');
    }
    this.size = size;
    this.clientOptions = {
      command: options.sidecar,
      args: options.args,
      env: options.env,
      maxResponseBytes: options.maxResponseBytes,
      closeGraceMs: options.closeGraceMs,
      cancelGraceMs: options.cancelGraceMs,
    };
    this.clients = []; // running (or starting) processes
    this.starting = 0;
    this.waiters = [];
    this.closedFlag = false;
    this.youngDeaths = 0;
    this.restarts = 0;
  }

  // acquire lends a process; prefer names the process holding the parked
  // execution (its id), which is waited for while it lives.
  acquire(prefer = null) {
    if (this.closedFlag) return Promise.reject(new MustardProcessError('the sidecar pool is closed'));
    return new Promise((resolve, reject) => {
      this.waiters.push({ prefer, resolve, reject });
      this.dispatch();
    });
  }

  release(client) {
    client.busy = false;
    this.dispatch();
  }

  dispatch() {
    for (let i = 0; i < this.waiters.length; ) {
      const w = this.waiters[i];
      let pick = null;
      if (w.prefer !== null) {
        const home = this.clients.find((c) => c.id === w.prefer && c.alive);
        if (home) {
          if (home.busy) {
            i += 1;
            continue;
          }
          pick = home;
        }
      }
      if (pick === null) pick = this.clients.find((c) => c.alive && !c.busy) || null;
      if (pick !== null) {
        pick.busy = true;
        this.waiters.splice(i, 1);
        w.resolve(pick);
        continue;
      }
      if (this.clients.length + this.starting < this.size) {
        this.waiters.splice(i, 1);
        this.spawn().then(
          (client) => {
            client.busy = true;
            w.resolve(client);
          },
          (error) => w.reject(error),
        );
        continue;
      }
      i += 1;
    }
  }

  async spawn() {
    this.starting += 1;
    try {
      if (this.youngDeaths > 0) {
        const d = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** (this.youngDeaths - 1));
        await delay(d / 2 + Math.random() * (d / 2), undefined, { ref: false });
      }
      if (this.closedFlag) throw new MustardProcessError('the sidecar pool is closed');
      let client;
      try {
        client = await SidecarClient.start(this.clientOptions);
      } catch (error) {
        this.youngDeaths += 1;
        throw error;
      }
      client.busy = false;
      this.clients.push(client);
      client.onExit(() => this.onExit(client));
      return client;
    } finally {
      this.starting -= 1;
    }
  }

  onExit(client) {
    const i = this.clients.indexOf(client);
    if (i >= 0) this.clients.splice(i, 1);
    if (!this.closedFlag) {
      this.restarts += 1;
      const young = client.requests === 0 && Date.now() - client.startedAt < BACKOFF_RESET_MS;
      this.youngDeaths = young ? this.youngDeaths + 1 : 0;
    }
    this.dispatch();
  }

  // processes reports each running process, for operators and tests.
  processes() {
    return this.clients.map((c) => ({
      id: c.id,
      pid: c.pid,
      busy: Boolean(c.busy),
      startedAt: c.startedAt,
      requests: c.requests,
      stages: c.stagesUploaded,
    }));
  }

  // stats asks each running process for its stats (docs/protocol.md,
  // "stats"), in the order of processes(): { id, pid, stats }, stats the
  // result as the sidecar sends it, or null when the process exited
  // before answering. A process serves it in order, after whatever it was
  // sent before. Starts no process.
  async stats() {
    if (this.closedFlag) throw new MustardProcessError('the sidecar pool is closed');
    return Promise.all(
      this.clients.map(async (c) => {
        let stats = null;
        try {
          stats = (await c.request('stats', {})).result;
        } catch (error) {
          if (c.alive) throw error;
        }
        return { id: c.id, pid: c.pid, stats };
      }),
    );
  }

  // close shuts every process down gracefully (see SidecarClient.close).
  async close() {
    this.closedFlag = true;
    for (const w of this.waiters.splice(0)) w.reject(new MustardProcessError('the sidecar pool is closed'));
    const results = await Promise.allSettled(this.clients.map((c) => c.close()));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}

module.exports = { SidecarPool, defaultPoolSize };
