'use strict';

// The reference's API (mustardscript's Mustard, Progress,
// ExecutionContext) over mustard-sidecar processes.

const crypto = require('node:crypto');
const { types } = require('node:util');

const ops = require('./ops.js');
const consumed = require('./consumed.js');
const { compileLenient } = require('./lenient.js');
const { inspectSnapshot } = require('./inspect.js');
const { SidecarPool } = require('./pool.js');
const { SyncBridge } = require('./sync.js');
const { ENGINES } = require('./inprocess.js');
const {
  MustardError,
  MustardRuntimeError,
  MustardSerializationError,
  MustardValidationError,
  MustardLimitError,
  MustardProcessError,
  MustardRequestTooLargeError,
  cancelledError,
  toLogLines,
} = require('./errors.js');
const { encode, decode, encodeInputs, encodeError, hasOwn, isAccessor } = require('./structured.js');
const { CallScope } = require('./callcontext.js');

// ---- configuration and the shared pools ----

const settings = {};
let sharedPool = null;
let bridge = null;

const CONFIG_KEYS = [
  'sidecar',
  'args',
  'env',
  'poolSize',
  'syncPoolSize',
  'maxResponseBytes',
  'closeGraceMs',
  'cancelGraceMs',
  'hostCalls',
  'blockingRun',
  'engine',
  'addon',
];

// configure sets how the shared processes are started: the sidecar binary
// (else $MUSTARD_SIDECAR_BIN, else mustard-sidecar from PATH), its
// arguments and environment, the size of the pool behind run() and the
// async methods (poolSize) and of the one behind the synchronous methods
// (syncPoolSize, 1 by default). It must come before the first use.
function configure(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError('configure() options must be an object');
  for (const key of Object.keys(options)) {
    if (!CONFIG_KEYS.includes(key)) throw new TypeError(`configure() does not know the option "${key}"`);
  }
  if (sharedPool !== null || bridge !== null) {
    throw new TypeError('configure() must be called before the first program is compiled or run');
  }
  if (options.hostCalls !== undefined) normalizeHostCalls(options.hostCalls, 'configure() options.hostCalls');
  if (options.blockingRun !== undefined && typeof options.blockingRun !== 'boolean') {
    throw new TypeError('configure() options.blockingRun must be a boolean');
  }
  if (options.engine !== undefined && !ENGINES.includes(options.engine)) {
    throw new TypeError(`configure() options.engine must be one of ${ENGINES.map((e) => `"${e}"`).join(', ')}`);
  }
  if (options.addon !== undefined && (typeof options.addon !== 'string' || options.addon.length === 0)) {
    throw new TypeError('configure() options.addon must be a file name');
  }
  Object.assign(settings, options);
}

function poolOptions(size) {
  return {
    size,
    sidecar: settings.sidecar,
    args: settings.args,
    env: settings.env,
    maxResponseBytes: settings.maxResponseBytes,
    closeGraceMs: settings.closeGraceMs,
    cancelGraceMs: settings.cancelGraceMs,
  };
}

function defaultPool() {
  sharedPool ??= new SidecarPool(poolOptions(settings.poolSize));
  return sharedPool;
}

// engineSetting is configure()'s engine, else $MUSTARD_SIDECAR_ENGINE's
// (a value it does not know is an error, not a silent fallback).
function engineSetting() {
  if (settings.engine !== undefined) return settings.engine;
  const env = process.env.MUSTARD_SIDECAR_ENGINE;
  if (env === undefined || env === '') return 'process';
  if (!ENGINES.includes(env)) {
    throw new TypeError(`$MUSTARD_SIDECAR_ENGINE must be one of ${ENGINES.map((e) => `"${e}"`).join(', ')}, got "${env}"`);
  }
  return env;
}

function syncBridge() {
  bridge ??= new SyncBridge({
    ...poolOptions(settings.syncPoolSize ?? 1),
    engine: engineSetting(),
    addon: settings.addon,
  });
  return bridge;
}

// blockingRun tells whether run() without a pool steps on the
// synchronous API's direct path (lib/sync-direct.js): each start and
// resume a blocking round trip on the calling thread, as the reference's
// addon runs each step in process. Where that path is unavailable
// (not Linux, MUSTARD_SYNC_DIRECT=0, no FIFOs), or with
// configure({ blockingRun: false }), run() steps on the shared pool
// without blocking.
function blockingRun() {
  if (settings.blockingRun === false) return false;
  const direct = syncBridge().direct;
  return direct !== null && direct.available();
}

// inProcessEngine tells whether the synchronous API steps in this
// process (configure({ engine: 'in-process' })).
function inProcessEngine() {
  return syncBridge().direct?.inProcess === true;
}

// processes lists the shared processes: { pool, sync }.
function processes() {
  return {
    pool: sharedPool === null ? [] : sharedPool.processes(),
    sync: bridge === null ? [] : syncBridge().call('processes', {}),
  };
}

// shutdown closes the shared processes gracefully. Nothing requires it:
// they never keep Node running, and end when it exits.
async function shutdown() {
  const p = sharedPool;
  const b = bridge;
  sharedPool = null;
  bridge = null;
  await Promise.all([p && p.close(), b && b.close()]);
}

// ---- options ----

const DEFAULT_SNAPSHOT_KEY = crypto.randomBytes(32);
const LIMIT_NAMES = {
  instructionBudget: 'instruction_budget',
  heapLimitBytes: 'heap_limit_bytes',
  allocationBudget: 'allocation_budget',
  callDepthLimit: 'call_depth_limit',
  maxOutstandingHostCalls: 'max_outstanding_host_calls',
  wallTimeMs: 'wall_time_ms',
  maxLogBytes: 'max_log_bytes',
};

function assertPlainObject(value, label) {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || types.isProxy(value)) {
    throw new TypeError(`${label} must be a plain object`);
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) {
    throw new TypeError(`${label} must be a plain object`);
  }
}

// The reference counts its guest environment (its globals: 7,804 bytes of
// heap, 27 allocations) against heapLimitBytes and allocationBudget; the
// sidecar counts only what the program allocates. A limit given here is
// the reference's: the sidecar gets it less that environment, and a limit
// below it fails as the reference's does, before anything runs.
const ENVIRONMENT = { heap_limit_bytes: 7804, allocation_budget: 27 };

function encodeLimits(limits, label) {
  if (limits === undefined) return {};
  assertPlainObject(limits, label);
  const out = {};
  let below = null;
  for (const [key, value] of Object.entries(limits)) {
    const wire = LIMIT_NAMES[key];
    if (wire === undefined) {
      throw new TypeError(`${label} has an unknown limit "${key}" (known: ${Object.keys(LIMIT_NAMES).join(', ')})`);
    }
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new TypeError(`${label}.${key} must be a non-negative integer`);
    }
    if (ENVIRONMENT[wire] !== undefined) {
      if (value < ENVIRONMENT[wire]) below ??= wire;
      out[wire] = Math.max(0, value - ENVIRONMENT[wire]);
    } else {
      out[wire] = value;
    }
  }
  if (below !== null) Object.defineProperty(out, BELOW_ENVIRONMENT, { value: below });
  return out;
}

const BELOW_ENVIRONMENT = Symbol('mustard-sidecar.belowEnvironment');

// belowEnvironment throws the reference's failure for limits too small
// for its environment: at start (a Limit error) or when a dump is loaded.
function belowEnvironment(ctx, loading = false) {
  const which = ctx.limits[BELOW_ENVIRONMENT];
  if (which === undefined) return;
  if (loading) {
    throw new MustardSerializationError(
      which === 'heap_limit_bytes'
        ? 'snapshot validation failed: heap usage exceeds configured heap limit'
        : 'snapshot validation failed: allocation count exceeds configured allocation budget',
    );
  }
  throw which === 'heap_limit_bytes'
    ? new MustardLimitError('heap limit exceeded', { code: 'limit_heap' })
    : new MustardLimitError('allocation budget exhausted', { code: 'limit_allocation_budget' });
}

function normalizeSnapshotKey(key, label) {
  if (key === undefined) return Buffer.from(DEFAULT_SNAPSHOT_KEY);
  if (typeof key === 'string') return Buffer.from(key, 'utf8');
  if (Buffer.isBuffer(key) || key instanceof Uint8Array) return Buffer.from(key);
  throw new TypeError(`${label} must be a string, Buffer, or Uint8Array`);
}

function normalizeSealKey(key, label) {
  if (key === undefined || key === null) return null;
  if (!(Buffer.isBuffer(key) || key instanceof Uint8Array)) {
    throw new TypeError(`${label} must be a Buffer or Uint8Array of at least 32 bytes`);
  }
  if (key.length < 32) throw new TypeError(`${label} must be at least 32 bytes`);
  return Buffer.from(key).toString('base64');
}

// The host-call mode of executions that do not say: "one" (the
// reference's: one capability call outstanding at a time) unless
// configure({ hostCalls: 'batch' }) made batch the process's default.
function normalizeHostCalls(mode, label) {
  if (mode === undefined) return settings.hostCalls === 'batch' ? 'batch' : 'one';
  if (mode === 'one') return 'one';
  if (mode === 'batch') return 'batch';
  throw new TypeError(`${label} must be "one" or "batch"`);
}

// The console methods a guest may have, each a capability named
// console.<method> when the host gives a callback for it (the reference
// has log, warn and error; info and debug are this package's).
const CONSOLE_METHODS = ['log', 'warn', 'error', 'info', 'debug'];
const CONSOLE_CAPABILITIES = new Set(CONSOLE_METHODS.map((m) => `console.${m}`));

function handlerEntries(container, label) {
  if (container === undefined) return [];
  assertPlainObject(container, label);
  return Object.entries(Object.getOwnPropertyDescriptors(container)).filter(([, descriptor]) => {
    if (!descriptor.enumerable) return false;
    if (isAccessor(descriptor)) throw new TypeError(`${label} cannot define accessor properties`);
    return true;
  });
}

// collectHandlers gathers the capabilities (names may be dotted paths,
// "github.search") and the console callbacks, each of which becomes the
// capability console.<method>, as in the reference.
function collectHandlers(capabilities, consoleCallbacks, label) {
  const handlers = Object.create(null);
  for (const [name, descriptor] of handlerEntries(capabilities, `${label}.capabilities`)) {
    if (typeof descriptor.value !== 'function') throw new TypeError(`${label}.capabilities.${name} must be a function`);
    handlers[name] = descriptor.value;
  }
  const callbacks = new Map(handlerEntries(consoleCallbacks, `${label}.console`));
  for (const method of CONSOLE_METHODS) {
    const descriptor = callbacks.get(method);
    if (descriptor === undefined) continue;
    if (typeof descriptor.value !== 'function') throw new TypeError(`console.${method} must be a function`);
    const name = `console.${method}`;
    if (handlers[name] !== undefined) {
      throw new TypeError(`Duplicate handler for ${name}; use either options.console or options.capabilities`);
    }
    handlers[name] = descriptor.value;
  }
  return handlers;
}

function normalizeConsoleMode(mode, label) {
  if (mode === undefined || mode === 'off') return 'off';
  if (mode === 'collect') return 'collect';
  throw new TypeError(`${label} must be "off" or "collect"`);
}

function normalizeOnLog(onLog, label) {
  if (onLog === undefined) return null;
  if (typeof onLog !== 'function') throw new TypeError(`${label} must be a function`);
  return onLog;
}

function getEntry(options, label) {
  const e = options.entry;
  if (e === undefined || e === 'script') return 'script';
  if (e === 'call') return 'call';
  throw new TypeError(`${label}.entry must be "script" or "call"`);
}

// crypto.hash (Node 20.12 and later) hashes in one call, without a Hash
// object.
const sha256Hex =
  typeof crypto.hash === 'function'
    ? (bytes) => crypto.hash('sha256', bytes)
    : (bytes) => crypto.createHash('sha256').update(bytes).digest('hex');

// hmacHex is HMAC-SHA256 (RFC 2104) of the parts' UTF-8, in hex. Where
// crypto.hash exists it is two one-shot hashes over the key's pads, made
// once per key Buffer: cheaper than an Hmac object per token, and run()
// signs a token on every step.
const hmacPads = new WeakMap();

function padsOf(key) {
  let pads = hmacPads.get(key);
  if (pads === undefined) {
    const k = key.length > 64 ? crypto.createHash('sha256').update(key).digest() : key;
    const inner = Buffer.alloc(64, 0x36);
    const outer = Buffer.alloc(64 + 32, 0x5c);
    for (let i = 0; i < k.length; i += 1) {
      inner[i] ^= k[i];
      outer[i] ^= k[i];
    }
    pads = { inner, outer };
    hmacPads.set(key, pads);
  }
  return pads;
}

function hmacHex(key, ...parts) {
  const message = parts.length === 1 ? parts[0] : parts.join('');
  if (typeof crypto.hash !== 'function') return crypto.createHmac('sha256', key).update(message, 'utf8').digest('hex');
  const { inner, outer } = padsOf(key);
  const m = Buffer.allocUnsafe(64 + Buffer.byteLength(message, 'utf8'));
  inner.copy(m, 0);
  m.write(message, 64, 'utf8');
  const o = Buffer.from(outer);
  o.set(crypto.hash('sha256', m, 'buffer'), 64);
  return crypto.hash('sha256', o);
}

// keyDerived returns what a step needs of a snapshot key (its base64 and
// digest), and one Buffer per key content, remembered for the last few
// keys: run() without a context needs them on every call.
const derivedKeys = new Map();
function keyDerived(key) {
  const id = key.toString('latin1');
  let d = derivedKeys.get(id);
  if (d === undefined) {
    if (derivedKeys.size >= 64) derivedKeys.delete(derivedKeys.keys().next().value);
    d = { key, base64: key.toString('base64'), digest: sha256Hex(key) };
    derivedKeys.set(id, d);
  }
  return d;
}

// createContext turns the policy options into what a step needs.
function createContext(options, label) {
  const handlers = collectHandlers(options.capabilities, options.console, label);
  const key = normalizeSnapshotKey(options.snapshotKey, `${label}.snapshotKey`);
  const derived = keyDerived(key);
  return Object.freeze({
    handlers,
    capabilities: Object.keys(handlers),
    limits: encodeLimits(options.limits, `${label}.limits`),
    hostCalls: normalizeHostCalls(options.hostCalls, `${label}.hostCalls`),
    consoleMode: normalizeConsoleMode(options.consoleMode, `${label}.consoleMode`),
    onLog: normalizeOnLog(options.onLog, `${label}.onLog`),
    key: derived.key,
    keyBase64: derived.base64,
    digest: derived.digest,
    sealKey: normalizeSealKey(options.sealKey, `${label}.sealKey`),
  });
}

const CONTEXT_KEYS = ['capabilities', 'console', 'consoleMode', 'onLog', 'limits', 'snapshotKey', 'sealKey', 'hostCalls'];

// ExecutionContext caches the policy options (capabilities, console
// callbacks, limits, the snapshot key, and this package's sealKey,
// hostCalls, consoleMode and onLog) for many executions.
class ExecutionContext {
  #ctx;

  constructor(options = {}) {
    if (options === null || typeof options !== 'object') throw new TypeError('ExecutionContext options must be an object');
    this.#ctx = createContext(options, 'ExecutionContext options');
  }

  static _get(context) {
    return context.#ctx;
  }
}

function resolveContext(options, label) {
  if (options.context === undefined) return createContext(options, label);
  if (!(options.context instanceof ExecutionContext)) throw new TypeError(`${label}.context must be an ExecutionContext`);
  if (CONTEXT_KEYS.some((k) => hasOwn(options, k))) {
    throw new TypeError(
      `${label}.context cannot be combined with capabilities, console, limits, or snapshotKey (nor sealKey, hostCalls, consoleMode or onLog)`,
    );
  }
  return ExecutionContext._get(options.context);
}

function getSignal(options, label) {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== 'object') throw new TypeError(`${label} must be an object`);
  const { signal } = options;
  if (signal === undefined) return undefined;
  if (
    typeof signal !== 'object' ||
    signal === null ||
    typeof signal.aborted !== 'boolean' ||
    typeof signal.addEventListener !== 'function' ||
    typeof signal.removeEventListener !== 'function'
  ) {
    throw new TypeError(`${label}.signal must be an AbortSignal`);
  }
  return signal;
}

function getPool(options, label) {
  if (options.pool === undefined) return null;
  if (!(options.pool instanceof SidecarPool)) throw new TypeError(`${label}.pool must be a SidecarPool`);
  return options.pool;
}

function getDelivery(options, label) {
  const d = options.snapshotDelivery;
  if (d === undefined) return 'delta';
  if (d === 'delta' || d === 'full' || d === 'none') return d;
  throw new TypeError(`${label}.snapshotDelivery must be "delta", "full" or "none"`);
}

// ---- capability calls ----

// settle calls a capability with `this` the call's context (see
// callcontext.js) and waits for its outcome.
async function settle(capability, args, signal, thisArg = undefined) {
  if (signal?.aborted) return { type: 'cancelled' };
  let pending;
  try {
    pending = Reflect.apply(capability, thisArg, args);
  } catch (error) {
    return { type: 'error', error };
  }
  if (!types.isPromise(pending)) return { type: 'value', value: pending };
  if (signal?.aborted) {
    // Aborted while the capability ran its synchronous part.
    pending.catch(() => {});
    return { type: 'cancelled' };
  }
  if (signal === undefined) {
    try {
      return { type: 'value', value: await pending };
    } catch (error) {
      return { type: 'error', error };
    }
  }
  let onAbort;
  const aborted = new Promise((resolve) => {
    onAbort = () => resolve({ type: 'cancelled' });
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const outcome = await Promise.race([
      pending.then(
        (value) => ({ type: 'value', value }),
        (error) => ({ type: 'error', error }),
      ),
      aborted,
    ]);
    if (outcome.type === 'cancelled') pending.catch(() => {});
    return outcome;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

// toPayload turns a capability's outcome into its answer. A console
// method's value is not sent: the guest's call returns undefined whatever
// the callback returned, so it need not be a value that can cross.
function toPayload(outcome, capability = undefined) {
  if (outcome.type === 'cancelled') return { type: 'cancelled' };
  if (outcome.type === 'value' && CONSOLE_CAPABILITIES.has(capability)) return { type: 'value', value: encode(undefined) };
  if (outcome.type === 'value') return { type: 'value', value: encode(outcome.value) };
  return encodeError(outcome.error);
}

// ---- log lines ----

// emitLogs hands a step's (or a failure's) log lines to the context's
// onLog, in order. A throwing onLog does not stop the execution's
// bookkeeping: its error is rethrown once every line was handed over.
function emitLogs(ctx, lines) {
  if (ctx.onLog === null || !Array.isArray(lines)) return;
  let failure = null;
  for (const line of lines) {
    try {
      ctx.onLog(line);
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure !== null) throw failure.error;
}

// logged runs a step and hands its log lines, or those of the error it
// failed with, to onLog.
function loggedSync(ctx, f) {
  let step;
  try {
    step = f();
  } catch (error) {
    if (error && Array.isArray(error.logs)) emitLogs(ctx, error.logs);
    throw error;
  }
  step.logs = toLogLines(step.logs);
  emitLogs(ctx, step.logs);
  return step;
}


// ---- steps ----

const MAX_ATTEMPTS = 5;

// notRun tells the errors after which a Progress stays resumable: its
// process died before answering, or its answer could not be sent (too
// large for the sidecar's stage bound), so the execution did not go on.
function notRun(error) {
  return error instanceof MustardProcessError || error instanceof MustardRequestTooLargeError;
}

function singleUseError() {
  return new MustardRuntimeError('Progress objects are single-use; this suspended execution was already resumed');
}

function resumeRequest(st, body, home) {
  return {
    home,
    snapshotId: st.snapshotId,
    policyId: st.policyId,
    snapshot: st.snapshot,
    snapshotHash: st.snapshotHash,
    policy: { capabilities: st.ctx.capabilities, limits: st.ctx.limits, hostCalls: st.ctx.hostCalls, console: st.ctx.consoleMode },
    auth: { key: st.ctx.keyBase64, digest: st.ctx.digest, token: hmacHex(st.ctx.key, st.snapshotId), sealKey: st.ctx.sealKey },
    delivery: st.delivery,
    ...body,
  };
}

// stepState is what a suspended step keeps to be resumed.
function stepState(step, ctx, program, where, delivery) {
  return {
    capability: step.capability,
    args: step.args,
    calls: step.calls,
    snapshotId: step.snapshotId,
    policyId: step.policyId,
    snapshot: step.snapshot === null ? null : Buffer.from(step.snapshot.buffer, step.snapshot.byteOffset, step.snapshot.byteLength),
    snapshotHash: step.snapshotHash ?? null,
    home: step.home,
    ctx,
    program,
    where, // { sync: true } or { pool }
    delivery,
    logs: step.logs ?? [],
    // Single use (see consumed.js): exposed once the snapshot bytes left
    // the package; claimed when Progress.load() recorded the snapshot as
    // used; multiUse when the load asked for neither.
    exposed: false,
    claimed: false,
    multiUse: false,
  };
}

// advance resumes st with body ({ payload } or { answers }), on the
// synchronous side or on a pool; a step the process died during is tried
// again from the snapshot bytes on another process.
function advanceSync(st, body) {
  try {
    return loggedSync(st.ctx, () => advanceSyncUnlogged(st, body));
  } catch (error) {
    throw withHostErrorCode(error, body);
  }
}

// referenceString renders a value as the reference's error summaries do
// (JavaScript's String(), without running anything).
function referenceString(v) {
  if (v === null || v === undefined) return String(v);
  if (Array.isArray(v)) return v.map((e) => (e === null || e === undefined ? '' : referenceString(e))).join(',');
  if (typeof v === 'object') return '[object Object]';
  return String(v);
}

// withHostErrorCode gives an uncaught host error the reference's summary:
// when a step fails with the error a capability just threw (its name and
// message), the reference appends " [code=<code>]" and
// " [details=<details>]" for the error's own code and details.
function withHostErrorCode(error, body) {
  if (!(error instanceof MustardRuntimeError)) return error;
  const payloads = body.payload ? [body.payload] : Array.isArray(body.answers) ? body.answers.map((a) => a.payload) : [];
  for (const p of payloads) {
    if (!p || p.type !== 'error' || !p.error) continue;
    const { name = 'Error', message = '', code, details } = p.error;
    if (typeof code !== 'string' && details === undefined) continue;
    const head = message === '' ? name : `${name}: ${message}`;
    const nl = error.message.indexOf('\n');
    const first = nl < 0 ? error.message : error.message.slice(0, nl);
    if (first !== head) continue;
    let suffix = '';
    if (typeof code === 'string') suffix += ` [code=${code}]`;
    if (details !== undefined) suffix += ` [details=${referenceString(decode(details))}]`;
    error.message = first + suffix + (nl < 0 ? '' : error.message.slice(nl));
    return error;
  }
  return error;
}

function advanceSyncUnlogged(st, body) {
  let home = st.where.sync ? st.home : null;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return syncBridge().call('resume', resumeRequest(st, body, home));
    } catch (error) {
      if (!(error instanceof MustardProcessError) || st.snapshot === null || attempt >= MAX_ATTEMPTS) throw error;
      home = null;
    }
  }
}

// The async steps await the sidecar's answer directly, with no wrapper
// in between: the capability a step suspends at is called in the
// microtask turn after the answer is read.
async function advanceAsync(st, body, pool, signal) {
  let home = st.where.pool === pool ? st.home : null;
  let step;
  for (let attempt = 1; ; attempt += 1) {
    try {
      step = await ops.resume(pool, resumeRequest(st, body, home), signal);
      break;
    } catch (error) {
      if (!(error instanceof MustardProcessError) || st.snapshot === null || attempt >= MAX_ATTEMPTS || signal?.aborted) {
        throw failedStep(st.ctx, withHostErrorCode(error, body));
      }
      home = null;
    }
  }
  return loggedStep(st.ctx, step);
}

// loggedStep hands a step's log lines to onLog; failedStep those of the
// error a step failed with, and returns the error.
function loggedStep(ctx, step) {
  step.logs = toLogLines(step.logs);
  emitLogs(ctx, step.logs);
  return step;
}

function failedStep(ctx, error) {
  if (error && Array.isArray(error.logs)) emitLogs(ctx, error.logs);
  return error;
}

function startRequest(program, ctx, options, label, delivery) {
  const entry = getEntry(options, label);
  return {
    programId: program.id,
    program: program.bytes,
    inputs: encodeInputs(options.inputs),
    capabilities: ctx.capabilities,
    limits: ctx.limits,
    hostCalls: ctx.hostCalls,
    console: ctx.consoleMode,
    entry,
    sealKey: ctx.sealKey,
    delivery,
  };
}

async function startAsync(pool, request, signal, ctx) {
  let step;
  for (let attempt = 1; ; attempt += 1) {
    try {
      step = await ops.start(pool, request, signal);
      break;
    } catch (error) {
      if (!(error instanceof MustardProcessError) || attempt >= MAX_ATTEMPTS || signal?.aborted) throw failedStep(ctx, error);
    }
  }
  return loggedStep(ctx, step);
}

function materialize(step, ctx, program, where, delivery) {
  if (step.type === 'completed') return decode(step.value);
  return new Progress(PRIVATE, stepState(step, ctx, program, where, delivery));
}

const PRIVATE = Symbol('mustard-sidecar.private');
const RESUME_WIRE = Symbol('mustard-sidecar.resumeWire');

function decodeCalls(calls) {
  return calls.map((c) => Object.freeze({ callId: c.call_id, capability: c.capability, args: c.args.map((a) => decode(a)) }));
}

// Progress is a suspended execution: the capability call it waits on
// (capability, args; in batch mode every outstanding call in calls), and
// its snapshot.
class Progress {
  #st;

  constructor(token, st) {
    if (token !== PRIVATE) throw new TypeError('Progress objects come from Mustard.start() or Progress.load()');
    this.#st = st;
    this.capability = st.capability;
    this.args = st.args.map((a) => decode(a));
    if (st.calls) this.calls = decodeCalls(st.calls);
    // The lines the guest wrote with console in the step that suspended
    // here (consoleMode "collect").
    this.logs = toLogLines(st.logs);
  }

  get snapshot() {
    if (this.#st.snapshot === null) {
      throw new MustardSerializationError('this step was started with snapshotDelivery "none": its snapshot bytes were not kept');
    }
    this.#expose();
    return Buffer.from(this.#st.snapshot);
  }

  // #expose marks the snapshot as having left the package: from then on
  // its use is recorded process-wide (already, if it was resumed).
  #expose() {
    const st = this.#st;
    if (st.exposed) return;
    st.exposed = true;
    if (st.consumed && !st.multiUse) consumed.claim(st.snapshotId);
  }

  get sealed() {
    return this.#st.ctx.sealKey !== null;
  }

  // dump returns what Progress.load() needs to resume the execution in
  // another process: the snapshot bytes, their id and the token signing
  // them, the program, and the suspended call(s) signed with the snapshot
  // key.
  dump() {
    const st = this.#st;
    const snapshot = this.snapshot;
    const manifest = JSON.stringify({
      capability: st.capability,
      args: st.args,
      calls: st.calls ?? undefined,
      host_calls: st.ctx.hostCalls,
      console: st.ctx.consoleMode === 'collect' ? 'collect' : undefined,
      sealed: st.ctx.sealKey !== null,
    });
    const dumped = {
      capability: st.capability,
      args: st.args.map((a) => decode(a)),
      snapshot,
      snapshot_id: st.snapshotId,
      snapshot_key_digest: st.ctx.digest,
      token: hmacHex(st.ctx.key, st.snapshotId),
      suspended_manifest: manifest,
      suspended_manifest_token: hmacHex(st.ctx.key, st.snapshotId, '\0', manifest),
    };
    if (st.program !== null) {
      dumped.program = Buffer.from(st.program.bytes);
      dumped.program_id = st.program.id;
    }
    return dumped;
  }

  #claim() {
    const st = this.#st;
    if (st.consumed) throw singleUseError();
    if (st.exposed && !st.multiUse && !st.claimed) {
      if (!consumed.claim(st.snapshotId)) throw singleUseError();
      st.claimedHere = true;
    }
    st.consumed = true;
  }

  #unclaim() {
    const st = this.#st;
    st.consumed = false;
    if (st.claimedHere) {
      st.claimedHere = false;
      consumed.release(st.snapshotId);
    }
  }

  #body(kind, arg) {
    const st = this.#st;
    let payload;
    if (kind === 'value') payload = { type: 'value', value: encode(arg) };
    else if (kind === 'error') payload = encodeError(arg);
    else payload = { type: 'cancelled' };
    if (st.ctx.hostCalls === 'batch') return { answers: [{ call_id: st.calls[0].call_id, payload }] };
    return { payload };
  }

  #callsBody(answers) {
    const st = this.#st;
    if (st.ctx.hostCalls !== 'batch') throw new TypeError('resumeCalls() needs an execution started with hostCalls: "batch"');
    if (!Array.isArray(answers) || answers.length === 0) throw new TypeError('resumeCalls() takes a non-empty array of answers');
    return {
      answers: answers.map((a, i) => {
        if (a === null || typeof a !== 'object' || !Number.isInteger(a.callId)) {
          throw new TypeError(`answers[${i}] must be an object with an integer callId`);
        }
        let payload;
        if (hasOwn(a, 'error')) payload = encodeError(a.error);
        else if (a.cancelled === true) payload = { type: 'cancelled' };
        else payload = { type: 'value', value: encode(a.value) };
        return { call_id: a.callId, payload };
      }),
    };
  }

  #runSync(body) {
    this.#claim();
    let step;
    try {
      step = advanceSync(this.#st, body);
    } catch (error) {
      if (notRun(error)) this.#unclaim();
      throw error;
    }
    return materialize(step, this.#st.ctx, this.#st.program, { sync: true }, this.#st.delivery);
  }

  async #runAsync(body, options, label) {
    const signal = getSignal(options, label);
    const pool = (options && getPool(options, label)) || defaultPool();
    if (signal?.aborted) body = this.#body('cancelled');
    this.#claim();
    let step;
    try {
      step = await advanceAsync(this.#st, body, pool, signal);
    } catch (error) {
      if (notRun(error)) this.#unclaim();
      throw error;
    }
    return materialize(step, this.#st.ctx, this.#st.program, { pool }, this.#st.delivery);
  }

  // [RESUME_WIRE] resumes with a payload already in wire form (the
  // executor's stored answers), or in batch mode with answers, an array
  // of { call_id, payload } in wire form.
  [RESUME_WIRE](payload, options) {
    let body;
    if (Array.isArray(payload)) body = { answers: payload };
    else if (this.#st.ctx.hostCalls === 'batch') body = { answers: [{ call_id: this.#st.calls[0].call_id, payload }] };
    else body = { payload };
    return this.#runAsync(body, options, 'resume options');
  }

  resume(value, options = undefined) {
    const signal = getSignal(options, 'resume options');
    if (signal?.aborted) return this.cancel();
    return this.#runSync(this.#body('value', value));
  }

  resumeError(error, options = undefined) {
    const signal = getSignal(options, 'resume options');
    if (signal?.aborted) return this.cancel();
    return this.#runSync(this.#body('error', error));
  }

  cancel() {
    return this.#runSync(this.#body('cancelled'));
  }

  resumeCalls(answers, options = undefined) {
    const signal = getSignal(options, 'resume options');
    if (signal?.aborted) return this.cancel();
    return this.#runSync(this.#callsBody(answers));
  }

  resumeAsync(value, options = undefined) {
    return this.#runAsync(this.#body('value', value), options, 'resume options');
  }

  resumeErrorAsync(error, options = undefined) {
    return this.#runAsync(this.#body('error', error), options, 'resume options');
  }

  cancelAsync(options = undefined) {
    return this.#runAsync(this.#body('cancelled'), options, 'cancel options');
  }

  resumeCallsAsync(answers, options = undefined) {
    return this.#runAsync(this.#callsBody(answers), options, 'resume options');
  }

  // load restores a dumped Progress, in this or another Node process,
  // with the policy to resume it under (capabilities, limits,
  // snapshotKey, and sealKey for a sealed execution; or a context). It
  // checks the dump's signatures here; the sidecar checks them again.
  static load(state, options = undefined) {
    if (!state || typeof state !== 'object') throw new TypeError('Progress.load() expects a dumped progress object');
    if (!state.snapshot) throw new TypeError('Progress.load() requires snapshot bytes');
    if (!(Buffer.isBuffer(state.snapshot) || state.snapshot instanceof Uint8Array)) {
      throw new TypeError('Progress.load() requires snapshot bytes as Buffer or Uint8Array');
    }
    if (typeof state.snapshot_id !== 'string' || state.snapshot_id.length === 0) {
      throw new TypeError('Progress.load() requires dumped snapshot_id metadata');
    }
    if (typeof state.snapshot_key_digest !== 'string' || state.snapshot_key_digest.length === 0) {
      throw new TypeError('Progress.load() requires dumped snapshot_key_digest metadata');
    }
    if (typeof state.token !== 'string' || state.token.length === 0) {
      throw new TypeError('Progress.load() requires a dumped progress token');
    }
    const snapshot = Buffer.from(state.snapshot);
    const tampered = () =>
      new MustardSerializationError('Progress.load() rejected a tampered or unauthenticated snapshot', { code: 'tampered_snapshot' });
    if (sha256Hex(snapshot) !== state.snapshot_id) throw tampered();
    // The program bytes are optional, as in the reference (the snapshot
    // holds its program); when present they must be the ones named.
    let program = null;
    if (state.program !== undefined) {
      if (!(Buffer.isBuffer(state.program) || state.program instanceof Uint8Array)) {
        throw new TypeError('Progress.load() requires dumped program bytes as Buffer or Uint8Array');
      }
      if (typeof state.program_id !== 'string' || state.program_id.length === 0) {
        throw new TypeError('Progress.load() requires dumped program_id metadata when program bytes are present');
      }
      const bytes = Buffer.from(state.program);
      if (sha256Hex(bytes) !== state.program_id) {
        throw new MustardSerializationError('Progress.load() rejected a tampered or mismatched detached program');
      }
      program = { id: state.program_id, bytes };
    }
    const multiUse = options !== null && typeof options === 'object' && options.multiUse === true;
    if (options !== null && typeof options === 'object' && options.multiUse !== undefined && typeof options.multiUse !== 'boolean') {
      throw new TypeError('Progress.load() options.multiUse must be a boolean');
    }
    // Single use: a snapshot already resumed in this process is refused
    // before anything else of the dump is looked at.
    if (!multiUse && consumed.used(state.snapshot_id)) throw singleUseError();
    if (options === undefined || options === null || typeof options !== 'object') {
      throw new TypeError('Progress.load() requires an ExecutionContext or explicit capabilities, limits, and snapshotKey');
    }
    let ctx;
    if (hasOwn(options, 'context')) {
      ctx = resolveContext(options, 'Progress.load() options');
    } else {
      if (!hasOwn(options, 'capabilities') && !hasOwn(options, 'console')) {
        throw new TypeError('Progress.load() requires explicit capabilities when restoring progress');
      }
      if (!hasOwn(options, 'limits')) throw new TypeError('Progress.load() requires explicit limits when restoring progress');
      assertPlainObject(options.limits, 'Progress.load() options.limits');
      if (options.snapshotKey === undefined) throw new TypeError('Progress.load() requires explicit snapshotKey when restoring progress');
      ctx = createContext(options, 'Progress.load() options');
    }
    belowEnvironment(ctx, true);
    if (ctx.digest !== state.snapshot_key_digest) {
      throw new MustardSerializationError('Progress.load() rejected a mismatched snapshot key digest', { code: 'key_digest_mismatch' });
    }
    if (!timingSafeEqualHex(state.token, hmacHex(ctx.key, state.snapshot_id))) throw tampered();
    const manifestError = () => new MustardSerializationError('Progress.load() rejected tampered or unauthenticated suspended metadata');
    let manifest;
    if (state.suspended_manifest === undefined && state.suspended_manifest_token === undefined) {
      // A dump without its manifest (the reference's "legacy" dump, or one
      // stored with only the reference's required fields): the suspended
      // call is read from the snapshot, now that its token checked out.
      const found = inspectSnapshot(snapshot);
      if (found === null) {
        throw new MustardSerializationError(
          "Progress.load() requires the dump's suspended_manifest for this snapshot (a sealed one, or of another format version)",
        );
      }
      manifest = {
        capability: found.capability,
        args: found.args,
        calls: ctx.hostCalls === 'batch' ? found.calls : undefined,
        host_calls: ctx.hostCalls,
        console: ctx.consoleMode,
      };
    } else {
      if (
        typeof state.suspended_manifest !== 'string' ||
        state.suspended_manifest.length === 0 ||
        typeof state.suspended_manifest_token !== 'string' ||
        state.suspended_manifest_token.length === 0
      ) {
        throw manifestError();
      }
      const manifestToken = hmacHex(ctx.key, state.snapshot_id, '\0', state.suspended_manifest);
      if (!timingSafeEqualHex(state.suspended_manifest_token, manifestToken)) throw manifestError();
      try {
        manifest = JSON.parse(state.suspended_manifest);
      } catch {
        throw manifestError();
      }
      if (
        manifest === null ||
        typeof manifest !== 'object' ||
        typeof manifest.capability !== 'string' ||
        manifest.capability.length === 0 ||
        !Array.isArray(manifest.args)
      ) {
        throw manifestError();
      }
    }
    if (manifest.host_calls !== ctx.hostCalls) {
      ctx = Object.freeze({ ...ctx, hostCalls: manifest.host_calls === 'batch' ? 'batch' : 'one' });
    }
    // The console mode is part of the policy the execution started with:
    // it goes on in it unless the caller said otherwise.
    const consoleMode = manifest.console === 'collect' ? 'collect' : 'off';
    if (consoleMode !== ctx.consoleMode && !hasOwn(options, 'consoleMode') && !hasOwn(options, 'context')) {
      ctx = Object.freeze({ ...ctx, consoleMode });
    }
    const wanted = manifest.calls ? manifest.calls.map((c) => c.capability) : [manifest.capability];
    for (const name of wanted) {
      if (!ctx.capabilities.includes(name)) {
        throw new MustardSerializationError(`snapshot policy rejected unauthorized capability \`${name}\``, { code: 'unauthorized_capability' });
      }
    }
    if (!multiUse && !consumed.claim(state.snapshot_id)) throw singleUseError();
    const step = {
      capability: manifest.capability,
      args: manifest.args,
      calls: manifest.calls ?? null,
      snapshotId: state.snapshot_id,
      policyId: null,
      snapshot,
      home: null,
      logs: [],
    };
    const st = stepState(step, ctx, program, { sync: false, pool: null }, 'delta');
    st.exposed = true;
    st.claimed = !multiUse;
    st.multiUse = multiUse;
    return new Progress(PRIVATE, st);
  }
}

function timingSafeEqualHex(a, b) {
  if (typeof a !== 'string' || a.length !== b.length) return false;
  return crypto.timingSafeEqual(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

// ---- Mustard ----

// The sidecar's parse error for a `return` outside a function, and the
// reference's wording of it.
const ILLEGAL_RETURN = /^Illegal return statement \((\d+):(\d+)\)$/;

function illegalReturnAt(error) {
  if (!(error instanceof MustardError) || error.kind !== 'Parse') return null;
  const m = ILLEGAL_RETURN.exec(error.message);
  return m === null ? null : { line: Number(m[1]), column: Number(m[2]) };
}

// referenceCompileError gives a compile failure the reference's kind and
// wording where they differ from the sidecar's parser: a `return` outside
// a function, a duplicate lexical binding (a Validation failure there),
// module syntax (Validation: "module syntax is not supported").
function referenceCompileError(error, source) {
  if (!(error instanceof MustardError) || error.kind !== 'Parse') return error;
  const at = illegalReturnAt(error);
  if (at !== null) {
    error.message = `A 'return' statement can only be used within a function body. (${at.line}:${at.column})`;
    return error;
  }
  if (/^Identifier '.*' has already been declared \(\d+:\d+\)$/s.test(error.message)) {
    return new MustardValidationError(error.message, { code: 'validation', cause: error });
  }
  const m = /^Unexpected reserved word \((\d+):(\d+)\)$/.exec(error.message);
  if (m !== null) {
    const line = source.split('\n')[Number(m[1]) - 1] ?? '';
    if (/^(?:import|export)\b/.test(line.slice(Number(m[2]) - 1))) {
      return new MustardValidationError(`module syntax is not supported (${m[1]}:${m[2]})`, { code: 'validation', cause: error });
    }
  }
  return error;
}

function compileSource(source, language) {
  try {
    return syncBridge().call('compile', { source, language });
  } catch (error) {
    throw referenceCompileError(error, source);
  }
}

const LOADED = Symbol('mustard-sidecar.loadedProgram');

class Mustard {
  #program;

  // The constructor compiles the program in a sidecar process and throws
  // MustardParseError / MustardValidationError for one that does not
  // compile.
  constructor(code, options = {}) {
    if (code === LOADED) {
      this.#program = options;
      return;
    }
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw new TypeError('compile options must be a plain object');
    }
    if (options.lenientMode !== undefined && typeof options.lenientMode !== 'boolean') {
      throw new TypeError('options.lenientMode must be a boolean');
    }
    if (options.inputs !== undefined && (!Array.isArray(options.inputs) || options.inputs.some((n) => typeof n !== 'string'))) {
      throw new TypeError('options.inputs must be an array of strings');
    }
    const language = options.language ?? 'javascript';
    if (language !== 'javascript' && language !== 'typescript') {
      throw new TypeError('compile options.language must be "javascript" or "typescript"');
    }
    if (typeof code !== 'string') throw new TypeError('program source must be a string');
    const compiled =
      options.lenientMode === true
        ? compileLenient(
            code,
            (source) => {
              try {
                return syncBridge().call('compile', { source, language });
              } catch (error) {
                // The lenient rewrite keeps lines and columns: the
                // original source names the same places.
                if (illegalReturnAt(error) !== null) throw error;
                throw referenceCompileError(error, code);
              }
            },
            illegalReturnAt,
            (message) => new MustardValidationError(message),
          )
        : compileSource(code, language);
    this.#program = { id: compiled.programId, bytes: Buffer.from(compiled.program) };
  }

  static validateProgram(code, options = {}) {
    void new Mustard(code, options);
  }

  // load makes a Mustard of program bytes from dump(), without compiling;
  // bytes that are not a program fail when it is started.
  static load(buffer) {
    if (!(Buffer.isBuffer(buffer) || buffer instanceof Uint8Array)) {
      throw new TypeError('Mustard.load() requires program bytes as Buffer or Uint8Array');
    }
    const bytes = Buffer.from(buffer);
    return new Mustard(LOADED, { id: sha256Hex(bytes), bytes });
  }

  dump() {
    return Buffer.from(this.#program.bytes);
  }

  get programId() {
    return this.#program.id;
  }

  // start runs the program until it completes (its value) or suspends at
  // a capability call (a Progress), blocking the thread meanwhile.
  start(options = {}) {
    const signal = getSignal(options, 'start options');
    if (signal?.aborted) throw cancelledError();
    const ctx = resolveContext(options, 'start options');
    belowEnvironment(ctx);
    const delivery = getDelivery(options, 'start options');
    const request = startRequest(this.#program, ctx, options, 'start options', delivery);
    const step = loggedSync(ctx, () => syncBridge().call('start', request));
    return materialize(step, ctx, this.#program, { sync: true }, delivery);
  }

  // startAsync is start() without blocking: the signal cancels the guest
  // in band while it runs.
  async startAsync(options = {}) {
    const signal = getSignal(options, 'start options');
    if (signal?.aborted) throw cancelledError();
    const ctx = resolveContext(options, 'start options');
    belowEnvironment(ctx);
    const pool = getPool(options, 'start options') || defaultPool();
    const delivery = getDelivery(options, 'start options');
    const step = await startAsync(pool, startRequest(this.#program, ctx, options, 'start options', delivery), signal, ctx);
    return materialize(step, ctx, this.#program, { pool }, delivery);
  }

  // run runs the program to completion, calling the capabilities (sync
  // or returning Promises) as the guest calls them; with hostCalls
  // "batch" every outstanding call starts at once (up to
  // maxConcurrentCalls). A step whose process dies is run again from its
  // snapshot on another process, with the answers already given.
  //
  // Without a pool, where the direct path exists (blockingRun()), each
  // step is a blocking round trip on this thread, as in the reference's
  // addon: the first capability is called before run() returns its
  // promise, and each next one in the microtask turn its predecessor's
  // settlement resumes the guest. With a pool (or blockingRun false)
  // the steps go through the pool's processes without blocking, and the
  // signal also cancels a running guest in band.
  async run(options = {}) {
    const signal = getSignal(options, 'run options');
    if (signal?.aborted) throw cancelledError();
    const ctx = resolveContext(options, 'run options');
    belowEnvironment(ctx);
    const explicitPool = getPool(options, 'run options');
    let delivery = getDelivery(options, 'run options');
    const maxConcurrent = options.maxConcurrentCalls ?? 16;
    if (!Number.isInteger(maxConcurrent) || maxConcurrent <= 0) {
      throw new TypeError('run options.maxConcurrentCalls must be a positive integer');
    }
    const blocking = explicitPool === null && blockingRun();
    // run() keeps its steps' bytes to go on after a process dies; the
    // in-process engine has no process to lose, so unless the host asked
    // for bytes none are made.
    if (blocking && options.snapshotDelivery === undefined && inProcessEngine()) delivery = 'none';
    const request = startRequest(this.#program, ctx, options, 'run options', delivery);
    let steps;
    let step;
    if (blocking) {
      steps = blockingSteps(ctx, this.#program, signal, delivery);
      step = startBlocking(request, ctx);
    } else {
      const pool = explicitPool || defaultPool();
      steps = poolSteps(ctx, this.#program, pool, signal, delivery);
      step = await startAsync(pool, request, signal, ctx);
    }
    const scope = new CallScope(signal);
    try {
      if (ctx.hostCalls === 'batch') return await runBatch(step, ctx, steps, signal, maxConcurrent, scope);
      let callId = 0;
      while (step.type === 'suspended') {
        const handler = ctx.handlers[step.capability];
        if (typeof handler !== 'function') throw new MustardRuntimeError(`Missing capability: ${step.capability}`);
        callId += 1;
        const outcome = await settle(handler, step.args.map((a) => decode(a)), signal, scope.context(callId));
        const advanced = steps.advance(step, { payload: toPayload(outcome, step.capability) });
        step = steps.blocking ? advanced : await advanced;
      }
      return decode(step.value);
    } finally {
      scope.end();
    }
  }
}

// poolSteps resumes run()'s steps on a pool, without blocking: advance
// returns a promise of the next step.
function poolSteps(ctx, program, pool, signal, delivery) {
  const where = { pool };
  return {
    blocking: false,
    advance: (step, body) => advanceAsync(stepState(step, ctx, program, where, delivery), body, pool, signal),
  };
}

// blockingSteps resumes run()'s steps on the direct path: advance
// returns the next step. An answer given after the signal aborted is
// replaced by a cancel, which the sidecar ends the execution with
// ("execution cancelled"), as the reference's addon does.
function blockingSteps(ctx, program, signal, delivery) {
  const where = { sync: true };
  const cancelled = { type: 'cancelled' };
  return {
    blocking: true,
    advance(step, body) {
      if (signal?.aborted) {
        body = body.answers ? { answers: body.answers.map((a) => ({ call_id: a.call_id, payload: cancelled })) } : { payload: cancelled };
      }
      return advanceSync(stepState(step, ctx, program, where, delivery), body);
    },
  };
}

// startBlocking starts run()'s execution on the direct path, again on a
// new process if its process died before answering.
function startBlocking(request, ctx) {
  return loggedSync(ctx, () => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return syncBridge().call('start', request);
      } catch (error) {
        if (!(error instanceof MustardProcessError) || attempt >= MAX_ATTEMPTS) throw error;
      }
    }
  });
}

async function runBatch(step, ctx, steps, signal, maxConcurrent, scope) {
  const started = new Set();
  const queue = [];
  const ready = [];
  let running = 0;
  let fatal = null;
  let wake = null;
  const notify = () => {
    if (wake) {
      const w = wake;
      wake = null;
      w();
    }
  };
  const pump = () => {
    while (running < maxConcurrent && queue.length > 0) {
      const call = queue.shift();
      const handler = ctx.handlers[call.capability];
      running += 1;
      const outcome =
        typeof handler === 'function'
          ? settle(handler, call.args.map((a) => decode(a)), signal, scope.context(call.call_id))
          : Promise.reject(new MustardRuntimeError(`Missing capability: ${call.capability}`));
      outcome
        .then((o) => {
          ready.push({ call_id: call.call_id, payload: toPayload(o, call.capability) });
        })
        .catch((error) => {
          fatal ??= error;
        })
        .finally(() => {
          running -= 1;
          pump();
          notify();
        });
    }
  };
  while (step.type === 'suspended') {
    for (const call of step.calls) {
      if (!started.has(call.call_id)) {
        started.add(call.call_id);
        queue.push(call);
      }
    }
    pump();
    while (ready.length === 0 && fatal === null) {
      await new Promise((resolve) => {
        wake = resolve;
      });
    }
    if (fatal !== null) throw fatal;
    const answers = ready.splice(0);
    const advanced = steps.advance(step, { answers });
    step = steps.blocking ? advanced : await advanced;
  }
  return decode(step.value);
}

module.exports = {
  Mustard,
  Progress,
  ExecutionContext,
  SidecarPool,
  configure,
  processes,
  shutdown,
  defaultPool,
  // for the executor
  _internal: { normalizeSnapshotKey, normalizeSealKey, normalizeHostCalls, getPool, toPayload, settle, RESUME_WIRE },
};
