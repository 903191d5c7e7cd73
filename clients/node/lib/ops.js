'use strict';

// The protocol's steps over a SidecarPool, on plain data (so that they run
// alike on the main thread and on the helper thread behind the
// synchronous API): compile, start, resume. Snapshots and answers too
// large for one frame go through stage; resumes ask for delta delivery
// when the caller holds the bytes being resumed, and rebuild the full
// snapshot; a resume names the process that parked its execution and
// falls back to the raw form (bytes + full policy) anywhere else.

const crypto = require('node:crypto');

const { MustardProcessError, MustardSidecarError } = require('./errors.js');
const { RequestTooLargeError } = require('./wire.js');

const STAGE_CHUNK = 960 * 1024;
let nextStage = 0;

function sha256Hex(bytes) {
  return crypto.createHash('sha256').update(bytes).digest('hex');
}

// stage uploads bytes to the process in chunks and returns the stage id.
async function stage(client, bytes) {
  nextStage += 1;
  const id = `node-${process.pid}-${nextStage}`;
  let offset = 0;
  do {
    const chunk = bytes.subarray(offset, offset + STAGE_CHUNK);
    await client.request('stage', { stage_id: id, offset }, chunk);
    offset += chunk.length;
  } while (offset < bytes.length);
  return id;
}

// send sends a request; a resume over the frame limit has its snapshot
// bytes staged first. (Answers, inputs and sources must fit in a frame.)
async function send(client, method, fields, raw, opts) {
  try {
    return await client.request(method, fields, raw, opts);
  } catch (error) {
    if (!(error instanceof RequestTooLargeError)) throw error;
  }
  fields = { ...fields };
  if (raw && raw.length > 0) {
    if (method === 'resume') {
      fields.stage_id = await stage(client, raw);
      raw = null;
    } else if (method === 'start') {
      // Program bytes are the source in a CBOR array: compile it by staged
      // source instead.
      throw new MustardSidecarError('program too large to start: compile it on this process first');
    }
    try {
      return await client.request(method, fields, raw, opts);
    } catch (error) {
      if (!(error instanceof RequestTooLargeError)) throw error;
    }
  }
  return client.request(method, fields, raw, opts);
}

async function compile(pool, source) {
  if (typeof source !== 'string') throw new TypeError('program source must be a string');
  const client = await pool.acquire();
  try {
    const { result, payload } = await send(client, 'compile', { source }, null);
    if (!result || result.kind !== 'program' || typeof result.program_id !== 'string') {
      throw new MustardProcessError('the sidecar answered compile with something other than a program');
    }
    client.known.add(result.program_id);
    return { programId: result.program_id, program: Buffer.from(payload) };
  } finally {
    pool.release(client);
  }
}

// toStep turns a step result into plain data. base is the snapshot
// resumed ({ id, bytes }), to which a delta is appended.
function toStep(client, result, payload, base) {
  if (!result || result.kind !== 'step' || !result.step) {
    throw new MustardProcessError('the sidecar answered a step request with something other than a step');
  }
  const step = result.step;
  if (step.type === 'completed') return { type: 'completed', value: step.value };
  if (step.type !== 'suspended') throw new MustardProcessError(`the sidecar sent an unknown step type ${JSON.stringify(step.type)}`);
  let snapshot = payload && payload.length > 0 ? Buffer.from(payload) : null;
  if (typeof result.snapshot_base_id === 'string') {
    if (!base || !base.bytes || base.id !== result.snapshot_base_id) {
      throw new MustardProcessError('the sidecar sent a snapshot delta for a snapshot this host did not resume');
    }
    snapshot = Buffer.concat([base.bytes, snapshot || Buffer.alloc(0)]);
  }
  if (snapshot !== null && sha256Hex(snapshot) !== result.snapshot_id) {
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
    home: client.id,
  };
}

// start runs a program's first segment. s: { programId, program, inputs,
// capabilities, limits, hostCalls, sealKey, delivery }, all wire forms.
async function start(pool, s, signal) {
  const client = await pool.acquire();
  try {
    const options = { inputs: s.inputs, capabilities: s.capabilities, limits: s.limits };
    if (s.hostCalls === 'batch') options.host_calls = 'batch';
    if (s.sealKey) options.seal_key_base64 = s.sealKey;
    const fields = { program_id: s.programId, options };
    if (s.delivery === 'none') fields.snapshot_delivery = 'none';
    const opts = { signal, cancellable: true };
    let answer;
    if (client.known.has(s.programId)) {
      try {
        answer = await send(client, 'start', fields, null, opts);
      } catch (error) {
        if (error.code !== 'unknown_program_id') throw error;
        client.known.delete(s.programId);
      }
    }
    if (answer === undefined) {
      answer = await send(client, 'start', fields, s.program, opts);
      client.known.add(s.programId);
    }
    return toStep(client, answer.result, answer.payload, null);
  } finally {
    pool.release(client);
  }
}

// resume answers a suspended step. r: { home, snapshotId, policyId,
// snapshot, policy: { capabilities, limits, hostCalls }, auth: { key,
// digest, token, sealKey }, payload | answers, delivery }.
async function resume(pool, r, signal) {
  const client = await pool.acquire(r.home ?? null);
  try {
    const haveBytes = r.snapshot !== null && r.snapshot !== undefined;
    const delivery = r.delivery === 'none' ? 'none' : haveBytes ? 'delta' : 'full';
    const common = {};
    if (r.answers !== undefined) common.answers = r.answers;
    else common.payload = r.payload;
    if (delivery !== 'full') common.snapshot_delivery = delivery;
    const base = { id: r.snapshotId, bytes: haveBytes ? r.snapshot : null };
    const opts = { signal, cancellable: true };
    if (client.id === r.home && typeof r.policyId === 'string') {
      const auth = {
        snapshot_key_base64: r.auth.key,
        snapshot_key_digest: r.auth.digest,
        snapshot_token: r.auth.token,
      };
      if (r.auth.sealKey) auth.seal_key_base64 = r.auth.sealKey;
      try {
        const answer = await send(client, 'resume', { snapshot_id: r.snapshotId, policy_id: r.policyId, auth, ...common }, null, opts);
        return toStep(client, answer.result, answer.payload, base);
      } catch (error) {
        const evicted = error.code === 'unknown_snapshot_id' || error.code === 'unknown_policy_id';
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
    if (r.auth.sealKey) policy.seal_key_base64 = r.auth.sealKey;
    const answer = await send(client, 'resume', { policy, ...common }, r.snapshot, opts);
    return toStep(client, answer.result, answer.payload, base);
  } finally {
    pool.release(client);
  }
}

module.exports = { compile, start, resume, stage, sha256Hex };
