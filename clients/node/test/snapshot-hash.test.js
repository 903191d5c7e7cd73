'use strict';

// A step keeps the SHA-256 state after its snapshot's bytes, so that the
// next delta is hashed alone (lib/ops.js, toStep): the ids must check out
// along a chain of deltas exactly as a whole-snapshot hash does, a base
// must stay resumable any number of times, and a step without the state
// (one from the helper thread, or a loaded dump) must hash its base.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');

const { toStep, plainStep } = require('../lib/ops.js');
const { MustardProcessError } = require('..');

const client = { id: 'test-client' };
const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');

function suspended(id, base) {
  const result = { kind: 'step', step: { type: 'suspended', capability: 'cap', args: [] }, snapshot_id: id, policy_id: 'p' };
  if (base !== undefined) result.snapshot_base_id = base;
  return result;
}

test('deltas check out along a chain, with and without the hash state', () => {
  const first = crypto.randomBytes(1000);
  let step = toStep(client, suspended(sha(first)), first, null);
  let whole = first;
  for (let i = 0; i < 50; i += 1) {
    const delta = crypto.randomBytes(1 + (i % 7) * 100);
    const next = Buffer.concat([whole, delta]);
    const base = { id: step.snapshotId, bytes: step.snapshot, hash: i % 3 === 0 ? null : step.snapshotHash };
    step = toStep(client, suspended(sha(next), step.snapshotId), delta, base);
    assert.deepEqual(step.snapshot, next);
    whole = next;
  }
  // An empty delta: the snapshot is its base.
  const base = { id: step.snapshotId, bytes: step.snapshot, hash: step.snapshotHash };
  const same = toStep(client, suspended(sha(whole), step.snapshotId), Buffer.alloc(0), base);
  assert.deepEqual(same.snapshot, whole);
});

test("a base's hash state is not used up: the same step resumed twice checks out twice", () => {
  const first = Buffer.from('first snapshot bytes');
  const step = toStep(client, suspended(sha(first)), first, null);
  const base = { id: step.snapshotId, bytes: step.snapshot, hash: step.snapshotHash };
  for (const tail of ['a', 'bb', 'a']) {
    const next = Buffer.concat([first, Buffer.from(tail)]);
    assert.deepEqual(toStep(client, suspended(sha(next), step.snapshotId), Buffer.from(tail), base).snapshot, next);
  }
});

test('a delta, or a full snapshot, that does not hash to its id is refused', () => {
  const first = Buffer.from('first snapshot bytes');
  const step = toStep(client, suspended(sha(first)), first, null);
  const base = { id: step.snapshotId, bytes: step.snapshot, hash: step.snapshotHash };
  const claimed = sha(Buffer.concat([first, Buffer.from('delta')]));
  assert.throws(() => toStep(client, suspended(claimed, step.snapshotId), Buffer.from('delts'), base), (e) =>
    e instanceof MustardProcessError && /do not hash to its snapshot_id/.test(e.message));
  assert.throws(() => toStep(client, suspended(sha(first)), Buffer.from('other bytes'), null), /do not hash to its snapshot_id/);
  assert.throws(() => toStep(client, suspended(claimed, 'another-id'), Buffer.from('delta'), base), /did not resume/);
});

test('a step crosses to the helper thread without its hash state', () => {
  const first = Buffer.from('bytes');
  const step = toStep(client, suspended(sha(first)), first, null);
  assert.ok(step.snapshotHash);
  const plain = plainStep(step);
  assert.equal(plain.snapshotHash, null);
  assert.ok(step.snapshotHash, 'the original keeps it');
  assert.doesNotThrow(() => structuredClone(plain));
});
