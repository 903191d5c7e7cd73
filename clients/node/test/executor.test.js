'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');

const { Mustard, MustardExecutor, InMemoryMustardExecutorStore, SidecarPool } = require('..');

test('SIGKILL during 200 executions with a store: every one completes, no capability is called twice', async () => {
  const pool = new SidecarPool({ size: 2 });
  const program = new Mustard('let total = 0; for (let i = 0; i < 3; i++) { total += step(n, i); } total;');
  const calls = new Map();
  let made = 0;
  const killed = [];
  const capabilities = {
    step: async (n, i) => {
      const k = `${n}:${i}`;
      calls.set(k, (calls.get(k) || 0) + 1);
      made += 1;
      // Kill a process while it serves another job's step: from the
      // 150th call on, at the first call that finds one busy (and again
      // from the 400th).
      if ((made >= 150 && killed.length === 0) || (made >= 400 && killed.length === 1)) {
        const busy = pool.processes().find((p) => p.busy);
        if (busy) {
          killed.push(busy.pid);
          process.kill(busy.pid, 'SIGKILL');
        }
      }
      await new Promise((r) => setImmediate(r));
      return n * 10 + i;
    },
  };
  const store = new InMemoryMustardExecutorStore();
  const executor = new MustardExecutor({ program, capabilities, store, pool });
  const ids = [];
  for (let n = 0; n < 200; n += 1) ids.push(await executor.enqueue({ n }));
  await executor.runWorker({ maxConcurrentJobs: 8, drain: true });
  for (let n = 0; n < 200; n += 1) {
    const record = await executor.get(ids[n]);
    assert.equal(record.state, 'completed', `job ${n}: ${JSON.stringify(record.error)}`);
    assert.equal(record.result, n * 30 + 3);
    assert.equal(await store.loadProgress(ids[n]), null);
  }
  assert.equal(killed.length, 2, 'the test killed two busy processes');
  assert.ok(pool.restarts >= 2);
  assert.equal(calls.size, 600);
  for (const [k, count] of calls) assert.equal(count, 1, `capability call ${k} made ${count} times`);
  await pool.close();
});

test('the executor records failures and cancellations', async () => {
  const program = new Mustard('const v = wait(); if (v === "boom") { throw new RangeError("bad " + v); } v;');
  let cancelId;
  const store = new InMemoryMustardExecutorStore();
  const executor = new MustardExecutor({
    program,
    store,
    capabilities: {
      wait: async () => {
        await executor.cancel(cancelId);
        return 'x';
      },
    },
  });
  cancelId = await executor.enqueue({}, { jobId: 'c' });
  await executor.runWorker({ drain: true });
  const cancelled = await executor.get('c');
  assert.equal(cancelled.state, 'cancelled');
  assert.equal(cancelled.error.name, 'MustardLimitError');

  const failing = new MustardExecutor({ program, store: new InMemoryMustardExecutorStore(), capabilities: { wait: () => 'boom' } });
  const id = await failing.enqueue({});
  await failing.runWorker({ drain: true });
  const failed = await failing.get(id);
  assert.equal(failed.state, 'failed');
  assert.equal(failed.error.name, 'MustardRuntimeError');
  assert.match(failed.error.message, /^RangeError: bad boom/);
});
