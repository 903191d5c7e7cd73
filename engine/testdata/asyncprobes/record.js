// Records the async host-call probes: runs every probe in probes.js on the
// reference implementation (mustardscript, the npm package in bench/peer)
// and on V8 itself with the reference's host-call model simulated, compares
// the two, and writes expected.json (what the engine's TestAsyncProbes
// checks) from V8's behaviour, and DEPARTURES.md (where the two differ, and
// why). It also runs each probe on the reference with every suspension
// dumped and loaded again, and reports where that cold run differs from
// the hot one (the hot run is the one compared).
//
// Run it with Node 20 from the repository root:
//
//     (cd bench/peer && npm install --no-save --package-lock=false)
//     node engine/testdata/asyncprobes/record.js
//
// It needs nothing else: it re-runs itself with --expose-internals to use
// Node's own copy of acorn (to find async functions and top-level await in
// a probe) and the REPL's top-level-await rewrite. `--check` compares
// without writing expected.json; `--only <name>` runs one probe and prints
// both runs.
//
// The simulation on V8. Each probe runs in a fresh node:vm context
// (strict code, no eval, its own microtask queue drained after every
// evaluation) holding the ECMAScript built-ins, the inputs and one global
// function per capability. A capability call is synchronous, as in the
// reference, only in plain top-level code of a script without top-level
// await: the call records a step, and returns the host's answer or throws
// its error at once. It is asynchronous when, at the call, the V8 stack
// shows any of
//   - a frame whose innermost enclosing function in the probe's source is
//     an async function (found by position: the probe is parsed with acorn
//     and every frame's line and column are mapped to the source),
//   - a `new Promise` frame (a promise executor),
//   - no frame in the script's own top-level code (the call runs in a
//     promise job: a then/catch/finally callback or an await continuation),
// or when the script has a top-level await (then the script runs as the
// REPL runs it, inside an async function, and every call is asynchronous).
// An asynchronous call records nothing yet: it returns a pending promise
// and queues the request. After the script (and each later evaluation) the
// context's microtask queue is empty; the driver then delivers the oldest
// queued request (that is the next step), fulfils or rejects its promise,
// lets the microtasks run to the end, and repeats until nothing is queued.
// The result is the script's completion value, or what it settles to when
// it is a promise; a promise still pending then is the Runtime error "never
// settled". max_outstanding_host_calls bounds the queued requests (a
// synchronous call is not counted), an instruction budget is a timeout.
//
// A probe whose two runs differ records V8's behaviour and must say why in
// its `departs` field; a probe that declares a departure the runs do not
// show is an error too, so the corpus and the reasons stay in step.
'use strict';

const childProcess = require('node:child_process');

if (!process.execArgv.includes('--expose-internals')) {
  const r = childProcess.spawnSync(
    process.execPath,
    ['--expose-internals', ...process.execArgv, __filename, ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  process.exit(r.status === null ? 1 : r.status);
}

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const util = require('node:util');
const vm = require('node:vm');
const { performance } = require('node:perf_hooks');
const acorn = require('internal/deps/acorn/acorn/dist/acorn');
const { processTopLevelAwait } = require('internal/repl/await');

// A rejection the guest never observes is ignored, as in the model; Node
// would otherwise end the recorder on it.
process.on('unhandledRejection', () => {});

const HERE = __dirname;
const REPO = path.resolve(HERE, '..', '..', '..');
const PEER = path.join(REPO, 'bench', 'peer', 'node_modules', 'mustardscript');

let reference;
try {
  reference = require(PEER);
} catch (e) {
  console.error(`cannot load mustardscript from ${path.relative(REPO, PEER)}: ${e.message}`);
  console.error('install it: (cd bench/peer && npm install --no-save --package-lock=false)');
  process.exit(2);
}
const { Mustard, Progress } = reference;
const referenceVersion = JSON.parse(fs.readFileSync(path.join(PEER, 'package.json'), 'utf8')).version;

const probes = require('./probes.js');

// ---------------------------------------------------------------------------
// StructuredValue JSON form (CONTRACT.md).

function encodeSV(v, protos) {
  if (v === undefined) return 'Undefined';
  if (v === null) return 'Null';
  if (typeof v === 'boolean') return { Bool: v };
  if (typeof v === 'string') return { String: v };
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return { Number: 'NaN' };
    if (Object.is(v, -0)) return { Number: 'NegZero' };
    if (v === Infinity) return { Number: 'Infinity' };
    if (v === -Infinity) return { Number: 'NegInfinity' };
    return { Number: { Finite: v } };
  }
  if (Array.isArray(v)) {
    const out = [];
    for (let i = 0; i < v.length; i++) {
      const d = Object.getOwnPropertyDescriptor(v, String(i));
      if (d === undefined) out.push('Hole');
      else if (!('value' in d)) throw new TypeError('accessors cannot cross the structured host boundary');
      else out.push(encodeSV(d.value, protos));
    }
    return { Array: out };
  }
  if (typeof v === 'object') {
    const proto = Object.getPrototypeOf(v);
    if (proto !== null && !protos.includes(proto) || util.types.isProxy(v)) {
      throw new TypeError(`${util.types.isPromise(v) ? 'promises' : 'objects'} cannot cross the structured host boundary`);
    }
    const out = {};
    for (const k of Object.keys(v)) {
      const d = Object.getOwnPropertyDescriptor(v, k);
      if (!('value' in d)) throw new TypeError('accessors cannot cross the structured host boundary');
      Object.defineProperty(out, k, { value: encodeSV(d.value, protos), enumerable: true, writable: true, configurable: true });
    }
    return { Object: out };
  }
  throw new TypeError(`${typeof v === 'function' ? 'functions' : typeof v + 's'} cannot cross the structured host boundary`);
}

const encodePlain = (v) => encodeSV(v, [Object.prototype]);

function decodeSV(sv) {
  if (sv === 'Undefined') return undefined;
  if (sv === 'Null') return null;
  if ('Bool' in sv) return sv.Bool;
  if ('String' in sv) return sv.String;
  if ('Number' in sv) {
    const n = sv.Number;
    return n === 'NaN' ? NaN : n === 'Infinity' ? Infinity : n === 'NegInfinity' ? -Infinity : n === 'NegZero' ? -0 : n.Finite;
  }
  if ('Array' in sv) {
    const a = new Array(sv.Array.length);
    sv.Array.forEach((e, i) => {
      if (e !== 'Hole') a[i] = decodeSV(e);
    });
    return a;
  }
  const o = {};
  for (const k of Object.keys(sv.Object)) Object.defineProperty(o, k, { value: decodeSV(sv.Object[k]), writable: true, enumerable: true, configurable: true });
  return o;
}

function svEqual(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

// ---------------------------------------------------------------------------
// Host rules: how the host answers a call. A rule is one of
//   {kind: 'times10'}                   the first argument times 10
//   {kind: 'echo'}                      the first argument
//   {kind: 'const', value}              always value
//   {kind: 'fail', error}               always the error {name, message, code?, details?}
//   {kind: 'cancel'}                    the host cancels the execution
//   {kind: 'table', rules: [{args, value | error | cancel}], else?: rule}
//                                       the first rule whose args equal the call's
//   {kind: 'seq', answers: [{value} | {error} | {cancel: true}], else?: rule}
//                                       the nth call of this capability gets the nth answer
// keyed by capability in the probe's `host`. An answer is {value}, {error}
// or {cancelled: true}.

function ruleAnswer(rule, args, nth, where) {
  switch (rule && rule.kind) {
    case 'times10':
      return { value: args[0] * 10 };
    case 'echo':
      return { value: args[0] };
    case 'const':
      return { value: rule.value };
    case 'fail':
      return { error: rule.error };
    case 'cancel':
      return { cancelled: true };
    case 'table': {
      const key = JSON.stringify(args.map(encodePlain));
      for (const r of rule.rules) {
        if (JSON.stringify(r.args.map(encodePlain)) === key) return explicitAnswer(r, where);
      }
      if (rule.else) return ruleAnswer(rule.else, args, nth, where);
      throw new Error(`${where}: no table rule for arguments ${key}`);
    }
    case 'seq':
      if (nth < rule.answers.length) return explicitAnswer(rule.answers[nth], where);
      if (rule.else) return ruleAnswer(rule.else, args, nth, where);
      throw new Error(`${where}: call ${nth + 1} is past the sequence`);
    default:
      throw new Error(`${where}: unknown host rule ${JSON.stringify(rule)}`);
  }
}

function explicitAnswer(a, where) {
  if ('error' in a) return { error: a.error };
  if (a.cancel || a.cancelled) return { cancelled: true };
  if ('value' in a) return { value: a.value };
  throw new Error(`${where}: an answer needs value, error or cancel`);
}

function makeHost(probe) {
  const counts = new Map();
  return (capability, args) => {
    const rule = probe.host[capability];
    if (!rule) throw new Error(`${probe.name}: no host rule for ${capability}`);
    const nth = counts.get(capability) || 0;
    counts.set(capability, nth + 1);
    return ruleAnswer(rule, args, nth, `${probe.name}: ${capability}`);
  };
}

// The answer as expected.json spells it.
function encodeAnswer(a) {
  if (a.cancelled) return { cancelled: true };
  if (a.error) {
    const e = { name: a.error.name === undefined ? 'Error' : a.error.name, message: a.error.message === undefined ? '' : a.error.message };
    if (a.error.code !== undefined) e.code = a.error.code;
    if (a.error.details !== undefined) e.details = encodePlain(a.error.details);
    return { error: e };
  }
  return { value: encodePlain(a.value) };
}

// ---------------------------------------------------------------------------
// The reference.

const SNAPSHOT_KEY = Buffer.from('asyncprobes-recorder-snapshot-key');

function referenceLimits(limits) {
  const out = {};
  const names = {
    instruction_budget: 'instructionBudget',
    heap_limit_bytes: 'heapLimitBytes',
    allocation_budget: 'allocationBudget',
    call_depth_limit: 'callDepthLimit',
    max_outstanding_host_calls: 'maxOutstandingHostCalls',
  };
  for (const [k, v] of Object.entries(limits || {})) {
    if (!(k in names)) throw new Error(`unknown limit ${k}`);
    out[names[k]] = v;
  }
  return out;
}

function hostErrorObject(e) {
  const err = new Error(e.message === undefined ? '' : e.message);
  err.name = e.name === undefined ? 'Error' : e.name;
  if (e.code !== undefined) err.code = e.code;
  if (e.details !== undefined) err.details = e.details;
  return err;
}

// The reference's error text is "<Name>: <message> [span]\n  at ..." for a
// guest exception and "<message> [span]\n  at ..." for its own.
function referenceError(e) {
  if (!(e instanceof reference.MustardError)) throw e;
  let first = e.message.split('\n  at ')[0];
  // Its rendering appends the span and, for a host error with a code,
  // " [code=<code>]"; neither is part of the error's message.
  first = first.replace(/ \[\d+\.\.\d+\]$/, '').replace(/ \[code=[^\]]*\]$/, '');
  const out = { kind: e.kind };
  const m = /^([A-Za-z_$][\w$]*): ([\s\S]*)$/.exec(first);
  if (e.kind === 'Runtime' && m) {
    out.name = m[1];
    out.message = m[2];
  } else {
    out.message = first;
  }
  return out;
}

// runReference runs the probe on the reference; with cold set, every
// suspension is dumped and loaded again before it is resumed.
function runReference(probe, cold) {
  const host = makeHost(probe);
  const caps = Object.fromEntries(probe.capabilities.map((n) => [n, () => undefined]));
  const limits = referenceLimits(probe.limits);
  const steps = [];
  try {
    const m = new Mustard(probe.source, { inputs: Object.keys(probe.inputs || {}) });
    let p = m.start({ inputs: probe.inputs || {}, capabilities: caps, limits, snapshotKey: SNAPSHOT_KEY });
    while (p instanceof Progress) {
      if (steps.length > 200) throw new Error(`${probe.name}: runaway suspensions on the reference`);
      if (cold) p = Progress.load(p.dump(), { capabilities: caps, limits, snapshotKey: SNAPSHOT_KEY });
      const args = p.args;
      const answer = host(p.capability, args);
      steps.push({ capability: p.capability, args: args.map(encodePlain), answer: encodeAnswer(answer) });
      if (answer.cancelled) p = p.cancel();
      else if (answer.error) p = p.resumeError(hostErrorObject(answer.error));
      else p = p.resume(answer.value);
    }
    let value;
    try {
      value = encodePlain(p);
    } catch (e) {
      return { steps, result: { error: { kind: 'Runtime', message: e.message } } };
    }
    return { steps, result: { value } };
  } catch (e) {
    return { steps, result: { error: referenceError(e) } };
  }
}

// ---------------------------------------------------------------------------
// V8 with the model simulated.

const FILE = 'probe.js';
const TIMEOUT_MS = 500;
const SETTLE = 'globalThis[Symbol.for("asyncprobes.settle")]()';
const OBSERVE = 'globalThis[Symbol.for("asyncprobes.observe")]()';

// The realm side: capability functions, inputs, answers and host errors
// are made inside the probe's context, so that guest code sees its own
// realm's Array, Error and Promise.
const REALM_SETUP = `(function (hooks) {
  'use strict';
  const G = globalThis, P = Promise, E = Error, TE = TypeError;
  const dp = Object.defineProperty, keys = Object.keys;
  const resolvers = new Map();
  function decode(sv) {
    if (sv === 'Undefined') return undefined;
    if (sv === 'Null') return null;
    if ('Bool' in sv) return sv.Bool;
    if ('String' in sv) return sv.String;
    if ('Number' in sv) {
      const n = sv.Number;
      if (n === 'NaN') return NaN;
      if (n === 'Infinity') return Infinity;
      if (n === 'NegInfinity') return -Infinity;
      if (n === 'NegZero') return -0;
      return n.Finite;
    }
    if ('Array' in sv) {
      const a = new Array(sv.Array.length);
      for (let i = 0; i < sv.Array.length; i++) if (sv.Array[i] !== 'Hole') a[i] = decode(sv.Array[i]);
      return a;
    }
    const o = {};
    for (const k of keys(sv.Object)) dp(o, k, { value: decode(sv.Object[k]), writable: true, enumerable: true, configurable: true });
    return o;
  }
  function hostError(e) {
    const err = new E(e.message);
    dp(err, 'name', { value: e.name, writable: true, enumerable: false, configurable: true });
    if ('code' in e) dp(err, 'code', { value: e.code, writable: true, enumerable: false, configurable: true });
    if ('details' in e) dp(err, 'details', { value: decode(e.details), writable: true, enumerable: false, configurable: true });
    hooks.hostError(err);
    return err;
  }
  for (const name of hooks.capabilities) {
    const f = { [name](...args) {
      const r = hooks.call(name, args);
      switch (r.mode) {
        case 'value': return decode(r.value);
        case 'error': throw hostError(r.error);
        case 'typeerror': throw new TE(r.message);
        case 'over': throw new E('the execution is over');
        default: return new P((resolve, reject) => { resolvers.set(r.id, [resolve, reject]); });
      }
    } }[name];
    dp(G, name, { value: f, writable: false, enumerable: false, configurable: false });
  }
  const inputs = hooks.inputs;
  for (const k of keys(inputs)) dp(G, k, { value: decode(inputs[k]), writable: true, enumerable: true, configurable: false });
  dp(G, Symbol.for('asyncprobes.settle'), { value() {
    const s = hooks.settlement();
    const [resolve, reject] = resolvers.get(s.id);
    resolvers.delete(s.id);
    if (s.error) reject(hostError(s.error)); else resolve(decode(s.value));
  } });
  dp(G, Symbol.for('asyncprobes.observe'), { value() {
    // The handlers are this realm's functions, so that their jobs run in
    // this context's microtask queue.
    const root = hooks.root();
    const fulfilled = (v) => hooks.fulfilled(v), rejected = (e) => hooks.rejected(e);
    const done = (v) => { if (v instanceof P) v.then(fulfilled, rejected); else fulfilled(v); };
    if (root.tla) root.value.then((r) => done(r === undefined ? undefined : r.value), rejected);
    else done(root.value);
  } });
  return { realmObject: Object.prototype, realmError: E };
})`;

// functionRanges lists [start, end, async] for every function in code.
function functionRanges(code) {
  const ast = acorn.parse(code, { ecmaVersion: 'latest', sourceType: 'script', allowHashBang: false });
  const out = [];
  (function walk(node) {
    if (!node || typeof node.type !== 'string') return;
    if (/Function/.test(node.type)) out.push([node.start, node.end, !!node.async]);
    if (node.type === 'StaticBlock' || node.type === 'PropertyDefinition') out.push([node.start, node.end, false]);
    for (const k of Object.keys(node)) {
      const v = node[k];
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v.type === 'string') walk(v);
    }
  })(ast);
  return out;
}

function lineStarts(code) {
  const out = [0];
  for (let i = 0; i < code.length; i++) if (code[i] === '\n') out.push(i + 1);
  return out;
}

function callSites() {
  const holder = {};
  const prev = Error.prepareStackTrace;
  const limit = Error.stackTraceLimit;
  Error.prepareStackTrace = (_, cs) => cs;
  Error.stackTraceLimit = Infinity;
  Error.captureStackTrace(holder);
  const cs = holder.stack;
  Error.prepareStackTrace = prev;
  Error.stackTraceLimit = limit;
  return cs;
}

function isPromiseLike(v) {
  return util.types.isPromise(v);
}

function runV8(probe) {
  const where = probe.name;
  const rewritten = processTopLevelAwait(probe.source);
  const tla = rewritten !== null;
  if (tla && !/return \{ value: \([\s\S]*\) \};? \}\)\(\)$/.test(rewritten)) {
    throw new Error(`${where}: a probe with top-level await must end with an expression statement (its completion value)`);
  }
  const code = `'use strict'; ${tla ? rewritten : probe.source}`;
  const ranges = tla ? [] : functionRanges(code);
  const starts = lineStarts(code);
  const host = makeHost(probe);
  const maxOutstanding = probe.limits && probe.limits.max_outstanding_host_calls !== undefined ? probe.limits.max_outstanding_host_calls : 128;

  const steps = [];
  const queue = [];
  const hostErrors = new WeakSet();
  let nextId = 1;
  let over = null; // the error that ended the execution outside guest control
  let settlement = null;
  let rootState = null;
  let root = null;

  // synchronous reports whether a call made now is a synchronous one.
  function synchronous() {
    if (tla) return false;
    let topLevel = false;
    for (const c of callSites()) {
      if (c.getFunctionName() === 'Promise' && c.isConstructor()) return false;
      if (c.getFileName() !== FILE) continue;
      const at = starts[c.getLineNumber() - 1] + c.getColumnNumber() - 1;
      let inner = null;
      for (const r of ranges) if (r[0] <= at && at < r[1] && (!inner || r[0] >= inner[0])) inner = r;
      if (inner === null) topLevel = true;
      else if (inner[2]) return false;
    }
    return topLevel;
  }

  const ctx = vm.createContext({}, { microtaskMode: 'afterEvaluate', codeGeneration: { strings: false, wasm: false } });
  const hooks = {
    capabilities: probe.capabilities,
    inputs: Object.fromEntries(Object.entries(probe.inputs || {}).map(([k, v]) => [k, encodePlain(v)])),
    hostError: (e) => hostErrors.add(e),
    call(name, args) {
      if (over) return { mode: 'over' };
      let sv;
      try {
        sv = args.map((a) => encodeSV(a, [realm.realmObject]));
      } catch (e) {
        return { mode: 'typeerror', message: e.message };
      }
      if (synchronous()) {
        const answer = host(name, sv.map(decodeSV));
        steps.push({ capability: name, args: sv, answer: encodeAnswer(answer) });
        if (answer.cancelled) {
          over = { kind: 'Limit', message: 'execution cancelled', exact: true };
          return { mode: 'over' };
        }
        const enc = encodeAnswer(answer);
        return enc.error ? { mode: 'error', error: enc.error } : { mode: 'value', value: enc.value };
      }
      if (queue.length >= maxOutstanding) {
        over = { kind: 'Limit', message: 'outstanding host-call limit exhausted', exact: true };
        return { mode: 'over' };
      }
      const id = nextId++;
      queue.push({ id, capability: name, sv });
      return { mode: 'async', id };
    },
    settlement: () => settlement,
    root: () => ({ tla, value: root }),
    fulfilled: (v) => { rootState = { fulfilled: true, value: v }; },
    rejected: (e) => { rootState = { fulfilled: false, value: e }; },
  };
  const realm = vm.runInContext(REALM_SETUP, ctx)(hooks);

  // evaluate runs src in the context; the microtasks it queues run before
  // it returns. Only the probe itself is evaluated as FILE.
  function evaluate(src, filename) {
    try {
      return { value: new vm.Script(src, { filename }).runInContext(ctx, { timeout: TIMEOUT_MS }) };
    } catch (e) {
      if (e && e.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
        over = over || { kind: 'Limit', message: 'instruction budget exhausted', exact: true };
        return {};
      }
      return { thrown: e };
    }
  }

  function guestError(e) {
    if (e !== null && (typeof e === 'object' || typeof e === 'function') && e instanceof realm.realmError) {
      const name = String(e.name);
      const message = String(e.message);
      const exact = hostErrors.has(e) || (message !== '' && probe.source.includes(message));
      return { kind: 'Runtime', name, message, exact: probe.exactError === undefined ? exact : probe.exactError };
    }
    return { kind: 'Runtime', name: 'Error', message: String(e), exact: true };
  }

  const finish = (result) => ({ steps, result, tla });

  const first = evaluate(code, FILE);
  if (over) return finish({ error: over });
  if (first.thrown !== undefined) return finish({ error: guestError(first.thrown) });
  root = first.value;

  for (;;) {
    if (over) return finish({ error: over });
    const c = queue.shift();
    if (!c) break;
    const answer = host(c.capability, c.sv.map(decodeSV));
    const enc = encodeAnswer(answer);
    steps.push({ capability: c.capability, args: c.sv, answer: enc });
    if (answer.cancelled) return finish({ error: { kind: 'Limit', message: 'execution cancelled', exact: true } });
    settlement = { id: c.id, error: enc.error, value: enc.value };
    const r = evaluate(SETTLE, 'asyncprobes-driver.js');
    if (r.thrown !== undefined) throw new Error(`${where}: settling a call threw ${r.thrown}`);
  }

  if (tla || isPromiseLike(root)) {
    evaluate(OBSERVE, 'asyncprobes-driver.js');
    if (over) return finish({ error: over });
    if (rootState === null) {
      return finish({ error: { kind: 'Runtime', message: "the program's result is a promise that never settled", exact: false } });
    }
    if (!rootState.fulfilled) return finish({ error: guestError(rootState.value) });
    root = rootState.value;
  }
  try {
    return finish({ value: encodeSV(root, [realm.realmObject]) });
  } catch (e) {
    // A result that cannot cross the boundary is a Runtime error, as in
    // the reference.
    return finish({ error: { kind: 'Runtime', message: e.message, exact: false } });
  }
}

// ---------------------------------------------------------------------------
// Comparing.

function sameError(ref, v8) {
  if (ref.kind !== v8.kind) return false;
  if (ref.name !== undefined && v8.name !== undefined && ref.name !== v8.name) return false;
  if (v8.exact && ref.message !== v8.message) return false;
  return true;
}

function differences(ref, v8) {
  const out = [];
  const n = Math.max(ref.steps.length, v8.steps.length);
  for (let i = 0; i < n; i++) {
    const a = ref.steps[i], b = v8.steps[i];
    if (!a || !b || a.capability !== b.capability || !svEqual(a.args, b.args) || !svEqual(a.answer, b.answer)) {
      out.push(`step ${i + 1}: reference ${fmtStep(a)}, V8 ${fmtStep(b)}`);
    }
  }
  const ra = ref.result, rb = v8.result;
  if ('value' in ra && 'value' in rb) {
    if (!svEqual(ra.value, rb.value)) out.push(`result: reference ${JSON.stringify(ra.value)}, V8 ${JSON.stringify(rb.value)}`);
  } else if (ra.error && rb.error) {
    if (!sameError(ra.error, rb.error)) out.push(`error: reference ${fmtError(ra.error)}, V8 ${fmtError(rb.error)}`);
  } else {
    out.push(`result: reference ${fmtResult(ra)}, V8 ${fmtResult(rb)}`);
  }
  return out;
}

const fmtStep = (s) => (s ? `${s.capability}(${s.args.map((a) => JSON.stringify(a)).join(', ')})` : 'none');
const fmtError = (e) => `${e.kind}: ${e.name ? e.name + ': ' : ''}${e.message}`;
const fmtResult = (r) => ('value' in r ? JSON.stringify(r.value) : fmtError(r.error));

// ---------------------------------------------------------------------------

function expectedEntry(probe, v8) {
  const e = { name: probe.name };
  if (probe.from) e.from = probe.from;
  e.source = probe.source;
  e.capabilities = probe.capabilities;
  e.inputs = Object.fromEntries(Object.entries(probe.inputs || {}).map(([k, v]) => [k, encodePlain(v)]));
  if (probe.limits) e.limits = probe.limits;
  e.steps = v8.steps;
  if ('value' in v8.result) {
    e.result = { value: v8.result.value };
  } else {
    const err = v8.result.error;
    const out = { kind: err.kind };
    if (err.name !== undefined) out.name = err.name;
    out.message = err.message;
    out.exact = !!err.exact;
    e.result = { error: out };
  }
  if (probe.departs) e.departs = probe.departs.why;
  return e;
}

const AGAINST = {
  ECMAScript: 'From ECMAScript',
  contract: 'From the contract',
  language: 'From the guest language',
};

function validate(list) {
  const names = new Set();
  for (const p of list) {
    if (!p.name || names.has(p.name)) throw new Error(`probe name missing or repeated: ${p.name}`);
    names.add(p.name);
    if (typeof p.source !== 'string') throw new Error(`${p.name}: no source`);
    if (!Array.isArray(p.capabilities)) throw new Error(`${p.name}: no capabilities`);
    for (const c of p.capabilities) if (!p.host || !p.host[c]) throw new Error(`${p.name}: no host rule for ${c}`);
    if (/for\s+await|async\s+function\s*\*|async\s*\*/.test(p.source)) throw new Error(`${p.name}: async generators are out of scope`);
    if (p.departs !== undefined && !(AGAINST[p.departs.against] && typeof p.departs.why === 'string')) {
      throw new Error(`${p.name}: departs must be {against: ${Object.keys(AGAINST).join(' | ')}, why}`);
    }
  }
}

function departuresMarkdown(total, departures, coldNotes) {
  const lines = [
    '# Where the reference departs',
    '',
    `Written by record.js (mustardscript ${referenceVersion}, Node ${process.version}): of the`,
    `${total} probes, ${departures.length} behave differently on the reference and on V8 with the`,
    "reference's host-call model simulated. expected.json records V8's behaviour for",
    'them, with the reason in `departs`: the product keeps ECMAScript and the contract',
    'where the reference departs from them.',
  ];
  for (const [against, title] of Object.entries(AGAINST)) {
    const groups = new Map();
    for (const d of departures.filter((x) => x.against === against)) {
      if (!groups.has(d.reason)) groups.set(d.reason, []);
      groups.get(d.reason).push(d.name);
    }
    if (groups.size === 0) continue;
    lines.push('', `## ${title}`, '');
    for (const [reason, names] of groups) {
      lines.push(`- ${reason[0].toUpperCase()}${reason.slice(1)}: ${names.map((n) => '`' + n + '`').join(', ')}.`);
    }
  }
  if (coldNotes.length > 0) {
    lines.push(
      '',
      "## The reference's cold runs",
      '',
      'record.js also runs every probe on the reference with each suspension dumped',
      '(`Progress.dump`) and loaded again (`Progress.load`) before it is resumed. Its',
      'hot run is the one compared; these probes end differently when cold:',
      '',
    );
    for (const n of coldNotes) {
      const last = n.diff[n.diff.length - 1].replace(/^(result|error): reference .*, V8 /, '');
      lines.push(`- \`${n.name}\`: ${last.length > 160 ? last.slice(0, 157) + '...' : last}`);
    }
  }
  return lines.join('\n') + '\n';
}

function registryRoot() {
  return path.join(os.tmpdir(), 'mustard-progress-registry', `${process.pid}-${Math.round(performance.timeOrigin)}`);
}

function main() {
  const argv = process.argv.slice(2);
  const check = argv.includes('--check');
  const onlyAt = argv.indexOf('--only');
  const only = onlyAt >= 0 ? argv[onlyAt + 1] : null;
  validate(probes);
  const entries = [];
  const departures = [];
  const problems = [];
  const coldNotes = []; // where the reference's cold run (dump, load, resume) differs from its hot one
  for (const probe of probes) {
    if (only && probe.name !== only) continue;
    const ref = runReference(probe, false);
    const refCold = runReference(probe, true);
    if (JSON.stringify(ref) !== JSON.stringify(refCold)) {
      const d = differences(ref, { ...refCold, result: { ...refCold.result, error: refCold.result.error && { ...refCold.result.error, exact: true } } });
      coldNotes.push({ name: probe.name, diff: d });
    }
    const v8 = runV8(probe);
    if (only) {
      console.log(`reference: ${JSON.stringify(ref, null, 1)}`);
      console.log(`V8: ${JSON.stringify(v8, null, 1)}`);
    }
    const diff = differences(ref, v8);
    if (diff.length > 0 && !probe.departs) {
      problems.push(`${probe.name}: the reference departs from V8 and the probe does not say why:\n    ${diff.join('\n    ')}`);
    } else if (diff.length === 0 && probe.departs) {
      problems.push(`${probe.name}: declares a departure ("${probe.departs.why}") but the reference agrees with V8`);
    } else if (diff.length > 0) {
      departures.push({ name: probe.name, reason: probe.departs.why, against: probe.departs.against, diff });
    }
    entries.push(expectedEntry(probe, v8));
  }
  fs.rmSync(registryRoot(), { recursive: true, force: true });

  console.log(`${entries.length} probes (mustardscript ${referenceVersion}, node ${process.version}), ${departures.length} departures`);
  for (const d of departures) {
    console.log(`  ${d.name}: ${d.reason}`);
    for (const l of d.diff) console.log(`      ${l}`);
  }
  if (coldNotes.length > 0) {
    console.log(`${coldNotes.length} probes where the reference's cold run (every step dumped and loaded) differs from its hot run (the hot run is compared):`);
    for (const n of coldNotes) {
      console.log(`  ${n.name}`);
      for (const l of n.diff) console.log(`      ${l.replace('reference', 'hot').replace('V8', 'cold')}`);
    }
  }
  if (problems.length > 0) {
    console.error(`\n${problems.length} problems:`);
    for (const p of problems) console.error(`  ${p}`);
    process.exit(1);
  }
  if (!check && !only) {
    const out = path.join(HERE, 'expected.json');
    fs.writeFileSync(out, JSON.stringify(entries, null, 1) + '\n');
    console.log(`wrote ${path.relative(REPO, out)}`);
    const md = path.join(HERE, 'DEPARTURES.md');
    fs.writeFileSync(md, departuresMarkdown(entries.length, departures, coldNotes));
    console.log(`wrote ${path.relative(REPO, md)}`);
  }
}

main();
