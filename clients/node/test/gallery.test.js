'use strict';

// The reference's gallery (examples/programmatic-tool-calls of the
// mustardscript repository, 24 programs) run by the reference's own host
// script, scripts/audit-use-cases.ts, with only its import line changed to
// this package; its results must equal the reference addon's. Runs when
// $MUSTARD_BENCH_GALLERY names the gallery directory of a checkout (as for
// the Go benchmarks, bench/README.md) whose scripts/audit-use-cases.ts is
// there too; the addon comes from $MUSTARD_REFERENCE_MODULE or from
// bench/peer (npm install there).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const gallery = process.env.MUSTARD_BENCH_GALLERY;
const script = gallery && path.join(gallery, '..', '..', 'scripts', 'audit-use-cases.ts');
const IMPORT = "require('../index.ts')";

function referenceModule() {
  const candidates = [process.env.MUSTARD_REFERENCE_MODULE, path.join(__dirname, '..', '..', '..', 'bench', 'peer', 'node_modules', 'mustardscript')];
  return candidates.find((c) => c && fs.existsSync(path.join(c, 'package.json')));
}

function skipReason() {
  if (!gallery) return 'MUSTARD_BENCH_GALLERY not set (the reference\'s examples/programmatic-tool-calls)';
  if (!fs.existsSync(script)) return `no scripts/audit-use-cases.ts next to ${gallery}`;
  if (!referenceModule()) return 'the reference addon is not installed (npm install in bench/peer, or set MUSTARD_REFERENCE_MODULE)';
  return false;
}

// audit runs the host script with its import line pointing at module.
function audit(dir, name, module) {
  const original = fs.readFileSync(script, 'utf8');
  assert.equal(original.split(IMPORT).length, 2, 'the host script imports the package once');
  const changed = original.replace(IMPORT, `require(${JSON.stringify(module)})`);
  const a = original.split('\n');
  const b = changed.split('\n');
  assert.equal(a.length, b.length);
  assert.deepEqual(a.map((line, i) => (line === b[i] ? null : i)).filter((i) => i !== null).map((i) => a[i]), [
    "const { Mustard, MustardError, Progress } = require('../index.ts');",
  ]);
  fs.writeFileSync(path.join(dir, 'scripts', name), changed);
  return JSON.parse(execFileSync(process.execPath, [path.join(dir, 'scripts', name), '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 }));
}

test('the reference gallery runs through this package with the same values as the reference addon', { skip: skipReason() }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mustard-gallery-'));
  try {
    fs.mkdirSync(path.join(dir, 'scripts'));
    fs.mkdirSync(path.join(dir, 'examples'));
    fs.symlinkSync(path.resolve(gallery), path.join(dir, 'examples', 'programmatic-tool-calls'));
    const ours = audit(dir, 'ours.js', path.join(__dirname, '..'));
    const reference = audit(dir, 'reference.js', referenceModule());
    assert.equal(reference.total, 24);
    assert.equal(ours.total, reference.total);
    assert.equal(ours.failed, 0, JSON.stringify(ours.results.filter((r) => !r.ok)));
    for (let i = 0; i < reference.results.length; i += 1) {
      const want = reference.results[i];
      const got = ours.results[i];
      assert.equal(got.id, want.id);
      assert.equal(got.mode, want.mode);
      assert.deepStrictEqual(got.value, want.value, want.id);
      assert.deepStrictEqual(got.suspensions, want.suspensions, want.id);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
