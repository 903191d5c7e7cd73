'use strict';

// The reference's behaviours this package reproduces on its side of the
// process boundary: lenientMode, Mustard.load, single-use dumps (and
// multiUse), dumps without their manifest or program, limits that count
// the reference's environment, and the reference's error kinds and words.

const test = require('node:test');
const assert = require('node:assert/strict');
const { Worker } = require('node:worker_threads');
const path = require('node:path');

const {
  Mustard,
  Progress,
  ExecutionContext,
  MustardError,
  MustardParseError,
  MustardValidationError,
  MustardRuntimeError,
  MustardLimitError,
  MustardSerializationError,
} = require('..');
const { statementEnd } = require('../lib/lenient.js');

const key = Buffer.from('compat-test-snapshot-key');
const policy = { capabilities: { fetch_data() {} }, limits: {}, snapshotKey: key };

test('lenientMode: a final top-level return gives the result; anywhere else it is refused', async () => {
  const run = (src) => new Mustard(src, { lenientMode: true }).run();
  assert.equal(await run('const value = 41; return value + 1;'), 42);
  assert.equal(await run('return;'), undefined);
  assert.deepEqual(await run('return { a: [1, 2] }'), { a: [1, 2] });
  assert.equal(await run('const o = { a: 1 };\nreturn `x${o.a}` // done\n'), 'x1');
  assert.equal(await run('const x = 6; return x / 2 / 3; /* ; */'), 1);
  assert.equal(await run('function f() { return 2; } f() + 1;'), 3, 'a program without a top-level return is unchanged');
  assert.equal(await run('const f = () => { return 5; };\nreturn f();'), 5);
  for (const src of ['return 1; 2;', 'if (true) { return 1; } return 2;', 'return 1;\nreturn 2;', '{ return 1; }']) {
    assert.throws(
      () => new Mustard(src, { lenientMode: true }),
      (e) => e instanceof MustardValidationError && /final top-level statement when lenientMode is enabled/.test(e.message),
      src,
    );
  }
  assert.throws(
    () => new Mustard('return 1;'),
    (e) => e instanceof MustardParseError && e.message.startsWith("A 'return' statement can only be used within a function body."),
  );
  assert.throws(() => new Mustard('1;', { lenientMode: 'yes' }), { name: 'TypeError', message: 'options.lenientMode must be a boolean' });
  // A lenient program whose error is elsewhere keeps its place.
  assert.throws(() => new Mustard('const a = ;\nreturn a;', { lenientMode: true }), (e) => e instanceof MustardParseError && /\(1:/.test(e.message));
});

test('the end of a returned expression skips strings, templates, comments and regular expressions', () => {
  assert.equal(statementEnd(' a; b'), 2);
  assert.equal(statementEnd(' "a;b" ; c'), 7);
  assert.equal(statementEnd(' `a;${ {b: ";"}.b }` + 1; c'), 24);
  assert.equal(statementEnd(' /;/.test(x); c'), 12);
  assert.equal(statementEnd(' a / b / c; d'), 10);
  assert.equal(statementEnd(' f(1; // ;\n)'), 12);
  assert.equal(statementEnd(' x'), 2);
});

test('Mustard.load runs dumped program bytes; bytes that are no program fail as Serialization', async () => {
  const copy = Mustard.load(new Mustard('Math.max(1, 8, 2);').dump());
  assert.equal(await copy.run(), 8);
  assert.equal(copy.start(), 8);
  await assert.rejects(Mustard.load(Buffer.from('not-a-valid-program')).run(), MustardSerializationError);
  assert.throws(() => Mustard.load('text'), TypeError);
});

function suspended(src = 'const r = fetch_data(4); r * 2;', options = {}) {
  return new Mustard(src).start({ ...policy, ...options });
}

const singleUse = (e) => e instanceof MustardRuntimeError && /single-use/.test(e.message);

test('a dump is single-use in its process, as in the reference; multiUse opts out', () => {
  const first = suspended();
  const dumped = first.dump();
  const loaded = Progress.load(dumped, policy);
  assert.throws(() => Progress.load(dumped, policy), singleUse, 'a second load of the same dump');
  assert.throws(() => first.resume(4), singleUse, 'the original once its dump was loaded');
  assert.equal(loaded.resume(4), 8);
  // The original resumed first: its dump is then refused.
  const second = suspended();
  const secondDump = second.dump();
  assert.equal(second.resume(5), 10);
  assert.throws(() => Progress.load(secondDump, policy), singleUse);
  // A snapshot whose bytes never left the package is not recorded, and
  // one dumped after it was resumed is recorded then.
  const third = suspended();
  assert.equal(third.resume(1), 2);
  assert.throws(() => Progress.load(third.dump(), policy), singleUse);
  // multiUse loads and resumes the same dump again, each resume a replay.
  const reuse = { ...policy, multiUse: true };
  assert.equal(Progress.load(secondDump, reuse).resume(6), 12);
  assert.equal(Progress.load(secondDump, reuse).resume(7), 14);
  assert.throws(() => Progress.load(secondDump, { ...policy, multiUse: 'yes' }), TypeError);
  // A single-use refusal comes before the options are looked at.
  assert.throws(() => Progress.load(secondDump), singleUse);
});

test('single use holds across worker threads of the process', async () => {
  const progress = suspended();
  const dumped = progress.dump();
  assert.equal(progress.resume(4), 8);
  const message = await new Promise((resolve, reject) => {
    const worker = new Worker(
      `
      const { parentPort, workerData } = require('node:worker_threads');
      const { Progress } = require(workerData.pkg);
      try {
        Progress.load(workerData.dumped, { capabilities: { fetch_data() {} }, limits: {}, snapshotKey: Buffer.from(workerData.key) });
        parentPort.postMessage('loaded');
      } catch (error) {
        parentPort.postMessage(error.name + ': ' + error.message);
      }`,
      { eval: true, workerData: { pkg: path.join(__dirname, '..'), dumped, key } },
    );
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  assert.match(message, /^MustardRuntimeError: .*single-use/);
});

test('a dump without its manifest or program loads from the snapshot, as the reference reads legacy dumps', () => {
  const progress = suspended('const a = { x: [1, "é", null, -0] }; const r = fetch_data(4, a); r * 2;');
  const dumped = progress.dump();
  for (const field of ['suspended_manifest', 'suspended_manifest_token', 'program', 'program_id']) delete dumped[field];
  const restored = Progress.load({ ...dumped, capability: 'drop_table', args: ['users'] }, policy);
  assert.equal(restored.capability, 'fetch_data');
  assert.deepEqual(restored.args, [4, { x: [1, 'é', null, -0] }]);
  assert.equal(restored.resume(4), 8);
  // Batch mode: every outstanding call.
  const batch = new Mustard('async function m() { const [a, b] = await Promise.all([f(1), f(2)]); return a + b; } m();').start({
    capabilities: { f() {} },
    snapshotKey: key,
    hostCalls: 'batch',
  });
  const bd = batch.dump();
  delete bd.suspended_manifest;
  delete bd.suspended_manifest_token;
  const loaded = Progress.load(bd, { capabilities: { f() {} }, limits: {}, snapshotKey: key, hostCalls: 'batch' });
  assert.deepEqual(loaded.calls.map((c) => [c.callId, c.args]), [[1, [1]], [2, [2]]]);
  assert.equal(loaded.resumeCalls([{ callId: 1, value: 1 }, { callId: 2, value: 2 }]), 3);
  // Half a manifest is tampering; program bytes that are not the program
  // named are refused.
  const again = suspended().dump();
  assert.throws(() => Progress.load({ ...again, suspended_manifest: undefined }, policy), /tampered or unauthenticated suspended metadata/);
  assert.throws(
    () => Progress.load({ ...again, program: new Mustard('1;').dump() }, policy),
    (e) => e instanceof MustardSerializationError && /mismatched detached program/.test(e.message),
  );
  assert.throws(() => Progress.load({ ...again, program: Buffer.from('x'), program_id: undefined }, policy), TypeError);
});

test('a dump keeps the suspended call it was made at, whatever its public fields say', () => {
  const progress = suspended();
  progress.capability = 'drop_table';
  progress.args[0] = 999;
  const dumped = progress.dump();
  assert.equal(dumped.capability, 'fetch_data');
  assert.deepEqual(dumped.args, [4]);
});

test("heapLimitBytes and allocationBudget count the reference's environment", async () => {
  const program = new Mustard('1;');
  await assert.rejects(program.run({ limits: { heapLimitBytes: 1 } }), (e) => e instanceof MustardLimitError && e.message === 'heap limit exceeded');
  await assert.rejects(program.run({ limits: { allocationBudget: 1 } }), (e) => e instanceof MustardLimitError && e.message === 'allocation budget exhausted');
  assert.throws(() => program.start({ limits: { heapLimitBytes: 7803 } }), MustardLimitError);
  // (The sidecar's heap figure is the process heap's growth: a heap limit
  // of a few bytes is no deterministic test of the boundary.)
  assert.equal(program.start({ limits: { heapLimitBytes: 7804 + (1 << 20), allocationBudget: 27 } }), 1);
  assert.throws(() => new ExecutionContext({ limits: { heapLimitBytes: -1 } }), TypeError);
  const dumped = suspended().dump();
  assert.throws(
    () => Progress.load(dumped, { ...policy, limits: { heapLimitBytes: 0 } }),
    (e) => e instanceof MustardSerializationError && /snapshot validation failed: heap usage exceeds configured heap limit/.test(e.message),
  );
  assert.throws(
    () => Progress.load(dumped, { ...policy, limits: { allocationBudget: 0 } }),
    /snapshot validation failed: allocation count exceeds configured allocation budget/,
  );
  assert.throws(() => Progress.load(dumped, { ...policy, limits: undefined }), { name: 'TypeError', message: 'Progress.load() options.limits must be a plain object' });
});

test("compile errors in the reference's kinds; host error codes in uncaught summaries", async () => {
  assert.throws(() => new Mustard('let value = 1;\nlet value = 2;'), (e) => e instanceof MustardValidationError && /already been declared/.test(e.message));
  assert.throws(() => new Mustard('export const value = 1;'), (e) => e instanceof MustardValidationError && /module syntax is not supported/.test(e.message));
  assert.throws(() => new Mustard('const a = 1;\nimport x from "y";'), MustardValidationError);
  const failing = (code, details) => () => {
    const error = new Error('upstream failed');
    error.name = 'CapabilityError';
    if (code !== undefined) error.code = code;
    if (details !== undefined) error.details = details;
    throw error;
  };
  await assert.rejects(new Mustard('fetch_data(1);').run({ capabilities: { fetch_data: failing('E_UPSTREAM') } }), (e) =>
    e instanceof MustardRuntimeError && /^CapabilityError: upstream failed \[code=E_UPSTREAM\]\n {2}at /.test(e.message));
  await assert.rejects(new Mustard('fetch_data(1);').run({ capabilities: { fetch_data: failing('E', { retriable: false }) } }), {
    message: /^CapabilityError: upstream failed \[code=E\] \[details=\[object Object\]\]/,
  });
  await assert.rejects(new Mustard('fetch_data(1);').run({ capabilities: { fetch_data: failing() } }), { message: /^CapabilityError: upstream failed\n/ });
  // Synchronous resumes too; a guest that throws its own error is left alone.
  const step = new Mustard('try { fetch_data(1); } catch (e) { throw new Error("mine"); }').start(policy);
  assert.throws(() => step.resumeError(Object.assign(new Error('x'), { code: 'C' })), { message: /^Error: mine\n/ });
  await assert.rejects(new Mustard('const s = { a: 1 }; [s, s];').run(), /shared references cannot cross the structured host boundary/);
});

test("uncaught built-in errors reach the host in the reference's words; a guest that catches one reads Node's", async () => {
  const rejects = (src, message) => assert.rejects(new Mustard(src).run(), (e) => e instanceof MustardRuntimeError && e.message.includes(message), src);
  await rejects('Number.prototype.toFixed.call("1", 2);', 'TypeError: Number.prototype.toFixed called on incompatible receiver');
  await rejects('(1).toFixed(101);', 'RangeError: Number.prototype.toFixed digits must be between 0 and 100');
  await rejects('(10).toString(1);', 'RangeError: Number.prototype.toString radix must be between 2 and 36');
  await rejects('(1).toExponential(101);', 'RangeError: Number.prototype.toExponential digits must be between 0 and 100');
  await rejects('(1).toPrecision(0);', 'RangeError: Number.prototype.toPrecision precision must be between 1 and 100');
  await rejects('const concat = [1].concat; concat([2]);', 'TypeError: Array.prototype.concat called on incompatible receiver');
  await rejects('for (const v of { a: 1 }) {}', 'TypeError: value is not iterable in the supported surface');
  await rejects('[...{}];', 'TypeError: value is not iterable in the supported surface');
  await rejects('"length" in "abc";', "TypeError: right-hand side of 'in' must be an object in the supported surface");
  await rejects('"abc".replaceAll(/a/, "z");', 'TypeError: String.prototype.replaceAll requires a global RegExp');
  // The sidecar's own words for Map and Set, results and arguments alike.
  await rejects('new Map([[1, 2]]);', 'Map and Set values cannot cross the structured host boundary');
  await assert.rejects(new Mustard('fetch_data(new Set([1]));').run({ capabilities: { fetch_data() {} } }), /Map and Set values cannot cross the structured host boundary/);
  // The guest's own view is Node's, and its own messages are its own.
  const caught = await new Mustard('const out = []; try { (1).toFixed(101); } catch (e) { out.push(e.message); } try { [...{}]; } catch (e) { out.push(e.message); } out;').run();
  assert.deepEqual(caught, ['toFixed() digits argument must be between 0 and 100', 'object is not iterable']);
  await rejects('throw new TypeError("mine: object is not a thing");', 'TypeError: mine: object is not a thing');
});

test("MustardError's third argument is the reference's cause, or this package's options", () => {
  const cause = new Error('root');
  assert.equal(new MustardError('Runtime', 'x', cause).cause, cause);
  assert.equal(new MustardError('Runtime', 'x', { code: 'c' }).code, 'c');
  assert.equal(new MustardError('Runtime', 'x', { cause, code: 'c' }).cause, cause);
  assert.deepEqual(new MustardError('Runtime', 'x', { other: 1 }).cause, { other: 1 });
  assert.equal(new MustardError('Limit', 'x').name, 'MustardLimitError');
});
