'use strict';

// When run() calls capabilities: on the direct path (Linux, the default)
// as the reference's addon does (the first call before run() returns,
// each next one in the microtask turn its predecessor's settlement
// resumes the guest); with a pool, MUSTARD_SYNC_DIRECT=0 or
// configure({ blockingRun: false }), after the sidecar's answer arrives.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const { Mustard, SidecarPool, MustardLimitError, processes } = require('..');

const { inProcess } = require('./support/engine.js');
const direct = inProcess || (process.platform === 'linux' && process.env.MUSTARD_SYNC_DIRECT !== '0');

function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const SEQUENCE = `
async function main() {
  const out = [];
  for (let i = 0; i < 3; i += 1) {
    try {
      out.push(await tool(i));
    } catch (e) {
      out.push('caught ' + e.message);
    }
  }
  return out;
}
main();
`;

test('run() calls the first capability before it returns, and each next one a microtask turn after the last settled', { skip: !direct }, async () => {
  const program = new Mustard(SEQUENCE);
  const calls = [];
  const pending = program.run({
    capabilities: {
      tool(i) {
        const d = deferred();
        calls.push({ i, d });
        return d.promise;
      },
    },
  });
  assert.equal(calls.length, 1, 'the first call is made before run() returns');
  calls[0].d.resolve('a');
  await Promise.resolve();
  await Promise.resolve();
  assert.equal(calls.length, 2, 'the next call follows the settlement within two microtask turns');
  calls[1].d.reject(new Error('b'));
  await Promise.resolve();
  await Promise.resolve();
  assert.equal(calls.length, 3);
  calls[2].d.resolve('c');
  assert.deepEqual(await pending, ['a', 'caught b', 'c']);
  assert.deepEqual(processes().pool, [], 'run() without a pool starts no pool process');
});

test('run(): an abort after a call was made ends the execution with "execution cancelled"', async () => {
  const program = new Mustard(SEQUENCE);
  for (const settleFirst of [false, true]) {
    const controller = new AbortController();
    const d = deferred();
    let calls = 0;
    const pending = program.run({
      signal: controller.signal,
      capabilities: {
        tool() {
          calls += 1;
          return d.promise;
        },
      },
    });
    // The call is made (at once on the direct path, later otherwise).
    while (calls === 0) await new Promise((r) => setImmediate(r));
    if (settleFirst) d.resolve('late');
    controller.abort();
    if (!settleFirst) d.reject(new Error('late'));
    await assert.rejects(pending, (e) => e instanceof MustardLimitError && e.message === 'execution cancelled' && e.code === 'limit_cancelled');
    assert.equal(calls, 1);
  }
});

test('batch run() starts every outstanding call before it returns', { skip: !direct }, async () => {
  const program = new Mustard('async function main() { return Promise.all([tool(1), tool(2), tool(3)]); }\nmain();');
  const started = [];
  const pending = program.run({
    hostCalls: 'batch',
    capabilities: {
      tool: async (x) => {
        started.push(x);
        return x * 10;
      },
    },
  });
  assert.deepEqual(started, [1, 2, 3]);
  assert.deepEqual(await pending, [10, 20, 30]);
});

test('a blocking run() whose process dies goes on from its snapshot on a new process', { skip: !direct || (inProcess && 'the in-process engine has no sidecar process to kill') }, async () => {
  const program = new Mustard(SEQUENCE);
  const calls = [];
  const value = await program.run({
    capabilities: {
      async tool(i) {
        calls.push(i);
        if (i === 1) process.kill(processes().sync[0].pid, 'SIGKILL');
        return i * 3;
      },
    },
  });
  assert.deepEqual(value, [0, 3, 6]);
  assert.deepEqual(calls, [0, 1, 2], 'no capability is called twice');
  const [{ pid }] = processes().sync;
  process.kill(pid, 'SIGKILL');
  assert.deepEqual(await program.run({ capabilities: { tool: (i) => i } }), [0, 1, 2], 'a start on a dead process starts again');
  assert.notEqual(processes().sync[0].pid, pid);
});

test('run() with a pool steps without blocking: no call before it returns', async () => {
  const pool = new SidecarPool({ size: 1 });
  try {
    const program = new Mustard(SEQUENCE);
    let calls = 0;
    const pending = program.run({ pool, capabilities: { tool: async (i) => (calls += 1, i) } });
    assert.equal(calls, 0);
    assert.deepEqual(await pending, [0, 1, 2]);
    assert.equal(calls, 3);
    assert.equal(pool.processes().length, 1);
  } finally {
    await pool.close();
  }
});

// child runs a script in a Node process of its own (configure() and the
// environment are process-wide) and returns what it printed.
function child(script, env = {}) {
  const r = spawnSync(process.execPath, ['-e', script], {
    cwd: path.join(__dirname, '..'),
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 120000,
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const PROBE = `
const { Mustard, processes } = require('.');
(async () => {
  const program = new Mustard(${JSON.stringify(SEQUENCE)});
  let calls = 0;
  const pending = program.run({ capabilities: { tool: async (i) => (calls += 1, i * 2) } });
  const before = calls;
  const value = await pending;
  console.log(JSON.stringify({ before, value, pool: processes().pool.length }));
})();
`;

test('configure({ blockingRun: false }) and MUSTARD_SYNC_DIRECT=0 keep run() on the pool, without blocking', { skip: inProcess && 'MUSTARD_SYNC_DIRECT=0 turns off the FIFO path only' }, () => {
  const expected = { before: 0, value: [0, 2, 4], pool: 1 };
  const configured = `require('.').configure({ blockingRun: false, poolSize: 1 });\n${PROBE}`;
  assert.deepEqual(child(configured), expected);
  assert.deepEqual(child(PROBE, { MUSTARD_SYNC_DIRECT: '0' }).before, 0);
  if (direct) assert.deepEqual(child(PROBE), { before: 1, value: [0, 2, 4], pool: 0 });
  const bad = spawnSync(process.execPath, ['-e', `require('.').configure({ blockingRun: 'no' })`], {
    cwd: path.join(__dirname, '..'),
    encoding: 'utf8',
  });
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /TypeError: configure\(\) options.blockingRun must be a boolean/);
});
