'use strict';

// Runs the suite with `node --test`. The tests need the sidecar binary:
// unless $MUSTARD_SIDECAR_BIN names one, it is built here with `go build`
// into a temporary directory, removed afterwards.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const repo = path.join(__dirname, '..', '..', '..');
let tmp = null;
const env = { ...process.env };
if (!env.MUSTARD_SIDECAR_BIN) {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mustard-sidecar-node-'));
  env.MUSTARD_SIDECAR_BIN = path.join(tmp, 'mustard-sidecar');
  const built = spawnSync('go', ['build', '-o', env.MUSTARD_SIDECAR_BIN, './cmd/mustard-sidecar'], { cwd: repo, stdio: 'inherit' });
  if (built.status !== 0) {
    fs.rmSync(tmp, { recursive: true, force: true });
    console.error('building the sidecar failed');
    process.exit(1);
  }
}
const files = fs.readdirSync(__dirname).filter((f) => f.endsWith('.test.js')).map((f) => path.join(__dirname, f));
const r = spawnSync(process.execPath, ['--test', ...process.argv.slice(2), ...files], { env, stdio: 'inherit' });
if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
process.exit(r.status === null ? 1 : r.status);
