// Writes the golden files of the RegExp tests from Node's own answers
// (the Go tests read them and need no Node):
//
//   mustard_regexp_errors.json    patterns and flags (malformed ones, and
//                                 some valid ones) and what Node says:
//                                 the SyntaxError's message or "" (accepted),
//                                 through the constructor and as a literal
//   mustard_regexp_uniprops.json  property escapes: every name Node
//                                 accepts, in and out of classes, negated,
//                                 against chosen code points; names Node
//                                 refuses; and whole expressions
//
// Run from this directory: node mustard_regexp_golden.mjs
// (deterministic: a fixed seed).
import fs from 'node:fs';
import path from 'node:path';

const dir = path.dirname(new URL(import.meta.url).pathname);

let seed = 20231;
function rand(n) { // mulberry32
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) % n;
}
const pick = (a) => a[rand(a.length)];

function ctorMessage(p, f) {
  try {
    new RegExp(p, f);
    return '';
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    return e.message;
  }
}
function literalMessage(p, f) {
  try {
    (0, eval)(`/${p}/${f}`);
    return '';
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    return e.message;
  }
}
const literalSafe = (p) => !/[\n\r\u2028\u2029/]/.test(p) && !/\\$/.test(p.replace(/\\\\/g, '')) && p !== '' && !p.startsWith('*');

// --- errors ---------------------------------------------------------------

const handmade = [
  ['[z-a]', ''], ['(?<=a', ''], ['a**', ''], ['a{2,1}', ''], ['(', ''], [')', ''], ['[', ''], ['*', ''],
  ['+a', ''], ['?', ''], ['{1}', ''], ['a{1', 'u'], ['{', 'u'], ['}', 'u'], [']', 'u'], ['(?', ''],
  ['(?i)a', ''], ['(?<1a>x)', ''], ['(?<a>x)(?<a>y)', ''], ['\\k<a>', 'u'], ['(?<a>x)\\k<b>', ''],
  ['\\k', 'u'], ['(?<a>.)\\k', ''], ['\\p', 'u'], ['\\p{', 'u'], ['\\p{L', 'u'], ['\\p{Nope}', 'u'],
  ['[\\p{Nope}]', 'u'], ['\\p{l}', 'u'], ['\\p{gc=Nope}', 'u'], ['\\p{Script=Nope}', 'u'],
  ['\\p{Block=Basic_Latin}', 'u'], ['\\p{Line_Break=Alphabetic}', 'u'], ['\\p{ascii}', 'u'],
  ['\\p{Script}', 'u'], ['\\p{General_Category}', 'u'], ['\\p{gc=}', 'u'], ['\\p{=L}', 'u'],
  ['\\p{L}', ''], ['\\P{L}', ''], ['\\u{110000}', 'u'], ['\\u{', 'u'], ['\\u12', 'u'], ['\\x1', 'u'],
  ['\\c', 'u'], ['\\c1', 'u'], ['\\1', 'u'], ['\\00', 'u'], ['[\\1]', 'u'], ['[\\8]', 'u'], ['\\-', 'u'],
  ['[\\d-z]', 'u'], ['[a-\\d]', 'u'], ['[\\d-z]', ''], ['a\\', ''], ['[a\\', ''], ['(?<a', ''],
  ['(?<a>', ''], ['(?=a)*', 'u'], ['(?=a)*', ''], ['(?<=a)*', ''], ['(?<!a)+', ''], ['^*', ''], ['$+', ''],
  ['\\b*', ''], ['a|*', ''], ['(*)', ''], ['a{2147483648,1}', ''], ['a{99999999999}', ''],
  ['x{1001}', ''], ['(?:', ''], ['(?=', ''], ['(?!x', ''], ['(?<!', ''], ['[^', ''], ['[]', ''], ['[^]', ''],
  ['a', 'x'], ['a', 'gg'], ['a', 'uu'], ['a', 'Z'], ['a', 'iy '], ['(?<𝒜>.)\\k<𝒜>', ''], ['(?<\\u0061>x)\\k<a>', ''],
  ['(?<a\\u>x)', ''], ['(?<\\u{1d49c}>.)', ''], ['(?<a-b>x)', ''], ['\\k<a>(?<a>x)', ''], ['\\k<a>', ''],
  ['[\\k]', ''], ['[\\k](?<a>x)', ''], ['\\8', ''], ['\\9', ''], ['(a)\\2', ''], ['(a)\\1', 'u'], ['\\1(a)', ''],
  ['\\u{41}', ''], ['\\u{41}', 'u'], ['\\q', 'u'], ['\\a', 'u'], ['\\/', 'u'], ['\\z', ''], ['[\\z]', 'u'],
  ['[\\-]', 'u'], ['[\\-]', ''], ['[\\b-a]', ''], ['[a-\\b]', ''], ['[\\cA-\\c_]', ''], ['[\\c_]', ''],
  ['[\\c1]', ''], ['\\c_', ''], ['\\uD83D\\uDE00{2}', 'u'], ['[\\uD83D\\uDE01-\\uD83D\\uDE00]', 'u'],
  ['[😁-😀]', 'u'], ['[😁-😀]', ''], ['[a-😀]', ''], ['[\\u{1F601}-\\u{1F600}]', 'u'], ['.**', 's'],
  ['\\p{L}+', 'u'], ['[\\p{L}-z]', 'u'], ['[\\P{L}\\d]', 'u'], ['\\p{Any}', 'u'], ['\\p{Assigned}', 'ui'],
  ['\\P{Script_Extensions=Latin}', 'u'], ['\\p{scx=Latn}', 'u'], ['\\p{RGI_Emoji}', 'u'],
  ['(?<a>x)|(?<a>y)', ''], ['((a)', ''], ['(a))', ''], ['a{,5}', ''], ['a{,5}', 'u'], ['a{1,2', 'u'],
  ['a{1,2', ''], ['a{2}{3}', ''], ['a{2}?{3}', ''], ['a??', ''], ['a???', ''], ['a*?+', ''],
];

const fragments = [
  '(', ')', '[', ']', '{', '}', '{2}', '{2,1}', '{1,', '{,1}', '*', '+', '?', '??', '|', '^', '$', '\\',
  '\\1', '\\2', '\\8', '\\0', '\\00', '\\k', '\\k<a>', '\\k<b', '(?<a>', '(?<a>x)', '(?<1>', '(?<',
  '(?:', '(?=', '(?!', '(?<=', '(?<!', '(?i)', '(?', '\\p{L}', '\\p{Nope}', '\\p', '\\P{Lu}', '\\p{gc=L}',
  '\\p{Script=Latin}', '\\p{scx=Grek}', '\\p{sc=Nope}', '\\u', '\\u{', '\\u{110000}', '\\u{41}', '\\uD83D',
  '\\x', '\\x4', '\\c', '\\cA', '\\c1', '\\d', '\\w', '\\-', 'a', 'b', 'z', '-', '[z-a]', '[a-z]',
  '[\\d-z]', '[a-\\d]', '[\\b]', '\\b', '\\B', '.', 'é', '😀', '\\s', '[^', '\\p{', 'x]', 'y}', '0',
];
const flagSets = ['', '', 'u', 'u', 'i', 'g', 'ui', 'gimsy', 'gimsuy', 'yu', 'mi'];

const errors = [];
const seen = new Set();
function addError(p, f, literal) {
  const key = `${p}\u0000${f}\u0000${literal}`;
  if (seen.has(key)) return;
  seen.add(key);
  const c = { p, f, msg: ctorMessage(p, f) };
  if (literal && literalSafe(p)) {
    c.literal = true;
    c.msg = literalMessage(p, f);
  }
  errors.push(c);
}
for (const [p, f] of handmade) addError(p, f, false);
let rejected = 0;
let accepted = 0;
for (let i = 0; i < 200000 && (rejected < 450 || accepted < 150); i++) {
  let p = '';
  const n = 1 + rand(4);
  for (let k = 0; k < n; k++) p += pick(fragments);
  const f = pick(flagSets);
  const key = `${p}\u0000${f}\u0000false`;
  if (seen.has(key)) continue;
  const bad = ctorMessage(p, f) !== '';
  if (bad && rejected < 450) {
    rejected++;
    addError(p, f, false);
  } else if (!bad && accepted < 150) {
    accepted++;
    addError(p, f, false);
  }
}
// Literals: flags as written, in any order.
for (let i = 0; i < 80; i++) {
  const c = errors[rand(errors.length)];
  if (!literalSafe(c.p)) continue;
  const f = c.f.split('').reverse().join('');
  addError(c.p, f, true);
}
addError('a', 'x', true);
addError('a', 'gg', true);
addError('[z-a]', 'ig', true);
addError('(?<=a', '', true);

fs.writeFileSync(path.join(dir, 'mustard_regexp_errors.json'), JSON.stringify(errors, null, 0).replace(/\},\{/g, '},\n{') + '\n');

// --- property escapes -----------------------------------------------------

// Names: every alias the tables know, plus near misses that Node refuses.
const tables = fs.readFileSync(path.join(dir, '../parser/mustard_uniprops_tables.go'), 'utf8');
function namesOf(map) {
  const m = tables.match(new RegExp(`var ${map} = map\\[string\\]uint16\\{([^}]*)\\}`));
  return [...m[1].matchAll(/"([^"]+)"/g)].map((x) => x[1]);
}
const bodies = [];
for (const n of namesOf('uniPropLone')) bodies.push(n);
for (const n of namesOf('uniPropGc')) bodies.push(pick(['gc=', 'General_Category=']) + n);
for (const n of namesOf('uniPropSc')) bodies.push(pick(['sc=', 'Script=']) + n);
for (const n of namesOf('uniPropScx')) bodies.push(pick(['scx=', 'Script_Extensions=']) + n);

const fixed = [0x41, 0x61, 0x30, 0x20, 0xe9, 0x1f600, 0x10ffff, 0xd800, 0xdc00, 0x3b1, 0x5d0, 0x4e00, 0x0, 0x7f, 0x80, 0x2028];
const props = [];
const forms = [
  (b) => `^\\p{${b}}$`, (b) => `^\\P{${b}}$`, (b) => `^[\\p{${b}}]$`, (b) => `^[^\\p{${b}}]$`,
  (b) => `^[\\P{${b}}\\d]$`, (b) => `^[^\\P{${b}}_]+$`, (b) => `\\p{${b}}+`, (b) => `^(?:\\p{${b}}|x)$`,
];
for (const b of bodies) {
  // Code points at the edges of the set's ranges, and random ones.
  const one = new RegExp(`^\\p{${b}}$`, 'u');
  const cps = new Set(fixed);
  for (let k = 0; k < 10; k++) {
    let c = rand(0x110000);
    if (k < 5) c = rand(0x3000); // where most properties are dense
    cps.add(c);
  }
  // Walk from a random start to the next change of membership.
  for (let k = 0; k < 3; k++) {
    let c = rand(0x20000);
    const inside = one.test(String.fromCodePoint(c));
    for (let j = 0; j < 5000 && c < 0x10ffff; j++, c++) {
      if (one.test(String.fromCodePoint(c)) !== inside) {
        cps.add(c - 1);
        cps.add(c);
        break;
      }
    }
  }
  const s = [...cps].sort((a, b) => a - b);
  for (const flags of ['u', rand(6) === 0 ? 'ui' : 'u']) {
    const p = pick(forms)(b);
    const re = new RegExp(p, flags);
    const m = s.map((c) => (re.test(String.fromCodePoint(c)) ? '1' : '0')).join('');
    props.push({ p, f: flags, s, m });
  }
}

const refused = [];
for (const b of ['l', 'lu', 'letter', 'LETTER', 'Uppercase letter', 'gc=l', 'sc=latin', 'Script=latn',
  'scx=', 'Block=Basic_Latin', 'InBasicLatin', 'IsLatin', 'Latin', 'Greek', 'Grek', 'L&', 'Lc', 'lc',
  'ASCII_Hex', 'ascii', 'any', 'Alphabetic=Y', 'Alpha=Yes', 'Bidi_Class=L', 'bc=L', 'Line_Break=AL',
  'Numeric_Type=Decimal', 'East_Asian_Width=Wide', 'Word_Break=ALetter', 'Grapheme_Cluster_Break=CR',
  'Sentence_Break=ATerm', 'Emoji_Keycap_Sequence', 'RGI_Emoji', 'Basic_Emoji', 'Composition_Exclusion',
  'Full_Composition_Exclusion', 'Hyphen', 'Other_Alphabetic', 'Prepended_Concatenation_Mark',
  'ID_Compat_Math_Start', 'IDS_Unary_Operator', 'Modifier_Combining_Mark', 'InCB', 'L ', ' L', 'L-', '']) {
  for (const [p, f] of [[`\\p{${b}}`, 'u'], [`[\\P{${b}}]`, 'u']]) {
    refused.push({ p, f, msg: ctorMessage(p, f) });
  }
}

const exprs = [];
for (const src of [
  "/\\p{L}/u.test('é')", "'héllo wörld'.match(/\\p{L}+/gu)", "/\\p{Nope}/u", "/\\p{L}/.test('p{L}')",
  "/\\p{L}/.test('é')", "/\\P{L}/.test('P{L}')", "/[\\p{L}]/.test('{')", "/\\p{Lu}/ui.test('a')",
  "/\\P{Lu}/ui.test('A')", "'Ωmega Ελλάδα latin'.match(/\\p{Script=Greek}+/gu)",
  "'Ωmega Ελλάδα latin'.replace(/\\p{sc=Grek}/gu, '_')", "'a1b2c3'.split(/\\p{Nd}/u)",
  "[...'x😀y👍z'.matchAll(/\\p{Emoji_Presentation}/gu)].map(m => [m[0], m.index])",
  "/^\\p{RGI_Emoji}$/v", "/(?<=\\p{Lu})\\p{Ll}+/u.exec('abcDef')[0]", "/(\\p{L})\\1/u.test('éé')",
  "/\\p{ID_Start}\\p{ID_Continue}*/u.exec('1abc2_ ')[0]", "/[^\\p{L}\\p{N}]+/u.exec('ab12 ,.cd')[0]",
  "/[\\P{L}]+/u.exec('ab12 ,.cd')[0]", "/^\\p{Any}+$/u.test('\\ud800x\\udc00')",
  "/^\\P{Any}$/u.test('a')", "/^[\\P{Any}]$/u.test('a')", "/^[^\\P{Any}]$/u.test('a')",
  "/\\p{White_Space}+/u.exec('a \\u00a0\\u2003\\u3000b')[0].length", "/\\p{ASCII}+/u.exec('abc€')[0]",
  "/\\p{Cs}/u.test('\\ud800')", "/\\p{Co}/u.test('\\ue000')", "/\\p{Cn}/u.test('\\u0378')",
  "/\\p{Assigned}/u.test('\\u0378')", "/\\p{scx=Hira}/u.test('ー')", "/\\p{sc=Hira}/u.test('ー')",
  "/\\p{Emoji}/u.test('#')", "/\\p{Extended_Pictographic}/u.test('©')", "/\\p{Lowercase}/u.test('ª')",
  "/\\p{Uppercase}/u.test('Ⓐ')", "/\\p{L}/iu.test('K')", "/[\\p{Lu}--\\p{Lt}]/u",
  "/\\p{L}{2,3}/u.exec('éàüö')[0]", "/\\p{L}/gu[Symbol.replace]('a-b', '.')", "'ÅÄÖ'.search(/\\p{Lu}/u)",
  "new RegExp('\\\\p{L}', 'u').source", "String(/\\p{L}/u)", "/\\p{L}/yu.test('1a')",
  "/\\p{Letter}/u.test('ж')", "/\\p{gc=Cased_Letter}/u.test('ǅ')", "/\\p{LC}/u.test('ǅ')",
  "/\\p{General_Category=Decimal_Number}/u.test('٣')", "/\\p{digit}/u.test('٣')",
  "/\\p{Script_Extensions=Arabic}/u.test('،')", "/\\p{Script=Arabic}/u.test('،')",
]) {
  let out;
  try {
    out = JSON.stringify((0, eval)(src));
    if (out === undefined) out = 'undefined';
  } catch (e) {
    out = `${e.name}: ${e.message}`;
  }
  exprs.push({ src, out });
}

fs.writeFileSync(path.join(dir, 'mustard_regexp_uniprops.json'), JSON.stringify({ node: process.version, unicode: process.versions.unicode, props, refused, exprs }, null, 0)
  .replace(/\},\{/g, '},\n{') + '\n');
console.error(`${errors.length} error cases (${errors.filter((e) => e.msg !== '').length} rejected), ${props.length} property cases, ${refused.length} refused, ${exprs.length} expressions`);
