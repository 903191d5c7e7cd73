'use strict';

// The executor's file store across host crashes: a worker process is
// killed with SIGKILL while a job is running (its capabilities' answers
// stored, the sidecar not yet resumed), and a new process finishes every
// job, calling no capability again.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { Mustard, MustardExecutor, FileMustardExecutorStore } = require('..');
const { SOURCES } = require('./fixtures/executor-programs.js');

const WORKER = path.join(__dirname, 'fixtures', 'executor-worker.js');

// worker runs the fixture; with hang, it resolves once the worker said
// "hung" (and is still blocked), else once it exited.
function worker(dir, effects, mode, hang) {
  const child = spawn(process.execPath, [WORKER, dir, effects, mode, String(hang)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const said = new Promise((resolve) => {
    child.stdout.on('data', (chunk) => {
      out += chunk.toString('utf8');
      if (out.includes('hung\n')) resolve();
    });
    exited.then(() => resolve());
  });
  return { child, exited, said, output: () => out };
}

for (const [mode, hang, calls] of [
  ['one', 4, [1, 2, 3]],
  ['batch', 2, [1, 2, 3]],
]) {
  test(`SIGKILL of the host while a job runs (${mode}): a new process finishes every job, no capability effect repeated`, { timeout: 120000 }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mustard-executor-'));
    try {
      const store = new FileMustardExecutorStore(path.join(dir, 'store'));
      const effects = path.join(dir, 'effects');
      const executor = new MustardExecutor({
        program: new Mustard(SOURCES[mode]),
        capabilities: { effect() {} },
        store,
        snapshotKey: Buffer.alloc(32, 7),
        hostCalls: mode,
      });
      const ids = [];
      for (let k = 0; k < 3; k += 1) ids.push(await executor.enqueue({ base: k * 10 }, { jobId: `job-${k}` }));

      const first = worker(path.join(dir, 'store'), effects, mode, hang);
      await first.said;
      assert.match(first.output(), /hung/, 'the first worker reached the kill point');
      const running = await store.get('job-1');
      assert.equal(running.state, 'running', 'the job is running when its host is killed');
      first.child.kill('SIGKILL');
      assert.equal((await first.exited).signal, 'SIGKILL');

      const second = worker(path.join(dir, 'store'), effects, mode, 0);
      assert.deepEqual(await second.exited, { code: 0, signal: null });

      for (let k = 0; k < 3; k += 1) {
        const record = await executor.get(ids[k]);
        assert.equal(record.state, 'completed', `job ${k}: ${JSON.stringify(record.error)}`);
        assert.equal(record.result, (k * 10 + 1 + k * 10 + 2 + k * 10 + 3) * 10);
        assert.equal(await store.loadProgress(ids[k]), null);
      }
      assert.equal((await executor.get('job-1')).attempts, 2, 'job-1 was picked up again');
      const lines = fs.readFileSync(effects, 'utf8').trim().split('\n');
      assert.equal(lines.length, 9, `one effect per call:\n${lines.join('\n')}`);
      assert.equal(new Set(lines).size, 9, 'no effect repeated');
      for (const id of ids) {
        const mine = lines.filter((l) => l.startsWith(`${id} `)).map((l) => Number(l.split(' ')[1]));
        assert.deepEqual(mine.sort(), calls, `${id}'s call ids`);
      }
      assert.deepEqual(fs.readdirSync(path.join(dir, 'store', 'claims')), [], 'no claim left behind');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}
