'use strict';

// Runs the suite with `node --test`, twice: on sidecar processes (the
// default engine), then on the in-process engine (MUSTARD_SIDECAR_ENGINE
// =in-process) for every file but those of the executors' crash and
// takeover runs and of SidecarClient's processes, which the engine does
// not change (without cgo, which the addon needs, the engine's tests are
// skipped, saying so). MUSTARD_NODE_SIDECAR_ONLY=1 runs the first pass
// only (go test's default run; .ci/run runs both). The tests need the
// sidecar binary and the addon: unless $MUSTARD_SIDECAR_BIN and
// $MUSTARD_SIDECAR_ADDON name them, they are built here with `go build`
// into a temporary directory, removed afterwards.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const repo = path.join(__dirname, '..', '..', '..');
const env = { ...process.env };
let tmp = null;

function build(variable, file, flags, pkg) {
  if (env[variable]) return true;
  tmp ??= fs.mkdtempSync(path.join(os.tmpdir(), 'mustard-sidecar-node-'));
  env[variable] = path.join(tmp, file);
  const built = spawnSync('go', ['build', ...flags, '-o', env[variable], pkg], { cwd: repo, stdio: 'inherit' });
  if (built.status === 0) return true;
  console.error(`building ${file} failed`);
  return false;
}

function main() {
  if (!build('MUSTARD_SIDECAR_BIN', 'mustard-sidecar', [], './cmd/mustard-sidecar')) return 1;
  // The addon needs cgo, which Go turns off where it finds no C compiler:
  // there the in-process pass is skipped, saying so (.ci/run has one).
  const cgo = Boolean(env.MUSTARD_SIDECAR_ADDON) || spawnSync('go', ['env', 'CGO_ENABLED'], { cwd: repo, encoding: 'utf8' }).stdout.trim() === '1';
  // Sidecar-only, the addon is neither built nor tested (inprocess.test.js
  // is its own tests).
  const sidecarOnly = env.MUSTARD_NODE_SIDECAR_ONLY === '1';
  const addon = cgo && !sidecarOnly;
  if (addon && !build('MUSTARD_SIDECAR_ADDON', 'mustard-sidecar.node', ['-buildmode=c-shared'], './clients/node/native')) return 1;
  const files = fs.readdirSync(__dirname).filter((f) => f.endsWith('.test.js') && (addon || f !== 'inprocess.test.js'));
  const args = process.argv.slice(2);
  const pass = (names, extra) => {
    const r = spawnSync(process.execPath, ['--test', ...args, ...names.map((f) => path.join(__dirname, f))], {
      env: { ...env, ...extra },
      stdio: 'inherit',
    });
    return r.status === null ? 1 : r.status;
  };
  const status = pass(files, {});
  if (status !== 0) return status;
  if (sidecarOnly) {
    console.log('# the in-process engine: skipped (MUSTARD_NODE_SIDECAR_ONLY=1)');
    return 0;
  }
  if (!cgo) {
    console.log('# the in-process engine: skipped, cgo is off here (no C compiler), so its addon cannot be built');
    return 0;
  }
  console.log('# the same suite on the in-process engine');
  const inProcess = files.filter((f) => !/^executor-(crash|takeover|lease)\.test\.js$|^process\.test\.js$/.test(f));
  return pass(inProcess, { MUSTARD_SIDECAR_ENGINE: 'in-process' });
}

let status;
try {
  status = main();
} finally {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}
process.exit(status);
