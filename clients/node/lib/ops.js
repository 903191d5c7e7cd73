'use strict';

// The protocol's steps over a SidecarPool, on plain data (so that they run
// alike on the main thread and on the helper thread behind the
// synchronous API): compile, start, resume. Sources, inputs, program
// bytes, answers and snapshots too large for one request go through
// stages, as the Go host's do (host/stage.go); resumes ask for delta
// delivery when the caller holds the bytes being resumed, and rebuild the
// full snapshot; a resume names the process that parked its execution and
// falls back to the raw form (bytes + full policy) anywhere else.

const crypto = require('node:crypto');

const { MustardProcessError, MustardRequestTooLargeError, toLogLines } = require('./errors.js');
const { isAnswer } = require('./client.js');
const { PROTOCOL_VERSION, MAX_REQUEST_BYTES, encodeFrame } = require('./wire.js');

// The most bytes one stage request carries (the sidecar's fetch chunk).
const STAGE_CHUNK = 960 * 1024;
// A request id as long as any: the probe of a request's size uses it.
const LONGEST_ID = 2 ** 64 - 1;
// The codes of a stage the sidecar's stage bound refused.
const STAGE_BOUND_CODES = new Set(['stage_too_large', 'too_many_stages']);

const sha256Hex =
  typeof crypto.hash === 'function'
    ? (bytes) => crypto.hash('sha256', bytes)
    : (bytes) => crypto.createHash('sha256').update(bytes).digest('hex');

// ---- drivers ----
//
// The steps are generators that yield the requests they send (req(...))
// and get each answer back (or its error thrown in): driveAsync runs one
// on a SidecarClient, driveSync on a client whose request() blocks (the
// synchronous API's direct path, lib/sync-direct.js). The same code
// stages large values for both.

function req(client, method, fields, payload = null, opts = undefined) {
  return { client, method, fields, payload, opts };
}

async function driveAsync(gen) {
  let step = gen.next();
  while (!step.done) {
    const r = step.value;
    let answer;
    try {
      answer = await r.client.request(r.method, r.fields, r.payload, r.opts);
    } catch (error) {
      step = gen.throw(error);
      continue;
    }
    step = gen.next(answer);
  }
  return step.value;
}

function driveSync(gen) {
  let step = gen.next();
  while (!step.done) {
    const r = step.value;
    let answer;
    try {
      answer = r.client.request(r.method, r.fields, r.payload, r.opts);
    } catch (error) {
      step = gen.throw(error);
      continue;
    }
    step = gen.next(answer);
  }
  return step.value;
}

// ---- values past 1 MiB ----
//
// A request too large for the sidecar's 1 MiB request limit sends its
// largest values through stages first (the stage and stage_values
// extensions): snapshot bytes, program bytes, the source, the inputs,
// answers. A part is such a value: `inline` bounds the bytes it takes in
// the request, `bytes` is what its stage holds instead.

// jsonPart is a value sent as JSON. Its size is measured (and its bytes
// made) only if the request does not fit inline: a request that fits,
// nearly all of them, encodes each value once.
function jsonPart(value) {
  let json = null;
  const text = () => (json ??= JSON.stringify(value));
  return {
    lazy: true,
    get inline() {
      return Buffer.byteLength(text(), 'utf8') + 64;
    },
    get bytes() {
      return Buffer.from(text(), 'utf8');
    },
  };
}

function rawPart(bytes) {
  return { inline: bytes.length + 64, bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
}

// stageBytes uploads bytes under stageId in chunks that each fit a request.
function* stageBytes(client, stageId, bytes, signal) {
  let offset = 0;
  do {
    const chunk = bytes.subarray(offset, offset + STAGE_CHUNK);
    const { result } = yield req(client, 'stage', { stage_id: stageId, offset }, chunk, { signal });
    offset += chunk.length;
    if (!result || result.kind !== 'staged' || result.total_bytes !== offset) {
      client.protocolError(`stage answered with ${result && result.total_bytes} bytes staged, expected ${offset}`);
      throw client.dead;
    }
  } while (offset < bytes.length);
  client.stagesUploaded += 1;
}

// dropStages empties stages a request did not consume (it was not sent, or
// not answered), so that they hold none of the sidecar's stage bound. Best
// effort: a process that is gone took its stages with it.
function* dropStages(client, ids) {
  for (const id of ids) {
    try {
      yield req(client, 'stage', { stage_id: id, offset: 0 }, null);
    } catch {
      return;
    }
  }
}

// send sends the request build(ids) makes, in which parts[i] travels in
// stage ids[i], or inline where ids[i] is null; build returns { fields,
// raw } and is called more than once. Every part goes inline if the
// request fits the limit; else the largest parts are staged first, as
// few as make it fit. A MustardRequestTooLargeError, with nothing run,
// means it cannot fit even with every part staged, or the sidecar's stage
// bound cannot hold a part.
function* send(client, method, parts, build, opts = {}) {
  // Sizes known without encoding (raw bytes, a source): past the limit,
  // the request goes staged at once; else it is tried inline, and the
  // encoder refuses it, with nothing sent, if the JSON values make it too
  // large.
  let known = 0;
  for (const p of parts) if (p.lazy !== true) known += p.inline;
  if (known <= MAX_REQUEST_BYTES || parts.length === 0) {
    const { fields, raw } = build(parts.map(() => null));
    try {
      return yield req(client, method, fields, raw, opts);
    } catch (error) {
      if (!(error instanceof MustardRequestTooLargeError) || parts.length === 0) throw error;
    }
  }
  const ids = parts.map(() => client.takeStageId());
  try {
    // The request with every part staged: it must fit.
    const probe = build(ids);
    const frame = encodeFrame({ protocol_version: PROTOCOL_VERSION, id: LONGEST_ID, method, ...probe.fields }, probe.raw);
    // Keep the smallest parts inline while they fit.
    let room = MAX_REQUEST_BYTES - frame.length;
    const order = parts.map((_, i) => i).sort((a, b) => parts[a].inline - parts[b].inline || a - b);
    const staged = ids.slice();
    for (const i of order) {
      if (parts[i].inline > room) break;
      room -= parts[i].inline;
      staged[i] = null;
    }
    // Stage the others, then send the request that names them.
    const used = [];
    for (let i = 0; i < parts.length; i += 1) {
      if (staged[i] === null) continue;
      used.push(staged[i]);
      try {
        yield* stageBytes(client, staged[i], parts[i].bytes, opts.signal);
      } catch (error) {
        yield* dropStages(client, used);
        if (isAnswer(error) && STAGE_BOUND_CODES.has(error.code)) {
          throw new MustardRequestTooLargeError(
            `${method} request: staging a value of ${parts[i].bytes.length} bytes failed: ${error.message} (the sidecar's stage bound, --max-stage-bytes)`,
            { code: error.code },
          );
        }
        throw error;
      }
    }
    const { fields, raw } = build(staged);
    try {
      return yield req(client, method, fields, raw, opts);
    } catch (error) {
      // Not answered: the stages may still hold their bytes.
      if (!isAnswer(error)) yield* dropStages(client, used);
      throw error;
    }
  } finally {
    client.giveBackStageIds(ids);
  }
}

// ---- requests ----

async function compile(pool, source, language = undefined) {
  if (typeof source !== 'string') throw new TypeError('program source must be a string');
  const client = await pool.acquire();
  try {
    return await driveAsync(compileOn(client, source, language));
  } finally {
    pool.release(client);
  }
}

function compileSync(client, source, language = undefined) {
  if (typeof source !== 'string') throw new TypeError('program source must be a string');
  return driveSync(compileOn(client, source, language));
}

function* compileOn(client, source, language) {
  const lang = language === 'typescript' ? { language } : {};
  // A source of up to half the limit fits whatever it escapes: it goes
  // inline, uncopied. A larger one is staged if it does not fit, unless it
  // has lone surrogates, which UTF-8 (what a stage holds) cannot carry.
  const parts = [];
  const wellFormed = source.isWellFormed();
  if (source.length > MAX_REQUEST_BYTES / 6 && wellFormed) {
    const bytes = Buffer.from(source, 'utf8');
    if (bytes.length > MAX_REQUEST_BYTES / 2) parts.push({ inline: bytes.length + (bytes.length >> 3) + 64, bytes });
  }
  const build = (ids) =>
    ids.length > 0 && ids[0] !== null ? { fields: { source_stage_id: ids[0], ...lang }, raw: null } : { fields: { source, ...lang }, raw: null };
  let answer;
  try {
    answer = yield* send(client, 'compile', parts, build);
  } catch (error) {
    if (error instanceof MustardRequestTooLargeError && !wellFormed) {
      throw new MustardRequestTooLargeError(`${error.message}; a source with lone surrogates cannot be staged (a stage holds UTF-8)`);
    }
    throw error;
  }
  const { result, payload } = answer;
  if (!result || result.kind !== 'program' || typeof result.program_id !== 'string') {
    throw new MustardProcessError('the sidecar answered compile with something other than a program');
  }
  client.known.add(result.program_id);
  return { programId: result.program_id, program: Buffer.from(payload) };
}

// A long execution's steps cost what their deltas cost, not what the
// whole history does. Past LONG_SNAPSHOT bytes (below it one-shot hashing
// and copying are cheaper than the bookkeeping), a step keeps:
//
// - the SHA-256 state after its snapshot's bytes (snapshotHash, a crypto
//   Hash): the next delta is hashed alone to check the next snapshot id.
//   The state does not cross to the helper thread (portable); a step
//   without it hashes its base once;
// - its bytes as a view of a backing buffer with room to grow (doubling,
//   as a Go slice's): the next delta is copied alone. A delta goes in
//   place only after the furthest bytes written to the backing: a step
//   resumed twice (multiUse) has its second delta copied out, and no view
//   ever sees its bytes change.
const LONG_SNAPSHOT = 16 * 1024;
const backingEnd = new WeakMap(); // ArrayBuffer -> end of the bytes written

function hashAfter(base, delta) {
  const h = base.hash ? base.hash.copy() : crypto.createHash('sha256').update(base.bytes);
  if (delta !== null) h.update(delta);
  return h;
}

function appendBytes(base, delta) {
  if (delta === null || delta.length === 0) return base;
  const backing = base.buffer;
  const end = base.byteOffset + base.length;
  if (backingEnd.get(backing) === end && end + delta.length <= backing.byteLength) {
    new Uint8Array(backing, end, delta.length).set(delta);
    backingEnd.set(backing, end + delta.length);
    return Buffer.from(backing, base.byteOffset, base.length + delta.length);
  }
  const n = base.length + delta.length;
  const grown = new ArrayBuffer(2 * n);
  const out = Buffer.from(grown, 0, n);
  out.set(base, 0);
  out.set(delta, base.length);
  backingEnd.set(grown, n);
  return out;
}

// portable is a step, or a request's arguments holding one's snapshot,
// fit for postMessage to or from the helper thread: without its hash
// state, and with a long snapshot's bytes alone (a clone of a view copies
// its whole backing).
function portable(o) {
  if (!o || typeof o !== 'object') return o;
  const trim = o.snapshot && o.snapshot.length >= LONG_SNAPSHOT && o.snapshot.buffer.byteLength > o.snapshot.length;
  if (!o.snapshotHash && !trim) return o;
  const out = { ...o, snapshotHash: null };
  if (trim) out.snapshot = Buffer.from(o.snapshot);
  return out;
}

// toStep turns a step result into plain data. base is the snapshot
// resumed ({ id, bytes, hash }), to which a delta is appended.
function toStep(client, result, payload, base) {
  if (!result || result.kind !== 'step' || !result.step) {
    throw new MustardProcessError('the sidecar answered a step request with something other than a step');
  }
  const step = result.step;
  const logs = toLogLines(step.logs);
  if (step.type === 'completed') return { type: 'completed', value: step.value, logs };
  if (step.type !== 'suspended') throw new MustardProcessError(`the sidecar sent an unknown step type ${JSON.stringify(step.type)}`);
  let snapshot = payload && payload.length > 0 ? Buffer.from(payload) : null;
  let hash = null;
  let id = null;
  if (typeof result.snapshot_base_id === 'string') {
    if (!base || !base.bytes || base.id !== result.snapshot_base_id) {
      throw new MustardProcessError('the sidecar sent a snapshot delta for a snapshot this host did not resume');
    }
    if (base.bytes.length + (snapshot === null ? 0 : snapshot.length) >= LONG_SNAPSHOT) {
      hash = hashAfter(base, snapshot);
      id = hash.copy().digest('hex');
      snapshot = appendBytes(base.bytes, snapshot);
    } else {
      snapshot = snapshot === null ? base.bytes : Buffer.concat([base.bytes, snapshot]);
    }
  } else if (snapshot !== null && snapshot.length >= LONG_SNAPSHOT) {
    hash = crypto.createHash('sha256').update(snapshot);
    id = hash.copy().digest('hex');
  }
  if (snapshot !== null && (id ?? sha256Hex(snapshot)) !== result.snapshot_id) {
    throw new MustardProcessError('the snapshot bytes the sidecar sent do not hash to its snapshot_id');
  }
  return {
    type: 'suspended',
    capability: step.capability,
    args: step.args,
    calls: Array.isArray(step.calls) ? step.calls : null,
    snapshotId: result.snapshot_id,
    policyId: result.policy_id,
    snapshot,
    snapshotHash: hash,
    home: client.id,
    logs,
  };
}

// start runs a program's first segment. s: { programId, program, inputs,
// capabilities, limits, hostCalls, console, entry, sealKey, delivery },
// all wire forms.
// Inputs and program bytes too large for a request are staged.
async function start(pool, s, signal) {
  const client = await pool.acquire();
  try {
    return await driveAsync(startOn(client, s, signal));
  } finally {
    pool.release(client);
  }
}

function startSync(client, s) {
  return driveSync(startOn(client, s, undefined));
}

function* startOn(client, s, signal) {
  const inputs = s.inputs ?? {};
  const inputsPart = jsonPart(inputs);
  const startWith = (program) => {
    const parts = [inputsPart];
    if (program) parts.push(rawPart(program));
    const build = (ids) => {
      const options = ids[0] !== null ? { inputs_stage_id: ids[0] } : { inputs };
      options.capabilities = s.capabilities;
      options.limits = s.limits;
      if (s.hostCalls === 'batch') options.host_calls = 'batch';
      if (s.console === 'collect') options.console = 'collect';
      if (s.entry === 'call') options.entry = 'call';
      if (s.sealKey) options.seal_key_base64 = s.sealKey;
      const fields = { program_id: s.programId, options };
      if (s.delivery === 'none') fields.snapshot_delivery = 'none';
      if (program && ids[1] !== null) return { fields: { ...fields, program_stage_id: ids[1] }, raw: null };
      return { fields, raw: program };
    };
    return send(client, 'start', parts, build, { signal, cancellable: true });
  };
  let answer;
  if (client.known.has(s.programId)) {
    try {
      answer = yield* startWith(null);
    } catch (error) {
      if (error.code !== 'unknown_program_id' && error.code !== 'evicted_program_id') throw error;
      client.known.delete(s.programId);
    }
  }
  if (answer === undefined) {
    answer = yield* startWith(s.program);
    client.known.add(s.programId);
  }
  return toStep(client, answer.result, answer.payload, null);
}

// resume answers a suspended step. r: { home, snapshotId, policyId,
// snapshot, policy: { capabilities, limits, hostCalls, console }, auth: { key,
// digest, token, sealKey }, payload | answers, delivery }. Answers and
// snapshot bytes too large for a request are staged.
async function resume(pool, r, signal) {
  const client = await pool.acquire(r.home ?? null);
  try {
    return await driveAsync(resumeOn(client, r, signal));
  } finally {
    pool.release(client);
  }
}

function resumeSync(client, r) {
  return driveSync(resumeOn(client, r, undefined));
}

function* resumeOn(client, r, signal) {
  const batch = r.answers !== undefined;
  const answerParts = batch ? r.answers.map((a) => jsonPart(a.payload)) : [jsonPart(r.payload)];
  // send sends the resume with fields, plus the answers (parts[0..n)) and
  // the snapshot bytes, if any (the last part), each inline or staged.
  const resumeWith = (fields, snapshot) => {
    const parts = snapshot ? [...answerParts, rawPart(snapshot)] : answerParts;
    const build = (ids) => {
      const out = { ...fields };
      if (batch) {
        out.answers = r.answers.map((a, i) =>
          ids[i] !== null ? { call_id: a.call_id, payload_stage_id: ids[i] } : { call_id: a.call_id, payload: a.payload },
        );
      } else if (ids[0] !== null) {
        out.payload_stage_id = ids[0];
      } else {
        out.payload = r.payload;
      }
      if (!snapshot) return { fields: out, raw: null };
      const at = answerParts.length;
      if (ids[at] !== null) return { fields: { ...out, stage_id: ids[at] }, raw: null };
      return { fields: out, raw: snapshot };
    };
    return send(client, 'resume', parts, build, { signal, cancellable: true });
  };
  const haveBytes = r.snapshot !== null && r.snapshot !== undefined;
  const delivery = r.delivery === 'none' ? 'none' : haveBytes ? 'delta' : 'full';
  const common = {};
  if (delivery !== 'full') common.snapshot_delivery = delivery;
  const base = { id: r.snapshotId, bytes: haveBytes ? r.snapshot : null, hash: haveBytes ? r.snapshotHash ?? null : null };
  if (client.id === r.home && typeof r.policyId === 'string') {
    const auth = {
      snapshot_key_base64: r.auth.key,
      snapshot_key_digest: r.auth.digest,
      snapshot_token: r.auth.token,
    };
    if (r.auth.sealKey) auth.seal_key_base64 = r.auth.sealKey;
    try {
      const answer = yield* resumeWith({ snapshot_id: r.snapshotId, policy_id: r.policyId, auth, ...common }, null);
      return toStep(client, answer.result, answer.payload, base);
    } catch (error) {
      const evicted = ['unknown_snapshot_id', 'unknown_policy_id', 'evicted_snapshot_id', 'evicted_policy_id'].includes(error.code);
      if (!evicted || !haveBytes) throw error;
    }
  }
  if (!haveBytes) {
    throw new MustardProcessError(
      'the process that held this execution is gone and its snapshot bytes were not kept (snapshotDelivery "none")',
    );
  }
  const policy = {
    capabilities: r.policy.capabilities,
    limits: r.policy.limits,
    snapshot_id: r.snapshotId,
    snapshot_key_base64: r.auth.key,
    snapshot_key_digest: r.auth.digest,
    snapshot_token: r.auth.token,
  };
  if (r.policy.hostCalls === 'batch') policy.host_calls = 'batch';
  if (r.policy.console === 'collect') policy.console = 'collect';
  if (r.auth.sealKey) policy.seal_key_base64 = r.auth.sealKey;
  const answer = yield* resumeWith({ policy, ...common }, r.snapshot);
  return toStep(client, answer.result, answer.payload, base);
}

module.exports = { compile, start, resume, compileSync, startSync, resumeSync, sha256Hex, toStep, portable };
