'use strict';

// Listing and retention: jobs listed by state with the time of their last
// step, one job's status read without running it, finished jobs deleted
// past their retention, on both stores.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { Mustard, MustardExecutor, InMemoryMustardExecutorStore, FileMustardExecutorStore } = require('..');

for (const kind of ['memory', 'file']) {
  test(`${kind} store: list by state, status without running, prune by retention`, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mustard-list-'));
    try {
      const c = { t: 1_000_000 };
      const now = () => c.t;
      const store = kind === 'memory' ? new InMemoryMustardExecutorStore({ now }) : new FileMustardExecutorStore(dir, { now });
      // ok: completes; boom: fails; wait: stays waiting (the worker is
      // stopped inside its call); c: cancelled while queued.
      const program = new Mustard('const v = get(kind); if (v === "boom") throw new Error("bad"); v;');
      const stop = new AbortController();
      const executor = new MustardExecutor({
        program,
        store,
        capabilities: {
          get(kind) {
            if (kind === 'wait') {
              stop.abort();
              const { signal } = this;
              if (signal.aborted) throw new Error('stopped');
              return new Promise((resolve, reject) => signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true }));
            }
            return kind;
          },
        },
      });
      await executor.enqueue({ kind: 'ok' }, { jobId: 'ok' });
      await executor.enqueue({ kind: 'boom' }, { jobId: 'boom' });
      await executor.runWorker({ drain: true });
      c.t += 1000;
      await executor.enqueue({ kind: 'wait' }, { jobId: 'wait' });
      await executor.runWorker({ signal: stop.signal });
      await executor.enqueue({ kind: 'ok' }, { jobId: 'c' });
      await executor.cancel('c');
      assert.equal(await executor.status('nope'), null);

      const all = await executor.list();
      assert.deepEqual(all.map((j) => [j.jobId, j.state]), [
        ['boom', 'failed'],
        ['c', 'cancelled'],
        ['ok', 'completed'],
        ['wait', 'waiting'],
      ]);
      for (const j of all) {
        assert.equal(j.updatedAt, j.jobId === 'ok' || j.jobId === 'boom' ? 1_000_000 : 1_001_000, `${j.jobId}: the time of its last step`);
        assert.equal(j.owner, undefined, 'no lease held');
      }
      assert.deepEqual((await executor.list({ states: ['completed', 'waiting'] })).map((j) => j.jobId), ['ok', 'wait']);
      assert.deepEqual((await executor.list({ state: 'failed' })).map((j) => j.jobId), ['boom']);
      await assert.rejects(executor.list({ states: ['done'] }), /unknown job state/);
      const failed = await executor.status('boom');
      assert.equal(failed.state, 'failed');
      assert.match(failed.error.message, /bad/);
      const waiting = await executor.status('wait');
      assert.equal(waiting.capability, 'get');
      assert.equal(waiting.attempts, 1);

      // A held lease shows in the status.
      const lease = await store.acquireLease('wait', 'worker-x', 5000);
      assert.equal((await executor.status('wait')).owner, 'worker-x');
      assert.equal((await executor.status('wait')).leaseExpiresAt, c.t + 5000);
      await store.releaseLease('wait', lease);

      // Retention: completed kept 500 ms, failed 5000 ms, cancelled for good.
      c.t += 600;
      assert.deepEqual(await executor.prune({ completed: 500, failed: 5000, now: c.t }), ['ok']);
      assert.equal(await executor.get('ok'), null);
      c.t += 5000;
      assert.deepEqual(await executor.prune({ completed: 500, failed: 5000, now: c.t }), ['boom']);
      assert.deepEqual((await executor.list()).map((j) => j.jobId), ['c', 'wait'], 'unfinished and unretained jobs are kept');
      assert.equal(await executor.delete('wait'), false, 'an unfinished job is not deleted');
      assert.equal(await executor.delete('c'), true);
      assert.equal(await executor.delete('c'), false);
      assert.deepEqual((await executor.list()).map((j) => j.jobId), ['wait']);
      if (kind === 'file') {
        assert.deepEqual(fs.readdirSync(path.join(dir, 'progress')), [`${Buffer.from('wait').toString('base64url')}.json`]);
      }
      // A job whose lease is held is not deleted by the store.
      const held = await store.acquireLease('wait', 'worker-y', 5000);
      assert.equal(await store.deleteJob('wait'), false);
      await store.releaseLease('wait', held);
      assert.equal(await store.deleteJob('wait'), true);
      assert.deepEqual(await executor.list(), []);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}
