// Generates the Unicode property tables of RegExp property escapes
// (\p{...}, \P{...} with the u flag): mustard_uniprops_tables.go and
// mustard_uniprops.bin, from Node's own answers, so the sets are exactly
// the ones V8 (through ICU) uses in the Node the sidecar is measured
// against.
//
// The candidate names come from the npm packages
// unicode-property-aliases-ecmascript and
// unicode-property-value-aliases-ecmascript (every alias ECMAScript lists)
// plus a few newer names; a name is kept only if Node accepts it, and its
// set is what Node's RegExp matches, code point by code point.
//
// Run (go generate ./internal/goja/parser/ does it):
//   npm install --prefix /tmp/uniprops unicode-property-aliases-ecmascript@3.0.0 \
//       unicode-property-value-aliases-ecmascript@2.2.1
//   UNIPROPS_NPM=/tmp/uniprops node mustard_uniprops_gen.mjs
import { createRequire } from 'node:module';
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const npm = process.env.UNIPROPS_NPM;
if (!npm) {
  console.error('set UNIPROPS_NPM to a directory with the two npm packages installed (see the header)');
  process.exit(2);
}
const require = createRequire(path.join(npm, 'index.js'));
const valueAliases = require('unicode-property-value-aliases-ecmascript');
const propAliases = (await import(path.join(npm, 'node_modules/unicode-property-aliases-ecmascript/index.mjs'))).default;

function accepts(body) {
  try {
    new RegExp(`\\p{${body}}`, 'u');
    return true;
  } catch {
    return false;
  }
}

// All code points but the surrogates, in order, as one string; unitCp maps
// a UTF-16 index of it to its code point.
const cps = [];
for (let c = 0; c <= 0x10ffff; c++) if (c < 0xd800 || c > 0xdfff) cps.push(c);
const all = cps.map((c) => String.fromCodePoint(c)).join('');
const unitCp = new Int32Array(all.length);
{
  let i = 0;
  for (const c of cps) {
    unitCp[i++] = c;
    if (c > 0xffff) unitCp[i++] = -1;
  }
}

// rangesOf returns the code point ranges [lo, hi] that \p{body} matches.
function rangesOf(body) {
  const set = [];
  const re = new RegExp(`\\p{${body}}+`, 'gu');
  for (const m of all.matchAll(re)) {
    let i = m.index;
    const end = m.index + m[0].length;
    for (; i < end; i++) if (unitCp[i] >= 0) set.push(unitCp[i]);
  }
  const one = new RegExp(`^\\p{${body}}$`, 'u');
  for (let c = 0xd800; c <= 0xdfff; c++) if (one.test(String.fromCharCode(c))) set.push(c);
  set.sort((a, b) => a - b);
  const ranges = [];
  for (const c of set) {
    const last = ranges[ranges.length - 1];
    if (last && last[1] + 1 === c) last[1] = c;
    else ranges.push([c, c]);
  }
  return ranges;
}

// Sets, deduplicated by content.
const sets = [];
const setIndex = new Map();
function setOf(body) {
  const ranges = rangesOf(body);
  const key = ranges.map((r) => r.join('-')).join(',');
  if (!setIndex.has(key)) {
    setIndex.set(key, sets.length);
    sets.push(ranges);
  }
  return setIndex.get(key);
}

const lone = new Map(); // \p{X}
const gcValues = new Map(); // \p{gc=X}
const scValues = new Map(); // \p{sc=X}
const scxValues = new Map(); // \p{scx=X}

// General_Category values, short, long and other aliases.
const gcNames = new Set();
for (const [alias, canonical] of valueAliases.get('General_Category')) {
  gcNames.add(alias);
  gcNames.add(canonical);
}
const gcCanon = new Map();
for (const name of [...gcNames].sort()) {
  if (!accepts(`General_Category=${name}`)) continue;
  const canonical = valueAliases.get('General_Category').get(name) || name;
  if (!gcCanon.has(canonical)) gcCanon.set(canonical, setOf(`General_Category=${canonical}`));
  gcValues.set(name, gcCanon.get(canonical));
  if (accepts(name)) lone.set(name, gcCanon.get(canonical));
}

// Binary properties (and Any, ASCII, Assigned).
const binNames = new Set(['Any', 'ASCII', 'Assigned']);
for (const [alias, canonical] of propAliases) {
  binNames.add(alias);
  binNames.add(canonical);
}
for (const extra of ['IDS_Unary_Operator', 'IDSU', 'ID_Compat_Math_Start', 'ID_Compat_Math_Continue',
  'Modifier_Combining_Mark', 'MCM', 'Prepended_Concatenation_Mark', 'PCM', 'Basic_Emoji', 'RGI_Emoji']) {
  binNames.add(extra);
}
const binCanon = new Map();
for (const name of [...binNames].sort()) {
  if (lone.has(name) || ['gc', 'sc', 'scx', 'General_Category', 'Script', 'Script_Extensions'].includes(name)) continue;
  if (!accepts(name)) continue;
  const canonical = propAliases.get(name) || name;
  if (!binCanon.has(canonical)) binCanon.set(canonical, setOf(canonical));
  lone.set(name, binCanon.get(canonical));
}

// Script and Script_Extensions values.
const scNames = new Set();
const scriptAliases = new Map(valueAliases.get('Script'));
// Scripts newer than the npm package (Unicode 16 and 17).
for (const [alias, canonical] of [['Gara', 'Garay'], ['Gukh', 'Gurung_Khema'], ['Krai', 'Kirat_Rai'],
  ['Onao', 'Ol_Onal'], ['Sunu', 'Sunuwar'], ['Todr', 'Todhri'], ['Tutg', 'Tulu_Tigalari'],
  ['Berf', 'Beria_Erfe'], ['Chis', 'Chisoi'], ['Sidt', 'Sidetic'], ['Tayo', 'Tai_Yo'], ['Tols', 'Tolong_Siki']]) {
  if (!scriptAliases.has(alias)) scriptAliases.set(alias, canonical);
}
for (const [alias, canonical] of scriptAliases) {
  scNames.add(alias);
  scNames.add(canonical);
}
const scCanon = new Map();
const scxCanon = new Map();
for (const name of [...scNames].sort()) {
  const canonical = scriptAliases.get(name) || name;
  if (accepts(`Script=${name}`)) {
    if (!scCanon.has(canonical)) scCanon.set(canonical, setOf(`Script=${canonical}`));
    scValues.set(name, scCanon.get(canonical));
  }
  if (accepts(`Script_Extensions=${name}`)) {
    if (!scxCanon.has(canonical)) scxCanon.set(canonical, setOf(`Script_Extensions=${canonical}`));
    scxValues.set(name, scxCanon.get(canonical));
  }
}

// Which property names Node takes before '='.
const propNames = {};
for (const [kind, names] of [['gc', ['gc', 'General_Category']], ['sc', ['sc', 'Script']], ['scx', ['scx', 'Script_Extensions']]]) {
  for (const n of names) if (accepts(`${n}=${kind === 'gc' ? 'L' : 'Latin'}`)) propNames[n] = kind;
}

// The blob: for each set, its range count, then each range as the gap
// from the previous range's end and its length, all unsigned varints.
const bytes = [];
function uvarint(x) {
  while (x >= 0x80) {
    bytes.push((x & 0x7f) | 0x80);
    x = Math.floor(x / 128);
  }
  bytes.push(x);
}
const offsets = [];
for (const ranges of sets) {
  offsets.push(bytes.length);
  uvarint(ranges.length);
  let prev = 0;
  for (const [lo, hi] of ranges) {
    uvarint(lo - prev);
    uvarint(hi - lo);
    prev = hi;
  }
}
offsets.push(bytes.length);

const dir = path.dirname(new URL(import.meta.url).pathname);
fs.writeFileSync(path.join(dir, 'mustard_uniprops.bin'), Buffer.from(bytes));

function goMap(name, m) {
  const keys = [...m.keys()].sort();
  return `var ${name} = map[string]uint16{\n${keys.map((k) => `\t${JSON.stringify(k)}: ${m.get(k)},`).join('\n')}\n}\n`;
}
let go = `// Code generated by mustard_uniprops_gen.mjs from Node ${process.version} (Unicode ${process.versions.unicode}); DO NOT EDIT.

package parser

import _ "embed"

// UnicodePropertyVersion is the Unicode version of the property tables.
const UnicodePropertyVersion = ${JSON.stringify(process.versions.unicode)}

//go:embed mustard_uniprops.bin
var uniPropBlob string

// uniPropOffsets[i] is where set i starts in uniPropBlob.
var uniPropOffsets = [...]uint32{${offsets.join(', ')}}

// uniPropKinds maps the property names taken before '=' to gc, sc or scx.
var uniPropKinds = map[string]string{
${Object.keys(propNames).sort().map((k) => `\t${JSON.stringify(k)}: ${JSON.stringify(propNames[k])},`).join('\n')}
}

`;
go += '// uniPropLone: \\p{X}, a General_Category value or a binary property.\n' + goMap('uniPropLone', lone) + '\n';
go += '// uniPropGc: \\p{gc=X}.\n' + goMap('uniPropGc', gcValues) + '\n';
go += '// uniPropSc: \\p{sc=X}.\n' + goMap('uniPropSc', scValues) + '\n';
go += '// uniPropScx: \\p{scx=X}.\n' + goMap('uniPropScx', scxValues);
fs.writeFileSync(path.join(dir, 'mustard_uniprops_tables.go'), go);
execFileSync('gofmt', ['-w', path.join(dir, 'mustard_uniprops_tables.go')]);
console.error(`${sets.length} sets, ${bytes.length} bytes, ${lone.size} lone names, ${gcValues.size} gc, ${scValues.size} sc, ${scxValues.size} scx`);
