'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');

const { SidecarClient, SidecarPool, MustardProcessError, MustardLimitError, MustardRequestTooLargeError, Mustard } = require('..');
const { FrameReader, encodeFrame } = require('../lib/wire.js');

test('frames: a response over the bound is refused before it is buffered', () => {
  const r = new FrameReader(100);
  const prefix = Buffer.alloc(8);
  prefix.writeUInt32LE(50, 0);
  prefix.writeUInt32LE(51, 4);
  assert.throws(() => r.push(prefix), /a response of 101 bytes exceeds the client's limit of 100 bytes/);
  const ok = new FrameReader(100);
  const frame = encodeFrame({ protocol_version: 2, id: 1, method: 'x' }, Buffer.from('abc'));
  const out = [];
  for (const b of frame) out.push(...ok.push(Buffer.from([b]))); // byte by byte
  assert.equal(out.length, 1);
  assert.deepEqual(JSON.parse(out[0].header), { protocol_version: 2, id: 1, method: 'x' });
  assert.equal(out[0].payload.toString(), 'abc');
  assert.throws(() => encodeFrame({ method: 'compile', source: 'x'.repeat(1 << 20) }), MustardRequestTooLargeError);
});

test('a client speaks to a sidecar and closes it gracefully', async () => {
  const c = await SidecarClient.start();
  const { result } = await c.request('ping', {});
  assert.equal(result.kind, 'pong');
  assert.ok(result.features.includes('batch_calls'));
  await c.close();
  assert.equal(c.exitCode, 0);
  await assert.rejects(c.request('ping', {}), MustardProcessError);
});

test('a dead process is an ordinary error for every outstanding request', async () => {
  const c = await SidecarClient.start();
  const compiled = await c.request('compile', { source: 'while (true) {}' });
  const running = c.request(
    'start',
    { program_id: compiled.result.program_id, options: { limits: { instruction_budget: 1e15 } } },
    null,
    { cancellable: true },
  );
  const queued = c.request('ping', {});
  process.kill(c.pid, 'SIGKILL');
  await assert.rejects(running, (e) => e instanceof MustardProcessError && /sidecar process exited \(killed by SIGKILL\)/.test(e.message));
  await assert.rejects(queued, MustardProcessError);
  await assert.rejects(c.request('ping', {}), MustardProcessError);
  await c.close();
});

test('a missing binary is a clear error', async () => {
  await assert.rejects(SidecarClient.start({ command: '/nonexistent/mustard-sidecar' }), (e) =>
    e instanceof MustardProcessError && /not found/.test(e.message) && /MUSTARD_SIDECAR_BIN/.test(e.message));
});

test('an AbortSignal cancels a running guest in band; the process stays usable', async () => {
  const pool = new SidecarPool({ size: 1 });
  const program = new Mustard('let i = 0; while (true) { i++; }');
  const controller = new AbortController();
  const started = Date.now();
  const run = program.run({ limits: { instructionBudget: 1e15 }, signal: controller.signal, pool });
  setTimeout(() => controller.abort(), 100);
  await assert.rejects(run, (e) => e instanceof MustardLimitError && e.message === 'execution cancelled' && e.code === 'limit_cancelled');
  assert.ok(Date.now() - started < 20000, 'cancel took too long');
  const [p] = pool.processes();
  const again = await new Mustard('1 + 1').run({ pool });
  assert.equal(again, 2);
  assert.equal(pool.processes()[0].pid, p.pid, 'a cancel must not cost the process');
  await pool.close();
});

test('a pool replaces a killed process and runs executions in parallel', async () => {
  const pool = new SidecarPool({ size: 3 });
  const program = new Mustard('wait(id)');
  const waiting = [];
  let release;
  const all = new Promise((r) => {
    release = r;
  });
  // Three executions each wait until all three have called: they only
  // finish if they run at once.
  const runs = [1, 2, 3].map((id) =>
    program.run({
      inputs: { id },
      pool,
      capabilities: {
        wait: async (x) => {
          waiting.push(x);
          if (waiting.length === 3) release();
          await all;
          return x * 2;
        },
      },
    }),
  );
  assert.deepEqual(await Promise.all(runs), [2, 4, 6]);
  assert.equal(pool.processes().length, 3);
  const victim = pool.processes()[0].pid;
  process.kill(victim, 'SIGKILL');
  const results = await Promise.all([4, 5, 6, 7].map((id) => program.run({ inputs: { id }, pool, capabilities: { wait: (x) => x } })));
  assert.deepEqual(results, [4, 5, 6, 7]);
  assert.ok(!pool.processes().some((p) => p.pid === victim));
  await pool.close();
  assert.equal(pool.processes().length, 0);
});

test('SidecarPool#stats asks each running process what it holds', async () => {
  const pool = new SidecarPool({ size: 1 });
  assert.deepEqual(await pool.stats(), [], 'a pool with no process starts none to answer');
  let release;
  const held = new Promise((r) => {
    release = r;
  });
  let called;
  const calling = new Promise((r) => {
    called = r;
  });
  const waiting = new Mustard('const a = wait(1); a + 1').run({
    pool,
    capabilities: {
      wait: async (x) => {
        called();
        await held;
        return x;
      },
    },
  });
  await calling;
  const [p] = pool.processes();
  let [s] = await pool.stats();
  assert.deepEqual([s.id, s.pid], [p.id, p.pid]);
  assert.equal(s.stats.kind, 'stats');
  assert.equal(s.stats.parked_executions, 1, 'the execution waiting on its capability is parked');
  assert.equal(s.stats.cached_programs, 1, 'the program arrived with the start');
  assert.ok(s.stats.memory_used_bytes > 0 && s.stats.memory_used_bytes <= s.stats.memory_budget_bytes);
  release();
  assert.equal(await waiting, 2);
  [s] = await pool.stats();
  assert.equal(s.stats.parked_executions, 0);
  assert.ok(s.stats.hot_resumes >= 1);

  // A process that dies before it answers has no stats.
  process.kill(p.pid, 'SIGKILL');
  assert.deepEqual(await pool.stats(), [{ id: p.id, pid: p.pid, stats: null }]);

  await pool.close();
  await assert.rejects(pool.stats(), (e) => e instanceof MustardProcessError);
});
