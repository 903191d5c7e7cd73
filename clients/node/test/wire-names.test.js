'use strict';

// The package's wire names are the sidecar's: every snake_case name the
// package's source writes or reads, and every member name of the request
// headers it sends in a run against the real sidecar, is a method, field,
// error code or feature in test/fixtures/wire-names.json, which
// `go generate ./internal/wire` writes from the Go declarations (a Go test
// fails when the copy is stale).

// Intercept request headers before the package loads: its modules take
// encodeFrame from wire.js when they are first required.
const wire = require('../lib/wire.js');
const sent = [];
const encodeFrame = wire.encodeFrame;
wire.encodeFrame = (header, payload) => {
  sent.push(JSON.parse(JSON.stringify(header)));
  return encodeFrame(header, payload);
};

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const { Mustard, Progress, SidecarPool } = require('..');

const list = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', 'wire-names.json'), 'utf8'));
const wireNames = new Set([...list.methods, ...list.fields, ...list.codes, ...list.features]);

// The package's own snake_case names, which never cross the wire: each
// must still occur in the source, so the list cannot go stale.
const ownNames = new Map([
  ['suspended_manifest', "Progress.dump()'s record of a suspension"],
  ['suspended_manifest_token', "the HMAC of Progress.dump()'s manifest"],
  ['lease_lost', "the executor's code for a job whose lease another worker took"],
]);

const snake = /\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g;

// code is a file's text without its comments and its require specifiers.
function code(text) {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/(^|[^:\\'"`])\/\/.*$/gm, '$1')
    .replace(/require\((['"])[^'"]*\1\)/g, 'require()');
}

test('every snake_case name in the source is a wire name or the package\'s own', () => {
  const root = path.join(__dirname, '..');
  const files = ['index.js', ...fs.readdirSync(path.join(root, 'lib')).filter((f) => f.endsWith('.js')).map((f) => path.join('lib', f))];
  const found = new Map();
  for (const f of files) {
    for (const m of code(fs.readFileSync(path.join(root, f), 'utf8')).matchAll(snake)) {
      if (!found.has(m[0])) found.set(m[0], f);
    }
  }
  const unknown = [...found].filter(([n]) => !wireNames.has(n) && !ownNames.has(n)).map(([n, f]) => `${n} (${f})`);
  assert.deepEqual(unknown, [], 'names that are neither in the wire list nor the package\'s own');
  for (const n of ownNames.keys()) assert.ok(found.has(n), `${n} is listed as the package's own but no longer occurs`);
  for (const n of ['snapshot_id', 'call_id', 'error_code', 'unknown_snapshot_id']) assert.ok(found.has(n), `the scan missed ${n}`);
});

// Members whose values are guest values or host data, not wire names.
const valueMembers = new Set(['inputs', 'value', 'details']);

function collect(v, into) {
  if (Array.isArray(v)) {
    for (const e of v) collect(e, into);
  } else if (v !== null && typeof v === 'object') {
    for (const [k, e] of Object.entries(v)) {
      into.add(k);
      if (!valueMembers.has(k)) collect(e, into);
    }
  }
}

test('every request the package sends names only wire members', async () => {
  const key = crypto.randomBytes(32);
  const sealKey = crypto.randomBytes(32);
  const program = new Mustard('const a = get(x); const b = get(a + 1); [a, b];');
  const policy = { capabilities: { get() {} }, limits: { instructionBudget: 1e7, heapLimitBytes: 1 << 26 }, snapshotKey: key, sealKey };

  // Synchronous: start, resume, resumeError, cancel; a dump resumed cold.
  let step = program.start({ ...policy, inputs: { x: 1 } });
  step = step.resume(2);
  assert.deepEqual(step.resume(3), [2, 3]);
  const failing = program.start({ ...policy, inputs: { x: 1 } });
  assert.throws(() => failing.resumeError(Object.assign(new Error('no'), { code: 'E_NO', details: { id: 1 } })));
  assert.throws(() => program.start({ ...policy, inputs: { x: 1 } }).cancel());
  const dumped = program.start({ ...policy, inputs: { x: 1 } }).dump();
  const loaded = Progress.load(dumped, { ...policy, multiUse: true });
  assert.ok(loaded.resume(5) instanceof Progress);

  // Asynchronously, on a pool: batch mode, console, a large input that
  // goes through a stage.
  const pool = new SidecarPool({ size: 1 });
  try {
    const batch = new Mustard('async function main() { const [a, b] = await Promise.all([get(1), get(2)]); console.log(a); return a + b + big.length; } main();');
    const first = await batch.startAsync({ capabilities: { get() {} }, hostCalls: 'batch', consoleMode: 'collect', snapshotKey: key, pool, inputs: { big: 'x'.repeat(1_200_000) } });
    const answered = await first.resumeCallsAsync(first.calls.map((c) => ({ callId: c.callId, value: c.args[0] })), { pool });
    assert.equal(answered, 1_200_003);
    assert.equal(await new Mustard('get(1) + 1').run({ capabilities: { get: (n) => n }, pool }), 2);
  } finally {
    await pool.close();
  }

  const methods = new Set(sent.map((h) => h.method));
  for (const m of ['compile', 'start', 'resume', 'stage']) assert.ok(methods.has(m), `no ${m} request was seen`);
  for (const m of methods) assert.ok(list.methods.includes(m), `method ${m} is not a wire method`);
  const names = new Set();
  for (const h of sent) collect(h, names);
  const unknown = [...names].filter((n) => !list.fields.includes(n));
  assert.deepEqual(unknown, [], 'request members that are not wire fields');
});
