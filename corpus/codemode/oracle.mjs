// oracle.mjs computes the expected outcome of every program in this
// directory with Node 20, and writes it into the program's JSON file.
//
//   cd corpus/codemode/oracle && npm ci      # once: esbuild, for TypeScript
//   node --expose-internals corpus/codemode/oracle.mjs [name ...]
//   node --expose-internals corpus/codemode/oracle.mjs --check
//
// For each name.json (with name.ts or name.js beside it) the program runs in
// a fresh node:vm context holding the inputs as globals, each capability as a
// function under its namespace object and, when asked for, a console whose
// methods append {level, text: util.format(...args)}. Host calls are answered
// from the file's answers, in call order per capability, and delivered the
// way the sidecar delivers them: when the guest has nothing left to run, the
// oldest outstanding call is answered ("one" mode), or every outstanding call
// at once in call order ("batch" mode). The result (or error), the whole
// run's log lines and the calls the host received are written back as
// result/error, logs and calls; when batch mode gives a different outcome,
// it is written under "batch" too. --check writes nothing and fails when a
// file is not what the oracle computes.
//
// --expose-internals gives Node's own REPL transform for scripts with
// top-level await (a node:vm script has no top-level await of its own).

import fs from 'node:fs';
import path from 'node:path';
import util from 'node:util';
import vm from 'node:vm';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

// The sidecar's guests always run in UTC.
process.env.TZ = 'UTC';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, 'oracle', 'package.json'));
const esbuild = require('esbuild');
let processTopLevelAwait;
try {
  ({ processTopLevelAwait } = createRequire(import.meta.url)('internal/repl/await'));
} catch {
  console.error('oracle.mjs: run with node --expose-internals');
  process.exit(2);
}

// A rejection nobody observes is ignored, as in the sidecar.
process.on('unhandledRejection', () => {});

const GUEST = 'guest.js';
const consoleLevels = ['log', 'info', 'warn', 'error', 'debug'];

// normalizeLog removes stack frame lines (lines matching /^\s+at /) from a
// log text. What inspect appends to the last frame line of an error (" {"
// or " [" opening its own properties, "," separating it from the next
// entry) moves to the line before. Stacks differ between V8 and the
// sidecar, so both sides compare texts normalized this way.
export function normalizeLog(text) {
  const out = [];
  for (const line of text.split('\n')) {
    if (out.length > 0 && /^\s+at /.test(line)) {
      const tail = /( \{| \[|,)$/.exec(line);
      if (tail) out[out.length - 1] += tail[1];
      continue;
    }
    out.push(line);
  }
  return out.join('\n');
}

function erase(source, language) {
  if (language === 'javascript') return source;
  if (language !== 'typescript') throw new Error(`unknown language ${language}`);
  return esbuild.transformSync(source, { loader: 'ts', target: 'es2022' }).code;
}

function hasTopLevelAwait(js) {
  try {
    new vm.Script(js, { filename: GUEST });
    return false;
  } catch (e) {
    if (/await is only valid/.test(String(e.message))) return true;
    throw e;
  }
}

// plain copies a value across the boundary as JSON, refusing anything a
// plain JSON value cannot hold (the corpus keeps to those).
function plain(v, where) {
  const seen = new Set();
  const walk = (x) => {
    if (x === null || typeof x === 'string' || typeof x === 'boolean') return x;
    if (typeof x === 'number') {
      if (!Number.isFinite(x)) throw new Error(`${where}: non-finite number`);
      return x;
    }
    if (typeof x !== 'object') throw new Error(`${where}: ${typeof x} is not plain JSON`);
    if (seen.has(x)) throw new Error(`${where}: value reachable twice`);
    seen.add(x);
    if (Array.isArray(x)) return x.map(walk);
    const proto = Object.getPrototypeOf(x);
    if (proto !== null && Object.getPrototypeOf(proto) !== null) throw new Error(`${where}: not a plain object`);
    const out = {};
    for (const k of Object.keys(x)) {
      if (x[k] === undefined) throw new Error(`${where}: undefined member ${k}`);
      out[k] = walk(x[k]);
    }
    return out;
  };
  return walk(v);
}

// run executes one program in one host-call mode.
async function run(spec, js, mode) {
  const tla = hasTopLevelAwait(js);
  // Guest code is strict-mode code. "void 0;" keeps the directive from
  // being the completion value of a program that has no other.
  const strictJS = '"use strict"; void 0;' + js;
  const source = tla
    ? '"use strict"; void 0;' + processTopLevelAwait(js)
    : strictJS;
  const lines = source.split('\n');
  const ctx = vm.createContext({});
  // V8 gives every context its own console; the guest has one only when
  // the host asks for it.
  vm.runInContext('delete globalThis.console', ctx);
  const guestJSON = vm.runInContext('JSON', ctx);
  const GuestError = vm.runInContext('Error', ctx);
  const GuestPromise = vm.runInContext('Promise', ctx);
  const freeze = vm.runInContext('Object.freeze', ctx);
  const nullObject = () => vm.runInContext('Object.create(null)', ctx);
  const inGuest = (v) => guestJSON.parse(JSON.stringify(v));

  const logs = [];
  const calls = [];
  const queue = []; // outstanding asynchronous calls, in call order
  const used = {};
  let firstRun = false;
  const answerFor = (cap) => {
    const list = (spec.answers ?? {})[cap] ?? [];
    const i = used[cap] ?? 0;
    used[cap] = i + 1;
    if (i >= list.length) throw new Error(`no answer left for call ${i + 1} of ${cap}`);
    return list[i];
  };
  const guestError = (err) => {
    const e = new GuestError(err.message ?? '');
    e.name = err.name ?? 'Error';
    if (err.code !== undefined) e.code = err.code;
    return e;
  };

  // syncCall tells whether a call is synchronous: in the script's first
  // run, in plain top-level code. A call from a plain function during the
  // first run is refused: programs keep to obvious cases.
  const syncCall = () => {
    if (!firstRun) return false;
    const save = Error.prepareStackTrace;
    const limit = Error.stackTraceLimit;
    Error.prepareStackTrace = (_, cs) => cs;
    Error.stackTraceLimit = Infinity;
    const sites = new Error().stack;
    Error.prepareStackTrace = save;
    Error.stackTraceLimit = limit;
    const end = sites.findIndex((c) => c.getFileName() === 'node:vm');
    let start = sites.findIndex((c) => c.getFileName() === GUEST || c.getFileName() === null);
    const between = sites.slice(start, end - 1); // the last guest frame is the script's
    if (between.length === 0) return true;
    for (const c of between) {
      if (c.getFileName() === null && c.getFunctionName() === 'Promise') return false;
      if (c.getFileName() !== GUEST) continue;
      const line = lines[c.getEnclosingLineNumber() - 1] ?? '';
      const col = c.getEnclosingColumnNumber() - 1;
      if (/^async\b/.test(line.slice(col)) || /\basync\s*$/.test(line.slice(0, col))) return false;
    }
    throw new Error('a host call from a plain function in the first run: keep the program obvious');
  };

  const call = (cap, args, isConsole) => {
    const copied = plain(args, `${cap} arguments`);
    calls.push([cap, copied]);
    const answer = answerFor(cap);
    // A granted console method's value answer never reaches the guest (it
    // sees undefined, or a promise of undefined); an error answer throws or
    // rejects as any capability's does, as in the reference.
    if (syncCall()) {
      if (answer.error) throw guestError(answer.error);
      return isConsole ? undefined : inGuest(answer.value);
    }
    let settle;
    const p = new GuestPromise((resolve, reject) => { settle = { resolve, reject }; });
    queue.push({ answer: isConsole && !answer.error ? { value: null, undefined: true } : answer, settle });
    return p;
  };

  // Globals: inputs, capabilities under their namespaces, console.
  const inputs = spec.inputs ?? {};
  for (const [k, v] of Object.entries(inputs)) ctx[k] = inGuest(v);
  const caps = spec.capabilities ?? [];
  const spaces = new Map();
  const consoleCaps = new Set(caps.filter((c) => c.startsWith('console.')).map((c) => c.slice(8)));
  for (const cap of caps) {
    if (cap.startsWith('console.')) continue;
    const segs = cap.split('.');
    const fn = (...args) => call(cap, args, false);
    if (segs.length === 1) { ctx[cap] = fn; continue; }
    let obj;
    for (let i = 1; i <= segs.length - 1; i++) {
      const key = segs.slice(0, i).join('.');
      if (!spaces.has(key)) {
        const o = nullObject();
        spaces.set(key, o);
        if (i === 1) ctx[segs[0]] = o;
        else spaces.get(segs.slice(0, i - 1).join('.'))[segs[i - 1]] = o;
      }
      obj = spaces.get(key);
    }
    obj[segs[segs.length - 1]] = fn;
  }
  for (const o of spaces.values()) freeze(o);
  if (spec.console === 'collect' || consoleCaps.size > 0) {
    const c = nullObject();
    for (const level of consoleLevels) {
      if (consoleCaps.has(level)) c[level] = (...args) => call(`console.${level}`, args, true);
      else if (spec.console === 'collect') c[level] = (...args) => { logs.push({ level, text: normalizeLog(util.format(...args)) }); };
    }
    ctx.console = freeze(c);
  }

  // Run: the script, then for entry "call" its completion value with the
  // inputs object, then deliver host calls until nothing is outstanding.
  let outcome = null;
  const settleWith = (p) => {
    Promise.resolve(p).then(
      (v) => { outcome = { ok: true, value: v }; },
      (e) => { outcome = { ok: false, error: e }; },
    );
  };
  try {
    firstRun = !tla && spec.entry !== 'call';
    let v = new vm.Script(source, { filename: GUEST }).runInContext(ctx);
    firstRun = false;
    if (tla) v = v.then((r) => r?.value);
    if (spec.entry === 'call') {
      const f = await v;
      if (typeof f !== 'function') throw new TypeError(`program did not evaluate to a function (got ${typeof f})`);
      v = f(inGuest(inputs));
    }
    settleWith(v);
  } catch (e) {
    firstRun = false;
    outcome = { ok: false, error: e };
  }
  const drain = () => new Promise((r) => setImmediate(r));
  await drain();
  while (queue.length > 0) {
    const batch = mode === 'batch' ? queue.splice(0) : queue.splice(0, 1);
    for (const { answer, settle } of batch) {
      if (answer.error) settle.reject(guestError(answer.error));
      else settle.resolve(answer.undefined ? undefined : inGuest(answer.value));
    }
    await drain();
  }
  const unused = Object.entries(spec.answers ?? {}).filter(([cap, list]) => (used[cap] ?? 0) !== list.length);
  if (unused.length > 0) throw new Error(`answers not consumed: ${unused.map(([c]) => c).join(', ')}`);
  if (outcome === null) throw new Error('the program never settled');
  const out = {};
  if (outcome.ok) {
    if (outcome.value === undefined) out.result_undefined = true;
    else out.result = plain(outcome.value, 'result');
  } else {
    const e = outcome.error;
    out.error = `Runtime: ${e?.name}: ${e?.message}`;
  }
  out.logs = logs;
  out.calls = calls;
  return out;
}

const keyOrder = ['about', 'language', 'entry', 'console', 'inputs', 'capabilities', 'answers', 'result', 'result_undefined', 'error', 'logs', 'calls', 'batch'];

async function regenerate(name) {
  const jsonPath = path.join(here, `${name}.json`);
  const spec = JSON.parse(fs.readFileSync(jsonPath, 'utf8'));
  const ext = spec.language === 'typescript' ? 'ts' : 'js';
  const js = erase(fs.readFileSync(path.join(here, `${name}.${ext}`), 'utf8'), spec.language);
  const one = await run(spec, js, 'one');
  const batch = await run(spec, js, 'batch');
  const next = {};
  for (const k of ['about', 'language', 'entry', 'console', 'inputs', 'capabilities', 'answers']) {
    if (spec[k] !== undefined) next[k] = spec[k];
  }
  Object.assign(next, one);
  if (JSON.stringify(one) !== JSON.stringify(batch)) next.batch = batch;
  const ordered = {};
  for (const k of keyOrder) if (next[k] !== undefined) ordered[k] = next[k];
  return { jsonPath, text: JSON.stringify(ordered, null, 2) + '\n' };
}

const args = process.argv.slice(2);
const check = args.includes('--check');
let names = args.filter((a) => !a.startsWith('--'));
if (names.length === 0) {
  names = fs.readdirSync(here).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)).sort();
}
let failed = 0;
for (const name of names) {
  try {
    const { jsonPath, text } = await regenerate(name);
    if (check) {
      if (fs.readFileSync(jsonPath, 'utf8') !== text) {
        console.error(`${name}: differs from what the oracle computes`);
        failed++;
      }
    } else {
      fs.writeFileSync(jsonPath, text);
    }
  } catch (e) {
    console.error(`${name}: ${e.stack ?? e}`);
    failed++;
  }
}
console.log(`${names.length - failed}/${names.length} programs ${check ? 'match' : 'written'}`);
process.exit(failed === 0 ? 0 : 1);
