'use strict';

// SidecarClient is one mustard-sidecar process speaking binary frames:
// requests are written in call order and answered in that order. Reads are
// bounded, a dead process fails every outstanding request with a
// MustardProcessError, a start or resume can be cancelled in band, and
// close() is graceful (stdin closed, then a kill after a grace period).

const { spawn } = require('node:child_process');

const {
  MustardProcessError,
  fromResponse,
  cancelledError,
} = require('./errors.js');
const {
  PROTOCOL_VERSION,
  DEFAULT_MAX_RESPONSE_BYTES,
  encodeFrame,
  FrameReader,
} = require('./wire.js');
const { stageIds } = require('./stageids.js');

const DEFAULT_CLOSE_GRACE_MS = 5000;
const DEFAULT_CANCEL_GRACE_MS = 5000;
const STDERR_TAIL = 4096;
const LINE_MAX = 300;

let nextClientId = 0;

// answers holds the errors that are the sidecar's answer to a request (it
// read the request and refused it), as opposed to a request that was never
// written, or never answered because the process died or the caller
// stopped waiting.
const answers = new WeakSet();

function isAnswer(error) {
  return answers.has(error);
}

// markAnswer records error as the sidecar's answer to a request.
function markAnswer(error) {
  answers.add(error);
  return error;
}

// resolveCommand says which binary to run: the option, else
// $MUSTARD_SIDECAR_BIN, else mustard-sidecar from PATH.
function resolveCommand(command) {
  if (typeof command === 'string' && command.length > 0) return command;
  const env = process.env.MUSTARD_SIDECAR_BIN;
  if (typeof env === 'string' && env.length > 0) return env;
  return 'mustard-sidecar';
}

function clip(s) {
  return s.length > LINE_MAX ? `${s.slice(0, LINE_MAX)}…` : s;
}

// StderrTail keeps the first line and the last few KiB of the sidecar's
// stderr, for error messages.
class StderrTail {
  constructor() {
    this.head = '';
    this.headDone = false;
    this.tail = '';
  }

  write(chunk) {
    const text = chunk.toString('utf8');
    if (!this.headDone) {
      const nl = text.indexOf('\n');
      this.head += nl >= 0 ? text.slice(0, nl) : text;
      this.headDone = nl >= 0 || this.head.length > LINE_MAX;
    }
    this.tail = (this.tail + text).slice(-STDERR_TAIL);
  }

  summary() {
    const first = clip(this.head.trim());
    const lines = this.tail.replace(/\n+$/, '').split('\n');
    const last = clip((lines[lines.length - 1] || '').trim());
    if (last === '' || last === first) return first;
    return `${first} … ${last}`;
  }
}

class SidecarClient {
  // Use SidecarClient.start(options): it resolves once the process runs.
  constructor(options = {}) {
    this.id = ++nextClientId;
    this.command = resolveCommand(options.command);
    this.args = Array.isArray(options.args) ? options.args.slice() : [];
    this.maxResponseBytes = options.maxResponseBytes > 0 ? options.maxResponseBytes : DEFAULT_MAX_RESPONSE_BYTES;
    this.closeGraceMs = options.closeGraceMs > 0 ? options.closeGraceMs : DEFAULT_CLOSE_GRACE_MS;
    this.cancelGraceMs = options.cancelGraceMs > 0 ? options.cancelGraceMs : DEFAULT_CANCEL_GRACE_MS;
    this.startedAt = Date.now();
    this.requests = 0; // answered requests
    this.known = new Set(); // program ids this process holds
    this.stageSeq = 0;
    this.freeStageIds = []; // stage ids given back, reused first
    this.stagesUploaded = 0;
    this.nextRequestId = 0;
    this.inflight = []; // written, awaiting their response, in order
    this.closing = false;
    this.dead = null; // the error every later request fails with
    this.referenced = false;
    this.exitListeners = [];
    this.stderr = new StderrTail();
    this.reader = new FrameReader(this.maxResponseBytes);
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });

    const child = spawn(this.command, this.args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: options.env ? { ...process.env, ...options.env } : process.env,
      windowsHide: true,
    });
    this.child = child;
    child.stdin.on('error', () => {}); // EPIPE: the process is gone; 'close' says why
    child.stdout.on('data', (chunk) => this.onData(chunk));
    child.stdout.on('end', () => this.onStdoutEnd());
    child.stderr.on('data', (chunk) => this.stderr.write(chunk));
    child.on('close', (code, signal) => this.onClose(code, signal));
    this.unref();
  }

  static start(options = {}) {
    const client = new SidecarClient(options);
    return new Promise((resolve, reject) => {
      const child = client.child;
      const onSpawn = () => {
        child.off('error', onError);
        child.on('error', () => {});
        resolve(client);
      };
      const onError = (error) => {
        child.off('spawn', onSpawn);
        const hint =
          error && error.code === 'ENOENT'
            ? `: ${client.command} not found (build it with \`go build ./cmd/mustard-sidecar\`; pass its path as the \`sidecar\` option or in $MUSTARD_SIDECAR_BIN, or put it on PATH)`
            : `: ${error && error.message}`;
        client.fail(new MustardProcessError(`starting the sidecar failed${hint}`));
        reject(client.dead);
      };
      child.once('spawn', onSpawn);
      child.once('error', onError);
    });
  }

  get pid() {
    return this.child.pid;
  }

  get alive() {
    return this.dead === null && !this.closing;
  }

  onExit(listener) {
    if (this.dead !== null && this.finished) listener(this);
    else this.exitListeners.push(listener);
  }

  ref() {
    if (this.referenced) return;
    this.referenced = true;
    this.child.ref();
    this.child.stdout.ref?.();
    this.child.stderr.ref?.();
  }

  unref() {
    this.referenced = false;
    this.child.unref();
    this.child.stdout.unref?.();
    this.child.stderr.unref?.();
    this.child.stdin.unref?.();
  }

  // request sends one request and resolves with { result, payload,
  // profile } or rejects with the sidecar's error (typed). A start or
  // resume given an aborted signal is cancelled in band: the sidecar ends
  // it with "Limit: execution cancelled". Other requests just stop being
  // waited for.
  request(method, fields, payload = null, { signal, cancellable = false } = {}) {
    if (this.dead !== null) return Promise.reject(this.dead);
    if (this.closing) return Promise.reject(new MustardProcessError('the sidecar client is closed'));
    if (signal?.aborted) return Promise.reject(cancelledError());
    const id = ++this.nextRequestId;
    let frame;
    try {
      frame = encodeFrame({ protocol_version: PROTOCOL_VERSION, id, method, ...fields }, payload);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      const entry = { id, method, resolve, reject, drop: false, cleanup: null };
      if (signal) {
        const onAbort = () => {
          if (cancellable) this.cancel(entry);
          else {
            entry.drop = true;
            reject(cancelledError());
          }
        };
        signal.addEventListener('abort', onAbort, { once: true });
        entry.cleanup = () => signal.removeEventListener('abort', onAbort);
      }
      this.inflight.push(entry);
      this.ref();
      this.child.stdin.write(frame);
    });
  }

  // cancel asks the sidecar to end the running request entry. A cancel
  // written after its target always reaches it (a start or resume still
  // waiting its turn stops at its first instruction). If no answer comes
  // within the cancel grace the process is killed.
  cancel(entry) {
    if (entry.cancelSent || this.dead !== null) return;
    entry.cancelSent = true;
    const id = ++this.nextRequestId;
    let frame;
    try {
      frame = encodeFrame({ protocol_version: PROTOCOL_VERSION, id, method: 'cancel', target_id: entry.id }, null);
    } catch {
      return;
    }
    this.inflight.push({ id, method: 'cancel', resolve() {}, reject() {}, drop: true, cleanup: null });
    this.child.stdin.write(frame);
    const timer = setTimeout(() => this.kill(), this.cancelGraceMs);
    const prev = entry.cleanup;
    entry.cleanup = () => {
      clearTimeout(timer);
      if (prev) prev();
    };
  }

  onData(chunk) {
    let frames;
    try {
      frames = this.reader.push(chunk);
    } catch (error) {
      this.protocolError(error.message);
      return;
    }
    for (const frame of frames) {
      if (this.dead !== null) return;
      let header;
      try {
        header = JSON.parse(frame.header.toString('utf8'));
      } catch {
        this.protocolError('undecodable response header');
        return;
      }
      if (header === null || typeof header !== 'object' || header.protocol_version !== PROTOCOL_VERSION) {
        this.protocolError(`response protocol_version ${header && header.protocol_version}, expected ${PROTOCOL_VERSION}`);
        return;
      }
      const entry = this.inflight.shift();
      if (entry === undefined) {
        this.protocolError('a response arrived with no request outstanding');
        return;
      }
      if (header.id !== entry.id) {
        this.protocolError(`response id ${header.id} answers request ${entry.id}`);
        return;
      }
      this.requests += 1;
      if (entry.cleanup) entry.cleanup();
      if (this.inflight.length === 0 && !this.closing) this.unref();
      if (entry.drop) continue;
      if (header.ok === true) {
        entry.resolve({ result: header.result, payload: frame.payload, profile: header.profile });
      } else {
        const error = fromResponse(typeof header.error === 'string' ? header.error : 'request failed', header.error_code, header.logs);
        answers.add(error);
        entry.reject(error);
      }
    }
  }

  protocolError(reason) {
    this.fail(new MustardProcessError(`the sidecar broke the wire protocol (${reason}); the sidecar was stopped`));
    this.kill();
  }

  onStdoutEnd() {
    if (this.reader.pending() && this.dead === null) {
      this.fail(new MustardProcessError('the sidecar\'s stdout ended inside a response frame'));
    }
    // A process that closed its stdout but does not exit is killed after
    // the close grace: nothing it does can keep the host waiting.
    this.reaper = setTimeout(() => this.kill(), this.closeGraceMs);
    this.reaper.unref();
  }

  onClose(code, signal) {
    if (this.reaper) clearTimeout(this.reaper);
    if (this.dead === null) {
      const status = signal ? `killed by ${signal}` : `exit status ${code}`;
      const said = this.stderr.summary();
      const cleanClose = this.closing && code === 0;
      this.fail(
        cleanClose
          ? new MustardProcessError('the sidecar client is closed')
          : new MustardProcessError(`sidecar process exited (${status})${said ? `: ${said}` : ''}`),
      );
    }
    this.finished = true;
    this.exitCode = code;
    this.exitSignal = signal;
    this.resolveClosed();
    for (const listener of this.exitListeners.splice(0)) listener(this);
  }

  // fail marks the process dead and fails every outstanding request.
  fail(error) {
    if (this.dead !== null) return;
    this.dead = error;
    const left = this.inflight.splice(0);
    for (const entry of left) {
      if (entry.cleanup) entry.cleanup();
      if (!entry.drop) entry.reject(error);
    }
    this.unref();
  }

  kill() {
    if (this.finished) return;
    try {
      this.child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }

  // close shuts the process down gracefully: requests already written are
  // answered, stdin is closed (the sidecar answers what it read and
  // exits), and the process is killed if it has not exited within the
  // close grace. It rejects if the process had to be killed.
  async close() {
    if (this.closePromise) return this.closePromise;
    this.closing = true;
    this.closePromise = (async () => {
      if (this.finished) return;
      this.ref();
      this.child.stdin.end();
      let timer;
      const killed = await Promise.race([
        this.closed.then(() => false),
        new Promise((resolve) => {
          timer = setTimeout(() => resolve(true), this.closeGraceMs);
        }),
      ]);
      clearTimeout(timer);
      if (killed) {
        this.kill();
        await this.closed;
        throw new MustardProcessError(`the sidecar did not exit within ${this.closeGraceMs} ms of its stdin closing; killed it`);
      }
    })();
    return this.closePromise;
  }
}

Object.assign(SidecarClient.prototype, stageIds);

module.exports = {
  SidecarClient,
  isAnswer,
  markAnswer,
  resolveCommand,
  DEFAULT_CLOSE_GRACE_MS,
  DEFAULT_CANCEL_GRACE_MS,
};
