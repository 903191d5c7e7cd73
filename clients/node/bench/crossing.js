'use strict';

// Times the crossing: this package against the reference addon, in one
// process, rounds interleaved, medians reported.
//
//   MUSTARD_SIDECAR_BIN=... node bench/crossing.js [rounds]
//   MUSTARD_SIDECAR_ENGINE=in-process node bench/crossing.js [rounds]   # after npm run build:native
//
// - run(): a program making 5 async capability calls, compiled once (on
//   Linux run() steps on the synchronous API's direct path);
// - start() + 5 synchronous resume()s of a program making 5 calls;
// - hot resume: one resumeAsync() (the pool, the event loop) and one
//   resume() (the synchronous API) of a parked execution;
// - a ping through the package's SidecarClient (the sidecar's cheapest
//   request);
// - the bare-pipe floor: a round trip of a 200-byte message between this
//   process and `cat` over the same kind of pipes (spawned with stdio
//   pipes, as the sidecar is).
//
// The reference is $MUSTARD_REFERENCE_MODULE, else
// /work/ref/node_modules/mustardscript, else bench/peer; without it the
// reference columns are left out.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ours = require('..');

const rounds = Number(process.argv[2] || 400);
const WARMUP = 30;

function loadReference() {
  const candidates = [
    process.env.MUSTARD_REFERENCE_MODULE,
    '/work/ref/node_modules/mustardscript',
    path.join(__dirname, 'peer', 'node_modules', 'mustardscript'),
  ].filter(Boolean);
  for (const c of candidates) {
    if (fs.existsSync(c)) return require(c);
  }
  return null;
}

const ref = loadReference();

const RUN_SOURCE = `
async function main() {
  let total = 0;
  for (let i = 0; i < 5; i += 1) {
    total += await tool(i);
  }
  return total;
}
main();
`;
const SYNC_SOURCE = `
let total = 0;
for (let i = 0; i < 5; i += 1) {
  total += tool(i);
}
total;
`;
const HOT_SOURCE = `
let total = 0;
for (let i = 0; i < 1000000; i += 1) {
  total += tool(i);
}
total;
`;

function median(xs) {
  const s = xs.slice().sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function us(ns) {
  return `${(ns / 1e3).toFixed(0)} µs`;
}

// pipeFloor is one round trip of a message through cat.
function makeFloor() {
  const cat = spawn('cat', [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const message = Buffer.alloc(200, 'x');
  let waiting = null;
  let got = 0;
  cat.stdout.on('data', (chunk) => {
    got += chunk.length;
    if (got >= message.length && waiting) {
      got -= message.length;
      const w = waiting;
      waiting = null;
      w();
    }
  });
  return {
    once() {
      return new Promise((resolve) => {
        waiting = resolve;
        cat.stdin.write(message);
      });
    },
    close() {
      cat.stdin.end();
    },
  };
}

async function time(f) {
  const t = process.hrtime.bigint();
  await f();
  return Number(process.hrtime.bigint() - t);
}

(async () => {
  const tool = async (i) => i + 1;
  const syncTool = () => {};
  const variants = [];

  const oursRun = new ours.Mustard(RUN_SOURCE);
  const oursSync = new ours.Mustard(SYNC_SOURCE);
  const oursHot = new ours.Mustard(HOT_SOURCE);
  const floor = makeFloor();

  variants.push(['floor: node ↔ cat', () => floor.once()]);
  // The sidecar's cheapest request, through the package's client.
  const pinger = await ours.SidecarClient.start({});
  variants.push(['sidecar ping (SidecarClient)', () => pinger.request('ping', {})]);
  if (ref) {
    const refRun = new ref.Mustard(RUN_SOURCE);
    const refSync = new ref.Mustard(SYNC_SOURCE);
    variants.push(['reference run()', () => refRun.run({ capabilities: { tool } })]);
    variants.push([
      'reference start() + 5 resume()',
      () => {
        let step = refSync.start({ capabilities: { tool: syncTool } });
        for (let i = 0; i < 5; i += 1) step = step.resume(i + 1);
        if (step !== 15) throw new Error(`reference: ${step}`);
      },
    ]);
  }
  variants.push(['ours run()', () => oursRun.run({ capabilities: { tool } })]);
  variants.push([
    'ours start()/resume() loop, async tool',
    async () => {
      let step = oursRun.start({ capabilities: { tool } });
      while (step instanceof ours.Progress) step = step.resume(await tool(...step.args));
      if (step !== 15) throw new Error(`ours loop: ${step}`);
    },
  ]);
  variants.push([
    'ours start() + 5 resume()',
    () => {
      let step = oursSync.start({ capabilities: { tool: syncTool } });
      for (let i = 0; i < 5; i += 1) step = step.resume(i + 1);
      if (step !== 15) throw new Error(`ours: ${step}`);
    },
  ]);
  // Hot resumes of one parked execution: each round answers the step
  // the last round left.
  let asyncStep = await oursHot.startAsync({ capabilities: { tool: syncTool } });
  let syncStep = oursHot.start({ capabilities: { tool: syncTool } });
  variants.push([
    'ours hot resumeAsync()',
    async () => {
      asyncStep = await asyncStep.resumeAsync(1);
    },
  ]);
  variants.push([
    'ours hot resume()',
    () => {
      syncStep = syncStep.resume(1);
    },
  ]);

  const times = new Map(variants.map(([name]) => [name, []]));
  for (let i = 0; i < rounds + WARMUP; i += 1) {
    for (const [name, f] of variants) {
      const dt = await time(f);
      if (i >= WARMUP) times.get(name).push(dt);
    }
  }
  floor.close();
  await pinger.close();

  const m = new Map([...times].map(([name, xs]) => [name, median(xs)]));
  const f = m.get('floor: node ↔ cat');
  const engine = process.env.MUSTARD_SIDECAR_ENGINE === 'in-process' ? 'in-process (the addon)' : 'sidecar processes';
  console.log(`rounds: ${rounds} (after ${WARMUP} warm-up), Node ${process.version}, engine of the synchronous API and run(): ${engine}`);
  console.log('| measure | median | vs reference | vs floor |');
  console.log('| --- | ---: | ---: | ---: |');
  const pairs = {
    'ours run()': 'reference run()',
    'ours start() + 5 resume()': 'reference start() + 5 resume()',
  };
  for (const [name, v] of m) {
    const r = pairs[name] && m.get(pairs[name]);
    console.log(`| ${name} | ${us(v)} | ${r ? `${(v / r).toFixed(2)}×` : ''} | ${(v / f).toFixed(2)}× |`);
  }
  const hot = m.get('ours hot resumeAsync()');
  const hotSync = m.get('ours hot resume()');
  console.log(`overhead per crossing (hot resumeAsync − floor): ${us(hot - f)}`);
  console.log(`overhead per crossing (hot resume − floor): ${us(hotSync - f)}`);
  await ours.shutdown();
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
