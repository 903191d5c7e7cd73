'use strict';

// A step keeps the SHA-256 state after its snapshot's bytes, so that the
// next delta is hashed alone, and its bytes in a backing buffer with room
// to grow, so that the next delta is copied alone (lib/ops.js, toStep):
// the ids must check out and the bytes be the same along a chain of
// deltas as with whole snapshots, a base must stay resumable any number
// of times without a step's bytes ever changing, and a step without the
// hash state (one from the helper thread, or a loaded dump) must hash its
// base.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');

const { toStep, portable } = require('../lib/ops.js');
const { MustardProcessError } = require('..');

const client = { id: 'test-client' };
const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');

function suspended(id, base) {
  const result = { kind: 'step', step: { type: 'suspended', capability: 'cap', args: [] }, snapshot_id: id, policy_id: 'p' };
  if (base !== undefined) result.snapshot_base_id = base;
  return result;
}

test('deltas check out along a chain, with and without the hash state, short and long', () => {
  const first = crypto.randomBytes(1000); // 50 deltas take it past 16 KiB
  let kept = 0;
  let step = toStep(client, suspended(sha(first)), first, null);
  let whole = first;
  for (let i = 0; i < 50; i += 1) {
    const delta = crypto.randomBytes(1 + (i % 7) * 200);
    const next = Buffer.concat([whole, delta]);
    const base = { id: step.snapshotId, bytes: step.snapshot, hash: i % 3 === 0 ? null : step.snapshotHash };
    step = toStep(client, suspended(sha(next), step.snapshotId), delta, base);
    assert.deepEqual(step.snapshot, next);
    assert.equal(step.snapshotHash !== null, next.length >= 16 * 1024);
    if (step.snapshotHash) kept += 1;
    whole = next;
  }
  assert.ok(kept > 5 && kept < 50, `${kept} steps kept their hash state`);
  // An empty delta: the snapshot is its base.
  const base = { id: step.snapshotId, bytes: step.snapshot, hash: step.snapshotHash };
  const same = toStep(client, suspended(sha(whole), step.snapshotId), Buffer.alloc(0), base);
  assert.deepEqual(same.snapshot, whole);
});

test("a base is not used up: the same step resumed again checks out, and no step's bytes change", () => {
  // A chain first, so that the base's bytes sit in a backing with room.
  // Past 16 KiB, where a step keeps its hash state and grows its bytes in
  // place.
  const first = crypto.randomBytes(20 * 1024);
  let step = toStep(client, suspended(sha(first)), first, null);
  let whole = first;
  for (const tail of ['-second', '-third']) {
    whole = Buffer.concat([whole, Buffer.from(tail)]);
    step = toStep(client, suspended(sha(whole), step.snapshotId), Buffer.from(tail), { id: step.snapshotId, bytes: step.snapshot, hash: step.snapshotHash });
  }
  assert.ok(step.snapshot.buffer.byteLength > step.snapshot.length, 'the bytes have room to grow');
  const base = { id: step.snapshotId, bytes: step.snapshot, hash: step.snapshotHash };
  const made = [];
  for (const tail of ['a', 'bb', 'a', 'cccc']) {
    const next = Buffer.concat([whole, Buffer.from(tail)]);
    const s = toStep(client, suspended(sha(next), step.snapshotId), Buffer.from(tail), base);
    assert.deepEqual(s.snapshot, next);
    made.push([s, Buffer.from(next)]);
    // The latest of them grows in place; the others keep their bytes.
    const more = Buffer.concat([next, Buffer.from('+')]);
    assert.deepEqual(toStep(client, suspended(sha(more), s.snapshotId), Buffer.from('+'), { id: s.snapshotId, bytes: s.snapshot, hash: s.snapshotHash }).snapshot, more);
  }
  for (const [s, want] of made) assert.deepEqual(s.snapshot, want);
  assert.deepEqual(base.bytes, whole);
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

test('a step crosses to the helper thread without its hash state, its bytes alone', () => {
  const first = crypto.randomBytes(20 * 1024);
  let step = toStep(client, suspended(sha(first)), first, null);
  const next = Buffer.concat([first, Buffer.from(' and more')]);
  step = toStep(client, suspended(sha(next), step.snapshotId), Buffer.from(' and more'), { id: step.snapshotId, bytes: step.snapshot, hash: step.snapshotHash });
  assert.ok(step.snapshotHash);
  assert.ok(step.snapshot.buffer.byteLength >= 2 * next.length);
  const plain = portable(step);
  assert.equal(plain.snapshotHash, null);
  assert.ok(step.snapshotHash, 'the original keeps it');
  assert.deepEqual(plain.snapshot, next);
  const cloned = structuredClone(plain);
  assert.equal(cloned.snapshot.buffer.byteLength, next.length, 'the clone carries the bytes, not the backing');
  // A resume's arguments holding the step's snapshot cross alike; a short
  // step's, and a completed one, cross as they are.
  const args = { snapshotId: step.snapshotId, snapshot: step.snapshot, snapshotHash: step.snapshotHash };
  const sent = portable(args);
  assert.equal(sent.snapshotHash, null);
  assert.deepEqual(sent.snapshot, next);
  assert.equal(structuredClone(sent).snapshot.buffer.byteLength, next.length);
  const short = toStep(client, suspended(sha(first.subarray(0, 100))), first.subarray(0, 100), null);
  assert.equal(portable(short), short);
  const done = { type: 'completed', value: { Number: { Finite: 1 } }, logs: [] };
  assert.equal(portable(done), done);
});
