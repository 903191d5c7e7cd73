'use strict';

// The synchronous API's direct path (Linux): one sidecar process whose
// stdin and stdout are FIFOs the calling thread reads and writes with
// blocking calls, so a synchronous step is one round trip through two
// pipes, as an async one is, instead of also two hops to the helper
// thread (lib/sync.js) and back. The steps are those of the async API
// (lib/ops.js, run by driveSync), values past 1 MiB staged alike. Where
// FIFOs cannot be made, the helper thread does it all.
//
// The FIFOs are made in a private temporary directory and unlinked as
// soon as both ends are open: nothing is left on disk. This side holds
// only the write end of the sidecar's stdin and the read end of its
// stdout, so a process that dies is an EPIPE or an end of file, never a
// wait.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');

const { MustardProcessError, fromResponse } = require('./errors.js');
const { PROTOCOL_VERSION, DEFAULT_MAX_RESPONSE_BYTES, encodeFrame } = require('./wire.js');
const { resolveCommand, markAnswer } = require('./client.js');
const ops = require('./ops.js');
const { stageIds } = require('./stageids.js');

const { O_RDONLY, O_WRONLY, O_RDWR } = fs.constants;

// FALLBACK: the direct path is not available here (no FIFOs); the caller
// sends the request through the helper thread.
const FALLBACK = Symbol('mustard-sidecar.fallback');

const STDERR_TAIL = 4096;

// supported tells whether the synchronous API has a direct path here:
// the in-process engine wherever it is chosen, FIFOs on Linux.
function supported(options) {
  if (options?.engine === 'in-process') return true;
  return process.platform === 'linux' && process.env.MUSTARD_SYNC_DIRECT !== '0';
}

let nextId = 0;

// DirectSession is what a step (lib/ops.js) drives: request() writes one
// request and returns its answer, blocking. A subclass moves the frames:
// DirectProcess through a sidecar process's FIFOs, InProcessSession
// (lib/inprocess.js) through the in-process engine.
class DirectSession {
  constructor(options, prefix) {
    this.id = `${prefix}-${++nextId}`;
    this.maxResponseBytes = options.maxResponseBytes > 0 ? options.maxResponseBytes : DEFAULT_MAX_RESPONSE_BYTES;
    this.startedAt = Date.now();
    this.requests = 0;
    this.nextRequestId = 0;
    this.known = new Set();
    this.stageSeq = 0;
    this.freeStageIds = [];
    this.stagesUploaded = 0;
    this.dead = null;
  }

  get alive() {
    return this.dead === null;
  }

  protocolError(reason) {
    this.fail(new MustardProcessError(`the sidecar broke the wire protocol (${reason}); the sidecar was stopped`));
  }

  fail(error) {
    this.dead ??= error;
    this.kill();
    this.close();
    return this.dead;
  }

  // request writes one request and reads its answer, blocking. It throws
  // MustardRequestTooLargeError, with nothing written, for a request
  // over the sidecar's limit (the steps then stage its values).
  request(method, fields, payload = null) {
    if (this.dead !== null) throw this.dead;
    const id = ++this.nextRequestId;
    const frame = encodeFrame({ protocol_version: PROTOCOL_VERSION, id, method, ...fields }, payload);
    const { headerLength, body } = this.exchange(frame);
    let header;
    try {
      header = JSON.parse(body.toString('utf8', 0, headerLength));
    } catch {
      throw this.fail(new MustardProcessError('the sidecar broke the wire protocol (undecodable response header); the sidecar was stopped'));
    }
    if (header === null || typeof header !== 'object' || header.protocol_version !== PROTOCOL_VERSION || header.id !== id) {
      throw this.fail(new MustardProcessError('the sidecar broke the wire protocol (a response that answers no request); the sidecar was stopped'));
    }
    this.requests += 1;
    if (header.ok === true) return { result: header.result, payload: body.subarray(headerLength) };
    throw markAnswer(fromResponse(typeof header.error === 'string' ? header.error : 'request failed', header.error_code, header.logs));
  }

  // checkLength fails the session for a response over the client's limit.
  checkLength(headerLength, payloadLength) {
    if (headerLength + payloadLength > this.maxResponseBytes) {
      throw this.fail(
        new MustardProcessError(
          `the sidecar broke the wire protocol (a response of ${headerLength + payloadLength} bytes exceeds the client's limit of ${this.maxResponseBytes} bytes (maxResponseBytes)); the sidecar was stopped`,
        ),
      );
    }
  }
}

Object.assign(DirectSession.prototype, stageIds);

class DirectProcess extends DirectSession {
  constructor(options) {
    super(options, 'direct');
    this.stderr = '';
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mustard-sync-'));
    const inPath = path.join(dir, 'in');
    const outPath = path.join(dir, 'out');
    const fds = [];
    const open = (p, flags) => {
      const fd = fs.openSync(p, flags);
      fds.push(fd);
      return fd;
    };
    try {
      const made = spawnSync('mkfifo', ['-m', '600', inPath, outPath], { stdio: 'ignore' });
      if (made.status !== 0) throw new Error('mkfifo failed');
      // Opened read-write first, so that no open waits for its other end.
      const inRW = open(inPath, O_RDWR);
      const childIn = open(inPath, O_RDONLY);
      const outRW = open(outPath, O_RDWR);
      const childOut = open(outPath, O_WRONLY);
      const child = spawn(resolveCommand(options.command), Array.isArray(options.args) ? options.args : [], {
        stdio: [childIn, childOut, 'pipe'],
        env: options.env ? { ...process.env, ...options.env } : process.env,
        windowsHide: true,
      });
      this.child = child;
      child.on('error', () => {});
      if (child.pid === undefined) throw new Error('the sidecar did not start');
      this.pid = child.pid;
      child.stderr.on('data', (chunk) => {
        this.stderr = (this.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
      });
      child.on('exit', (code, signal) => {
        this.dead ??= new MustardProcessError(`sidecar process exited (${signal ? `killed by ${signal}` : `exit status ${code}`})`);
      });
      child.unref();
      child.stderr.unref?.();
      this.wfd = fs.openSync(inPath, O_WRONLY);
      this.rfd = fs.openSync(outPath, O_RDONLY);
      void inRW;
      void outRW;
    } finally {
      for (const fd of fds) fs.closeSync(fd);
      fs.rmSync(dir, { recursive: true, force: true });
    }
    this.prefix = Buffer.allocUnsafe(8);
  }

  close() {
    if (this.closed) return;
    this.closed = true;
    this.dead ??= new MustardProcessError('the sidecar client is closed');
    for (const fd of [this.wfd, this.rfd]) {
      try {
        fs.closeSync(fd);
      } catch {
        // already closed
      }
    }
  }

  kill() {
    try {
      this.child.kill('SIGKILL');
    } catch {
      // gone
    }
  }

  // exchange writes a request frame and reads the response frame.
  exchange(frame) {
    try {
      let off = 0;
      while (off < frame.length) off += fs.writeSync(this.wfd, frame, off, frame.length - off);
    } catch (error) {
      const gone = new MustardProcessError(`the sidecar process is gone (${error.code || error.message})`);
      gone.notSent = true;
      this.fail(gone);
      throw gone;
    }
    this.readFull(this.prefix, 8);
    const headerLength = this.prefix.readUInt32LE(0);
    const payloadLength = this.prefix.readUInt32LE(4);
    this.checkLength(headerLength, payloadLength);
    const body = Buffer.allocUnsafe(headerLength + payloadLength);
    this.readFull(body, body.length);
    return { headerLength, body };
  }

  readFull(buf, n) {
    let off = 0;
    while (off < n) {
      let k;
      try {
        k = fs.readSync(this.rfd, buf, off, n - off, null);
      } catch (error) {
        if (error.code === 'EAGAIN' || error.code === 'EINTR') continue;
        throw this.fail(new MustardProcessError(`reading from the sidecar failed (${error.code || error.message})`));
      }
      if (k === 0) {
        const said = this.stderr.trim().split('\n').pop();
        throw this.fail(new MustardProcessError(`sidecar process exited (its stdout closed)${said ? `: ${said}` : ''}`));
      }
      off += k;
    }
  }
}

// DirectPath runs compile, start and resume on a DirectProcess, started
// when first needed and replaced when it died.
class DirectPath {
  constructor(options) {
    this.options = options;
    this.proc = null;
    this.broken = false;
    // The in-process engine has no fallback: a host that chose it hears
    // why it cannot load.
    this.inProcess = options.engine === 'in-process';
  }

  process() {
    if (this.proc === null || !this.proc.alive) {
      if (this.proc !== null) this.proc.close();
      // inprocess.js is required here, not at the top: it extends
      // DirectSession, from this file.
      this.proc = this.inProcess ? new (require('./inprocess.js').InProcessSession)(this.options) : new DirectProcess(this.options);
    }
    return this.proc;
  }

  // available tells whether requests go on this path: it starts the
  // process if none runs, and a platform without FIFOs turns the path
  // off for good (the helper thread then does it all).
  available() {
    if (this.broken) return false;
    try {
      this.process();
      return true;
    } catch (error) {
      if (this.inProcess) throw error;
      this.broken = true;
      return false;
    }
  }

  processes() {
    if (this.proc === null || !this.proc.alive) return [];
    const p = this.proc;
    return [{ id: p.id, pid: p.pid, busy: false, startedAt: p.startedAt, requests: p.requests, stages: p.stagesUploaded }];
  }

  // call runs op, or returns FALLBACK for one the helper thread must do.
  // A request that was not written (the process had died) is sent again
  // on a new process.
  call(op, args) {
    if (this.broken) return FALLBACK;
    for (let attempt = 1; ; attempt += 1) {
      let proc;
      try {
        proc = this.process();
      } catch (error) {
        if (this.inProcess) throw error;
        this.broken = true; // no FIFOs here: the helper thread does it all
        return FALLBACK;
      }
      try {
        if (op === 'compile') return ops.compileSync(proc, args.source, args.language);
        if (op === 'start') return ops.startSync(proc, args);
        if (op === 'resume') return ops.resumeSync(proc, args);
        return FALLBACK;
      } catch (error) {
        if (error instanceof MustardProcessError && error.notSent && attempt < 3) continue;
        throw error;
      }
    }
  }

  close() {
    if (this.proc !== null) this.proc.close();
    this.proc = null;
  }
}

module.exports = { DirectPath, DirectSession, FALLBACK, supported };
