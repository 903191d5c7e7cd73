'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');

const {
  Mustard,
  Progress,
  ExecutionContext,
  SidecarPool,
  MustardError,
  MustardParseError,
  MustardRuntimeError,
  MustardLimitError,
  MustardSerializationError,
  processes,
} = require('..');
const { inProcess } = require('./support/engine.js');

const key = crypto.randomBytes(32);

test('compile errors are typed and carry the error code', () => {
  assert.throws(() => new Mustard('const = 1;'), (e) =>
    e instanceof MustardParseError && e instanceof MustardError && e.name === 'MustardParseError' && e.kind === 'Parse' && e.code === 'parse');
  assert.throws(() => Mustard.validateProgram('let x = ;'), MustardParseError);
  Mustard.validateProgram('1');
});

test('start and resume step through an execution synchronously', () => {
  const program = new Mustard('const a = get(1); const b = get(a + 1); ({ sum: a + b });');
  const capabilities = { get() {} };
  let step = program.start({ capabilities, snapshotKey: key });
  assert.ok(step instanceof Progress);
  assert.equal(step.capability, 'get');
  assert.deepEqual(step.args, [1]);
  const first = step;
  step = step.resume(10);
  assert.deepEqual(step.args, [11]);
  assert.throws(() => first.resume(10), (e) => e instanceof MustardRuntimeError && /single-use/.test(e.message));
  assert.throws(() => step.resumeError(new Error('nope')), (e) => e instanceof MustardRuntimeError && /^Error: nope/.test(e.message));
  assert.throws(() => step.resume(1), /single-use/);
});

test('resumeError throws in the guest, where it can be caught; cancel ends the execution', () => {
  const program = new Mustard(`
    let out;
    try { get(1); } catch (e) { out = [e.name, e.message, e.code, e.details]; }
    out;`);
  const err = Object.assign(new Error('no such user'), { code: 'E_USER', details: { id: 1 } });
  const value = program.start({ capabilities: { get() {} } }).resumeError(err);
  assert.deepEqual(value, ['Error', 'no such user', 'E_USER', { id: 1 }]);
  assert.throws(() => program.start({ capabilities: { get() {} } }).cancel(), (e) =>
    e instanceof MustardLimitError && e.message === 'execution cancelled' && e.code === 'limit_cancelled');
});

test('guest failures are typed errors with their codes', async () => {
  await assert.rejects(new Mustard('null.x').run(), (e) =>
    e instanceof MustardRuntimeError && e.code === 'runtime' && /^TypeError: /.test(e.message));
  await assert.rejects(new Mustard('for (;;) {}').run({ limits: { instructionBudget: 1000 } }), (e) =>
    e instanceof MustardLimitError && e.message === 'instruction budget exhausted' && e.code === 'limit_instruction_budget');
  await assert.rejects(new Mustard('for (;;) {}').run({ limits: { instructionBudget: 1e15, wallTimeMs: 50 } }), (e) =>
    e instanceof MustardLimitError && e.code === 'limit_wall_time');
  await assert.rejects(new Mustard('1').run({ limits: { instructions: 5 } }), /unknown limit "instructions"/);
});

test('capabilities may be sync or return Promises; a rejection is a guest error', async () => {
  const program = new Mustard(`
    async function main() {
      const a = await one();
      let b;
      try { await two(); } catch (e) { b = e.message; }
      return [a, b, await three()];
    }
    main();`);
  const value = await program.run({
    capabilities: {
      one: () => 1,
      two: async () => {
        throw new Error('async failure');
      },
      three: () => 3,
    },
  });
  assert.deepEqual(value, [1, 'async failure', 3]);
});

test('an ExecutionContext caches the policy; it cannot be combined with policy options', async () => {
  const context = new ExecutionContext({ capabilities: { add: (a, b) => a + b }, limits: { instructionBudget: 100000 }, snapshotKey: key });
  const program = new Mustard('add(x, 1)');
  assert.equal(await program.run({ context, inputs: { x: 41 } }), 42);
  const step = program.start({ context, inputs: { x: 1 } });
  assert.equal(step.resume(5), 5);
  assert.throws(() => program.start({ context, limits: {} }), /context cannot be combined/);
});

function freshSyncProcess() {
  for (const p of processes().sync) process.kill(p.pid, 'SIGKILL');
}

for (const sealed of [false, true]) {
  test(`dump() bytes resume in a fresh process (${sealed ? 'sealed' : 'plain'})`, { skip: inProcess && 'the in-process engine has no sidecar process to kill' }, async () => {
    const sealKey = sealed ? crypto.randomBytes(32) : undefined;
    const program = new Mustard('const a = get("first"); const b = get(a + "-second"); [a, b];');
    const policy = { capabilities: { get() {} }, limits: {}, snapshotKey: key, sealKey };
    const first = program.start(policy);
    const dumped = first.dump();
    assert.ok(first.snapshot.includes(Buffer.from('mustard-program')) !== sealed, 'sealed bytes must not show the program');
    const saved = JSON.parse(JSON.stringify({ ...dumped, snapshot: dumped.snapshot.toString('base64'), program: dumped.program.toString('base64') }));
    saved.snapshot = Buffer.from(saved.snapshot, 'base64');
    saved.program = Buffer.from(saved.program, 'base64');

    // Synchronously, after the process that ran it died.
    freshSyncProcess();
    const loaded = Progress.load(saved, policy);
    assert.equal(loaded.capability, 'get');
    assert.deepEqual(loaded.args, ['first']);
    const second = loaded.resume('A');
    assert.deepEqual(second.args, ['A-second']);
    assert.deepEqual(second.resume('B'), ['A', 'B']);

    // A dump is single-use in a process, as in the reference, unless it
    // is loaded with multiUse.
    assert.throws(() => Progress.load(saved, policy), (e) => e instanceof MustardRuntimeError && /single-use/.test(e.message));
    assert.throws(() => first.resume('A'), /single-use/);
    const reuse = { ...policy, multiUse: true };

    // Asynchronously, on a pool that never saw the execution.
    const pool = new SidecarPool({ size: 1 });
    const again = await Progress.load(saved, reuse).resumeAsync('X', { pool });
    assert.deepEqual(await again.resumeAsync('Y', { pool }), ['X', 'Y']);
    await pool.close();

    if (sealed) {
      const withoutSeal = Progress.load(saved, { ...reuse, sealKey: undefined });
      assert.throws(() => withoutSeal.resume('A'), (e) => e instanceof MustardSerializationError && e.code === 'seal_key_required');
      const otherSeal = Progress.load(saved, { ...reuse, sealKey: crypto.randomBytes(32) });
      assert.throws(() => otherSeal.resume('A'), (e) => e.code === 'wrong_seal_key');
    }
    const forged = { ...saved, snapshot: Buffer.concat([saved.snapshot, Buffer.from([0])]) };
    assert.throws(() => Progress.load(forged, policy), /Progress.load\(\) rejected a tampered or unauthenticated snapshot/);
    assert.throws(() => Progress.load(saved, { ...reuse, snapshotKey: crypto.randomBytes(32) }), /mismatched snapshot key digest/);
    assert.throws(() => Progress.load(saved, { ...reuse, capabilities: { other() {} } }), /snapshot policy rejected unauthorized capability `get`/);
  });
}

test('batch mode: run starts every outstanding call at once', async () => {
  const program = new Mustard(`
    async function main() {
      const ids = [1, 2, 3, 4, 5];
      const users = await Promise.all(ids.map((id) => get_user(id)));
      return users.map((u) => u.name).join(",");
    }
    main();`);
  const arrived = [];
  let release;
  const allArrived = new Promise((r) => {
    release = r;
  });
  // Each call waits until all five have been made: the run completes only
  // if they are all outstanding at once.
  const get_user = async (id) => {
    arrived.push(id);
    if (arrived.length === 5) release();
    await allArrived;
    return { name: `u${id}` };
  };
  assert.equal(await program.run({ capabilities: { get_user }, hostCalls: 'batch' }), 'u1,u2,u3,u4,u5');
  assert.deepEqual(arrived.sort(), [1, 2, 3, 4, 5]);
  // In one mode the same program makes its calls one at a time.
  let order = [];
  assert.equal(await program.run({ capabilities: { get_user: (id) => (order.push(id), { name: `u${id}` }) } }), 'u1,u2,u3,u4,u5');
  assert.deepEqual(order, [1, 2, 3, 4, 5]);
  // maxConcurrentCalls bounds how many run at once.
  let running = 0;
  let peak = 0;
  order = [];
  await program.run({
    hostCalls: 'batch',
    maxConcurrentCalls: 2,
    capabilities: {
      get_user: async (id) => {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((r) => setImmediate(r));
        running -= 1;
        return { name: String(id) };
      },
    },
  });
  assert.equal(peak, 2);
});

test('batch mode with start: every outstanding call, answered by id', async () => {
  const program = new Mustard(`
    async function main() { const [a, b] = await Promise.all([get(1), get(2)]); return a + b; }
    main();`);
  const step = program.start({ capabilities: { get() {} }, hostCalls: 'batch', snapshotKey: key });
  assert.deepEqual(step.calls.map((c) => [c.callId, c.capability, c.args]), [[1, 'get', [1]], [2, 'get', [2]]]);
  const partial = step.resumeCalls([{ callId: 2, value: 20 }]);
  assert.deepEqual(partial.calls.map((c) => c.callId), [1]);
  const dumped = partial.dump();
  const loaded = Progress.load(dumped, { capabilities: { get() {} }, limits: {}, snapshotKey: key, multiUse: true });
  assert.deepEqual(loaded.calls.map((c) => c.callId), [1]);
  assert.equal(await loaded.resumeCallsAsync([{ callId: 1, value: 10 }]), 30);
  assert.equal(partial.resume(1), 21);
});

test('startAsync and resumeAsync take an AbortSignal that cancels the guest in band', async () => {
  const program = new Mustard('const n = get(); let i = 0; while (i < n) { i++; } i;');
  const step = await program.startAsync({ capabilities: { get() {} }, limits: { instructionBudget: 1e15 } });
  const controller = new AbortController();
  const resumed = step.resumeAsync(1e14, { signal: controller.signal });
  setTimeout(() => controller.abort(), 50);
  await assert.rejects(resumed, (e) => e instanceof MustardLimitError && e.message === 'execution cancelled');
  await assert.rejects(program.startAsync({ signal: AbortSignal.abort() }), MustardLimitError);
});

test('snapshots and answers larger than a frame go through stage', async () => {
  const program = new Mustard(`
    const a = get(1); const b = get(2); const c = get(3);
    [a.length, b.length, c.length];`);
  const answer = () => crypto.randomBytes(650_000).toString('base64'); // 866,668 characters each
  const policy = { capabilities: { get() {} }, limits: { heapLimitBytes: 64 << 20 }, snapshotKey: key };
  const s2 = program.start(policy).resume(answer()).resume(answer());
  assert.ok(s2.snapshot.length > 1 << 20, `snapshot of ${s2.snapshot.length} bytes`);
  const pool = new SidecarPool({ size: 1 });
  assert.deepEqual(await Progress.load(s2.dump(), policy).resumeAsync('z', { pool }), [866_668, 866_668, 1]);
  // An answer of 1 MiB goes through a stage as well.
  const step = program.start(policy).resume('y'.repeat(1 << 20));
  assert.deepEqual(step.args, [2]);
  assert.deepEqual(step.resume('b').resume('c'), [1 << 20, 1, 1]);
  await pool.close();
});
