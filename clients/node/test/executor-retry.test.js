'use strict';

// The executor's retries: a capability whose calls fail transiently is
// called again with the same call id until a try succeeds or the policy's
// tries are spent; the final error is thrown in the guest, which can
// catch it with the capability's message.

const test = require('node:test');
const assert = require('node:assert/strict');

const { Mustard, MustardExecutor, InMemoryMustardExecutorStore, transient, isTransient } = require('..');

const PROGRAM = `
  let out = [];
  for (const k of ['a', 'b']) {
    try { out.push(fetch(k)); } catch (e) { out.push('caught ' + e.name + ': ' + e.message); }
  }
  out;
`;

async function runOne(options, capabilities, hostCalls = 'one', source = PROGRAM) {
  const store = new InMemoryMustardExecutorStore();
  const executor = new MustardExecutor({ program: new Mustard(source), store, capabilities, hostCalls, ...options });
  const id = await executor.enqueue({});
  await executor.runWorker({ drain: true });
  return executor.get(id);
}

for (const hostCalls of ['one', 'batch']) {
  test(`a capability that fails twice transiently then succeeds: the guest sees the success, every try with the same call id (${hostCalls})`, async () => {
    const tries = [];
    const record = await runOne(
      { retry: { attempts: 3, backoffMs: 1 } },
      {
        fetch(k) {
          tries.push([k, this.callId, this.attempt, this.jobId !== undefined]);
          if (this.attempt < 3) throw transient(new Error(`unreachable ${k}`));
          return `got ${k}`;
        },
      },
      hostCalls,
    );
    assert.equal(record.state, 'completed', JSON.stringify(record.error));
    assert.deepEqual(record.result, ['got a', 'got b']);
    assert.deepEqual(tries, [
      ['a', 1, 1, true],
      ['a', 1, 2, true],
      ['a', 1, 3, true],
      ['b', 2, 1, true],
      ['b', 2, 2, true],
      ['b', 2, 3, true],
    ]);
  });
}

test('a final error: the guest catches it with the capability\'s message (tries spent, or not retryable)', async () => {
  let calls = 0;
  const record = await runOne(
    { retry: { attempts: 2, backoffMs: 1 } },
    {
      fetch(k) {
        calls += 1;
        if (k === 'a') throw transient(new TypeError(`unreachable ${k}`));
        const e = new Error(`no such key ${k}`);
        e.code = 'ENOKEY';
        throw e;
      },
    },
  );
  assert.equal(record.state, 'completed', JSON.stringify(record.error));
  assert.deepEqual(record.result, ['caught Error: unreachable a', 'caught Error: no such key b']);
  assert.equal(calls, 3, 'a: two tries (transient), b: one (not retryable)');
});

test('an asynchronous capability, a retryable() predicate and a per-capability policy', async () => {
  const tries = { fetch: 0, other: 0 };
  const source = `
    const a = fetch('a');
    let b;
    try { b = other('b'); } catch (e) { b = e.message; }
    [a, b];
  `;
  const record = await runOne(
    {
      retry: { attempts: 5, backoffMs: 1 },
      retryPerCapability: { fetch: { attempts: 4, backoffMs: 1, retryable: (e) => /timeout/.test(e.message) } },
    },
    {
      async fetch(k) {
        tries.fetch += 1;
        await new Promise((r) => setImmediate(r));
        if (tries.fetch < 4) throw new Error('timeout');
        return k;
      },
      async other() {
        tries.other += 1;
        throw new Error('timeout'); // not transient: the default predicate does not retry it
      },
    },
    'one',
    source,
  );
  assert.equal(record.state, 'completed', JSON.stringify(record.error));
  assert.deepEqual(record.result, ['a', 'timeout']);
  assert.deepEqual(tries, { fetch: 4, other: 1 });
});

test('without a policy a capability is tried once; transient() and isTransient()', async () => {
  let calls = 0;
  const record = await runOne({}, {
    fetch() {
      calls += 1;
      throw transient(new Error('down'));
    },
  });
  assert.deepEqual(record.result, ['caught Error: down', 'caught Error: down']);
  assert.equal(calls, 2);
  const e = new RangeError('x');
  assert.equal(transient(e), e);
  assert.equal(isTransient(e), true);
  assert.equal(Object.keys(e).includes('transient'), false);
  assert.equal(isTransient(new Error('y')), false);
  assert.equal(isTransient({ transient: true }), true);
  assert.equal(isTransient(null), false);
  assert.equal(transient('text').message, 'text');
  assert.throws(() => new MustardExecutor({ program: new Mustard('1'), store: new InMemoryMustardExecutorStore(), capabilities: {}, retry: { attempts: 0 } }), /attempts/);
  assert.throws(() => new MustardExecutor({ program: new Mustard('1'), store: new InMemoryMustardExecutorStore(), capabilities: {}, retry: { attempts: 2, retryable: 1 } }), /retryable/);
});

test('a worker stopped during a backoff leaves the call for the next worker, which tries it afresh', async () => {
  const store = new InMemoryMustardExecutorStore();
  const stop = new AbortController();
  const attempts = [];
  const executor = new MustardExecutor({
    program: new Mustard('fetch(1)'),
    store,
    retry: { attempts: 3, backoffMs: 3600e3, maxBackoffMs: 3600e3 },
    capabilities: {
      fetch() {
        attempts.push(this.attempt);
        if (attempts.length === 1) {
          setImmediate(() => stop.abort());
          throw transient(new Error('down'));
        }
        return 'ok';
      },
    },
  });
  const id = await executor.enqueue({});
  await executor.runWorker({ signal: stop.signal });
  assert.equal((await executor.get(id)).state, 'waiting');
  await executor.runWorker({ drain: true });
  const record = await executor.get(id);
  assert.equal(record.state, 'completed');
  assert.equal(record.result, 'ok');
  assert.deepEqual(attempts, [1, 1]);
});
