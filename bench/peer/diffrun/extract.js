'use strict';
// Extracts the guest programs of the reference implementation's test suites
// into bench/diffrun/testdata/programs.json, the corpus the differential
// runner (bench/cmd/diffrun) runs on the reference and on the sidecar.
//
//     (cd bench/peer && npm install --no-save --package-lock=false)
//     node bench/peer/diffrun/extract.js --git <mustardscript bare repo or checkout> [--rev HEAD]
//
// Sources, and how each is read:
//   - Node tests (tests/**/*.test.js): each file is run by Node with
//     hook.js preloaded, so its require of the reference's entry point gets
//     the npm package (bench/peer) wrapped to record every program the tests
//     compile and every execution they run, with the inputs, the policy and
//     the answers their hosts gave, in order. A test's own pass or fail does
//     not matter. A program the tests compile but never run is kept and run
//     without capabilities.
//   - Rust tests (crates/*/tests/*.rs, crates/*/src/**/*tests*.rs):
//     heuristic. A string literal (plain or raw) that is the first argument
//     of a call to one of RUST_CALLS is a program; its test function's
//     `capabilities` lists and limit fields are its policy; its host answers
//     are not read (the runner's default host answers).
//   - tests/test262/cases/**: each file is a program.
//   - tests/shared/equivalence-corpus.json: programs with their answers.
//
// Duplicates (same source, inputs, policy and answers) are kept once. The
// per-file counts of programs found, kept and skipped (with the reason) go
// into programs.json and are printed.
const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const HERE = __dirname;
const REPO = path.resolve(HERE, '..', '..', '..');
const OUT = path.join(REPO, 'bench', 'diffrun', 'testdata', 'programs.json');
const FILE_TIMEOUT_MS = 180000;

const RUST_CALLS = new Set([
  'compile',
  'compile_with_options',
  'compile_to_bytecode',
  'compile_program_bytes',
  'run',
  'run_with_metrics',
  'suspend',
  'suspend_async_host_wait',
  'serialized_suspension',
  'assert_validation_reject',
]);

// Executions past this many in one test (generated inputs, fuzzing loops)
// are left out.
const MAX_PER_TEST = 25;

// Programs whose inputs and answers together are longer than this (as
// StructuredValue JSON) test the boundary's size limits; they are left out
// to keep the corpus small.
const MAX_DATA_CHARS = 200000;

function args() {
  const a = process.argv.slice(2);
  const get = (k, d) => {
    const i = a.indexOf(k);
    return i >= 0 ? a[i + 1] : d;
  };
  return { git: get('--git', null), rev: get('--rev', 'HEAD'), out: get('--out', OUT), only: get('--only', null) };
}

function git(gitDir, ...rest) {
  const isBare = !fs.existsSync(path.join(gitDir, '.git'));
  const base = isBare ? ['--git-dir', gitDir] : ['-C', gitDir];
  return childProcess.execFileSync('git', [...base, ...rest], { maxBuffer: 1 << 30 });
}

// ---------------------------------------------------------------------------
// Rust.

function unescapeRust(s) {
  return s.replace(/\\(\r?\n\s*|u\{([0-9a-fA-F]+)\}|x([0-9a-fA-F]{2})|.)/g, (m, c, u, x) => {
    if (u) return String.fromCodePoint(parseInt(u, 16));
    if (x) return String.fromCharCode(parseInt(x, 16));
    if (/^\r?\n/.test(c)) return '';
    return { n: '\n', t: '\t', r: '\r', 0: '\0', '\\': '\\', '"': '"', "'": "'" }[c] ?? m;
  });
}

// The string literal starting at s[i] (plain, raw r"..", r#".."#), or null.
function rustString(s, i) {
  const raw = /^r(#*)"/.exec(s.slice(i, i + 20));
  if (raw) {
    const close = '"' + raw[1];
    const start = i + raw[0].length;
    const end = s.indexOf(close, start);
    if (end < 0) return null;
    return { value: s.slice(start, end), end: end + close.length };
  }
  if (s[i] !== '"') return null;
  let j = i + 1;
  while (j < s.length && s[j] !== '"') j += s[j] === '\\' ? 2 : 1;
  return { value: unescapeRust(s.slice(i + 1, j)), end: j + 1 };
}

function rustTests(text) {
  // Test functions: from each #[test] (or #[tokio::test]) to the next.
  const out = [];
  const re = /#\[(?:tokio::)?test[^\]]*\]\s*(?:#\[[^\]]*\]\s*)*(?:async\s+)?fn\s+([A-Za-z0-9_]+)/g;
  const starts = [];
  let m;
  while ((m = re.exec(text))) starts.push({ name: m[1], at: m.index });
  starts.forEach((t, k) => out.push({ name: t.name, body: text.slice(t.at, k + 1 < starts.length ? starts[k + 1].at : text.length) }));
  return out;
}

function rustPolicy(body) {
  const caps = new Set();
  for (const m of body.matchAll(/capabilities\s*:\s*vec!\[([^\]]*)\]/g)) for (const q of m[1].matchAll(/"([^"]+)"/g)) caps.add(q[1]);
  for (const m of body.matchAll(/&\[((?:\s*"[A-Za-z_$][\w$.]*"\s*,?)+)\]/g)) for (const q of m[1].matchAll(/"([^"]+)"/g)) caps.add(q[1]);
  const limits = {};
  for (const k of ['instruction_budget', 'heap_limit_bytes', 'allocation_budget', 'call_depth_limit', 'max_outstanding_host_calls']) {
    const m = new RegExp(`\\b${k}\\s*:\\s*(?:Some\\()?([0-9][0-9_]*)`).exec(body);
    if (m) limits[k] = Number(m[1].replace(/_/g, ''));
  }
  return { capabilities: [...caps], limits };
}

function extractRust(file, text, stats) {
  const out = [];
  // Programs held in constants: const NAME: &str = <literal>;
  const consts = new Map();
  for (const m of text.matchAll(/const\s+([A-Z][A-Z0-9_]*)\s*:\s*&(?:'static\s+)?str\s*=\s*/g)) {
    const lit = rustString(text, m.index + m[0].length);
    if (lit) consts.set(m[1], lit.value);
  }
  for (const t of rustTests(text)) {
    const body = t.body;
    const re = /\b([a-z_][a-z0-9_]*)\s*\(\s*/g;
    let m;
    let found = false;
    const policy = rustPolicy(body);
    while ((m = re.exec(body))) {
      if (!RUST_CALLS.has(m[1])) continue;
      let lit = rustString(body, m.index + m[0].length);
      if (!lit) {
        const c = /^([A-Z][A-Z0-9_]*)\s*[,)]/.exec(body.slice(m.index + m[0].length));
        if (!c || !consts.has(c[1])) continue;
        lit = { value: consts.get(c[1]), end: m.index + m[0].length + c[0].length };
      }
      stats.found++;
      found = true;
      if (m[1] === 'compile_with_options' && /lenient_mode\s*:\s*true/.test(body.slice(lit.end, lit.end + 200))) {
        skip(stats, 'lenient mode (a compile option of the reference only)');
        continue;
      }
      if (/inputs\s*:\s*(?!Default|IndexMap::new\(\)|BTreeMap::new\(\)|HashMap::new\(\))/.test(body) && /\binputs\.insert|\binputs\s*:\s*[a-z_]+\(/.test(body)) {
        skip(stats, 'inputs built in Rust (not extracted)');
        continue;
      }
      out.push({ file, test: t.name, origin: 'rust', how: m[1], source: lit.value, inputs: {}, ...policy, answers: [] });
    }
    if (!found && /compile\(|start\(|execute\(/.test(body)) stats.noLiteral = (stats.noLiteral || 0) + 1;
  }
  return out;
}

function skip(stats, reason) {
  stats.skipped[reason] = (stats.skipped[reason] || 0) + 1;
}

// ---------------------------------------------------------------------------
// Node tests.

function extractNode(root, file, stats) {
  const outFile = path.join(os.tmpdir(), `diffrun-${process.pid}-${path.basename(file)}.json`);
  fs.rmSync(outFile, { force: true });
  const r = childProcess.spawnSync(process.execPath, ['-r', path.join(HERE, 'hook.js'), path.join(root, file)], {
    cwd: root,
    env: { ...process.env, DIFFRUN_OUT: outFile, DIFFRUN_ROOT: root, DIFFRUN_FILE: file, NODE_OPTIONS: '' },
    timeout: FILE_TIMEOUT_MS,
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  if (!fs.existsSync(outFile)) {
    const why = r.error ? r.error.message : (r.stderr || '').split('\n').find((l) => /Error/.test(l)) || `exit ${r.status}`;
    skip(stats, `file did not run: ${why.trim().slice(0, 120)}`);
    return [];
  }
  const rec = JSON.parse(fs.readFileSync(outFile, 'utf8'));
  fs.rmSync(outFile, { force: true });
  if (r.error) stats.note = `stopped after ${FILE_TIMEOUT_MS / 1000}s; the programs recorded until then are kept`;
  const out = [];
  const ran = new Set(rec.execs.map((e) => e.program));
  rec.programs.forEach((p, i) => {
    if (ran.has(i)) return;
    stats.found++;
    if (p.lenient) return skip(stats, 'lenient mode (a compile option of the reference only)');
    out.push({ file, test: p.test, origin: 'node', how: p.compileError ? 'compile' : 'compile-only', source: p.source, inputs: {}, capabilities: [], limits: {}, answers: [] });
  });
  const perTest = new Map();
  for (const e of rec.execs) {
    stats.found++;
    const p = rec.programs[e.program];
    const n = (perTest.get(e.test) || 0) + 1;
    perTest.set(e.test, n);
    if (n > MAX_PER_TEST) {
      skip(stats, `past ${MAX_PER_TEST} executions in one test (generated inputs)`);
      continue;
    }
    if (p.lenient) {
      skip(stats, 'lenient mode (a compile option of the reference only)');
      continue;
    }
    if (e.inputsError) {
      skip(stats, 'an input the test passes cannot be encoded (it tests the boundary)');
      continue;
    }
    if (e.policyError) {
      skip(stats, 'the test passes options the reference refuses');
      continue;
    }
    const bad = e.answers.find((a) => a.valueError || a.pending);
    if (bad) {
      skip(stats, bad.pending ? 'an answer never settled (cancellation tests)' : 'an answer cannot be encoded (it tests the boundary)');
      continue;
    }
    const answers = e.answers.map((a) => {
      const o = { capability: a.capability };
      if (a.error) o.error = a.error;
      else if (a.cancel) o.cancel = true;
      else o.value = a.value;
      return o;
    });
    out.push({ file, test: e.test, origin: 'node', how: e.how, source: p.source, inputs: e.inputs, capabilities: e.capabilities, limits: e.limits, answers });
  }
  return out;
}

// ---------------------------------------------------------------------------
// The gallery: bench/peer/peer.js records each catalog program with the
// catalog's tools (the same recording the bench's gallery workloads use).

function extractGallery(dir, stats) {
  const { encode } = require('./sv.js');
  const r = childProcess.spawnSync(process.execPath, [path.join(HERE, '..', 'peer.js')], {
    input: JSON.stringify({ cmd: 'record', dir }) + '\n',
    encoding: 'utf8',
    timeout: FILE_TIMEOUT_MS,
    maxBuffer: 1 << 28,
  });
  const line = (r.stdout || '').split('\n')[0];
  let reply;
  try {
    reply = JSON.parse(line);
  } catch {
    skip(stats, `the gallery did not record: ${(r.stderr || '').trim().slice(0, 120)}`);
    return [];
  }
  if (reply.error) {
    skip(stats, `the gallery did not record: ${reply.error}`);
    return [];
  }
  for (const s of reply.skipped) {
    stats.found++;
    skip(stats, 'the reference cannot record it with its catalog tools');
  }
  return reply.workloads.map((w) => {
    stats.found++;
    return {
      file: `${path.relative(path.dirname(path.dirname(dir)), dir)}/${w.name}.js`,
      test: w.name,
      origin: 'gallery',
      how: 'gallery',
      source: w.source,
      inputs: Object.fromEntries(Object.entries(w.inputs).map(([k, v]) => [k, encode(v)])),
      capabilities: w.capabilities,
      limits: {},
      answers: w.calls.map((c) => (c.error ? { capability: c.capability, error: c.error } : { capability: c.capability, value: encode(c.answer) })),
    };
  });
}

// ---------------------------------------------------------------------------

function main() {
  const a = args();
  if (!a.git) {
    console.error('usage: node bench/peer/diffrun/extract.js --git <mustardscript repository> [--rev HEAD]');
    process.exit(2);
  }
  const commit = git(a.git, 'rev-parse', a.rev).toString().trim();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'diffrun-ref-'));
  try {
    childProcess.execSync(`git ${fs.existsSync(path.join(a.git, '.git')) ? '-C' : '--git-dir'} ${JSON.stringify(a.git)} archive ${commit} | tar -x -C ${JSON.stringify(root)}`);
    const files = git(a.git, 'ls-tree', '-r', '--name-only', commit).toString().split('\n').filter(Boolean);
    const stats = [];
    let all = [];
    const add = (file, origin, fn) => {
      if (a.only && !file.includes(a.only)) return;
      const s = { file, origin, found: 0, kept: 0, duplicates: 0, skipped: {} };
      const t0 = Date.now();
      const got = fn(s);
      for (const p of got) p.stats = s;
      all = all.concat(got);
      stats.push(s);
      console.error(`${file}: ${s.found} found (${((Date.now() - t0) / 1000).toFixed(1)}s)`);
    };
    for (const f of files.filter((f) => /^(tests|packages\/[^/]+\/tests?)\/.*\.test\.js$/.test(f))) {
      add(f, 'node', (s) => extractNode(root, f, s));
    }
    for (const f of files.filter((f) => /^crates\/[^/]+\/(tests\/[^/]+\.rs|src\/.*tests?(\/[^/]+)?\.rs)$/.test(f))) {
      add(f, 'rust', (s) => extractRust(f, fs.readFileSync(path.join(root, f), 'utf8'), s));
    }
    for (const f of files.filter((f) => /^tests\/test262\/cases\/.*\.js$/.test(f))) {
      add(f, 'test262', (s) => {
        s.found = 1;
        return [{ file: f, test: f.replace(/^tests\/test262\/cases\//, ''), origin: 'test262', how: 'file', source: fs.readFileSync(path.join(root, f), 'utf8'), inputs: {}, capabilities: [], limits: {}, answers: [] }];
      });
    }
    const gallery = 'examples/programmatic-tool-calls';
    if (!a.only || gallery.includes(a.only)) add(gallery, 'gallery', (s) => extractGallery(path.join(root, gallery), s));
    const eq = 'tests/shared/equivalence-corpus.json';
    if (files.includes(eq)) {
      add(eq, 'corpus', (s) => {
        const { encode } = require('./sv.js');
        return JSON.parse(fs.readFileSync(path.join(root, eq), 'utf8')).map((c) => {
          s.found++;
          const answers = (c.steps || []).map((st) =>
            st.type === 'error' ? { capability: '', error: { name: st.name || 'Error', message: st.message || '' } } : st.type === 'cancel' ? { capability: '', cancel: true } : { capability: '', value: encode(st.value) },
          );
          return { file: eq, test: c.id, origin: 'corpus', how: 'corpus', source: c.source, inputs: {}, capabilities: c.capabilities || [], limits: {}, answers };
        });
      });
    }
    // Duplicates are kept once; ids name file and position.
    const seen = new Map();
    const programs = [];
    for (const p of all) {
      const s = p.stats;
      delete p.stats;
      if (JSON.stringify([p.inputs, p.answers]).length > MAX_DATA_CHARS) {
        skip(s, `inputs and answers over ${MAX_DATA_CHARS} characters (boundary size tests)`);
        continue;
      }
      const key = JSON.stringify([p.source, p.inputs, p.capabilities, p.limits, p.answers]);
      if (seen.has(key)) {
        s.duplicates++;
        continue;
      }
      seen.set(key, true);
      s.kept++;
      p.id = `${p.file}#${s.kept}`;
      programs.push({ id: p.id, ...p });
    }
    const corpus = {
      reference: { repository: 'mustardscript/mustardscript', commit, package: 'mustardscript@' + require(path.join(HERE, '..', 'node_modules', 'mustardscript', 'package.json')).version },
      files: stats,
      programs,
    };
    fs.mkdirSync(path.dirname(a.out), { recursive: true });
    fs.writeFileSync(a.out, JSON.stringify(corpus, null, 1) + '\n');
    const tot = stats.reduce((t, s) => ({ found: t.found + s.found, kept: t.kept + s.kept, dup: t.dup + s.duplicates }), { found: 0, kept: 0, dup: 0 });
    console.log(`${programs.length} programs from ${stats.length} files (${tot.found} found, ${tot.dup} duplicates, ${tot.found - tot.kept - tot.dup} skipped); wrote ${path.relative(REPO, a.out)}`);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main();
