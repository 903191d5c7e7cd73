'use strict';
// Runs the differential corpus (bench/diffrun/testdata/programs.json) on the
// reference implementation, the mustardscript package installed in
// bench/peer, and writes one JSON array to stdout: per program, the
// capability calls it made (capability and arguments, as StructuredValue
// JSON) and its result, a value or an error's kind and message.
//
//     node bench/peer/diffrun/reference.js [programs.json]
//
// bench/cmd/diffrun runs it and compares with the sidecar. The host answers
// as the Go side does (bench/diffrun: Answerer): the next recorded answer
// when its capability is the one called (or it names none), otherwise the
// call's first argument (undefined when there is none).
const fs = require('fs');
const path = require('path');
const { encode, decode, decodeError } = require('./sv.js');

const PEER = path.join(__dirname, '..', 'node_modules', 'mustardscript');
let api;
try {
  api = require(PEER);
} catch (e) {
  process.stderr.write(`cannot load mustardscript from bench/peer: ${e.message}\ninstall it: (cd bench/peer && npm install --no-save --package-lock=false)\n`);
  process.exit(2);
}
const { Mustard, Progress, MustardError } = api;
const version = JSON.parse(fs.readFileSync(path.join(PEER, 'package.json'), 'utf8')).version;

const MAX_CALLS = 1000;
const KEY = Buffer.from('diffrun-reference-snapshot-key-0');
const LIMIT_NAMES = {
  instruction_budget: 'instructionBudget',
  heap_limit_bytes: 'heapLimitBytes',
  allocation_budget: 'allocationBudget',
  call_depth_limit: 'callDepthLimit',
  max_outstanding_host_calls: 'maxOutstandingHostCalls',
};

function answerer(answers) {
  let k = 0;
  return (capability, args) => {
    const a = answers[k];
    if (a && (a.capability === '' || a.capability === capability)) {
      k++;
      if (a.error) return { error: a.error };
      if (a.cancel) return { cancel: true };
      return { value: decode(a.value) };
    }
    return { value: args[0] };
  };
}

// The reference renders errors as "<message> [start..end]\n  at ...".
function errorOf(e) {
  if (e instanceof MustardError) {
    const first = String(e.message).split('\n')[0].replace(/ \[\d+\.\.\d+\]$/, '');
    return { kind: e.kind, message: first };
  }
  return { kind: 'Host', message: `${(e && e.name) || 'Error'}: ${(e && e.message) || e}` };
}

function runOne(p) {
  const calls = [];
  const limits = {};
  for (const [k, v] of Object.entries(p.limits || {})) if (LIMIT_NAMES[k]) limits[LIMIT_NAMES[k]] = v;
  const inputs = Object.fromEntries(Object.entries(p.inputs || {}).map(([k, v]) => [k, decode(v)]));
  const capabilities = Object.fromEntries((p.capabilities || []).map((n) => [n, () => undefined]));
  const host = answerer(p.answers || []);
  try {
    const m = new Mustard(p.source, { inputs: Object.keys(inputs) });
    let s = m.start({ inputs, capabilities, limits, snapshotKey: KEY });
    while (s instanceof Progress) {
      if (calls.length >= MAX_CALLS) return { calls, result: { error: { kind: 'Host', message: `more than ${MAX_CALLS} calls` } } };
      let args;
      try {
        args = encode(s.args).Array;
      } catch (e) {
        args = [{ String: `<${e.message}>` }];
      }
      calls.push({ capability: s.capability, args });
      const a = host(s.capability, s.args);
      if (a.cancel) s = s.cancel();
      else if (a.error) s = s.resumeError(decodeError(a.error));
      else s = s.resume(a.value);
    }
    try {
      return { calls, result: { value: encode(s) } };
    } catch (e) {
      return { calls, result: { error: { kind: 'Host', message: `result: ${e.message}` } } };
    }
  } catch (e) {
    return { calls, result: { error: errorOf(e) } };
  }
}

function main() {
  const file = process.argv[2] || path.join(__dirname, '..', '..', 'diffrun', 'testdata', 'programs.json');
  const corpus = JSON.parse(fs.readFileSync(file, 'utf8'));
  const out = [];
  for (const p of corpus.programs) {
    const t0 = process.hrtime.bigint();
    const r = runOne(p);
    out.push({ id: p.id, ...r, ns: Number(process.hrtime.bigint() - t0) });
  }
  process.stdout.write(JSON.stringify({ mustardscript: version, node: process.version, results: out }) + '\n');
}

main();
