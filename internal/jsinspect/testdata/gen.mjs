// Regenerates expected.json from cases.txt with Node 20's util.format (what
// console.log prints). Run: node gen.mjs (from this directory).
import { readFileSync, writeFileSync } from 'node:fs';
import { format } from 'node:util';

const text = readFileSync(new URL('./cases.txt', import.meta.url), 'utf8');
const cases = [];
let cur = null;
for (const line of text.split('\n')) {
  if (line.startsWith('=== ')) {
    cur = { name: line.slice(4).trim(), body: [] };
    cases.push(cur);
  } else if (cur) {
    cur.body.push(line);
  }
}
// Drops stack frame lines ("    at ..."), keeping the brace a value's
// properties open with at the end of the line before.
const stripFrames = (s) => {
  const out = [];
  for (const l of s.split('\n')) {
    if (/^\s+at /.test(l)) {
      const m = / ([{[])$/.exec(l);
      if (m && out.length > 0) out[out.length - 1] += m[0];
    } else {
      out.push(l);
    }
  }
  return out.join('\n');
};
const out = {};
for (const c of cases) {
  const args = new Function(c.body.join('\n'))();
  // Stack frames differ between engines: the test drops lines that are
  // stack frames ("    at ...") on both sides.
  out[c.name] = stripFrames(format(...args));
}
writeFileSync(new URL('./expected.json', import.meta.url), JSON.stringify({ node: process.version, cases: out }, null, 1) + '\n');
console.log(`${cases.length} cases`);
