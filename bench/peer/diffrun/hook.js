'use strict';
// Preloaded (node -r) into one of the reference's Node test files by
// extract.js. The test file's `require` of the reference's own entry point
// (index.ts / index.js at its root) gets the npm package instead, wrapped so
// that every program the tests compile and every execution they run is
// recorded: the source, the inputs, the policy (capabilities and limits),
// and each capability call with the answer the test's host gave (a value
// its handler returned, an error it threw, a resume, resumeError or cancel
// on a Progress). The records are written to $DIFFRUN_OUT when the process
// exits. A test's own assertions are irrelevant here: a failing test still
// shows which programs it runs.
const fs = require('fs');
const Module = require('module');
const path = require('path');
const { encode, encodeError } = require('./sv.js');

const PEER = path.join(__dirname, '..', 'node_modules', 'mustardscript');
const api = require(PEER);
const policyLib = require(path.join(PEER, 'dist', 'lib', 'policy.js'));
const ROOT = process.env.DIFFRUN_ROOT || process.cwd();
const FILE = process.env.DIFFRUN_FILE || '';

const programs = []; // {test, source, lenient, inputNames, compileError?}
const execs = []; // {program, test, how, inputs | inputsError, capabilities, limits, answers}
let currentTest = '';

// ---------------------------------------------------------------------------
// Test names: node:test's test/it/describe are wrapped so the record knows
// which test it is in (top-level tests in a file run one after another).

const realLoad = Module._load;
let wrappedTest = null;
function wrapTestModule(real) {
  if (wrappedTest) return wrappedTest;
  const wrapFn = (kind) =>
    function (...args) {
      const name = typeof args[0] === 'string' ? args[0] : '';
      const i = args.findIndex((a) => typeof a === 'function');
      if (i >= 0) {
        const fn = args[i];
        const outer = currentTest;
        const full = outer && kind === 'sub' ? `${outer} > ${name}` : name;
        args[i] = function (...a) {
          currentTest = full;
          return fn.apply(this, a);
        };
      }
      return real[kind === 'sub' ? 'test' : kind].apply(this, args);
    };
  const t = wrapFn('test');
  Object.assign(t, real);
  t.test = t;
  t.it = wrapFn('it');
  t.describe = wrapFn('describe');
  wrappedTest = t;
  return t;
}
Module._load = function (request, parent, isMain) {
  if (request === 'node:test' || request === 'test') return wrapTestModule(realLoad.call(this, request, parent, isMain));
  return realLoad.call(this, request, parent, isMain);
};

// The reference's entry point resolves to this module.
const realResolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (request === 'mustardscript') return __filename;
  if (/(^|[\\/])index(\.ts|\.js)?$/.test(request) && parent && parent.filename) {
    const target = path.resolve(path.dirname(parent.filename), request);
    if (target === path.join(ROOT, 'index') || target === path.join(ROOT, 'index.ts') || target === path.join(ROOT, 'index.js')) {
      return __filename;
    }
  }
  // The reference's own modules under lib/ and its native loader resolve to
  // the package's compiled copies.
  if (request.startsWith('.') && parent && parent.filename) {
    const target = path.resolve(path.dirname(parent.filename), request).replace(/\.(ts|js)$/, '');
    const rel = path.relative(ROOT, target);
    if (rel === 'native-loader') return path.join(PEER, 'dist', 'native-loader.js');
    if (/^lib[\\/][\w-]+$/.test(rel) && fs.existsSync(path.join(PEER, 'dist', rel + '.js'))) return path.join(PEER, 'dist', rel + '.js');
  }
  return realResolve.call(this, request, parent, ...rest);
};

// ---------------------------------------------------------------------------
// Recording.

const programOf = new WeakMap(); // Mustard instance -> program index
const execOf = new WeakMap(); // Progress -> exec
const dumped = new Map(); // snapshot_id -> {exec, n}
const consumed = new WeakSet(); // Progress objects already answered

function tryEncode(v) {
  try {
    return { ok: encode(v) };
  } catch (e) {
    return { err: e.message };
  }
}

function newExec(programIndex, how, options) {
  const ex = { program: programIndex, test: currentTest, how, capabilities: [], limits: {}, answers: [] };
  const inputs = {};
  for (const [k, v] of Object.entries((options && options.inputs) || {})) {
    const r = tryEncode(v);
    if (r.err !== undefined) ex.inputsError = `input ${k}: ${r.err}`;
    else inputs[k] = r.ok;
  }
  ex.inputs = inputs;
  execs.push(ex);
  return ex;
}

function setPolicy(ex, options) {
  try {
    const resolved = policyLib.resolveExecutionContext(options || {}, 'options');
    ex.capabilities = resolved.policy.capabilities.slice();
    ex.limits = { ...resolved.policy.limits };
    return resolved;
  } catch (e) {
    ex.policyError = e.message;
    return null;
  }
}

function tag(result, ex) {
  if (result instanceof api.Progress) execOf.set(result, ex);
  return result;
}

function callEntry(capability, args) {
  const r = tryEncode(args);
  const e = { capability };
  if (r.err !== undefined) e.argsError = r.err;
  else e.args = r.ok.Array;
  return e;
}

function answerValue(e, v) {
  const r = tryEncode(v);
  if (r.err !== undefined) e.valueError = r.err;
  else e.value = r.ok;
}

class Mustard extends api.Mustard {
  constructor(code, options = {}) {
    const rec = { test: currentTest, source: typeof code === 'string' ? code : String(code) };
    if (options && options.lenientMode) rec.lenient = true;
    if (options && Array.isArray(options.inputs)) rec.inputNames = options.inputs.slice();
    programs.push(rec);
    try {
      super(code, options);
    } catch (e) {
      rec.compileError = e && e.kind ? e.kind : String(e && e.name);
      throw e;
    }
    programOf.set(this, programs.length - 1);
  }

  static validateProgram(code, options = {}) {
    const rec = { test: currentTest, source: String(code), how: 'validate' };
    if (options && options.lenientMode) rec.lenient = true;
    programs.push(rec);
    try {
      return api.Mustard.validateProgram(code, options);
    } catch (e) {
      rec.compileError = e && e.kind ? e.kind : String(e && e.name);
      throw e;
    }
  }
}

const proto = api.Mustard.prototype;
const realRun = proto.run;
const realStart = proto.start;

proto.run = async function (options = {}) {
  const pi = programOf.get(this);
  if (pi === undefined) return realRun.call(this, options);
  const ex = newExec(pi, 'run', options);
  const resolved = setPolicy(ex, options);
  if (!resolved) return realRun.call(this, options);
  const caps = {};
  for (const [name, fn] of Object.entries(resolved.hostHandlers)) {
    caps[name] = function (...args) {
      const e = callEntry(name, args);
      ex.answers.push(e);
      let r;
      try {
        r = fn.apply(this, args);
      } catch (err) {
        e.error = encodeError(err);
        throw err;
      }
      if (r && typeof r.then === 'function') {
        e.pending = true;
        return r.then(
          (v) => {
            delete e.pending;
            answerValue(e, v);
            return v;
          },
          (err) => {
            delete e.pending;
            e.error = encodeError(err);
            throw err;
          },
        );
      }
      answerValue(e, r);
      return r;
    };
  }
  const limits = {};
  const names = {
    instruction_budget: 'instructionBudget',
    heap_limit_bytes: 'heapLimitBytes',
    allocation_budget: 'allocationBudget',
    call_depth_limit: 'callDepthLimit',
    max_outstanding_host_calls: 'maxOutstandingHostCalls',
  };
  for (const [k, v] of Object.entries(ex.limits)) if (names[k]) limits[names[k]] = v;
  const opts = { inputs: options.inputs, capabilities: caps, limits };
  if (options.signal) opts.signal = options.signal;
  if (!options.context && options.snapshotKey !== undefined) opts.snapshotKey = options.snapshotKey;
  try {
    return await realRun.call(this, opts);
  } catch (err) {
    if (err instanceof TypeError && !(err instanceof api.MustardError) && /capabilit|console/.test(err.message)) {
      // The rewritten options were refused: run as the test asked.
      ex.answers = [];
      ex.rewriteRefused = err.message;
      return realRun.call(this, options);
    }
    throw err;
  }
};

proto.start = function (options = {}) {
  const pi = programOf.get(this);
  if (pi === undefined) return realStart.call(this, options);
  const ex = newExec(pi, 'start', options);
  setPolicy(ex, options);
  return tag(realStart.call(this, options), ex);
};

const P = api.Progress.prototype;
const realResume = P.resume;
const realResumeError = P.resumeError;
const realCancel = P.cancel;
const realDump = P.dump;
const realLoadProgress = api.Progress.load;

function stepper(real, fill) {
  return function (...a) {
    const ex = execOf.get(this);
    const capability = this.capability;
    const args = this.args;
    // The answer is recorded even when the step throws (a cancel ends the
    // execution with a Limit error).
    let e;
    if (ex && !consumed.has(this)) {
      e = callEntry(capability, args);
      fill(e, ...a);
      ex.answers.push(e);
      consumed.add(this);
    }
    const r = real.apply(this, a);
    if (ex) tag(r, ex);
    return r;
  };
}
P.resume = stepper(realResume, (e, v) => answerValue(e, v));
P.resumeError = stepper(realResumeError, (e, err) => {
  e.error = encodeError(err);
});
P.cancel = stepper(realCancel, (e) => {
  e.cancel = true;
});
P.dump = function (...a) {
  const d = realDump.apply(this, a);
  const ex = execOf.get(this);
  if (ex && d && typeof d.snapshot_id === 'string') dumped.set(d.snapshot_id, { ex, n: ex.answers.length });
  return d;
};
api.Progress.load = function (state, ...a) {
  const r = realLoadProgress.call(this, state, ...a);
  const d = state && dumped.get(state.snapshot_id);
  if (d) {
    // A load forks the execution at the dump: each load goes on on its own.
    const fork = { ...d.ex, answers: d.ex.answers.slice(0, d.n), test: currentTest, how: d.ex.how + '+load' };
    execs.push(fork);
    tag(r, fork);
  }
  return r;
};

module.exports = { ...api, Mustard };

process.on('exit', () => {
  if (!process.env.DIFFRUN_OUT) return;
  fs.writeFileSync(process.env.DIFFRUN_OUT, JSON.stringify({ file: FILE, programs, execs }));
});
