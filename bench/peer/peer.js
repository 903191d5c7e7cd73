'use strict';
// Runs the sidecar-bench programs in-process on the reference
// implementation (the mustardscript package) and reports timings in
// nanoseconds. One JSON command per stdin line, one JSON reply per stdout
// line; bench/peer.go is the other side.
const fs = require('fs');
const path = require('path');
const readline = require('readline');

const reply = (v) => process.stdout.write(JSON.stringify(v) + '\n');

let api;
try {
  api = require('mustardscript');
} catch (e) {
  reply({ error: `cannot load mustardscript: ${e.message}` });
  process.exit(1);
}
const { Mustard, Progress } = api;
const version = JSON.parse(
  fs.readFileSync(path.join(__dirname, 'node_modules', 'mustardscript', 'package.json'), 'utf8'),
).version;

const now = process.hrtime.bigint;
const noop = () => null;
let S = null;

function hostError(e) {
  const err = new Error(e.message);
  err.name = e.name;
  if (e.code !== undefined) err.code = e.code;
  return err;
}

// runWorkload compiles (unless program is given), starts and answers every
// capability call from the fixture by capability and arguments, like the
// driver's host does.
function runWorkload(w, program) {
  const m = program || new Mustard(w.source, { inputs: w.inputNames });
  let p = m.start({ inputs: w.inputs, capabilities: w.caps, limits: {}, snapshotKey: S.key });
  let i = 0;
  while (p instanceof Progress) {
    const c = w.answers.get(p.capability + '\0' + JSON.stringify(p.args));
    if (!c) throw new Error(`${w.name}: no answer for ${p.capability}(${JSON.stringify(p.args)})`);
    i++;
    p = c.error ? p.resumeError(hostError(c.error)) : p.resume(c.answer);
  }
  if (i !== w.calls.length) throw new Error(`${w.name}: completed after ${i} of ${w.calls.length} calls`);
  return p;
}

function check(w, result) {
  const got = JSON.stringify(result);
  if (got !== w.want) throw new Error(`${w.name}: result ${got}, want ${w.want}`);
}

function init(cmd) {
  const key = Buffer.from(cmd.key, 'base64');
  const cap = { cap: noop };
  S = {
    key,
    cap,
    hot: new Mustard(cmd.hot_source),
    cold: new Mustard(cmd.cold_source, { inputs: ['steps', 'note'] }),
    coldInputs: { steps: cmd.cold_steps, note: cmd.cold_note },
    large: new Mustard(cmd.large_source),
    largeCap: { fetch_page: noop },
    largeAnswers: cmd.large_answers,
    workloads: cmd.workloads.map((w) => ({
      ...w,
      caps: Object.fromEntries(w.capabilities.map((n) => [n, noop])),
      inputNames: Object.keys(w.inputs),
      want: JSON.stringify(w.expected),
      answers: new Map(w.calls.map((c) => [c.capability + '\0' + JSON.stringify(c.args), c])),
    })),
  };
  for (const w of S.workloads) {
    w.program = new Mustard(w.source, { inputs: w.inputNames });
    check(w, runWorkload(w, null));
  }
  return { ready: true, mustardscript: version, node: process.version };
}

// hot times progress.resume on the same loop program the driver uses,
// starting afresh every chain suspensions as the driver does.
function hot(n, chain) {
  const out = [];
  while (out.length < n) {
    let p = S.hot.start({ capabilities: S.cap, limits: {}, snapshotKey: S.key });
    for (let s = 0; s < chain && out.length < n; s++) {
      const t0 = now();
      p = p.resume(1);
      out.push(Number(now() - t0));
    }
    try {
      p.cancel();
    } catch {
      // Cancellation ends the execution with a limit error.
    }
  }
  return out;
}

// history times n resumes of the cold program (~1 KiB of arguments per
// call) from suspension step on.
function history(step, n) {
  const out = [];
  if (n === 0) return out;
  let p = S.cold.start({ inputs: S.coldInputs, capabilities: S.cap, limits: {}, snapshotKey: S.key });
  for (let s = 1; out.length < n; s++) {
    const t0 = now();
    p = p.resume({ n: s });
    const d = Number(now() - t0);
    if (s >= step) out.push(d);
  }
  try {
    p.cancel();
  } catch {
    // Cancellation ends the execution with a limit error.
  }
  return out;
}

function compile(w, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const t0 = now();
    new Mustard(w.source, { inputs: w.inputNames });
    out.push(Number(now() - t0));
  }
  return out;
}

function workload(w, n, cached) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const t0 = now();
    const r = runWorkload(w, cached ? w.program : null);
    out.push(Number(now() - t0));
    check(w, r);
  }
  return out;
}

// cold times loading a dumped suspension (program included) and resuming
// it; reaching suspension k is not timed.
function cold(k, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    let p = S.cold.start({ inputs: S.coldInputs, capabilities: S.cap, limits: {}, snapshotKey: S.key });
    for (let j = 1; j < k; j++) p = p.resume({ n: j });
    const dumped = p.dump();
    const t0 = now();
    const q = Progress.load(dumped, { capabilities: S.cap, limits: {}, snapshotKey: S.key });
    const r = q.resume({ n: k });
    out.push(Number(now() - t0));
    if (!(r instanceof Progress) || r.args[0].i !== k) throw new Error(`cold resume at step ${k}: unexpected step`);
  }
  return out;
}

// large runs the 40 × 50 KB answers program n times, timing each resume.
// After each run, a second execution is taken to its last suspension and
// dumped (a suspension resumed in this process cannot be loaded again),
// then loaded as after a restart and resumed to completion.
function large(n) {
  const first = [];
  const last = [];
  const cold = [];
  let note = '';
  const answers = S.largeAnswers;
  const start = () => S.large.start({ capabilities: S.largeCap, limits: {}, snapshotKey: S.key });
  for (let r = 0; r < n; r++) {
    let p = start();
    const rts = [];
    for (let i = 0; i < answers.length; i++) {
      const t0 = now();
      p = p.resume(answers[i]);
      rts.push(Number(now() - t0));
    }
    if (p instanceof Progress) throw new Error('large answers: did not complete');
    const hot = p;
    rts.pop(); // the last one completes
    first.push(...rts.slice(0, 5));
    last.push(...rts.slice(rts.length - 5));

    let q = start();
    for (let i = 0; i < answers.length - 1; i++) q = q.resume(answers[i]);
    const dumped = q.dump();
    const t0 = now();
    const loaded = Progress.load(dumped, { capabilities: S.largeCap, limits: {}, snapshotKey: S.key });
    const v = loaded.resume(answers[answers.length - 1]);
    cold.push(Number(now() - t0));
    if (v !== hot) throw new Error(`large answers: cold resume gave ${v}, the hot run ${hot}`);
    const total = answers.reduce((a, s) => a + s.length, 0);
    const size = dumped.snapshot.length;
    note = `40 × 50 KB answers, peer: final snapshot ${size} bytes for ${total} answer bytes (${Math.round((100 * size) / total)}%); cold resume of the dump gives the hot run's value ${hot}`;
  }
  return { first, last, cold, note };
}

function round(cmd) {
  const samples = { hot: hot(cmd.hot, cmd.hot_chain) };
  for (const k of cmd.history_steps) samples[`history/${k}`] = history(k, cmd.history);
  for (const w of S.workloads) samples[`compile/${w.name}`] = compile(w, cmd.compile);
  for (const w of S.workloads) {
    samples[`workload/${w.name}`] = workload(w, cmd.workload, false);
    samples[`workload_cached/${w.name}`] = workload(w, cmd.workload, true);
  }
  for (const k of cmd.cold_steps) samples[`cold/${k}`] = cold(k, cmd.cold);
  const notes = {};
  if (cmd.large > 0) {
    const l = large(cmd.large);
    samples['large/first'] = l.first;
    samples['large/last'] = l.last;
    samples['large/cold'] = l.cold;
    notes['large/peer'] = l.note;
  }
  return { samples, notes };
}

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  try {
    const cmd = JSON.parse(line);
    if (cmd.cmd === 'init') reply(init(cmd));
    else if (cmd.cmd === 'round') reply(round(cmd));
    else reply({ error: `unknown command ${cmd.cmd}` });
  } catch (e) {
    reply({ error: String((e && e.message) || e) });
  }
});
