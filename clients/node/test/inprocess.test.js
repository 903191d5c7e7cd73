'use strict';

// The in-process engine (lib/inprocess.js, native/): the sidecar's
// sessions in this process, chosen with configure({ engine: 'in-process' }).
// test/run.js builds the addon and names it in $MUSTARD_SIDECAR_ADDON.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const {
  Mustard,
  Progress,
  SidecarPool,
  configure,
  processes,
  MustardLimitError,
  MustardProcessError,
  MustardSidecarError,
  MustardRuntimeError,
} = require('..');
const { DirectPath } = require('../lib/sync-direct.js');
const { InProcessSession, resolveAddon } = require('../lib/inprocess.js');
const { Worker } = require('node:worker_threads');
const { once } = require('node:events');

configure({ engine: 'in-process' });

const key = crypto.randomBytes(32);

test('run(), start() and resume() step in this process: no sidecar process is started for them', async () => {
  const program = new Mustard('async function main() { const a = await get(1); const b = await later(a); return { sum: a + b }; } main();');
  const result = await program.run({ capabilities: { get: (x) => x + 1, later: async (x) => x * 10 } });
  assert.deepEqual(result, { sum: 22 });
  const step = program.start({ capabilities: { get() {}, later() {} }, snapshotKey: key });
  assert.deepEqual(step.args, [1]);
  const listed = processes().sync;
  assert.equal(listed.length, 1);
  assert.match(listed[0].id, /^in-process-/);
  assert.equal(listed[0].pid, null);
});

test('a snapshot made in process resumes on a sidecar process, and the other way round', async () => {
  const program = new Mustard('const a = get("first"); const b = get(a + "-second"); [a, b];');
  const policy = { capabilities: { get() {} }, limits: {}, snapshotKey: key, sealKey: crypto.randomBytes(32) };
  const pool = new SidecarPool({ size: 1 });
  try {
    // In process, then on the pool's process.
    const here = program.start(policy).dump();
    const there = await Progress.load(here, policy).resumeAsync('A', { pool });
    assert.deepEqual(there.args, ['A-second']);
    // On the pool's process, then in process.
    const back = Progress.load(there.dump(), policy);
    assert.deepEqual(back.resume('B'), ['A', 'B']);
  } finally {
    await pool.close();
  }
});

test('limits hold in process: a spinning guest ends at its instruction budget or wall time, a hoarding one at its heap limit', async () => {
  const spin = new Mustard('let i = 0; while (true) { i += 1; }');
  await assert.rejects(spin.run({ limits: { instructionBudget: 100000 } }), (e) => e instanceof MustardLimitError);
  await assert.rejects(spin.run({ limits: { instructionBudget: 1e12, wallTimeMs: 50 } }), (e) => e instanceof MustardLimitError && e.code === 'limit_wall_time');
  const hoard = new Mustard('const a = []; while (true) { a.push("x".repeat(1000) + a.length); }');
  await assert.rejects(
    hoard.run({ limits: { heapLimitBytes: 1 << 20, instructionBudget: 1e12, allocationBudget: 1e12 } }),
    (e) => e instanceof MustardLimitError,
  );
  // The session serves on.
  assert.equal(await new Mustard('1 + 1').run(), 2);
});

// request sends one raw frame through a session, as lib/ops.js's steps do.
function ping(session) {
  return session.request('ping', {});
}

test('a request the contract makes fatal ends the session as a process exit would; the path starts another', () => {
  const direct = new DirectPath({ engine: 'in-process' });
  const first = direct.process();
  assert.equal(ping(first).result.kind, 'pong');
  // A header that is not JSON: nothing can answer it.
  const bad = Buffer.from('{not json');
  const frame = Buffer.alloc(8 + bad.length);
  frame.writeUInt32LE(bad.length, 0);
  bad.copy(frame, 8);
  assert.throws(() => first.exchange(frame), (e) => e instanceof MustardProcessError && /in-process session ended \(invalid request header/.test(e.message));
  assert.equal(first.alive, false);
  assert.throws(() => ping(first), MustardProcessError);
  // Over the request limit (1 MiB): fatal alike, before the body is read.
  const second = direct.process();
  assert.notEqual(second, first);
  const big = Buffer.alloc(8);
  big.writeUInt32LE((1 << 20) + 1, 0);
  assert.throws(() => second.exchange(big), (e) => e instanceof MustardProcessError && /exceeds maximum size/.test(e.message));
  assert.equal(ping(direct.process()).result.kind, 'pong');
  direct.close();
});

test('the sidecar command\'s arguments configure a session; those only a process has are refused', () => {
  // A stage bound of 1 KiB: a stage past it is refused, and the session
  // serves on; the default bound takes the same bytes.
  const small = new InProcessSession({ args: ['--max-stage-bytes', '1024'] });
  const stage = (session) => session.request('stage', { stage_id: 's', offset: 0 }, Buffer.alloc(2048));
  assert.throws(() => stage(small), (e) => e instanceof MustardSidecarError && /stage exceeds 1024 bytes/.test(e.message));
  assert.equal(ping(small).result.kind, 'pong');
  small.close();
  const plain = new InProcessSession({});
  assert.equal(stage(plain).result.total_bytes, 2048);
  plain.close();
  for (const [args, said] of [
    [['--jsonl'], /--jsonl: a session in process takes binary frames only/],
    [['--trace', '/tmp/x'], /--trace/],
    [['--log-format', 'json'], /--log-format/],
    [['--version'], /--version/],
    [['--memory-budget', 'lots'], /--memory-budget must be a positive integer/],
    [['--no-such-flag'], /unknown argument "--no-such-flag"/],
  ]) {
    assert.throws(() => new InProcessSession({ args }), (e) => e instanceof MustardProcessError && said.test(e.message), args.join(' '));
  }
});

test('a worker thread\'s sessions close when the worker exits', async () => {
  const addon = require(resolveAddon());
  await new Mustard('1').run(); // this thread's session is open
  const before = addon.sessions();
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
     const { Mustard, configure } = require(${JSON.stringify(path.join(__dirname, '..'))});
     configure({ engine: 'in-process' });
     const step = new Mustard('get(1)').start({ capabilities: { get() {} }, snapshotKey: Buffer.alloc(32, 7) });
     parentPort.postMessage({ args: step.args, open: require(${JSON.stringify(resolveAddon())}).sessions() });`,
    { eval: true },
  );
  const [message] = await once(worker, 'message');
  assert.deepEqual(message, { args: [1], open: before + 1 });
  await once(worker, 'exit');
  assert.equal(addon.sessions(), before);
});

test('an addon that is not there or not this package\'s is a clear error', () => {
  assert.throws(
    () => new InProcessSession({ addon: path.join(__dirname, 'no-such.node') }),
    (e) => e instanceof MustardProcessError && /in-process engine is not built \(no no-such\.node; build it with `npm run build:native`/.test(e.message),
  );
  assert.throws(
    () => new InProcessSession({ addon: path.join(__dirname, 'support', 'engine.js') }),
    (e) => e instanceof MustardProcessError && /not this package's/.test(e.message),
  );
});

test('$MUSTARD_SIDECAR_ENGINE with a value it does not know fails the first use', () => {
  const r = spawnSync(process.execPath, ['-e', `
    const { Mustard } = require(${JSON.stringify(path.join(__dirname, '..'))});
    try { new Mustard('1').start(); console.log('accepted'); } catch (e) { console.log(e.constructor.name + ': ' + e.message); }`], {
    encoding: 'utf8',
    env: { ...process.env, MUSTARD_SIDECAR_ENGINE: 'inprocess' },
  });
  assert.equal(r.stdout, 'TypeError: $MUSTARD_SIDECAR_ENGINE must be one of "process", "in-process", got "inprocess"\n');
});

test('configure() checks engine and addon', () => {
  const r = spawnSync(process.execPath, ['-e', `
    const { configure } = require(${JSON.stringify(path.join(__dirname, '..'))});
    for (const o of [{ engine: 'wasm' }, { addon: 3 }, { addon: '' }]) {
      try { configure(o); console.log('accepted'); } catch (e) { console.log(e.constructor.name + ': ' + e.message); }
    }`], { encoding: 'utf8' });
  assert.equal(r.stdout, [
    'TypeError: configure() options.engine must be one of "process", "in-process"',
    'TypeError: configure() options.addon must be a file name',
    'TypeError: configure() options.addon must be a file name',
    '',
  ].join('\n'));
});

test('a guest error and a single-use refusal read as on a process', () => {
  const program = new Mustard('const v = get(); throw new Error("bad " + v);');
  const step = program.start({ capabilities: { get() {} }, snapshotKey: key });
  assert.throws(() => step.resume(1), (e) => e instanceof MustardRuntimeError && /bad 1/.test(e.message));
  assert.throws(() => step.resume(1), /single-use/);
});
