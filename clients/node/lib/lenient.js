'use strict';

// lenientMode (the reference's compile option): a program may end with a
// top-level `return`, whose value is the program's result. The sidecar's
// parser finds the first `return` outside a function; the text before it
// must compile on its own (so the return is a statement of the top level,
// not inside a block), and only one expression may follow it up to the
// end. The program is then compiled with that `return` made an expression
// statement, its columns unchanged.

const LENIENT_MESSAGE = 'return is only supported as the final top-level statement when lenientMode is enabled';

// offsetOf turns a 1-based line and column of the sidecar's into an index
// into source, or -1.
function offsetOf(source, line, column) {
  let at = 0;
  for (let l = 1; l < line; l++) {
    const nl = source.indexOf('\n', at);
    if (nl < 0) return -1;
    at = nl + 1;
  }
  const lineText = source.slice(at, source.indexOf('\n', at) < 0 ? source.length : source.indexOf('\n', at));
  // Columns count bytes or UTF-16 units; on an ASCII line they agree.
  for (const candidate of [at + column - 1, at + Buffer.from(lineText, 'utf8').subarray(0, column - 1).toString('utf8').length]) {
    if (source.startsWith('return', candidate)) return candidate;
  }
  return -1;
}

const REGEX_AFTER = new Set([...'(,=:[!&|?{};+-*%<>~^', 'return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw', 'case', 'do', 'else', 'yield', 'await']);

// statementEnd returns the index in text of the `;` that ends the
// expression text starts with, at bracket depth 0, or text.length.
function statementEnd(text) {
  let depth = 0;
  let prev = '(';
  const templates = []; // bracket depths at which a template's ${ opened
  let i = 0;
  const n = text.length;
  const template = () => {
    // in a template literal, after its opening ` or a closing }
    while (i < n) {
      const c = text[i];
      if (c === '\\') i += 2;
      else if (c === '`') {
        i++;
        return;
      } else if (c === '$' && text[i + 1] === '{') {
        i += 2;
        templates.push(depth);
        depth++;
        return;
      } else i++;
    }
  };
  while (i < n) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (c === '/' && text[i + 1] === '/') {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? n : nl;
      continue;
    }
    if (c === '/' && text[i + 1] === '*') {
      const e = text.indexOf('*/', i + 2);
      i = e < 0 ? n : e + 2;
      continue;
    }
    if (c === '"' || c === "'") {
      i++;
      while (i < n && text[i] !== c) i += text[i] === '\\' ? 2 : 1;
      i++;
      prev = 'str';
      continue;
    }
    if (c === '`') {
      i++;
      template();
      prev = 'str';
      continue;
    }
    if (c === '/' && REGEX_AFTER.has(prev)) {
      i++;
      let cls = false;
      while (i < n) {
        const d = text[i];
        if (d === '\\') i += 2;
        else {
          i++;
          if (d === '[') cls = true;
          else if (d === ']') cls = false;
          else if (d === '/' && !cls) break;
        }
      }
      while (i < n && /[a-z]/i.test(text[i])) i++;
      prev = 'regex';
      continue;
    }
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']') depth--;
    else if (c === '}') {
      depth--;
      if (templates.length > 0 && templates[templates.length - 1] === depth) {
        templates.pop();
        i++;
        template();
        prev = 'str';
        continue;
      }
    } else if (c === ';' && depth === 0) return i;
    if (/[A-Za-z0-9_$]/.test(c)) {
      let j = i;
      while (j < n && /[A-Za-z0-9_$]/.test(text[j])) j++;
      prev = text.slice(i, j);
      i = j;
      continue;
    }
    prev = c;
    i++;
  }
  return n;
}

// trivia tells whether text is only whitespace, comments and semicolons.
function trivia(text) {
  return /^(?:\s|;|\/\/[^\n]*|\/\*[\s\S]*?\*\/)*$/.test(text);
}

// compileLenient compiles source in lenient mode with compile(source),
// which throws the sidecar's typed errors; isIllegalReturn tells the
// sidecar's "return outside a function" parse error and gives its line
// and column; validationError makes the error for a misplaced return.
function compileLenient(source, compile, illegalReturnAt, validationError) {
  try {
    return compile(source);
  } catch (error) {
    const at = illegalReturnAt(error);
    if (at === null) throw error;
    const p = offsetOf(source, at.line, at.column);
    if (p < 0) throw error;
    const prefix = source.slice(0, p);
    try {
      compile(prefix);
    } catch {
      throw validationError(LENIENT_MESSAGE);
    }
    const rest = source.slice(p + 'return'.length);
    const end = statementEnd(rest);
    const expr = rest.slice(0, end);
    if (!trivia(rest.slice(end + 1))) throw validationError(LENIENT_MESSAGE);
    const rewritten = trivia(expr) ? `${prefix};void 0${rest}` : `${prefix};(    ${expr}\n)${rest.slice(end)}`;
    try {
      return compile(rewritten);
    } catch (again) {
      if (illegalReturnAt(again) !== null) throw validationError(LENIENT_MESSAGE);
      throw again;
    }
  }
}

module.exports = { compileLenient, statementEnd, LENIENT_MESSAGE };
