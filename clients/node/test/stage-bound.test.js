'use strict';

// A value the sidecar's stage bound cannot hold fails with a typed error;
// the process goes on serving, and the stages the failed request filled
// are emptied, so the bound is whole again for the next one.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');

const { Mustard, SidecarPool, MustardRequestTooLargeError, MustardSidecarError, configure, processes } = require('..');

const BOUND = 4_000_000;
const args = ['--max-stage-bytes', String(BOUND)];
configure({ args });

const key = crypto.randomBytes(32);
const limits = { heapLimitBytes: 1 << 30, allocationBudget: 1 << 30, instructionBudget: 1 << 30 };

function tooLarge(e) {
  return (
    e instanceof MustardRequestTooLargeError &&
    e instanceof MustardSidecarError &&
    e.name === 'MustardRequestTooLargeError' &&
    e.code === 'stage_too_large' &&
    new RegExp(`staging a value of \\d+ bytes failed: stage exceeds ${BOUND} bytes`).test(e.message)
  );
}

test('sync: a source and an answer past the stage bound fail typed; the process serves on', () => {
  assert.throws(() => new Mustard(`"${'x'.repeat(4_500_000)}".length`), tooLarge);
  const pid = processes().sync[0].pid;
  // 3.9 MB fits the bound only if the failed stage was emptied.
  assert.equal(new Mustard(`"${'x'.repeat(3_900_000)}".length`).start(), 3_900_000);

  const program = new Mustard('const a = get(1); const b = get(2); a.length + b.length;');
  const policy = { capabilities: { get() {} }, limits, snapshotKey: key };
  const step = program.start(policy);
  assert.throws(() => step.resume('y'.repeat(5_000_000)), tooLarge);
  // Nothing ran: the same step takes a smaller answer.
  const next = step.resume('y'.repeat(2_000_000));
  assert.deepEqual(next.args, [2]);
  assert.equal(next.resume('z'), 2_000_001);
  assert.deepEqual(processes().sync.map((p) => p.pid), [pid], 'the same process served throughout');
});

test('batch: when the second of two answers does not fit, the first one\'s stage is emptied too', () => {
  const program = new Mustard(`
    async function main() {
      const [a, b] = await Promise.all([get(1), get(2)]);
      return a.length + b.length;
    }
    main();`);
  const policy = { capabilities: { get() {} }, limits, snapshotKey: key, hostCalls: 'batch' };
  const step = program.start(policy);
  assert.throws(
    () => step.resumeCalls([{ callId: 1, value: 'a'.repeat(1_200_000) }, { callId: 2, value: 'b'.repeat(3_000_000) }]),
    tooLarge,
  );
  // 1.2 MB still staged would leave no room for 2.9 MB.
  const partial = step.resumeCalls([{ callId: 1, value: 'a'.repeat(2_900_000) }]);
  assert.deepEqual(partial.calls.map((c) => c.callId), [2]);
  assert.equal(partial.resumeCalls([{ callId: 2, value: 'b' }]), 2_900_001);
});

test('async: run() with an answer past the stage bound fails typed; the pool\'s process serves on', async () => {
  const pool = new SidecarPool({ size: 1, args });
  try {
    const program = new Mustard('get().length');
    await assert.rejects(program.run({ pool, limits, capabilities: { get: async () => 'q'.repeat(4_100_000) } }), tooLarge);
    const [before] = pool.processes();
    assert.equal(await program.run({ pool, limits, capabilities: { get: async () => 'q'.repeat(3_900_000) } }), 3_900_000);
    const [after] = pool.processes();
    assert.equal(after.pid, before.pid);
  } finally {
    await pool.close();
  }
});
