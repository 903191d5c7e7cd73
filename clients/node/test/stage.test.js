'use strict';

// Values past the sidecar's 1 MiB request limit: sources, program bytes,
// inputs and answers go through stages, hot and cold, in the sync and
// async APIs, the pool, batch mode and the executor.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const { Mustard, Progress, SidecarPool, MustardExecutor, InMemoryMustardExecutorStore, processes } = require('..');

const key = crypto.randomBytes(32);
const limits = { heapLimitBytes: 1 << 30, allocationBudget: 1 << 30, instructionBudget: 1 << 30 };

// noise is n characters of hex text, which snapshots cannot compress away.
function noise(seed, n) {
  const parts = [];
  let sum = crypto.createHash('sha256').update(seed).digest();
  for (let have = 0; have < n; have += 64) {
    parts.push(sum.toString('hex'));
    sum = crypto.createHash('sha256').update(sum).digest();
  }
  return parts.join('').slice(0, n);
}

function wireSize(value) {
  return Buffer.byteLength(JSON.stringify(value));
}

// A 2 MB program over 3 MB of inputs, whose tool answers 5 MB of rows.
const table = noise('program', 2_000_000);
const source = `const table = "${table}";
const rows = fetch_rows(docs.length);
let total = 0;
for (const r of rows) total += r.text.length;
const ack = done(rows.length);
[table.length, docs.length, rows.length, total, rows[rows.length - 1].text.slice(0, 8), ack].join(",");`;
const docText = noise('inputs', 12_000 * 250);
const docs = Array.from({ length: 12_000 }, (_, i) => docText.slice(i * 250, (i + 1) * 250));
const rowText = noise('answer', 20_000 * 250);
const rows = Array.from({ length: 20_000 }, (_, i) => ({ id: i, text: rowText.slice(i * 250, (i + 1) * 250) }));
const want = `2000000,12000,20000,5000000,${rowText.slice(-250, -242)},ok`;

let program;
test('a 2 MB source compiles through a stage', () => {
  assert.ok(wireSize(docs) > 3_000_000 && wireSize(rows) > 5_000_000);
  program = new Mustard(source);
  assert.ok(program.dump().length > 2_000_000, `program of ${program.dump().length} bytes`);
});

test('run: program bytes, inputs and a 5 MB answer go through stages', async () => {
  const pool = new SidecarPool({ size: 1 }); // never saw the program: its bytes are sent
  try {
    let asked = 0;
    const value = await program.run({
      pool,
      inputs: { docs },
      limits,
      capabilities: {
        fetch_rows: async (n) => {
          asked += 1;
          assert.equal(n, 12_000);
          return rows;
        },
        done: () => 'ok',
      },
    });
    assert.equal(value, want);
    assert.equal(asked, 1);
    assert.equal(pool.processes()[0].stages, 3, 'program bytes, inputs and the answer were staged');
  } finally {
    await pool.close();
  }
});

test('start/resume, sync and async, hot and cold from dump() in a fresh Node process', async () => {
  const policy = { capabilities: { fetch_rows() {}, done() {} }, limits, snapshotKey: key };
  const before = processes().sync[0].stages;
  const first = program.start({ ...policy, inputs: { docs } });
  assert.equal(first.capability, 'fetch_rows');
  assert.deepEqual(first.args, [12_000]);
  assert.equal(processes().sync[0].stages, before + 1, 'the inputs were staged (the program is known)');
  const dumped = first.dump();
  assert.ok(dumped.snapshot.length > 5_000_000, `snapshot of ${dumped.snapshot.length} bytes`);

  // Hot: the process holds the execution; only the answer is staged.
  const second = first.resume(rows);
  assert.equal(second.capability, 'done');
  assert.deepEqual(second.args, [20_000]);
  assert.equal(second.resume('ok'), want);

  // Async, on a pool that never saw the execution: the snapshot and the
  // answer are staged.
  const pool = new SidecarPool({ size: 1 });
  try {
    // (The snapshot was resumed in this process: loading it again takes
    // multiUse.)
    const again = await Progress.load(dumped, { ...policy, multiUse: true }).resumeAsync(rows, { pool });
    assert.equal(await again.resumeAsync('ok', { pool }), want);
    assert.equal(pool.processes()[0].stages, 2);
  } finally {
    await pool.close();
  }

  // Cold, in another Node process with its own sidecar, from stored bytes.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mustard-stage-'));
  try {
    const file = path.join(dir, 'progress.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        dumped: { ...dumped, snapshot: dumped.snapshot.toString('base64'), program: dumped.program.toString('base64') },
        key: key.toString('base64'),
        rows,
      }),
    );
    const script = `
      const fs = require('node:fs');
      const { Progress, processes } = require(${JSON.stringify(path.join(__dirname, '..'))});
      const saved = JSON.parse(fs.readFileSync(${JSON.stringify(file)}, 'utf8'));
      const dumped = { ...saved.dumped, snapshot: Buffer.from(saved.dumped.snapshot, 'base64'), program: Buffer.from(saved.dumped.program, 'base64') };
      const policy = { capabilities: { fetch_rows() {}, done() {} }, limits: ${JSON.stringify(limits)}, snapshotKey: Buffer.from(saved.key, 'base64') };
      const next = Progress.load(dumped, policy).resume(saved.rows);
      const value = next.resume('ok');
      process.stdout.write(JSON.stringify({ value, capability: next.capability, stages: processes().sync[0].stages }));`;
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: process.env });
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(JSON.parse(child.stdout), { value: want, capability: 'done', stages: 2 });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('batch mode: two large answers in one resume, hot and cold', async () => {
  const batchProgram = new Mustard(`
    async function main() {
      const [a, b] = await Promise.all([get(1), get(2)]);
      return [a.length, b.length, a.slice(0, 6), b.slice(-6)].join(",");
    }
    main();`);
  const a = noise('a', 2_000_000);
  const b = noise('b', 3_000_000);
  const expected = `2000000,3000000,${a.slice(0, 6)},${b.slice(-6)}`;
  const policy = { capabilities: { get() {} }, limits, snapshotKey: key, hostCalls: 'batch' };
  const step = batchProgram.start(policy);
  assert.deepEqual(step.calls.map((c) => c.callId), [1, 2]);
  const dumped = step.dump();

  const before = processes().sync[0].stages;
  assert.equal(step.resumeCalls([{ callId: 1, value: a }, { callId: 2, value: b }]), expected);
  assert.equal(processes().sync[0].stages, before + 2, 'both answers were staged');

  const pool = new SidecarPool({ size: 1 });
  try {
    const loaded = Progress.load(dumped, { ...policy, multiUse: true });
    assert.equal(await loaded.resumeCallsAsync([{ callId: 2, value: b }, { callId: 1, value: a }], { pool }), expected);
    assert.equal(pool.processes()[0].stages, 2, 'the snapshot is small: it went inline, the answers through stages');
    // run() in batch mode, whatever answers arrive together.
    const value = await batchProgram.run({ pool, limits, hostCalls: 'batch', capabilities: { get: async (i) => (i === 1 ? a : b) } });
    assert.equal(value, expected);
  } finally {
    await pool.close();
  }
});

test('the executor carries a large answer', async () => {
  const pool = new SidecarPool({ size: 1 });
  try {
    const small = new Mustard('const r = fetch_rows(n); r.length + ":" + r[r.length - 1].text.slice(0, 4);');
    const store = new InMemoryMustardExecutorStore();
    const executor = new MustardExecutor({ program: small, capabilities: { fetch_rows: async () => rows }, store, pool, limits, snapshotKey: key });
    const id = await executor.enqueue({ n: 1 });
    await executor.runWorker({ drain: true });
    const record = await executor.get(id);
    assert.equal(record.state, 'completed', JSON.stringify(record.error));
    assert.equal(record.result, `20000:${rowText.slice(-250, -246)}`);
  } finally {
    await pool.close();
  }
});
