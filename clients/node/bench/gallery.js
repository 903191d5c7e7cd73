'use strict';

// Times the reference's gallery programs through this package (one mode
// and batch mode) against the reference addon in process, each program
// compiled once beforehand ("cached"): the median wall time of a whole
// execution (run(), or start() and resume() along the catalog's plan).
//
//   MUSTARD_SIDECAR_BIN=... node bench/gallery.js DIR [runs]
//
// DIR is examples/programmatic-tool-calls of a checkout of the reference;
// the addon comes from $MUSTARD_REFERENCE_MODULE or bench/peer.

const fs = require('node:fs');
const path = require('node:path');

const ours = require('..');

const dir = process.argv[2];
const runs = Number(process.argv[3] || 200);
if (!dir) {
  console.error('usage: node bench/gallery.js DIR [runs]');
  process.exit(2);
}
const refPath = process.env.MUSTARD_REFERENCE_MODULE || path.join(__dirname, '..', '..', '..', 'bench', 'peer', 'node_modules', 'mustardscript');
const ref = require(refPath);

function load(category) {
  return require(path.resolve(dir, category, 'catalog.ts')).map((e) => ({
    ...e,
    category,
    source: fs.readFileSync(path.resolve(dir, category, e.file), 'utf8'),
  }));
}

// runOnce runs one program to completion with lib's API.
async function runOnce(lib, program, d, extra) {
  if (!d.startPlan) {
    return program.run({ ...(d.options ?? {}), inputs: d.inputs ?? d.options?.inputs ?? {}, ...extra });
  }
  let step = program.start({ inputs: d.inputs ?? {}, capabilities: d.startPlan.capabilities, ...extra });
  for (const entry of d.startPlan.resumes ?? []) {
    const v = entry && typeof entry === 'object' && !Array.isArray(entry) && 'capability' in entry && 'value' in entry ? entry.value : entry;
    step = step.resume(structuredClone(v));
  }
  if (step instanceof lib.Progress) throw new Error(`${d.id} still suspended`);
  return step;
}

function median(xs) {
  const s = xs.slice().sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function fmt(ns) {
  return ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(0)} µs`;
}

(async () => {
  const all = [...load('analytics'), ...load('operations'), ...load('workflows')];
  const rows = [];
  const ratios = { one: [], batch: [] };
  for (const d of all) {
    const variants = [
      ['ref', ref, new ref.Mustard(d.source), {}],
      ['one', ours, new ours.Mustard(d.source), {}],
      ['batch', ours, new ours.Mustard(d.source), { hostCalls: 'batch' }],
    ];
    const times = { ref: [], one: [], batch: [] };
    for (let i = 0; i < runs + 10; i += 1) {
      for (const [name, lib, program, extra] of variants) {
        const t = process.hrtime.bigint();
        await runOnce(lib, program, d, extra);
        const dt = Number(process.hrtime.bigint() - t);
        if (i >= 10) times[name].push(dt); // the first 10 rounds warm up
      }
    }
    const [r, o, b] = [median(times.ref), median(times.one), median(times.batch)];
    ratios.one.push(o / r);
    ratios.batch.push(b / r);
    rows.push(`| ${d.category}/${path.basename(d.file, '.js')} | ${d.startPlan ? 'start/resume' : 'run'} | ${fmt(r)} | ${fmt(o)} | ${(o / r).toFixed(2)}× | ${fmt(b)} | ${(b / r).toFixed(2)}× |`);
  }
  const geomean = (xs) => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);
  console.log('| program | host code | addon | ours, one mode | ours/addon | ours, batch | ours/addon |');
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: |');
  for (const row of rows) console.log(row);
  console.log(`| **geomean** | | | | **${geomean(ratios.one).toFixed(2)}×** | | **${geomean(ratios.batch).toFixed(2)}×** |`);
  await ours.shutdown();
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
