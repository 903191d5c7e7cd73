'use strict';
// Runs the sidecar-bench programs in-process on the reference
// implementation (the mustardscript package) and reports timings in
// nanoseconds. One JSON command per stdin line, one JSON reply per stdout
// line; bench/peer.go is the other side.
const fs = require('fs');
const Module = require('module');
const path = require('path');
const readline = require('readline');

const { reply, api } = require('./reference');

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
    structured: new Mustard(cmd.structured_source),
    structuredAnswers: cmd.structured_answers,
    awaited: new Mustard(cmd.awaited_source),
    huge: new Mustard(cmd.huge_source),
    hugeAnswers: cmd.huge_answers,
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

// large runs a program of 40 large answers (the 40 × 50 KB text one, or
// the structured one) n times, timing each resume. After each run, a
// second execution is taken to its last suspension and dumped (a
// suspension resumed in this process cannot be loaded again), then loaded
// as after a restart and resumed to completion.
function large(n, program, answers, label, answerBytes) {
  const first = [];
  const last = [];
  const cold = [];
  let note = '';
  let fresh = '';
  const start = () => program.start({ capabilities: S.largeCap, limits: {}, snapshotKey: S.key });
  for (let r = 0; r < n; r++) {
    let p = start();
    const rts = [];
    for (let i = 0; i < answers.length; i++) {
      const t0 = now();
      p = p.resume(answers[i]);
      rts.push(Number(now() - t0));
    }
    if (p instanceof Progress) throw new Error(`${label}: did not complete`);
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
    if (v !== hot) throw new Error(`${label}: cold resume gave ${v}, the hot run ${hot}`);
    const total = answers.reduce((a, s) => a + answerBytes(s), 0);
    const size = dumped.snapshot.length;
    note = `${label}, peer: final snapshot ${size} bytes for ${total} answer bytes (${Math.round((100 * size) / total)}%); cold resume of the dump gives the hot run's value ${hot}`;
    if (r === n - 1) fresh = encodeFresh(dumped, answers[answers.length - 1], hot);
  }
  return { first, last, cold, note, fresh };
}

// encodeFresh is the line fresh.js reads: a dump, the answer to resume it
// with and the value the hot run completed with. The dump's buffers go
// as base64 (a Buffer's own JSON is an array of numbers).
function encodeFresh(dump, answer, want) {
  const cmd = { dump, answer, want, key: S.key, capabilities: Object.keys(S.largeCap) };
  return JSON.stringify(cmd, function (k, v) {
    const raw = this[k];
    return Buffer.isBuffer(raw) ? { b64: raw.toString('base64') } : v;
  });
}

// huge runs the 6 × 880 KB answers program n times, timing the five
// resumes that suspend again.
function huge(n) {
  const rts = [];
  let note = '';
  const answers = S.hugeAnswers;
  for (let r = 0; r < n; r++) {
    let p = S.huge.start({ capabilities: S.largeCap, limits: {}, snapshotKey: S.key });
    for (let i = 0; i < answers.length - 1; i++) {
      const t0 = now();
      p = p.resume(answers[i]);
      rts.push(Number(now() - t0));
    }
    const size = p.dump().snapshot.length;
    const v = p.resume(answers[answers.length - 1]);
    const total = answers.reduce((a, s) => a + s.length, 0);
    if (v !== total) throw new Error(`1 MB answers: completed with ${v}, want ${total}`);
    note = `6 × 880 KB answers, peer: snapshot at the last suspension ${size} bytes for ${total} answer bytes`;
  }
  return { rts, note };
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
  const fresh = {};
  if (cmd.large > 0) {
    const programs = [
      ['large', S.large, S.largeAnswers, '40 × 50 KB answers', (s) => s.length],
      ['structured', S.structured, S.structuredAnswers, '40 × 50 KB structured answers', (v) => JSON.stringify(v).length],
      ['awaited', S.awaited, S.largeAnswers, '40 × 50 KB answers, awaited', (s) => s.length],
    ];
    for (const [key, program, answers, label, size] of programs) {
      const l = large(cmd.large, program, answers, label, size);
      samples[`${key}/first`] = l.first;
      samples[`${key}/last`] = l.last;
      samples[`${key}/cold`] = l.cold;
      notes[`${key}/peer`] = l.note;
      fresh[key] = l.fresh;
    }
    const h = huge(cmd.large);
    samples.huge = h.rts;
    notes['huge/peer'] = h.note;
  }
  return { samples, notes, fresh };
}

// loadCatalog evaluates a gallery catalog as a CommonJS module whatever its
// extension (the gallery's catalogs are plain JavaScript named .ts).
function loadCatalog(file) {
  const m = new Module(file, module);
  m.filename = file;
  m.paths = Module._nodeModulePaths(path.dirname(file));
  m._compile(fs.readFileSync(file, 'utf8'), file);
  return m.exports;
}

const clone = (v) => (v === undefined ? null : JSON.parse(JSON.stringify(v)));

// galleryTools returns a program's capabilities: the catalog's functions,
// or, for a program described by a start plan, its planned answers served
// in order.
function galleryTools(d) {
  if (d.options && d.options.capabilities) return d.options.capabilities;
  const plan = d.startPlan || {};
  const names = Object.keys(plan.capabilities || {});
  const queue = (plan.resumes || []).map((r, i) =>
    r && typeof r === 'object' && !Array.isArray(r) && 'capability' in r && 'value' in r
      ? r
      : { capability: names[i], value: r },
  );
  return Object.fromEntries(
    names.map((n) => [
      n,
      () => {
        const next = queue.shift();
        if (!next) throw new Error(`no planned answer left for ${n}`);
        if (next.capability !== n) throw new Error(`planned answer is for ${next.capability}, not ${n}`);
        return next.value;
      },
    ]),
  );
}

// recordOne runs a gallery program on the reference implementation,
// answering every call with the catalog's tools, and returns it as a
// workload: inputs, every call with its arguments and answer (or error),
// and the result. Answers go through JSON first, as the fixtures do.
async function recordOne(name, source, d, key) {
  const inputs = clone(d.inputs || (d.options && d.options.inputs) || {});
  const tools = galleryTools(d);
  const names = Object.keys(tools);
  const m = new Mustard(source, { inputs: Object.keys(inputs) });
  let p = m.start({ inputs, capabilities: Object.fromEntries(names.map((n) => [n, noop])), limits: {}, snapshotKey: key });
  const calls = [];
  while (p instanceof Progress) {
    if (calls.length === 10000) throw new Error('more than 10000 calls');
    const args = clone(p.args);
    let c;
    try {
      c = { capability: p.capability, args, answer: clone(await tools[p.capability](...clone(p.args))) };
    } catch (e) {
      const err = { name: (e && e.name) || 'Error', message: String(e && e.message !== undefined ? e.message : e) };
      if (e && typeof e.code === 'string') err.code = e.code;
      c = { capability: p.capability, args, error: err };
    }
    calls.push(c);
    p = c.error ? p.resumeError(hostError(c.error)) : p.resume(c.answer);
  }
  if (p === undefined) throw new Error('the result is undefined');
  return { name, source, inputs, capabilities: names, calls, expected: clone(p) };
}

// record turns every program of the catalogs in cmd.dir's subdirectories
// (<sub>/catalog.js or <sub>/catalog.ts, each entry naming its program
// file) into a workload; a program that cannot be recorded is reported
// with the reason.
async function record(cmd) {
  const key = require('crypto').randomBytes(32);
  const workloads = [];
  const skipped = [];
  const subs = fs
    .readdirSync(cmd.dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  for (const sub of subs) {
    const catalog = ['catalog.js', 'catalog.ts'].map((f) => path.join(cmd.dir, sub, f)).find((f) => fs.existsSync(f));
    if (!catalog) continue;
    let entries;
    try {
      entries = loadCatalog(catalog);
    } catch (e) {
      skipped.push({ name: `${sub}/${path.basename(catalog)}`, reason: String((e && e.message) || e) });
      continue;
    }
    for (const d of entries) {
      const name = `${sub}/${path.basename(d.file, '.js')}`;
      try {
        const source = fs.readFileSync(path.join(cmd.dir, sub, d.file), 'utf8');
        workloads.push(await recordOne(name, source, d, key));
      } catch (e) {
        skipped.push({ name, reason: String((e && e.message) || e) });
      }
    }
  }
  return { workloads, skipped };
}

readline.createInterface({ input: process.stdin }).on('line', async (line) => {
  try {
    const cmd = JSON.parse(line);
    if (cmd.cmd === 'init') reply(init(cmd));
    else if (cmd.cmd === 'round') reply(round(cmd));
    else if (cmd.cmd === 'record') reply(await record(cmd));
    else reply({ error: `unknown command ${cmd.cmd}` });
  } catch (e) {
    reply({ error: String((e && e.message) || e) });
  }
});
