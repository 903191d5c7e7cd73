// A node --test reporter for ../reference-suite.js: one JSON line per test
// (file, name with its parents' names joined by ' > ', pass or fail, the
// first 600 characters of the error).
export default async function* reporter(source) {
  const stack = [];
  for await (const ev of source) {
    const d = ev.data || {};
    if (ev.type === 'test:start') {
      stack.length = d.nesting;
      stack[d.nesting] = d.name;
    } else if (ev.type === 'test:pass' || ev.type === 'test:fail') {
      stack.length = d.nesting;
      const names = [...stack.slice(0, d.nesting), d.name];
      const err = d.details && d.details.error;
      yield JSON.stringify({ file: d.file, name: names.join(' > '), ok: ev.type === 'test:pass', skip: !!d.skip, todo: !!d.todo, suite: d.details && d.details.type === 'suite', error: err ? String((err.cause && err.cause.stack) || err.cause || err.message).slice(0, 600) : undefined }) + '\n';
    }
  }
}
