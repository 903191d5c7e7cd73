'use strict';

// Two executor processes on one file store and one job, killed (SIGKILL)
// and restarted at points a seeded random draw picks among each process's
// writes under its lease: only the lease holder works on the job, the
// other takes it over once the holder is gone, and every capability call
// runs exactly once, the result that of a run without kills.
// MUSTARD_LONG_EXECUTOR=1 runs more rounds and seeds.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { Mustard, MustardExecutor, InMemoryMustardExecutorStore, FileMustardExecutorStore } = require('..');
const { SOURCES } = require('./fixtures/executor-programs.js');

const WORKER = path.join(__dirname, 'fixtures', 'executor-lease-worker.js');
const LONG = process.env.MUSTARD_LONG_EXECUTOR === '1';

// mulberry32: a small seeded generator, so that a failure can be run again.
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function worker(dir, effects, mode, hang) {
  const child = spawn(process.execPath, [WORKER, dir, effects, mode, String(hang)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  let onHung = null;
  const hung = new Promise((resolve) => {
    onHung = resolve;
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  child.stdout.on('data', (chunk) => {
    out += chunk.toString('utf8');
    if (out.includes('hung\n')) onHung();
  });
  return { child, exited, hung, output: () => out };
}

async function unkilled(mode, base) {
  const seen = [];
  const executor = new MustardExecutor({
    program: new Mustard(SOURCES[mode]),
    store: new InMemoryMustardExecutorStore(),
    capabilities: {
      effect(n) {
        seen.push(`${this.callId} ${n}`);
        return n * 10;
      },
    },
    hostCalls: mode,
  });
  const id = await executor.enqueue({ base });
  await executor.runWorker({ drain: true });
  return { result: (await executor.get(id)).result, calls: seen.sort() };
}

const seeds = LONG ? [1, 2, 3, 4, 5, 6, 7, 8] : [7];
for (const mode of ['one', 'batch']) {
  for (const seed of seeds) {
    test(`two executor processes on one job, killed and restarted (${mode}, seed ${seed}): every call once, the unkilled result`, { timeout: 300000 }, async (t) => {
      const rand = random(seed * 31 + (mode === 'one' ? 0 : 1));
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mustard-takeover-'));
      const workers = new Set();
      try {
        const storeDir = path.join(dir, 'store');
        const store = new FileMustardExecutorStore(storeDir);
        const effects = path.join(dir, 'effects');
        fs.writeFileSync(effects, '');
        const base = 100;
        const expected = await unkilled(mode, base);
        const executor = new MustardExecutor({ program: new Mustard(SOURCES[mode]), capabilities: { effect() {} }, store, hostCalls: mode });
        await executor.enqueue({ base }, { jobId: 'job' });

        // A fenced write is made at every step of the job (its start,
        // each saved suspension, answer and resume): a kill point among
        // the first few of a process's writes lands mid-job.
        const hangPoint = () => 1 + Math.floor(rand() * 6);
        const spawnOne = (hang) => {
          const w = worker(storeDir, effects, mode, hang);
          w.hang = hang;
          workers.add(w);
          w.exited.then(() => workers.delete(w));
          return w;
        };
        const rounds = LONG ? 6 : 3;
        spawnOne(hangPoint());
        spawnOne(hangPoint());
        let kills = 0;
        while (kills < rounds) {
          const live = [...workers];
          // Whichever comes first: a worker at its kill point, or every
          // worker done (the job finished before the kill points came).
          const first = await Promise.race([
            ...live.map((w) => w.hung.then(() => w)),
            Promise.all(live.map((w) => w.exited)).then(() => null),
          ]);
          if (first === null) break;
          first.child.kill('SIGKILL');
          assert.equal((await first.exited).signal, 'SIGKILL');
          kills += 1;
          // Its replacement: killed again at a later round, or (the last
          // ones) left to finish.
          spawnOne(kills < rounds ? hangPoint() : 0);
        }
        // The rest run to the end: any worker still to hang is killed and
        // replaced by one that does not.
        while (workers.size > 0) {
          const live = [...workers];
          const first = await Promise.race([...live.map((w) => w.hung.then(() => w)), Promise.all(live.map((w) => w.exited)).then(() => null)]);
          if (first === null) break;
          first.child.kill('SIGKILL');
          await first.exited;
          kills += 1;
          spawnOne(0);
        }
        assert.ok(kills >= 1, 'a worker was killed mid-job');
        t.diagnostic(`${kills} kills`);

        const record = await executor.get('job');
        assert.equal(record.state, 'completed', JSON.stringify(record.error));
        assert.deepEqual(record.result, expected.result);
        assert.equal(await store.loadProgress('job'), null);
        const lines = fs.readFileSync(effects, 'utf8').trim().split('\n');
        assert.deepEqual(
          lines.map((l) => l.split(' ').slice(1).join(' ')).sort(),
          expected.calls,
          `every call exactly once, as without kills (${kills} kills):\n${lines.join('\n')}`,
        );
        assert.ok(lines.every((l) => l.startsWith('job ')));
        // A worker killed after its last write leaves its lease file, stale.
        assert.equal((await executor.status('job')).owner, undefined, 'no lease held');
      } finally {
        for (const w of workers) w.child.kill('SIGKILL');
        await Promise.all([...workers].map((w) => w.exited));
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }
}
