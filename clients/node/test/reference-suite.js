'use strict';

// Runs the reference implementation's own Node test files (mustardscript
// 0.2.1, tests/node/*.test.js, from the tarball in test/reference) against
// this package, and its type test (tests/types/public-api.test.ts) against
// this package's declarations.
//
// The test files import the reference's package as `../../index.ts`; here
// they run in a temporary tree whose `index.ts` re-exports this package (a
// CommonJS file with an unknown extension loads as JavaScript). The
// reference's sidecar tests run against this project's sidecar, which
// speaks the same protocol (see below). The rest of the reference's
// internal modules (its native binding loader, the parts of its snapshot
// policy and boundary codec this package has no counterpart for) have
// shims that throw, and the tests that use them are listed as `internal`.
//
// test/reference/expected-failures.json lists every test expected to fail,
// each with its category and reason. The run fails when a test outside that
// list fails, or a listed test passes (unless it is marked flaky). Usage:
//
//   node test/reference-suite.js [--json FILE] [--only NAME.test.js ...]
//   node test/reference-suite.js --types-only   (the type test alone; npm test)
//
// The sidecar binary: $MUSTARD_SIDECAR_BIN, or built here with `go build`.
// $MUSTARDSCRIPT_REFERENCE=<dir of the installed mustardscript package> runs
// the same files against the reference itself instead (to check the list's
// `reference` entries); no list is checked then.

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const pkg = path.join(__dirname, '..');
const repo = path.join(pkg, '..', '..');
const dataDir = path.join(__dirname, 'reference');
const tarball = path.join(dataDir, 'mustardscript-0.2.1-tests.tar.gz');
const listFile = path.join(dataDir, 'expected-failures.json');

const args = process.argv.slice(2);
let jsonOut = null;
let typesOnly = false;
const only = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--json') jsonOut = args[++i];
  else if (args[i] === '--only') only.push(args[++i]);
  else if (args[i] === '--types-only') typesOnly = true;
  else {
    console.error(`unknown argument ${args[i]}`);
    process.exit(2);
  }
}
const referenceDir = process.env.MUSTARDSCRIPT_REFERENCE || null;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mustard-reference-suite-'));
function cleanup() {
  fs.rmSync(tmp, { recursive: true, force: true });
}

function fail(message) {
  console.error(message);
  cleanup();
  process.exit(1);
}

const env = { ...process.env };
if (!referenceDir && !typesOnly && !env.MUSTARD_SIDECAR_BIN) {
  env.MUSTARD_SIDECAR_BIN = path.join(tmp, 'mustard-sidecar');
  const built = spawnSync('go', ['build', '-o', env.MUSTARD_SIDECAR_BIN, './cmd/mustard-sidecar'], { cwd: repo, stdio: 'inherit' });
  if (built.status !== 0) fail('building the sidecar failed');
}

// The reference's tree: its tests, benchmarks, scripts, examples and docs.
const untar = spawnSync('tar', ['-xzf', tarball, '-C', tmp], { stdio: 'inherit' });
if (untar.status !== 0) fail('extracting the reference tests failed');
const root = path.join(tmp, 'mustardscript');

function shim(rel, body) {
  const file = path.join(root, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `'use strict';\n${body}\n`);
}
// An internal module's shim loads, so that a test file requiring it at the
// top runs its other tests; any function taken from it throws when called.
function internal(rel, body = '') {
  const message = `${rel} is an internal module of the reference implementation, with no counterpart in this package`;
  shim(
    rel,
    `const own = {};\n${body}\nmodule.exports = new Proxy(own, { get(t, k) { if (k in t || typeof k === 'symbol' || k === 'then' || k === '__esModule') return t[k]; return () => { throw new Error(${JSON.stringify(message)}); }; } });`,
  );
}
if (referenceDir) {
  const dist = path.join(path.resolve(referenceDir), 'dist');
  shim('index.ts', `module.exports = require(${JSON.stringify(path.join(dist, 'index.js'))});`);
  shim('lib/structured.ts', `module.exports = require(${JSON.stringify(path.join(dist, 'lib', 'structured.js'))});`);
  shim('lib/policy.ts', `module.exports = require(${JSON.stringify(path.join(dist, 'lib', 'policy.js'))});`);
  shim('native-loader.ts', `module.exports = require(${JSON.stringify(path.join(dist, 'native-loader.js'))});`);
} else {
  shim('index.ts', `module.exports = require(${JSON.stringify(pkg)});`);
  internal('native-loader.ts');
  // The reference's public formulas for a dump's program_id and
  // snapshot_key_digest, and for a token over a snapshot id; this package
  // signs dumps with the same ones. (The reference's snapshotToken without
  // an id asks its native binding for the snapshot's identity; here it is
  // the sidecar's, the digest of the bytes.)
  internal(
    'lib/policy.ts',
    [
      "const crypto = require('node:crypto');",
      "own.programIdentity = (program) => crypto.createHash('sha256').update(Buffer.from(program)).digest('hex');",
      "own.snapshotKeyDigest = (key) => crypto.createHash('sha256').update(key).digest('hex');",
      'own.snapshotToken = (snapshot, key, id) => {',
      // A snapshot's id is the SHA-256 of its bytes (docs/protocol.md).
      "  if (id === undefined) id = crypto.createHash('sha256').update(Buffer.from(snapshot)).digest('hex');",
      "  return crypto.createHmac('sha256', key).update(id, 'utf8').digest('hex');",
      '};',
    ].join('\n'),
  );
}
// The reference's sidecar tests (sidecar-equivalence, durable-ptc-equivalence,
// sidecar-profile) build its Rust sidecar with `cargo build -p mustard-sidecar`
// and run `target/debug/mustard-sidecar` over the binary protocol. Here that
// sidecar is this project's: `target/debug/mustard-sidecar` is the binary
// under test, `cargo` on the tests' PATH is a stand-in that only accepts that
// build command (the binary is already built), and the reference's frame
// client and structured encoders are this package's, behind the reference's
// function names.
if (referenceDir) {
  internal('lib/sidecar.ts');
} else {
  const wire = path.join(pkg, 'lib', 'wire.js');
  const structured = path.join(pkg, 'lib', 'structured.js');
  shim(
    'lib/sidecar.ts',
    [
      "const { performance } = require('node:perf_hooks');",
      `const { encodeFrame, FrameReader, DEFAULT_MAX_RESPONSE_BYTES } = require(${JSON.stringify(wire)});`,
      'function createBinarySidecarClient(child) {',
      '  const reader = new FrameReader(DEFAULT_MAX_RESPONSE_BYTES);',
      '  const ready = [];',
      '  const waiters = [];',
      '  let ended = null;',
      '  function settle() {',
      '    while (waiters.length && ready.length) waiters.shift().resolve(ready.shift());',
      '    while (waiters.length && ended) waiters.shift().reject(ended);',
      '  }',
      "  child.stdout.on('data', (chunk) => {",
      '    for (const f of reader.push(chunk)) {',
      '      const decodeStarted = performance.now();',
      "      const payload = JSON.parse(f.header.toString('utf8'));",
      '      ready.push({ payload, blob: Buffer.from(f.payload), responseDecodeMs: performance.now() - decodeStarted });',
      '    }',
      '    settle();',
      '  });',
      "  const end = () => { ended = ended || new Error('sidecar closed before a full frame was read'); settle(); };",
      "  child.stdout.on('end', end);",
      "  child.stdout.on('close', end);",
      '  return {',
      '    async request(payload, blob = undefined) {',
      '      const roundTripStarted = performance.now();',
      '      child.stdin.write(encodeFrame(payload, blob === undefined || blob === null ? undefined : Buffer.from(blob)));',
      '      const response = await new Promise((resolve, reject) => { waiters.push({ resolve, reject }); settle(); });',
      '      response.roundTripMs = performance.now() - roundTripStarted;',
      '      return response;',
      '    },',
      '  };',
      '}',
      'module.exports = { createBinarySidecarClient };',
    ].join('\n'),
  );
  internal(
    'lib/structured.ts',
    [
      `const s = require(${JSON.stringify(structured)});`,
      'own.encodeStructured = (v) => s.encode(v);',
      'own.decodeStructured = (v) => s.decode(v);',
      'own.encodeStructuredInputs = (inputs) => JSON.stringify(s.encodeInputs(inputs));',
      "own.encodeResumePayloadValue = (v) => JSON.stringify({ type: 'value', value: s.encode(v) });",
      'own.encodeResumePayloadError = (e) => JSON.stringify(s.encodeError(e));',
    ].join('\n'),
  );
}
if (!referenceDir && !typesOnly) {
  const bin = path.join(root, 'target', 'debug');
  fs.mkdirSync(bin, { recursive: true });
  fs.symlinkSync(path.resolve(env.MUSTARD_SIDECAR_BIN), path.join(bin, 'mustard-sidecar'));
  const stand = path.join(tmp, 'bin');
  fs.mkdirSync(stand);
  fs.writeFileSync(
    path.join(stand, 'cargo'),
    '#!/bin/sh\n# The sidecar under test is already built; only its build command is accepted.\n' +
      '[ "$*" = "build -q -p mustard-sidecar" ] && exit 0\necho "cargo stand-in: unexpected cargo $*" >&2\nexit 1\n',
    { mode: 0o755 },
  );
  env.PATH = `${stand}${path.delimiter}${env.PATH}`;
}
const modules = path.join(root, 'node_modules');
fs.mkdirSync(modules, { recursive: true });
for (const dep of ['fast-check', 'pure-rand']) {
  const from = path.join(pkg, 'node_modules', dep);
  if (!fs.existsSync(from)) fail(`${dep} is missing: run npm ci in clients/node first`);
  fs.symlinkSync(from, path.join(modules, dep), 'dir');
}

const testDir = path.join(root, 'tests', 'node');
let files = fs.readdirSync(testDir).filter((f) => f.endsWith('.test.js')).sort();
if (only.length) files = files.filter((f) => only.includes(f));

// One node --test per file, two at a time; each reports one JSON line per
// test through the reporter. A file that hangs is ended after ten minutes.
function runFile(file) {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--test', `--test-reporter=${path.join(dataDir, 'reporter.mjs')}`, path.join(testDir, file)],
      { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10 * 60 * 1000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const results = [];
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        const r = JSON.parse(line);
        // A file that fails to load reports one failure named after its path.
        const name = r.name === r.file || r.name === path.join(testDir, file) ? '(file)' : r.name;
        results.push({ file, name, ok: r.ok, error: r.error });
      }
      if (results.length === 0) results.push({ file, name: '(file)', ok: false, error: `exit ${code} ${signal || ''}\n${err.slice(-2000)}` });
      resolve(results);
    });
  });
}

// The type test: the reference's tests/types/public-api.test.ts compiled
// under tsc --strict with `mustardscript` resolved to this package.
function typeTest() {
  const dir = path.join(root, 'tests', 'types');
  const mod = path.join(dir, 'node_modules', 'mustardscript');
  fs.mkdirSync(path.dirname(mod), { recursive: true });
  fs.symlinkSync(referenceDir ? path.resolve(referenceDir) : pkg, mod, 'dir');
  const typesNode = path.join(pkg, 'node_modules', '@types');
  fs.symlinkSync(typesNode, path.join(dir, 'node_modules', '@types'), 'dir');
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: 'es2022', module: 'commonjs', moduleResolution: 'node', types: ['node'], skipLibCheck: false },
      files: ['public-api.test.ts'],
    }),
  );
  const tsc = path.join(pkg, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' });
  const out = (r.stdout || '') + (r.stderr || '');
  const errors = (out.match(/error TS\d+/g) || []).length;
  return { ok: r.status === 0, errors, out };
}

(async () => {
  if (typesOnly) {
    const types = typeTest();
    cleanup();
    console.log(`reference type test (tests/types/public-api.test.ts, tsc --strict): ${types.errors} errors`);
    if (!types.ok) console.log(types.out);
    process.exit(types.ok ? 0 : 1);
  }
  const results = [];
  let next = 0;
  async function worker() {
    while (next < files.length) {
      const file = files[next++];
      results.push(...(await runFile(file)));
    }
  }
  await Promise.all([worker(), worker()]);
  const types = only.length ? null : typeTest();
  cleanup();

  results.sort((a, b) => (a.file === b.file ? (a.name < b.name ? -1 : 1) : a.file < b.file ? -1 : 1));
  if (jsonOut) fs.writeFileSync(jsonOut, JSON.stringify(results, null, 1));

  const passed = results.filter((r) => r.ok);
  const failed = results.filter((r) => !r.ok);
  if (referenceDir) {
    console.log(`reference itself: ${passed.length} passed, ${failed.length} failed of ${results.length}`);
    for (const r of failed) console.log(`  fail ${r.file} :: ${r.name}`);
    if (types) console.log(`type test: ${types.errors} errors`);
    return;
  }

  const list = JSON.parse(fs.readFileSync(listFile, 'utf8'));
  const listed = new Map();
  for (const e of list.tests) listed.set(`${e.file} :: ${e.test}`, e);
  const seen = new Set(results.map((r) => `${r.file} :: ${r.name}`));
  const unlisted = failed.filter((r) => !listed.has(`${r.file} :: ${r.name}`));
  // An entry marked flaky may pass or fail (its reason says why).
  const nowPassing = passed.filter((r) => listed.has(`${r.file} :: ${r.name}`) && !listed.get(`${r.file} :: ${r.name}`).flaky);
  const listedFailing = failed.filter((r) => listed.has(`${r.file} :: ${r.name}`));
  const byCategory = {};
  for (const r of listedFailing) {
    const c = listed.get(`${r.file} :: ${r.name}`).category;
    byCategory[c] = (byCategory[c] || 0) + 1;
  }
  const stale = only.length ? [] : [...listed.keys()].filter((k) => !seen.has(k));

  for (const r of unlisted) {
    console.log(`UNLISTED FAILURE ${r.file} :: ${r.name}`);
    if (r.error) console.log(`  ${r.error.split('\n').slice(0, 6).join('\n  ')}`);
  }
  for (const r of nowPassing) console.log(`LISTED BUT PASSES ${r.file} :: ${r.name}`);
  for (const k of stale) console.log(`LISTED BUT NOT RUN ${k}`);
  const cats = Object.entries(byCategory).map(([c, n]) => `${c} ${n}`).join(', ');
  console.log(
    `reference suite (mustardscript 0.2.1 tests/node): ${passed.length} passed, ${listedFailing.length} listed (${cats}), ` +
      `${unlisted.length} unlisted failures, ${nowPassing.length} listed but passing, of ${results.length}`,
  );
  let bad = unlisted.length + nowPassing.length + stale.length;
  if (types) {
    console.log(`reference type test (tests/types/public-api.test.ts, tsc --strict): ${types.errors} errors`);
    if (!types.ok) {
      console.log(types.out);
      bad++;
    }
  }
  process.exit(bad ? 1 : 0);
})();
