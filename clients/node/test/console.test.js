'use strict';

// The guest's console, dotted capability names, function-shaped programs
// and TypeScript. The first tests are the reference's own (mustardscript's
// tests/node/host-boundary.test.js, execution-context.test.js and the
// console cases of property-generators.js), run through this package; the
// others are this package's options (consoleMode, onLog, entry,
// language). They run against this repository's sidecar.

const { assert, isMustardError, Progress, ExecutionContext, runtime, test, needs } = require('./support/reference-helpers.js');
const { MustardRuntimeError } = require('..');

// ---- from the reference's tests/node/host-boundary.test.js ----

test('run routes deterministic console callbacks and ignores host return values', async (t) => {
  if (!(await needs(t, 'console'))) return;
  const events = [];
  const result = await runtime(`
    const first = console.log('alpha', 1);
    const second = console.warn({ ok: true });
    const third = console.error('omega');
    [first, second, third];
  `).run({
    console: {
      log(...args) {
        events.push(['log', args]);
        return 'ignored';
      },
      warn(...args) {
        events.push(['warn', args]);
        return 42;
      },
      error(...args) {
        events.push(['error', args]);
        return { ignored: true };
      },
    },
  });

  assert.deepEqual(events, [
    ['log', ['alpha', 1]],
    ['warn', [{ ok: true }]],
    ['error', ['omega']],
  ]);
  assert.deepEqual(result, [undefined, undefined, undefined]);
});

test('start exposes console callbacks as suspension points with undefined guest results', async (t) => {
  if (!(await needs(t, 'console'))) return;
  const progress = runtime(`
    const logged = console.log('alpha');
    logged === undefined ? 2 : 0;
  `).start({
    console: {
      log() {},
    },
  });

  assert.ok(progress instanceof Progress);
  assert.equal(progress.capability, 'console.log');
  assert.deepEqual(progress.args, ['alpha']);
  assert.equal(progress.resume('ignored by guest semantics'), 2);
});

// The reference always has a console whose methods without a callback
// throw "TypeError: console.log is not supported"; here, as the contract
// says, a guest given no console callback (and no consoleMode) has no
// console at all: the same failure, guest-safe, as a ReferenceError.
test('console methods fail guest-safely when callbacks are not registered', async (t) => {
  if (!(await needs(t, 'console'))) return;
  await assert.rejects(
    runtime(`
      console.log('alpha');
    `).run(),
    isMustardError({
      kind: 'Runtime',
      message: /console/,
      guestSafe: true,
    }),
  );
});

// ---- from the reference's tests/node/execution-context.test.js ----

test('run and start reject mixing an execution context with raw console callbacks', async () => {
  const context = new ExecutionContext({ capabilities: { fetch_data: (v) => v } });
  await assert.rejects(
    runtime('fetch_data(1);').run({ context, console: { log() {} } }),
    /run options\.context cannot be combined with capabilities, console, limits, or snapshotKey/,
  );
  assert.throws(
    () => runtime('fetch_data(1);').start({ context, console: { log() {} } }),
    /start options\.context cannot be combined with capabilities, console, limits, or snapshotKey/,
  );
});

// ---- the console cases of the reference's property-generators.js ----

test('console callbacks interleave with capability calls', async (t) => {
  if (!(await needs(t, 'console'))) return;
  const trace = [];
  const result = await runtime(`
    function main() {
      const first = fetch_data(4);
      console.log('first', first);
      const second = probe(first + 3);
      console.warn("label", second);
      return { first, second, label: "label" };
    }
    main();
  `).run({
    capabilities: {
      fetch_data(value) {
        trace.push(['fetch_data', value]);
        return value + 1;
      },
      probe(value) {
        trace.push(['probe', value]);
        return value * 2;
      },
    },
    console: {
      log(...args) {
        trace.push(['log', ...args]);
        return 'ignored';
      },
      warn(...args) {
        trace.push(['warn', ...args]);
        return 'ignored';
      },
    },
  });
  assert.deepEqual(result, { first: 5, second: 16, label: 'label' });
  assert.deepEqual(trace, [['fetch_data', 4], ['log', 'first', 5], ['probe', 8], ['warn', 'label', 16]]);
});

test('console callbacks around a capability error caught by the guest', async (t) => {
  if (!(await needs(t, 'console'))) return;
  const trace = [];
  const result = await runtime(`
    function main() {
      try {
        console.error('before', 7);
        lookup(7);
        return 'unreachable';
      } catch (error) {
        console.log('caught', error.name, error.message);
        return [error.name, error.message];
      }
    }
    main();
  `).run({
    capabilities: {
      lookup(entry) {
        const error = new Error(`gone:${entry}`);
        error.name = 'CapabilityError';
        throw error;
      },
    },
    console: {
      error(...args) {
        trace.push(['error', ...args]);
        return 'ignored';
      },
      log(...args) {
        trace.push(['log', ...args]);
        return 'ignored';
      },
    },
  });
  assert.deepEqual(result, ['CapabilityError', 'gone:7']);
  assert.deepEqual(trace, [['error', 'before', 7], ['log', 'caught', 'CapabilityError', 'gone:7']]);
});

// ---- the reference's behaviour, checked against mustardscript@0.2.1 ----

test('a console call in async code returns a promise, as in the reference', async (t) => {
  if (!(await needs(t, 'console'))) return;
  const events = [];
  const result = await runtime(`
    async function f() { const x = console.log('in async', 1); return [typeof x, x instanceof Promise]; }
    f();
  `).run({ console: { log: (...a) => { events.push(a); return 'ignored'; } } });
  assert.deepEqual(result, ['object', true]);
  assert.deepEqual(events, [['in async', 1]]);
});

test('console callbacks are checked as the reference checks them', () => {
  assert.throws(() => runtime('1').start({ console: { log: 5 } }), { name: 'TypeError', message: 'console.log must be a function' });
  assert.throws(() => runtime('1').start({ console: { log() {} }, capabilities: { 'console.log': () => 1 } }), {
    name: 'TypeError',
    message: 'Duplicate handler for console.log; use either options.console or options.capabilities',
  });
  assert.throws(() => runtime('1').start({ console: [] }), /console must be a plain object/);
});

test('a callback whose value cannot cross still returns undefined to the guest', async (t) => {
  if (!(await needs(t, 'console'))) return;
  const result = await runtime(`[console.info('x')]`).run({ console: { info: () => () => 1 } });
  assert.deepEqual(result, [undefined]);
});

// As in the reference, a console callback's error throws in the guest.
test('a throwing console callback throws in the guest', async (t) => {
  if (!(await needs(t, 'console'))) return;
  const result = await runtime(`let m; try { console.log('x'); } catch (e) { m = e.message; } m;`).run({
    console: { log() { throw new Error('boom'); } },
  });
  assert.equal(result, 'boom');
});

// ---- this package's options ----

test('consoleMode "collect" returns each step\'s lines: onLog, Progress.logs and error.logs', async (t) => {
  if (!(await needs(t, 'console'))) return;
  const program = runtime(`console.log('a', 1, true); const x = get(1); console.warn('got', x); console.debug('done'); x + 1;`);
  const lines = [];
  const result = await program.run({ consoleMode: 'collect', onLog: (l) => lines.push(l), capabilities: { get: () => 5 } });
  assert.equal(result, 6);
  assert.deepEqual(lines, [
    { level: 'log', text: 'a 1 true' },
    { level: 'warn', text: 'got 5' },
    { level: 'debug', text: 'done' },
  ]);

  // Synchronously, and cold from a dump: each step has its own lines.
  const progress = program.start({ consoleMode: 'collect', capabilities: { get() {} } });
  assert.deepEqual(progress.logs, [{ level: 'log', text: 'a 1 true' }]);
  assert.equal(progress.resume(5), 6);
  const later = [];
  const key = 'k'.repeat(32);
  const keyed = program.start({ consoleMode: 'collect', capabilities: { get() {} }, snapshotKey: key });
  const again = Progress.load(keyed.dump(), { capabilities: { get() {} }, limits: {}, snapshotKey: key, onLog: (l) => later.push(l) });
  assert.equal(await again.resumeAsync(5), 6);
  assert.deepEqual(later, [{ level: 'warn', text: 'got 5' }, { level: 'debug', text: 'done' }]);

  const failing = runtime(`console.error('about to fail'); throw new TypeError('bad');`);
  const seen = [];
  await assert.rejects(failing.run({ consoleMode: 'collect', onLog: (l) => seen.push(l) }), (e) =>
    e instanceof MustardRuntimeError && e.logs.length === 1 && e.logs[0].text === 'about to fail');
  assert.deepEqual(seen, [{ level: 'error', text: 'about to fail' }]);
  assert.throws(() => failing.start({ consoleMode: 'collect' }), (e) => e instanceof MustardRuntimeError && e.logs[0].level === 'error');
});

test('limits.maxLogBytes bounds a step\'s lines', async (t) => {
  if (!(await needs(t, 'console'))) return;
  const lines = [];
  await runtime(`console.log('aaaa'); console.log('bbbb'); console.log('c'); 1`).run({
    consoleMode: 'collect',
    limits: { maxLogBytes: 5 },
    onLog: (l) => lines.push(l),
  });
  assert.equal(lines.length, 2);
  assert.deepEqual(lines[0], { level: 'log', text: 'aaaa' });
  assert.equal(lines[1].level, 'warn');
  assert.match(lines[1].text, /2 more log lines dropped/);
});

test('consoleMode and onLog are checked', () => {
  assert.throws(() => runtime('1').start({ consoleMode: 'all' }), /consoleMode must be "off" or "collect"/);
  assert.throws(() => runtime('1').start({ onLog: 1 }), /onLog must be a function/);
  assert.throws(() => runtime('1').start({ entry: 'main' }), /entry must be "script" or "call"/);
  assert.throws(() => runtime('1', { language: 'coffee' }), /language must be "javascript" or "typescript"/);
});

test('dotted capability names are namespaces in the guest', async (t) => {
  if (!(await needs(t, 'namespaces'))) return;
  const calls = [];
  const capabilities = {
    'github.search': (q) => {
      calls.push(['github.search', q]);
      return [{ id: 1 }];
    },
    'github.create_issue': ({ title }) => {
      calls.push(['github.create_issue', title]);
      return { number: 7 };
    },
  };
  const source = `
    async function main() {
      const [hit] = await github.search('bug');
      const issue = await github.create_issue({ title: 'found ' + hit.id });
      return issue.number;
    }
    main();
  `;
  for (const hostCalls of ['one', 'batch']) {
    calls.length = 0;
    assert.equal(await runtime(source).run({ capabilities, hostCalls }), 7);
    assert.deepEqual(calls, [['github.search', 'bug'], ['github.create_issue', 'found 1']]);
  }
  const step = runtime(`github.search('x')`).start({ capabilities });
  assert.equal(step.capability, 'github.search');
  assert.deepEqual(step.resume(['r']), ['r']);
});

test('entry "call" calls the function the program evaluates to with the inputs', async (t) => {
  if (!(await needs(t, 'entry_call'))) return;
  const program = runtime(`async ({ who, n }) => who + ':' + (await get(n))`);
  assert.equal(await program.run({ entry: 'call', inputs: { who: 'w', n: 2 }, capabilities: { get: (n) => n * 2 } }), 'w:4');
  await assert.rejects(runtime('42').run({ entry: 'call' }), (e) =>
    e instanceof MustardRuntimeError && /program did not evaluate to a function \(got number\)/.test(e.message));
});

test('language "typescript" compiles TypeScript', async (t) => {
  if (!(await needs(t, 'typescript'))) return;
  const program = runtime(`interface P { n: number }\nconst add = (p: P, m: number): number => p.n + m;\nadd({ n: 1 } as P, 2);\n`, {
    language: 'typescript',
  });
  assert.equal(await program.run(), 3);
  assert.equal(program.start(), 3);
});
