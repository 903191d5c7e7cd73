'use strict';

// The host features beyond the reference: the capability context
// ({ callId, signal } as `this`), the executor's batch mode and file
// store, and the process-wide batch default.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { Mustard, MustardExecutor, InMemoryMustardExecutorStore, FileMustardExecutorStore } = require('..');
const { inProcess } = require('./support/engine.js');

test('run() calls capabilities with (...args) and this = { callId, signal }; the signal aborts when run ends', async () => {
  const program = new Mustard('const a = f(1, 2); const b = f(3); const c = g(4); [a, b, c];');
  const seen = [];
  let signal;
  const result = await program.run({
    capabilities: {
      f(...args) {
        seen.push({ callId: this.callId, args });
        signal = this.signal;
        assert.equal(signal.aborted, false);
        return args.length;
      },
      // An arrow function keeps the reference's signature and ignores this.
      g: async (x) => x * 2,
    },
  });
  assert.deepEqual(result, [2, 1, 8]);
  assert.deepEqual(seen, [
    { callId: 1, args: [1, 2] },
    { callId: 2, args: [3] },
  ]);
  assert.equal(signal.aborted, true, 'the call signal aborts once run() ended');
});

test('batch run(): call ids are the guest call order and calls run at once', async () => {
  const program = new Mustard('async function main() { return Promise.all([slow(1), slow(2), slow(3)]); } main();');
  const ids = [];
  let inFlight = 0;
  let peak = 0;
  const result = await program.run({
    hostCalls: 'batch',
    capabilities: {
      async slow(n) {
        ids.push(this.callId);
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight -= 1;
        return n * 10;
      },
    },
  });
  assert.deepEqual(result, [10, 20, 30]);
  assert.deepEqual(ids, [1, 2, 3]);
  assert.equal(peak, 3);

});

test("run()'s own signal aborts the calls' signal", async () => {
  const program = new Mustard('wait();');
  const controller = new AbortController();
  await assert.rejects(
    program.run({
      signal: controller.signal,
      capabilities: {
        wait() {
          return new Promise((resolve) => {
            this.signal.addEventListener('abort', () => resolve('late'));
            controller.abort();
          });
        },
      },
    }),
    /cancelled/,
  );
});

test('executor batch mode: every outstanding call at once, each with its call id and the job id', async () => {
  const program = new Mustard('async function main() { const xs = await Promise.all([get(base + 1), get(base + 2)]); return xs[0] + xs[1] + (await get(0)); } main();');
  let inFlight = 0;
  let peak = 0;
  const calls = [];
  const store = new InMemoryMustardExecutorStore();
  let waiting = null;
  const executor = new MustardExecutor({
    program,
    store,
    hostCalls: 'batch',
    capabilities: {
      async get(n) {
        calls.push(`${this.jobId}/${this.callId}/${n}`);
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        if (waiting === null) waiting = (await store.get(this.jobId)).calls;
        await new Promise((resolve) => setImmediate(resolve));
        inFlight -= 1;
        return n;
      },
    },
  });
  const id = await executor.enqueue({ base: 10 }, { jobId: 'b' });
  await executor.runWorker({ drain: true });
  const record = await executor.get(id);
  assert.equal(record.state, 'completed', JSON.stringify(record.error));
  assert.equal(record.result, 23);
  assert.equal(peak, 2);
  assert.deepEqual(calls, ['b/1/11', 'b/2/12', 'b/3/0']);
  assert.deepEqual(waiting, [
    { callId: 1, capability: 'get', args: [11] },
    { callId: 2, capability: 'get', args: [12] },
  ]);
});

test('executor one-call mode: call ids count the calls; the file store keeps jobs and progress bytes', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mustard-filestore-'));
  try {
    const store = new FileMustardExecutorStore(dir);
    const program = new Mustard('let t = 0; for (let i = 0; i < 3; i++) { t += step(i); } t;');
    const ids = [];
    const executor = new MustardExecutor({
      program,
      store,
      capabilities: {
        step(i) {
          ids.push(this.callId);
          return i + 1;
        },
      },
    });
    const jobId = await executor.enqueue({}, { jobId: 'a/b ü' });
    assert.deepEqual(await store.enqueue({ jobId, state: 'queued', input: {}, attempts: 0, createdAt: 0, updatedAt: 0 }), { jobId, inserted: false });
    assert.deepEqual(await store.list(), [jobId]);
    await executor.runWorker({ drain: true });
    const record = await executor.get(jobId);
    assert.equal(record.state, 'completed');
    assert.equal(record.result, 6);
    assert.deepEqual(ids, [1, 2, 3]);

    // Progress bytes round-trip; leftover temporary files do not exist.
    const other = await executor.enqueue({}, { jobId: 'p' });
    await store.saveProgress(other, { snapshot: Buffer.from([0, 1, 255]), program: new Uint8Array([9]), snapshot_id: 'x', answer: { type: 'value', value: 1 } });
    const loaded = await store.loadProgress(other);
    assert.deepEqual(loaded.snapshot, Buffer.from([0, 1, 255]));
    assert.deepEqual(loaded.program, Buffer.from([9]));
    assert.deepEqual(loaded.answer, { type: 'value', value: 1 });
    for (const sub of ['jobs', 'progress', 'claims', 'cancel']) {
      assert.deepEqual(fs.readdirSync(path.join(dir, sub)).filter((f) => f.includes('.tmp-')), []);
    }

    // A queued job is cancelled at once; cancelling a finished one is ignored.
    assert.equal(await store.requestCancel(other), 'cancelled');
    assert.equal((await store.get(other)).state, 'cancelled');
    assert.equal(await store.requestCancel(jobId), 'ignored');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('file store claims: exclusive while the claiming process lives, taken over once it is gone', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mustard-claims-'));
  try {
    const a = new FileMustardExecutorStore(dir);
    const b = new FileMustardExecutorStore(dir);
    await a.enqueue({ jobId: 'j', state: 'queued', input: {}, attempts: 0, createdAt: 1, updatedAt: 1 });
    assert.deepEqual(await a.claimRunnable(5, 'wa'), ['j']);
    assert.deepEqual(await b.claimRunnable(5, 'wb'), [], 'a live claim holds');
    await a.releaseClaim('j', 'wa');
    assert.deepEqual(await b.claimRunnable(5, 'wb'), ['j']);
    await b.releaseClaim('j', 'wb');

    // A claim written by a process that has exited is stale.
    const gone = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => gone.on('exit', resolve));
    const claim = path.join(dir, 'claims', `${Buffer.from('j').toString('base64url')}.json`);
    fs.writeFileSync(claim, JSON.stringify({ workerId: 'dead', pid: gone.pid, host: os.hostname(), expiresAt: Date.now() + 3600e3 }));
    assert.deepEqual(await b.claimRunnable(5, 'wb'), ['j']);
    assert.equal(JSON.parse(fs.readFileSync(claim, 'utf8')).workerId, 'wb');
    // One from another machine holds until its lease ends.
    fs.writeFileSync(claim, JSON.stringify({ workerId: 'far', pid: 1, host: 'elsewhere', expiresAt: Date.now() + 3600e3 }));
    b._held.clear();
    assert.deepEqual(await b.claimRunnable(5, 'wb'), []);
    fs.writeFileSync(claim, JSON.stringify({ workerId: 'far', pid: 1, host: 'elsewhere', expiresAt: Date.now() - 1 }));
    assert.deepEqual(await b.claimRunnable(5, 'wb'), ['j']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('configure({ hostCalls: "batch" }) makes batch the default of the process', () => {
  const script = `
    const { configure, Mustard } = require(${JSON.stringify(path.join(__dirname, '..'))});
    let refused = false;
    try { configure({ hostCalls: 'many' }); } catch (e) { refused = /hostCalls/.test(e.message); }
    if (!refused) throw new Error('hostCalls "many" accepted');
    configure({ hostCalls: 'batch' });
    const p = new Mustard('async function main() { return Promise.all([f(1), f(2)]); } main();').start({ capabilities: { f() {} } });
    process.stdout.write(JSON.stringify(p.calls.map((c) => c.callId)));
  `;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: process.env });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, '[1,2]');
});

test('on Linux the synchronous API talks to its own process directly; a killed one is replaced, the step continued from its bytes', { skip: (process.platform !== 'linux' && 'Linux only') || (inProcess && 'the in-process engine has no sidecar process to kill') }, () => {
  const { processes } = require('..');
  const program = new Mustard('const a = f(1); const b = f(2); a + b;');
  const first = program.start({ capabilities: { f() {} } });
  const [direct] = processes().sync;
  assert.match(String(direct.id), /^direct-/);
  process.kill(direct.pid, 'SIGKILL');
  const second = first.resume(10);
  assert.equal(second.capability, 'f');
  assert.notEqual(processes().sync[0].pid, direct.pid, 'a new process took over');
  assert.equal(second.resume(20), 30);
});
