'use strict';

// The "Use it from Node" example of the top-level README runs as written.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

test('the README example runs as written', () => {
  const readme = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'README.md'), 'utf8');
  const section = readme.split('\n## Use it from Node\n')[1];
  assert.ok(section, 'README has a "Use it from Node" section');
  const example = /```js\n([\s\S]*?)```/.exec(section.split('\n## ')[0])[1];
  assert.ok(example.trim().split('\n').length <= 20, 'the example stays at 20 lines');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mustard-readme-'));
  try {
    fs.mkdirSync(path.join(dir, 'node_modules'));
    fs.symlinkSync(path.join(__dirname, '..'), path.join(dir, 'node_modules', 'mustard-sidecar'));
    fs.writeFileSync(path.join(dir, 'example.js'), example);
    const out = execFileSync(process.execPath, ['example.js'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    assert.equal(out, 'Ada, Grace, Edsger\n');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
