'use strict';

// The executor's leases, on both stores, with a clock the test moves: one
// owner at a time, a takeover only once the lease expired, fencing tokens
// that refuse a former holder's writes; and an executor whose lease is
// taken over mid-call stores nothing more and leaves the job to the new
// holder.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { Mustard, MustardExecutor, InMemoryMustardExecutorStore, FileMustardExecutorStore, MustardLeaseLostError } = require('..');

function clock() {
  const c = { t: 1_000_000 };
  c.now = () => c.t;
  return c;
}

const STORES = {
  memory: (c) => [new InMemoryMustardExecutorStore({ now: c.now })],
  file: (c, dir) => {
    const a = new FileMustardExecutorStore(dir, { now: c.now });
    return [a, new FileMustardExecutorStore(dir, { now: c.now })];
  },
};

function record(jobId) {
  return { jobId, state: 'queued', input: {}, attempts: 0, createdAt: 1, updatedAt: 1 };
}

for (const [kind, make] of Object.entries(STORES)) {
  test(`${kind} store: one lease holder at a time; taken over after expiry; a former holder's writes are refused`, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mustard-lease-'));
    try {
      const c = clock();
      const [a, b = a] = make(c, dir);
      await a.enqueue(record('j'));
      const la = await a.acquireLease('j', 'A', 1000);
      assert.equal(la.owner, 'A');
      assert.ok(Number.isSafeInteger(la.token) && la.token > 0);
      assert.equal(await b.acquireLease('j', 'B', 1000), null, 'an active lease holds');
      assert.deepEqual(await b.claimRunnable(5, 'B'), [], 'nor can it be claimed');
      await a.update('j', { state: 'running' }, la.token);
      c.t += 999;
      const renewed = await a.renewLease('j', la, 1000);
      assert.equal(renewed.token, la.token);
      assert.equal(renewed.expiresAt, c.t + 1000);
      c.t += 999;
      assert.equal(await b.acquireLease('j', 'B', 1000), null, 'renewed: it still holds');
      assert.equal((await a.jobStatus('j')).owner, 'A');
      c.t += 2;
      const lb = await b.acquireLease('j', 'B', 1000);
      assert.ok(lb !== null, 'expired: taken over');
      assert.ok(lb.token > la.token, 'the new token is greater');
      assert.equal((await a.jobStatus('j')).owner, 'B');
      await assert.rejects(a.update('j', { state: 'waiting' }, la.token), MustardLeaseLostError);
      await assert.rejects(a.saveProgress('j', { snapshot: Buffer.alloc(1) }, la.token), (e) => e.code === 'lease_lost');
      await assert.rejects(a.deleteProgress('j', la.token), MustardLeaseLostError);
      await assert.rejects(a.renewLease('j', la, 1000), MustardLeaseLostError);
      await a.releaseLease('j', la); // a former holder's release does nothing
      assert.equal(await a.acquireLease('j', 'A', 1000), null);
      await b.update('j', { state: 'waiting' }, lb.token);
      assert.equal((await b.get('j')).state, 'waiting');
      assert.equal((await b.get('j')).fence, undefined, 'the record as hosts see it');
      await b.releaseLease('j', lb);
      // Released: free at once; a write under the old token is still refused.
      await assert.rejects(a.update('j', { state: 'running' }, la.token), MustardLeaseLostError);
      const la2 = await a.acquireLease('j', 'A', 1000);
      assert.ok(la2.token > lb.token);
      await a.update('j', { state: 'running' }, la2.token);
      // Unfenced writes (a store used without leases) are not checked.
      await a.update('j', { attempts: 3 });
      assert.equal((await a.get('j')).attempts, 3);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('an executor whose lease is taken over mid-call stores nothing more; the new holder finishes the job', async () => {
  const c = clock();
  const store = new InMemoryMustardExecutorStore({ now: c.now });
  const program = new Mustard('const a = step(1); const b = step(2); a + b;');
  let stolen = null;
  const seen = [];
  const first = new MustardExecutor({
    program,
    store,
    leaseMs: 1000,
    capabilities: {
      async step(n) {
        seen.push(['first', this.callId, n]);
        if (n === 2 && stolen === null) {
          // The lease expires and another executor takes the job.
          c.t += 5000;
          stolen = await store.acquireLease(this.jobId, 'second', 1000);
        }
        return n * 10;
      },
    },
  });
  const id = await first.enqueue({}, { jobId: 'job' });
  await first.runWorker({ drain: true });
  assert.ok(stolen !== null, 'the lease was taken over');
  const left = await first.get(id);
  assert.equal(left.state, 'waiting', 'the first executor left the job as it was');
  assert.equal((await store.loadProgress(id)).answer, undefined, 'its answer was not stored');
  await store.releaseLease(id, stolen);

  const second = new MustardExecutor({
    program,
    store,
    capabilities: {
      step(n) {
        seen.push(['second', this.callId, n]);
        return n * 10;
      },
    },
  });
  await second.runWorker({ drain: true });
  const done = await second.get(id);
  assert.equal(done.state, 'completed', JSON.stringify(done.error));
  assert.equal(done.result, 30);
  assert.deepEqual(seen, [
    ['first', 1, 1],
    ['first', 2, 2],
    ['second', 2, 2],
  ]);
});

test('a store without lease methods keeps working (claims only)', async () => {
  const inner = new InMemoryMustardExecutorStore();
  const plain = {};
  for (const m of ['enqueue', 'get', 'claimRunnable', 'releaseClaim', 'update', 'saveProgress', 'loadProgress', 'deleteProgress', 'requestCancel', 'consumeCancel']) {
    plain[m] = (...args) => {
      if (['update', 'saveProgress', 'deleteProgress'].includes(m)) {
        const arity = { update: 2, saveProgress: 2, deleteProgress: 1 }[m];
        assert.equal(args.length <= arity || args[arity] === undefined, true, `${m} got no fence`);
      }
      return inner[m](...args);
    };
  }
  const executor = new MustardExecutor({ program: new Mustard('f(1) + f(2)'), store: plain, capabilities: { f: (n) => n } });
  const id = await executor.enqueue({});
  await executor.runWorker({ drain: true });
  assert.equal((await executor.get(id)).result, 3);
  assert.equal((await executor.status(id)).state, 'completed');
  await assert.rejects(executor.list(), /listJobs/);
});

test('the executor renews its lease while a call runs: another executor cannot take the job past the first lease term', async () => {
  const c = clock();
  const store = new InMemoryMustardExecutorStore({ now: c.now });
  let renewals = 0;
  let renewed = null;
  const renew = store.renewLease.bind(store);
  store.renewLease = async (...args) => {
    const lease = await renew(...args);
    renewals += 1;
    if (renewed !== null) renewed();
    return lease;
  };
  const nextRenewal = () => new Promise((resolve) => {
    renewed = resolve;
  });
  const refusals = [];
  const executor = new MustardExecutor({
    program: new Mustard('slow(1) + 1'),
    store,
    leaseMs: 30,
    capabilities: {
      async slow(n) {
        for (let k = 0; k < 3; k += 1) {
          c.t += 20; // less than the lease, 60 in all
          await nextRenewal();
          refusals.push(await store.acquireLease(this.jobId, 'other', 30));
        }
        return n;
      },
    },
  });
  const id = await executor.enqueue({});
  await executor.runWorker({ drain: true });
  assert.deepEqual(refusals, [null, null, null], 'the renewed lease held');
  assert.ok(renewals >= 3);
  assert.equal((await executor.get(id)).result, 2);
  assert.equal((await executor.status(id)).owner, undefined, 'released at the end');
});
