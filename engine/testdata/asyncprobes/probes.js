// The async host-call probes. record.js runs each one on the reference
// (mustardscript) and on V8 with the reference's model simulated and
// writes expected.json; see README.md.
//
// A probe is {name, from?, source, capabilities, inputs?, limits?, host,
// departs?, exactError?}:
//   - from: the reference's test file the program is taken or derived from;
//   - inputs: plain JavaScript values, one global per key;
//   - limits: snake_case limits as in CONTRACT.md;
//   - host: per capability, the rule the host answers with (record.js
//     lists the kinds: times10, echo, const, fail, cancel, table, seq);
//   - departs: {against, why}: the reference's behaviour departs from
//     ECMAScript, from the contract or from the guest language, and V8's is
//     recorded (expected.json carries `why`); record.js fails when a
//     probe's runs differ without one, or agree with one;
//   - exactError: overrides whether an error result's message is compared
//     (by default: host and guest text is, the engines' own wording is not).
'use strict';

const T10 = { kind: 'times10' };
const ECHO = { kind: 'echo' };
const err = (message, name = 'ToolError', extra = {}) => ({ name, message, ...extra });
const FAIL_BOOM = { kind: 'fail', error: err('boom') };
// fails with "m<first argument>" for the listed arguments, times10 otherwise
const failFor = (...xs) => ({
  kind: 'table',
  rules: xs.map((x) => ({ args: [x], error: err(`m${x}`) })),
  else: T10,
});

// Why the reference departs, and from what: ECMAScript, the contract
// (CONTRACT.md), or the guest language (a construct it does not run).
const REVERSED = {
  against: 'ECMAScript',
  why: 'the reference runs async callbacks started by a built-in (map, forEach) in reverse order, so their calls reach the host last first',
};
const AWAIT_FIRST = {
  against: 'ECMAScript',
  why: 'the reference resumes a function awaiting a promise before the then callbacks registered on that promise earlier',
};
const SYNC_IN_BUILTIN = {
  against: 'ECMAScript',
  why: 'the reference cannot suspend synchronously inside a callback a built-in calls in top-level code (it fails with "vm lost all frames")',
};
const CAP_AS_CALLBACK = {
  against: 'ECMAScript',
  why: 'the reference refuses a capability passed as the callback of a built-in in top-level code; ECMAScript calls it with the element, index and array',
};
const IDLE_WITH_PENDING = {
  against: 'ECMAScript',
  why: 'the reference fails ("async execution became idle with pending work") when the result is not a promise and a promise that never settles has handlers',
};
const NO_AGGREGATE_ERROR = {
  against: 'ECMAScript',
  why: 'the reference has no AggregateError global (a ReferenceError), though Promise.any rejects with an AggregateError',
};
const ARG_ERROR = {
  against: 'contract',
  why: 'the reference throws a plain Error for an argument that cannot cross the boundary; the contract (and the product) throw a TypeError',
};
const ERROR_CLASS = {
  against: 'contract',
  why: 'the reference makes a host error named TypeError an instance of TypeError; the contract says the name does not pick a class',
};
const NO_GENERATORS = { against: 'language', why: 'the reference rejects generators at compile time (Validation); the product runs them' };
const NO_CLASSES = { against: 'language', why: 'the reference rejects classes at compile time (Validation); the product runs them' };

// main wraps a body in the usual async entry point.
const main = (body) => `async function main() {\n${body}\n}\nmain();`;

const RUNTIME_TESTS = 'tests/node/async-runtime.test.js';
const SCHEDULE_TESTS = 'tests/node/async-schedule.test.js';
const PROGRESS_TESTS = 'tests/node/progress.test.js';
const CANCEL_TESTS = 'tests/node/cancellation.test.js';
const LIMIT_TESTS = 'tests/node/limits.test.js';
const RUST_ASYNC = 'crates/mustard/tests/async_runtime.rs';
const RUST_HOST = 'crates/mustard/src/runtime/tests/async_host.rs';

const probes = [];
const add = (p) => probes.push({ capabilities: ['get'], host: { get: T10 }, ...p });

// ---------------------------------------------------------------------------
// The seven rows the model is specified by.

add({ name: 'then-on-call', source: main('  return get(1).then(x => x + 1);') });
add({
  name: 'await-in-try-host-error',
  source: main("  const p = get(1);\n  try { return await p } catch (e) { return 'caught:' + e.message }"),
  host: { get: FAIL_BOOM },
});
add({
  name: 'allsettled-first-fails',
  source: main('  const r = await Promise.allSettled([get(1), get(2)]);\n  return r.map(x => x.status);'),
  host: { get: failFor(1) },
});
add({ name: 'any-first-fails', source: main('  return Promise.any([get(1), get(2)]);'), host: { get: failFor(1) } });
add({ name: 'unawaited-call-fails', source: main("  get(1);\n  return 'done';"), host: { get: FAIL_BOOM } });
add({ name: 'typeof-instanceof-promise', source: main('  const p = get(1);\n  return [typeof p, p instanceof Promise];') });
add({ name: 'tla-typeof-call', source: 'const t = typeof get(1);\nawait null;\nt' });

// ---------------------------------------------------------------------------
// then / catch / finally on a call's promise.

add({ name: 'then-chain-two-calls', source: main('  return get(1).then(x => get(x + 1)).then(y => y + 1);') });
add({ name: 'catch-on-failing-call', source: main("  return get(1).catch(e => 'c:' + e.name + ':' + e.message);"), host: { get: FAIL_BOOM } });
add({ name: 'catch-on-succeeding-call', source: main("  return get(1).catch(e => 'c:' + e.message);") });
add({
  name: 'then-reject-handler',
  source: main("  return get(1).then(v => 'ok:' + v, e => 'rej:' + e.name + ':' + e.message);"),
  host: { get: FAIL_BOOM },
});
add({
  name: 'finally-on-success',
  source: main("  const ev = [];\n  const v = await get(1).finally(() => { ev.push('finally') });\n  ev.push('v:' + v);\n  return ev;"),
});
add({
  name: 'finally-on-failure',
  source: main("  const ev = [];\n  try {\n    await get(1).finally(() => { ev.push('finally') });\n  } catch (e) {\n    ev.push('caught:' + e.message);\n  }\n  return ev;"),
  host: { get: FAIL_BOOM },
});
add({
  name: 'finally-throw-overrides',
  source: main("  return get(1).finally(() => { throw new Error('from finally') }).catch(e => e.message);"),
});
add({
  name: 'finally-returns-call',
  source: main("  const ev = [];\n  const v = await get(1).finally(() => get(2).then(x => { ev.push('inner:' + x) }));\n  return [v, ev];"),
});
add({
  name: 'then-returns-failing-call',
  source: main("  return get(1).then(x => get(x)).catch(e => 'c:' + e.message);"),
  host: { get: failFor(10) },
});
add({
  name: 'then-callback-is-capability',
  from: RUST_ASYNC,
  source: main('  return await Promise.resolve(7).then(fetch_data);'),
  capabilities: ['fetch_data'],
  host: { fetch_data: { kind: 'const', value: 21 } },
});
add({
  name: 'host-error-properties',
  from: RUNTIME_TESTS,
  source: main('  try {\n    await fetch_data(1);\n  } catch (error) {\n    return [error.name, error.message, error.code, error.details.reason, error instanceof Error];\n  }'),
  capabilities: ['fetch_data'],
  host: { fetch_data: { kind: 'fail', error: err('upstream failed', 'CapabilityError', { code: 'E_UPSTREAM', details: { reason: 'timeout' } }) } },
});
add({
  name: 'host-error-without-code',
  source: main("  try {\n    await get(1);\n  } catch (e) {\n    return [e.name, e.message, e.code === undefined, e.details === undefined, 'code' in e];\n  }"),
  host: { get: { kind: 'fail', error: { message: 'no name' } } },
});
add({
  name: 'host-error-name-is-not-class',
  source: main('  try {\n    await get(1);\n  } catch (e) {\n    return [e.name, e instanceof Error, e instanceof TypeError];\n  }'),
  host: { get: { kind: 'fail', error: err('typed', 'TypeError') } },
  departs: ERROR_CLASS,
});
add({
  name: 'catch-then-chain-continues',
  source: main("  return get(1).catch(() => 5).then(v => get(v)).then(v => v + 1);"),
  host: { get: failFor(1) },
});

// ---------------------------------------------------------------------------
// await in try with host errors.

add({
  name: 'try-catch-finally-order',
  from: SCHEDULE_TESTS,
  source: main("  const ev = [];\n  try {\n    const v = await get(1);\n    ev.push('value:' + v);\n  } catch (e) {\n    ev.push('caught:' + e.name + ':' + e.message);\n  } finally {\n    ev.push('finally');\n  }\n  return ev;"),
  host: { get: FAIL_BOOM },
});
add({
  name: 'catch-rethrows',
  source: main("  try {\n    await get(1);\n  } catch (e) {\n    e.message = 'again:' + e.message;\n    throw e;\n  }"),
  host: { get: FAIL_BOOM },
});
add({ name: 'uncaught-host-error', source: main('  return await get(1);'), host: { get: FAIL_BOOM } });
add({
  name: 'uncaught-host-error-returned-promise',
  source: main('  return get(1);'),
  host: { get: { kind: 'fail', error: err('not found', 'NotFound', { code: 'E404' }) } },
});
add({
  name: 'continue-after-caught-error',
  source: main("  let a;\n  try { a = await get(1) } catch (e) { a = 'failed:' + e.message }\n  const b = await get(2);\n  return [a, b];"),
  host: { get: failFor(1) },
});
add({
  name: 'nested-try-finally-order',
  source: main("  const ev = [];\n  try {\n    try {\n      await get(1);\n    } finally {\n      ev.push('inner finally');\n    }\n  } catch (e) {\n    ev.push('outer catch:' + e.message);\n  }\n  return ev;"),
  host: { get: FAIL_BOOM },
});
add({
  name: 'retry-loop',
  source: main("  for (let i = 0; i < 5; i++) {\n    try {\n      return 'ok:' + await get(i);\n    } catch (e) {\n      if (i === 4) throw e;\n    }\n  }"),
  host: { get: failFor(0, 1, 2) },
});
add({
  name: 'error-caught-in-caller',
  source: "async function load(x) {\n  return (await get(x)) * 2;\n}\nasync function main() {\n  try {\n    return await load(1);\n  } catch (e) {\n    return 'caller:' + e.message;\n  }\n}\nmain();",
  host: { get: FAIL_BOOM },
});
add({
  name: 'error-finally-return-overrides',
  source: main("  try {\n    await get(1);\n  } finally {\n    return 'finally wins';\n  }"),
  host: { get: FAIL_BOOM },
});
add({
  name: 'rejection-handled-late',
  source: main('  const p = get(1);\n  await get(2);\n  try {\n    await p;\n  } catch (e) {\n    return e.message;\n  }'),
  host: { get: failFor(1) },
});

// ---------------------------------------------------------------------------
// Promise.all / allSettled / any / race over calls.

add({ name: 'all-calls', source: main('  return Promise.all([get(1), get(2), get(3)]);') });
add({
  name: 'all-second-fails',
  source: main("  try {\n    await Promise.all([get(1), get(2), get(3)]);\n    return 'unreachable';\n  } catch (e) {\n    return 'all:' + e.message;\n  }"),
  host: { get: failFor(2) },
});
add({
  name: 'all-two-fail-first-wins',
  source: main("  try {\n    await Promise.all([get(1), get(2)]);\n  } catch (e) {\n    return e.message;\n  }"),
  host: { get: failFor(1, 2) },
});
add({
  name: 'all-uncaught-rejection',
  source: main('  return Promise.all([get(1), get(2)]);'),
  host: { get: failFor(2) },
});
add({
  name: 'allsettled-shapes',
  source: main("  const r = await Promise.allSettled([get(1), get(2), 3]);\n  return r.map(x => x.status === 'fulfilled' ? x : { status: x.status, reason: x.reason.message });"),
  host: { get: failFor(2) },
});
add({
  name: 'any-all-fail',
  source: main('  try {\n    await Promise.any([get(1), get(2)]);\n  } catch (e) {\n    return [e.name, e.errors.map(x => x.message)];\n  }'),
  host: { get: failFor(1, 2) },
});
add({
  name: 'any-aggregate-error-global',
  source: main('  try {\n    await Promise.any([get(1)]);\n  } catch (e) {\n    return [e instanceof AggregateError, e instanceof Error];\n  }'),
  host: { get: failFor(1) },
  departs: NO_AGGREGATE_ERROR,
});
add({
  name: 'any-all-fail-uncaught',
  source: main('  return Promise.any([get(1), get(2)]);'),
  host: { get: failFor(1, 2) },
});
add({ name: 'any-first-succeeds', source: main('  return Promise.any([get(1), get(2)]);'), host: { get: failFor(2) } });
add({ name: 'race-first-delivered-wins', source: main('  return Promise.race([get(1), get(2)]);') });
add({
  name: 'race-first-fails',
  source: main("  return Promise.race([get(1), get(2)]).catch(e => 'race:' + e.message);"),
  host: { get: failFor(1) },
});
add({ name: 'race-second-fails', source: main('  return Promise.race([get(1), get(2)]);'), host: { get: failFor(2) } });
add({
  name: 'race-with-settled-value',
  source: main("  return Promise.race([get(1), Promise.resolve('already')]);"),
});
add({
  name: 'all-mixed-values-and-calls',
  source: main("  return Promise.all([0, get(1), Promise.resolve('p'), get(2)]);"),
});
add({ name: 'all-map-calls', from: RUST_ASYNC, source: main('  const values = await Promise.all([1, 2].map((value) => fetch_data(value)));\n  return values;'), capabilities: ['fetch_data'], host: { fetch_data: { kind: 'seq', answers: [{ value: 10 }, { value: 20 }] } } });
add({
  name: 'all-array-from-set',
  from: RUST_ASYNC,
  source: main('  const values = await Promise.all(\n    Array.from(new Set([1, 2]), (value) => fetch_data(value))\n  );\n  return values;'),
  capabilities: ['fetch_data'],
  host: { fetch_data: { kind: 'seq', answers: [{ value: 100 }, { value: 200 }] } },
});
add({
  name: 'allsettled-async-arrow-map',
  source: main('  const r = await Promise.allSettled([1, 2, 3].map(async (id) => get(id)));\n  return r.map(x => x.status);'),
  host: { get: failFor(2) },
  departs: REVERSED,
});
add({
  name: 'all-empty-then-call',
  source: main('  const none = await Promise.all([]);\n  return [none, await get(1)];'),
});
add({
  name: 'any-errors-in-input-order',
  source: main('  const p1 = get(1), p2 = get(2), p3 = get(3);\n  try {\n    await Promise.any([p3, p1, p2]);\n  } catch (e) {\n    return e.errors.map(x => x.message);\n  }'),
  host: { get: failFor(1, 2, 3) },
});

// The combinator matrix of async-schedule.test.js, with host calls in
// place of Promise.resolve/reject: every combinator, every pair of
// outcomes, both input orders.
const COMBINATOR = (combinator, labels) => `async function main() {
  const guestTrace = [];
  function observe(label, promise) {
    return promise
      .then(
        (value) => {
          guestTrace[guestTrace.length] = label + ':value:' + value;
          return value;
        },
        (reason) => {
          guestTrace[guestTrace.length] = label + ':error:' + reason.message;
          throw reason;
        },
      )
      .finally(() => {
        guestTrace[guestTrace.length] = label + ':finally';
      });
  }
  const first = observe(${JSON.stringify(labels[0])}, fetch_data(${JSON.stringify(labels[0])}));
  const second = observe(${JSON.stringify(labels[1])}, fetch_data(${JSON.stringify(labels[1])}));
  let combined;
  try {
    const value = await Promise.${combinator}([first, second]);
    combined = Array.isArray(value)
      ? value.map((r) => (r && r.status === 'rejected' ? { status: r.status, reason: r.reason.message } : r))
      : value;
    guestTrace[guestTrace.length] = 'combined:value';
  } catch (error) {
    if (error && typeof error === 'object' && Array.isArray(error.errors)) {
      combined = ['AggregateError', error.errors.map((e) => e.message)];
    } else {
      combined = ['error', error.message];
    }
    guestTrace[guestTrace.length] = 'combined:error';
  }
  const nested = await Promise.resolve(await Promise.resolve('nested'));
  guestTrace[guestTrace.length] = nested;
  return { result: { combined, nested }, guestTrace };
}
main();`;
for (const combinator of ['all', 'allSettled', 'race', 'any']) {
  for (const alpha of ['resolve', 'reject']) {
    for (const beta of ['resolve', 'reject']) {
      for (const order of [['alpha', 'beta'], ['beta', 'alpha']]) {
        if (order[0] === 'beta' && alpha === beta) continue; // the same schedule as the other order
        const outcome = { alpha, beta };
        add({
          name: `combinator-${combinator}-${order.map((l) => `${l}-${outcome[l]}`).join('-')}`,
          from: SCHEDULE_TESTS,
          source: COMBINATOR(combinator, order),
          capabilities: ['fetch_data'],
          host: {
            fetch_data: {
              kind: 'table',
              rules: ['alpha', 'beta'].map((l) =>
                outcome[l] === 'resolve' ? { args: [l], value: `${l}:value` } : { args: [l], error: err(`${l}:error`, 'CapabilityError') },
              ),
            },
          },
        });
      }
    }
  }
}

// The promise-chain matrix of async-schedule.test.js, the base being a call.
for (const base of ['resolve', 'reject']) {
  for (const finallyRejects of [false, true]) {
    add({
      name: `chain-${base}-finally-${finallyRejects ? 'rejects' : 'passes'}`,
      from: SCHEDULE_TESTS,
      source: `async function main() {
  const guestTrace = [];
  const base = fetch_data('base');
  const outcome = await base
    .finally(() => {
      guestTrace[guestTrace.length] = 'finally';
      return ${finallyRejects ? 'Promise.reject("finally:error")' : 'Promise.resolve("finally:pass")'};
    })
    .then((value) => {
      guestTrace[guestTrace.length] = 'then:' + value;
      return ['value', value];
    })
    .catch((reason) => {
      guestTrace[guestTrace.length] = 'catch:' + (typeof reason === 'string' ? reason : reason.message);
      return ['error', typeof reason === 'string' ? reason : reason.message];
    });
  const nested = await Promise.resolve(await Promise.resolve('nested'));
  guestTrace[guestTrace.length] = nested;
  return { result: { outcome, nested }, guestTrace };
}
main();`,
      capabilities: ['fetch_data'],
      host: { fetch_data: base === 'resolve' ? { kind: 'const', value: 'base:value' } : { kind: 'fail', error: err('base:error', 'CapabilityError') } },
    });
  }
}

// The host schedule of async-schedule.test.js: two settle() calls in flight.
const HOST_SCHEDULE = `async function settle(label, value, guestTrace) {
  try {
    const resolved = await fetch_data(label, value);
    guestTrace[guestTrace.length] = label + ':value:' + resolved;
    return 'value:' + resolved;
  } catch (error) {
    guestTrace[guestTrace.length] = label + ':error:' + error.name + ':' + error.message;
    return 'error:' + error.name + ':' + error.message;
  } finally {
    guestTrace[guestTrace.length] = label + ':finally';
  }
}
async function main() {
  const guestTrace = [];
  const first = settle('first', 1, guestTrace);
  guestTrace[guestTrace.length] = 'queued:first';
  const second = settle('second', 2, guestTrace);
  guestTrace[guestTrace.length] = 'queued:second';
  const result = await Promise.all([first, second]);
  guestTrace[guestTrace.length] = 'combined';
  return { result, guestTrace };
}
main();`;
for (const first of ['value', 'error']) {
  for (const second of ['value', 'error']) {
    const rule = (label, value, outcome) =>
      outcome === 'value'
        ? { args: [label, value], value: `${label}:${value * 10}` }
        : { args: [label, value], error: err(`${label}:${value}:boom`, 'CapabilityError') };
    add({
      name: `host-schedule-${first}-${second}`,
      from: SCHEDULE_TESTS,
      source: HOST_SCHEDULE,
      capabilities: ['fetch_data'],
      host: { fetch_data: { kind: 'table', rules: [rule('first', 1, first), rule('second', 2, second)] } },
    });
  }
}

// ---------------------------------------------------------------------------
// Calls nobody awaits.

add({
  name: 'unawaited-calls-all-delivered',
  source: main("  get(1);\n  get(2);\n  return await get(3);"),
  host: { get: failFor(2) },
});
add({ name: 'unawaited-call-succeeds', source: main("  get(1);\n  return 'done';") });
add({
  name: 'unawaited-then-throws',
  source: main("  get(1).then(() => { throw new Error('lost') });\n  return 'ok';"),
});
add({
  name: 'unawaited-call-after-result-settled',
  source: main("  const ev = [];\n  get(1).then(v => ev.push(v));\n  return ev;"),
});
add({
  name: 'unawaited-rejection-top-level-sync',
  source: "Promise.reject(new Error('x'));\n1",
  capabilities: [],
  host: {},
});
add({
  name: 'unawaited-rejection-in-async',
  source: main("  Promise.reject(new Error('x'));\n  get(1).then(() => Promise.reject(new Error('y')));\n  return 1;"),
});
add({
  name: 'unawaited-call-in-plain-async-function',
  source: "async function f() {\n  await get(1);\n}\nf();\n'sync'",
});

// ---------------------------------------------------------------------------
// What a call returns.

add({
  name: 'promise-identity-checks',
  source: main("  const p = get(1);\n  return [p.constructor === Promise, typeof p.then, typeof p.catch, (await p) === 10];"),
});
add({
  name: 'call-result-in-then-callback-is-promise',
  source: main("  return Promise.resolve(1).then(x => { const p = get(x); return [typeof p, p instanceof Promise] });"),
});
add({
  name: 'two-calls-two-promises',
  source: main('  const a = get(1), b = get(1);\n  return [a === b, await a, await b];'),
});
add({
  name: 'await-call-twice',
  source: main('  const p = get(1);\n  return [await p, await p];'),
});
add({
  name: 'sync-typeof-number',
  source: 'typeof get(1)',
});

// ---------------------------------------------------------------------------
// Top-level await.

add({ name: 'tla-await-call', from: RUST_ASYNC, source: 'const resolved = await fetch_data(6);\nresolved * 2;', capabilities: ['fetch_data'], host: { fetch_data: { kind: 'const', value: 9 } } });
add({ name: 'tla-call-after-await-is-async', source: 'await null;\nconst t = typeof get(1);\nt' });
add({ name: 'tla-calls-before-await', source: 'const p = get(1);\nconst q = get(2);\n[await p, await q]' });
add({ name: 'tla-completion-is-call', source: 'await null;\nget(5)' });
add({ name: 'tla-try-catch', source: "let r;\ntry {\n  r = await get(1);\n} catch (e) {\n  r = 'caught:' + e.message;\n}\nr", host: { get: FAIL_BOOM } });
add({
  name: 'tla-events-order',
  from: RUNTIME_TESTS,
  source: "let events = [];\nconst first = get(3).then((value) => {\n  events[events.length] = 'then:' + value;\n  return value + 4;\n});\nevents[events.length] = 'sync';\nconst resolved = await first;\n[resolved, events];",
});
add({ name: 'tla-loop', source: 'let s = 0;\nfor (const x of [1, 2, 3]) s += await get(x);\ns' });
add({ name: 'tla-uncaught', source: 'const x = await get(1);\nx', host: { get: FAIL_BOOM } });
add({ name: 'tla-promise-all', source: 'const r = await Promise.all([get(1), get(2)]);\nr' });
add({ name: 'tla-helper-call-is-async', source: 'function h(x) {\n  return get(x);\n}\nconst p = h(1);\nconst t = typeof p;\n[t, await p]' });
add({
  name: 'tla-unawaited-failing-call',
  source: "get(1);\nawait null;\n'done'",
  host: { get: FAIL_BOOM },
});

// ---------------------------------------------------------------------------
// Synchronous calls at top level.

add({ name: 'sync-top-level-value', from: RUST_HOST, source: 'const value = fetch_data(41);\nvalue + 1;', capabilities: ['fetch_data'], host: { fetch_data: ECHO } });
add({
  name: 'sync-top-level-error-caught',
  from: RUST_HOST,
  source: 'let captured;\ntry {\n  fetch_data(1);\n} catch (error) {\n  captured = [error.name, error.message, error.code, error.details.status];\n}\ncaptured;',
  capabilities: ['fetch_data'],
  host: { fetch_data: { kind: 'fail', error: err('upstream failed', 'CapabilityError', { code: 'E_UPSTREAM', details: { status: 503 } }) } },
});
add({ name: 'sync-top-level-uncaught', source: 'const x = get(1);\nx + 1', host: { get: FAIL_BOOM } });
add({ name: 'sync-progress-double', from: PROGRESS_TESTS, source: 'const response = fetch_data(4);\nresponse * 2;', capabilities: ['fetch_data'], host: { fetch_data: ECHO } });
add({ name: 'sync-progress-bare-call', from: PROGRESS_TESTS, source: 'fetch_data(4);', capabilities: ['fetch_data'], host: { fetch_data: ECHO } });
add({ name: 'sync-in-helper-function', source: 'function f(x) {\n  return get(x) + 1;\n}\nf(1)' });
add({ name: 'sync-in-loop', source: 'let s = 0;\nfor (let i = 1; i <= 3; i++) s += get(i);\ns' });
add({
  name: 'sync-before-queued-async',
  source: "async function f() {\n  return get('a');\n}\nconst p = f();\nconst b = get('b');\np.then(a => [a, b])",
  host: { get: ECHO },
});
add({
  name: 'sync-then-async-in-then',
  source: 'const a = get(1);\nPromise.resolve().then(() => get(a))',
});
add({
  name: 'sync-while-async-function-waits',
  source: "async function f() {\n  await null;\n  return get(2);\n}\nconst p = f();\nconst a = get(1);\np.then(b => [a, b])",
});
add({
  name: 'sync-call-in-arrow-at-top-level',
  source: 'const twice = (x) => get(x) * 2;\ntwice(1) + twice(2)',
});
add({
  name: 'sync-calls-in-map-callback',
  source: '[1, 2].map(x => get(x))',
  departs: SYNC_IN_BUILTIN,
});
add({
  name: 'sync-capability-as-map-callback',
  source: '[1, 2].map(get)',
  departs: CAP_AS_CALLBACK,
});
add({
  name: 'sync-in-generator',
  source: 'function* g() {\n  yield get(1);\n  yield get(2);\n}\n[...g()]',
  departs: NO_GENERATORS,
});
add({
  name: 'sync-arg-not-structured',
  source: 'let r;\ntry {\n  get(() => 1);\n} catch (e) {\n  r = [e.name, e instanceof TypeError];\n}\nr',
  departs: ARG_ERROR,
});
add({
  name: 'sync-max-outstanding-zero',
  source: 'get(1) + 1',
  limits: { max_outstanding_host_calls: 0 },
});
add({
  name: 'sync-cancelled',
  from: CANCEL_TESTS,
  source: "try {\n  const value = fetch_data(1);\n  value + 1;\n} catch (error) {\n  'guest-caught';\n}",
  capabilities: ['fetch_data'],
  host: { fetch_data: { kind: 'cancel' } },
});

// ---------------------------------------------------------------------------
// Calls in callbacks of built-ins, called from async code.

add({
  name: 'foreach-calls-from-async',
  source: main('  const ps = [];\n  [1, 2, 3].forEach(x => ps.push(get(x)));\n  return Promise.all(ps);'),
});
add({
  name: 'map-calls-events',
  from: RUST_ASYNC,
  source: main("  const ev = [];\n  const ps = [1, 2, 3].map((x) => {\n    ev.push('s' + x);\n    return get(x);\n  });\n  const r = await Promise.all(ps);\n  return [r, ev];"),
});
add({
  name: 'map-async-callbacks-events',
  source: main("  const ev = [];\n  const ps = [1, 2, 3].map(async (x) => {\n    ev.push('s' + x);\n    const v = await get(x);\n    ev.push('e' + v);\n    return v;\n  });\n  const r = await Promise.all(ps);\n  return [r, ev];"),
  departs: REVERSED,
});
add({
  name: 'foreach-async-callbacks-events',
  source: main("  const ev = [];\n  [1, 2, 3].forEach(async (x) => {\n    ev.push('s' + x);\n    const v = await get(x);\n    ev.push('e' + v);\n  });\n  await null;\n  return ev;"),
  departs: REVERSED,
});
add({
  name: 'reduce-sequential-chain',
  source: main('  return [1, 2, 3].reduce((acc, x) => acc.then(s => get(x).then(v => s + v)), Promise.resolve(0));'),
});
add({
  name: 'filter-then-map-calls',
  source: main('  return Promise.all([1, 2, 3, 4].filter(x => x % 2 === 0).map(x => get(x)));'),
});
add({
  name: 'helper-called-from-async',
  source: 'function h(x) {\n  return get(x);\n}\nasync function main() {\n  const p = h(1);\n  return [typeof p, await p];\n}\nmain();',
});
add({
  name: 'helper-nested-in-async-called-at-top-level',
  source: 'async function outer() {\n  return 1;\n}\nfunction h(x) {\n  return get(x);\n}\nconst v = h(2);\nouter().then(o => [o, v])',
});
add({
  name: 'for-of-sequential-awaits',
  source: main('  const out = [];\n  for (const x of [1, 2, 3]) out.push(await get(x));\n  return out;'),
});
add({
  name: 'map-capability-direct-in-async',
  source: main('  return Promise.all([1, 2].map(get));'),
});
add({
  name: 'async-method-on-object',
  source: "const api = {\n  async load(x) {\n    return (await get(x)) + 1;\n  },\n};\napi.load(1)",
});
add({
  name: 'async-class-method',
  source: 'class Repo {\n  async load(x) {\n    return (await get(x)) + 1;\n  }\n}\nnew Repo().load(2)',
  departs: NO_CLASSES,
});
add({
  name: 'async-iife-at-top-level',
  source: '(async () => {\n  const a = await get(1);\n  return a + (await get(2));\n})()',
});

// ---------------------------------------------------------------------------
// Promise executors.

add({
  name: 'executor-approval-bridge',
  from: RUNTIME_TESTS,
  source: "function wrapDouble(value) {\n  return new Promise((resolve, reject) => {\n    Promise.resolve(value)\n      .then((resolved) => resolve(resolved * 2))\n      .catch(reject);\n  });\n}\nasync function waitForApproval(ticketId) {\n  return await new Promise((resolve, reject) => {\n    fetch_decision(ticketId)\n      .then((decision) => {\n        if (decision.approved) {\n          resolve(decision.ticketId);\n        } else {\n          reject(decision.reason);\n        }\n      })\n      .catch(reject);\n  });\n}\nasync function main() {\n  const thenable = {};\n  thenable.then = function (resolve) {\n    resolve(wrapDouble(5));\n  };\n  return [await Promise.resolve(thenable), await waitForApproval('A-9')];\n}\nmain();",
  capabilities: ['fetch_decision'],
  host: { fetch_decision: { kind: 'const', value: { approved: true, ticketId: 'A-9:approved' } } },
});
add({
  name: 'executor-approval-denied',
  from: RUNTIME_TESTS,
  source: "async function waitForApproval(ticketId) {\n  return await new Promise((resolve, reject) => {\n    fetch_decision(ticketId)\n      .then((decision) => {\n        if (decision.approved) {\n          resolve(decision.ticketId);\n        } else {\n          reject(decision.reason);\n        }\n      })\n      .catch(reject);\n  });\n}\nwaitForApproval('B-1').catch((reason) => 'denied:' + reason)",
  capabilities: ['fetch_decision'],
  host: { fetch_decision: { kind: 'const', value: { approved: false, reason: 'policy' } } },
});
add({ name: 'executor-top-level-call-is-async', source: 'new Promise((resolve) => {\n  resolve(typeof get(1));\n})' });
add({ name: 'executor-top-level-then', source: 'new Promise((resolve, reject) => get(1).then(resolve, reject))' });
add({
  name: 'executor-host-error-rejects',
  source: "new Promise((resolve, reject) => get(1).then(resolve, reject)).catch(e => 'c:' + e.message)",
  host: { get: FAIL_BOOM },
});
add({ name: 'executor-in-helper', source: 'function wrap(x) {\n  return new Promise((resolve) => resolve(get(x)));\n}\nwrap(2)' });
add({
  name: 'executor-helper-called-in-executor',
  source: 'function h(x) {\n  return get(x);\n}\nnew Promise((resolve) => {\n  const p = h(3);\n  resolve([typeof p]);\n})',
});
add({
  name: 'executor-is-capability',
  source: 'new Promise(get)',
  departs: ARG_ERROR,
});
add({
  name: 'executor-events-order',
  source: main("  const ev = [];\n  const p = new Promise((resolve) => {\n    ev.push('executor');\n    get(1).then(v => { ev.push('host:' + v); resolve(v) });\n    ev.push('executor end');\n  });\n  ev.push('after new');\n  const v = await p;\n  ev.push('awaited:' + v);\n  return ev;"),
});

// ---------------------------------------------------------------------------
// Calls in then callbacks.

add({ name: 'then-callback-call-top-level', source: 'Promise.resolve(1).then(x => get(x))' });
add({ name: 'then-callback-typeof', source: 'Promise.resolve().then(() => typeof get(1))' });
add({ name: 'then-capability-direct-top-level', source: 'Promise.resolve(1).then(get)' });
add({
  name: 'thenable-calls-capability',
  source: main('  const thenable = { then(resolve, reject) { get(4).then(resolve, reject) } };\n  return await thenable;'),
});
add({
  name: 'catch-callback-calls',
  source: main('  return Promise.reject(new Error(\'x\')).catch(() => get(2));'),
});
add({
  name: 'finally-callback-call-value-ignored',
  source: main('  return Promise.resolve(\'kept\').finally(() => get(1));'),
});

// ---------------------------------------------------------------------------
// Ordering.

add({
  name: 'code-after-call-runs-first',
  source: main("  const ev = [];\n  const p = get(1).then(v => ev.push('then:' + v));\n  ev.push('after call');\n  await p;\n  return ev;"),
});
add({
  name: 'interleaved-async-functions',
  source: main("  const ev = [];\n  const a = (async () => {\n    ev.push('a1');\n    await get('a');\n    ev.push('a2');\n    await get('a2');\n    ev.push('a3');\n  })();\n  const b = (async () => {\n    ev.push('b1');\n    await get('b');\n    ev.push('b2');\n  })();\n  await Promise.all([a, b]);\n  return ev;"),
  host: { get: ECHO },
});
add({
  name: 'tick-events-with-calls',
  from: RUNTIME_TESTS,
  source: "let events = [];\nasync function tick(label, value) {\n  events[events.length] = label + ':start';\n  const resolved = await get(value);\n  events[events.length] = label + ':end:' + resolved;\n  return resolved;\n}\nasync function main() {\n  const first = tick('a', 1);\n  const second = tick('b', 2);\n  events[events.length] = 'sync';\n  return [await first, await second, events];\n}\nmain();",
});
add({
  name: 'catch-handlers-run-in-delivery-order',
  source: main("  const ev = [];\n  const ps = [get(1), get(2), get(3)];\n  ps.slice().reverse().forEach(p => p.catch(e => ev.push('c:' + e.message)));\n  await Promise.allSettled(ps);\n  return ev;"),
  host: { get: failFor(1, 2, 3) },
});
add({
  name: 'catch-handlers-attached-in-order',
  source: main("  const ev = [];\n  const ps = [get(1), get(2), get(3)].map(p => p.catch(e => { ev.push('c' + e.message); return 0 }));\n  await Promise.all(ps);\n  return ev;"),
  host: { get: failFor(1, 2, 3) },
});
add({
  name: 'microtasks-drain-before-suspension',
  source: main("  const ev = [];\n  get(1).then(() => ev.push('h1'));\n  Promise.resolve().then(() => ev.push('m1')).then(() => ev.push('m2'));\n  await get(2);\n  ev.push('after2');\n  return ev;"),
});
add({
  name: 'call-in-then-queued-after-earlier-calls',
  source: main('  get(1).then(v => get(v + 1));\n  return get(100);'),
});
add({
  name: 'nested-awaits',
  source: main('  const a = await get(await get(await get(1)));\n  return a;'),
  host: { get: { kind: 'table', rules: [{ args: [1], value: 2 }, { args: [2], value: 3 }, { args: [3], value: 'three' }] } },
});
add({
  name: 'nested-await-in-conditional',
  source: main('  return await ((await get(1)) > 5 ? get(2) : get(3));'),
});
add({
  name: 'await-resolve-of-await',
  source: main('  return await Promise.resolve(await get(1));'),
});
add({
  name: 'deep-async-chain',
  source: 'async function c(x) {\n  return (await get(x)) + 1;\n}\nasync function b(x) {\n  return (await c(x)) + (await get(x + 1));\n}\nasync function a() {\n  return [await b(1), await c(5)];\n}\na();',
});
add({
  name: 'same-function-twice-concurrently',
  source: "async function load(x) {\n  const v = await get(x);\n  return x + ':' + v;\n}\nasync function main() {\n  return Promise.all([load(1), load(1), load(2)]);\n}\nmain();",
});
add({
  name: 'events-around-each-delivery',
  source: main("  const ev = [];\n  const p1 = get(1).then(v => { ev.push('p1:' + v); return get(v); });\n  const p2 = get(2).then(v => { ev.push('p2:' + v); });\n  ev.push('sync');\n  await Promise.all([p1, p2]);\n  ev.push('done');\n  return ev;"),
});
add({
  name: 'await-non-promise-then-call',
  source: main('  const x = await 5;\n  return get(x);'),
});
add({
  name: 'then-order-on-one-call',
  source: main("  const ev = [];\n  const p = get(1);\n  p.then(() => ev.push('first'));\n  p.then(() => ev.push('second'));\n  await p;\n  ev.push('awaited');\n  return ev;"),
  departs: AWAIT_FIRST,
});
add({
  name: 'await-and-then-registration-order',
  source: main("  const ev = [];\n  const p = get(1);\n  const w = (async () => {\n    await p;\n    ev.push('awaited');\n  })();\n  p.then(() => ev.push('then'));\n  await w;\n  await null;\n  return ev;"),
});
add({
  name: 'shaped-rows-input',
  from: RUST_ASYNC,
  source: 'async function load() {\n  const first = rows[0].foo;\n  const resolved = await fetch_data(first);\n  return rows[1].bar + resolved;\n}\nload();',
  capabilities: ['fetch_data'],
  inputs: { rows: [{ foo: 1, bar: 10 }, { foo: 2, bar: 20 }] },
  host: { fetch_data: { kind: 'const', value: 4 } },
});
add({
  name: 'load-times-three',
  from: RUNTIME_TESTS,
  source: 'async function load(value) {\n  const resolved = await fetch_data(value);\n  return resolved * 3;\n}\nload(7);',
  capabilities: ['fetch_data'],
  host: { fetch_data: ECHO },
});
add({
  name: 'two-capabilities-interleaved',
  source: main("  const a = get(1);\n  const b = put('x', 2);\n  const c = get(3);\n  return [await c, await b, await a];"),
  capabilities: ['get', 'put'],
  host: { get: T10, put: { kind: 'const', value: 'stored' } },
});

// ---------------------------------------------------------------------------
// Limits.

add({
  name: 'max-outstanding-zero-async',
  source: main('  return await get(1);'),
  limits: { max_outstanding_host_calls: 0 },
});
add({
  name: 'max-outstanding-one-concurrent',
  from: LIMIT_TESTS,
  source: main('  const first = get(1);\n  const second = get(2);\n  return (await first) + (await second);'),
  limits: { max_outstanding_host_calls: 1 },
});
add({
  name: 'max-outstanding-one-sequential',
  source: main('  const a = await get(1);\n  const b = await get(2);\n  return a + b;'),
  limits: { max_outstanding_host_calls: 1 },
});
add({
  name: 'max-outstanding-one-uncatchable',
  source: main("  try {\n    get(1);\n    get(2);\n  } catch (e) {\n    return 'caught';\n  }\n  return 'no error';"),
  limits: { max_outstanding_host_calls: 1 },
});
add({
  name: 'max-outstanding-one-unawaited-then-await',
  source: main('  get(1);\n  await null;\n  get(2);\n  return 1;'),
  limits: { max_outstanding_host_calls: 1 },
});
add({
  name: 'max-outstanding-one-call-in-then',
  source: main('  return get(1).then(v => get(v));'),
  limits: { max_outstanding_host_calls: 1 },
});
add({
  name: 'max-outstanding-two-three-concurrent',
  source: main('  return Promise.all([get(1), get(2), get(3)]);'),
  limits: { max_outstanding_host_calls: 2 },
});
add({
  name: 'max-outstanding-two-two-concurrent',
  source: main('  return Promise.all([get(1), get(2)]);'),
  limits: { max_outstanding_host_calls: 2 },
});
add({
  name: 'max-outstanding-one-sync-not-counted',
  source: "async function f() {\n  return get('async');\n}\nconst p = f();\nconst s = get('sync');\np.then(a => [a, s])",
  host: { get: ECHO },
  limits: { max_outstanding_host_calls: 1 },
});
add({
  name: 'max-outstanding-one-tla',
  source: 'const a = get(1);\nconst b = get(2);\n[await a, await b]',
  limits: { max_outstanding_host_calls: 1 },
});
add({
  name: 'max-outstanding-one-map',
  source: main('  return Promise.all([1, 2].map(x => get(x)));'),
  limits: { max_outstanding_host_calls: 1 },
});
add({
  name: 'budget-exhausted-after-async-call',
  source: main('  get(1);\n  while (true) {}'),
  limits: { instruction_budget: 100000 },
});
add({
  name: 'budget-exhausted-after-delivery',
  source: main('  await get(1);\n  while (true) {}'),
  limits: { instruction_budget: 100000 },
});
add({
  name: 'budget-exhausted-top-level-after-queued-call',
  source: 'async function f() {\n  await get(1);\n}\nf();\nwhile (true) {}',
  limits: { instruction_budget: 100000 },
});
add({
  name: 'budget-exhausted-in-then-callback',
  source: main("  get(1).then(() => { while (true) {} });\n  get(2);\n  return 'unreachable';"),
  limits: { instruction_budget: 100000 },
});

// ---------------------------------------------------------------------------
// Arguments are captured at the call.

add({
  name: 'args-object-mutated-after-call',
  source: main('  const o = { a: 1 };\n  const p = get(o);\n  o.a = 2;\n  o.b = 3;\n  return await p;'),
  host: { get: ECHO },
});
add({
  name: 'args-array-mutated-after-call',
  source: main('  const xs = [1, 2];\n  const p = get(xs);\n  xs.push(3);\n  xs[0] = 9;\n  return [await p, xs];'),
  host: { get: ECHO },
});
add({
  name: 'args-mutated-before-delivery-in-then',
  source: main('  const o = { n: 1 };\n  Promise.resolve().then(() => { o.n = 2 });\n  const v = await get(o);\n  return [v, o];'),
  host: { get: ECHO },
});
add({
  name: 'args-several-kinds',
  source: main("  return get(1, 'x', [true, null], { k: undefined }, undefined);"),
  host: { get: { kind: 'const', value: 'ok' } },
});
add({
  name: 'args-special-numbers',
  source: main('  const r = await get([NaN, -0, Infinity, -Infinity, 1.5]);\n  return r;'),
  host: { get: ECHO },
});
add({
  name: 'args-hole',
  source: main('  return get([1, , 3]);'),
  host: { get: ECHO },
});
add({
  name: 'args-no-arguments',
  source: main('  return [await get(), await get(undefined)];'),
  host: { get: ECHO },
});
add({
  name: 'answer-is-fresh-object',
  source: main("  const a = await get(1);\n  a.extra = 'x';\n  const b = await get(1);\n  return [a, b];"),
  host: { get: { kind: 'const', value: { n: 1, list: [1, 2] } } },
});
add({
  name: 'answer-special-values',
  source: main('  const v = await get(1);\n  return [1 / v[0], v[1] !== v[1], v[2], 3 in v, v.length, v[4]];'),
  host: { get: { kind: 'const', value: [-0, NaN, -Infinity, undefined, [1, , 3]] } },
});
add({
  name: 'args-not-structured-in-async',
  source: main('  try {\n    get(() => 1);\n    return \'no error\';\n  } catch (e) {\n    return [e.name, e instanceof TypeError];\n  }'),
  departs: ARG_ERROR,
});

// ---------------------------------------------------------------------------
// Cancellation of an async call.

add({
  name: 'cancel-async-call',
  from: SCHEDULE_TESTS,
  source: "async function main() {\n  const guestTrace = [];\n  try {\n    const resolved = await fetch_data('task');\n    guestTrace[guestTrace.length] = 'value:' + resolved;\n    return { result: ['value', resolved], guestTrace };\n  } catch (error) {\n    guestTrace[guestTrace.length] = 'caught:' + error.name + ':' + error.message;\n    return { result: ['caught', error.name, error.message], guestTrace };\n  } finally {\n    guestTrace[guestTrace.length] = 'finally';\n  }\n}\nmain();",
  capabilities: ['fetch_data'],
  host: { fetch_data: { kind: 'cancel' } },
});
add({
  name: 'cancel-async-call-value',
  from: SCHEDULE_TESTS,
  source: "async function main() {\n  const guestTrace = [];\n  try {\n    const resolved = await fetch_data('task');\n    guestTrace[guestTrace.length] = 'value:' + resolved;\n    return { result: ['value', resolved], guestTrace };\n  } catch (error) {\n    guestTrace[guestTrace.length] = 'caught:' + error.name + ':' + error.message;\n    return { result: ['caught', error.name, error.message], guestTrace };\n  } finally {\n    guestTrace[guestTrace.length] = 'finally';\n  }\n}\nmain();",
  capabilities: ['fetch_data'],
  host: { fetch_data: { kind: 'const', value: 'task:done' } },
});
add({
  name: 'cancel-async-call-error',
  from: SCHEDULE_TESTS,
  source: "async function main() {\n  const guestTrace = [];\n  try {\n    const resolved = await fetch_data('task');\n    guestTrace[guestTrace.length] = 'value:' + resolved;\n    return { result: ['value', resolved], guestTrace };\n  } catch (error) {\n    guestTrace[guestTrace.length] = 'caught:' + error.name + ':' + error.message;\n    return { result: ['caught', error.name, error.message], guestTrace };\n  } finally {\n    guestTrace[guestTrace.length] = 'finally';\n  }\n}\nmain();",
  capabilities: ['fetch_data'],
  host: { fetch_data: { kind: 'fail', error: err('task:0:boom', 'CapabilityError') } },
});
add({
  name: 'cancel-second-queued-call',
  from: CANCEL_TESTS,
  source: main("  const ev = [];\n  try {\n    await Promise.all([get(1), get(2)]);\n  } catch (e) {\n    ev.push('caught');\n  }\n  return ev;"),
  host: { get: { kind: 'seq', answers: [{ value: 1 }, { cancel: true }] } },
});

// ---------------------------------------------------------------------------
// What the result settles to.

add({ name: 'root-never-settles', source: 'new Promise(() => {})', capabilities: [], host: {} });
add({
  name: 'root-waits-on-unanswerable',
  source: main('  await new Promise(() => {});\n  return get(1);'),
});
add({
  name: 'root-settled-before-queued-calls',
  source: main("  get(1);\n  get(2);\n  return 'r';"),
});
add({
  name: 'root-rejects-with-calls-queued',
  source: main("  get(1);\n  throw new Error('early');"),
});
add({
  name: 'root-pending-reaction-non-promise-result',
  source: 'const p = new Promise(() => {});\np.then(x => x);\n1',
  capabilities: [],
  host: {},
  departs: IDLE_WITH_PENDING,
});
add({
  name: 'root-thrown-string',
  source: main("  await get(1);\n  throw 'plain string';"),
});
add({
  name: 'root-thrown-string-top-level',
  source: "get(1);\nthrow 'plain string';",
});
add({
  name: 'root-guest-type-error-after-call',
  source: main('  const v = await get(1);\n  return v.missing.field;'),
});
add({
  name: 'root-guest-error-message',
  source: main("  const v = await get(1);\n  throw new RangeError('bad value ' + v);"),
  exactError: true,
});
add({
  name: 'root-result-not-structured',
  source: main("  await get(1);\n  return { e: new Error('x') };"),
});
add({
  name: 'root-async-function-result-object',
  source: main('  const [a, b] = await Promise.all([get(1), get(2)]);\n  return { a, b, sum: a + b };'),
});

module.exports = probes;
