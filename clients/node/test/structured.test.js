'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');

const { encode, decode } = require('../lib/structured.js');
const { Mustard } = require('..');

test('encode and decode keep -0, NaN, ±Infinity, undefined, holes, lone surrogates and key order', () => {
  const value = { b: [1, , -0, NaN, Infinity, -Infinity, undefined], a: '\ud800x\udfff', z: null, 2: true, 1: { '': 'empty' } };
  const wire = encode(value);
  assert.deepEqual(wire.Object.b.Array[1], 'Hole');
  assert.deepEqual(wire.Object.b.Array[2], { Number: 'NegZero' });
  const back = decode(JSON.parse(JSON.stringify(wire)));
  assert.deepEqual(Object.keys(back), ['1', '2', 'b', 'a', 'z']);
  assert.ok(Object.is(back.b[2], -0));
  assert.ok(Number.isNaN(back.b[3]));
  assert.equal(back.b[4], Infinity);
  assert.equal(back.b[5], -Infinity);
  assert.ok(!(1 in back.b));
  assert.ok(6 in back.b && back.b[6] === undefined);
  assert.equal(back.a, '\ud800x\udfff');
  const proto = decode({ Object: JSON.parse('{"__proto__":{"String":"x"}}') });
  assert.equal(Object.getPrototypeOf(proto), Object.prototype);
  assert.deepEqual(Object.keys(proto), ['__proto__']);
});

test('encode refuses what cannot cross, with the reference\'s messages', () => {
  const cyclic = {};
  cyclic.self = cyclic;
  let deep = 1;
  for (let i = 0; i < 200; i += 1) deep = [deep];
  const cases = [
    [() => {}, 'Unsupported host value'],
    [Symbol('s'), 'Unsupported host value'],
    [10n, 'Unsupported host value'],
    [new Map(), 'Unsupported host value: only plain objects and arrays can cross the host boundary'],
    [new Date(0), 'Unsupported host value: only plain objects and arrays can cross the host boundary'],
    [/x/, 'Unsupported host value: only plain objects and arrays can cross the host boundary'],
    [new Error('e'), 'Unsupported host value: only plain objects and arrays can cross the host boundary'],
    [Object(1), 'Unsupported host value: only plain objects and arrays can cross the host boundary'],
    [new (class K {})(), 'Unsupported host value: only plain objects and arrays can cross the host boundary'],
    [new Proxy({}, {}), 'Proxy values cannot cross the host boundary'],
    [{ get x() { return 1; } }, 'host objects with accessors cannot cross the host boundary'],
    [cyclic, 'cyclic values cannot cross the host boundary'],
    [deep, 'host boundary nesting limit exceeded'],
    [{ a: [1, { f() {} }] }, 'Unsupported host value'],
  ];
  for (const [value, message] of cases) {
    assert.throws(() => encode(value), (e) => e instanceof TypeError && e.message === message, message);
  }
  const shared = { x: 1 };
  assert.deepEqual(decode(encode([shared, shared])), [{ x: 1 }, { x: 1 }]);
  const long = [];
  long.length = 1_000_001;
  assert.throws(() => encode(long), /arrays longer than 1000000 elements cannot cross the host boundary/);
});

test('decode refuses what is not a StructuredValue', () => {
  assert.throws(() => decode({ Number: { Finite: '1' } }), /Unsupported structured value/);
  assert.throws(() => decode('Hole'), /Unsupported structured value/);
  let deep = 'Null';
  for (let i = 0; i < 130; i += 1) deep = { Array: [deep] };
  assert.throws(() => decode(deep), /structured host boundary nesting limit exceeded/);
});

test('values round-trip through the sidecar, both ways', async () => {
  const program = new Mustard('const got = echo(input); [got, input, Object.is(got[2], -0), got.length];');
  const input = [NaN, Infinity, -0, -Infinity, undefined, , '\udc00lone', { k: null, j: [true] }];
  const seen = [];
  const result = await program.run({
    inputs: { input },
    capabilities: {
      echo: (v) => {
        seen.push(v);
        return v;
      },
    },
  });
  assert.deepEqual(seen[0], input);
  assert.ok(Object.is(seen[0][2], -0));
  assert.ok(!(5 in seen[0]));
  assert.deepEqual(result[0], input);
  assert.ok(Object.is(result[1][2], -0));
  assert.equal(result[2], true);
  assert.equal(result[3], 8);
  assert.equal(result[0][6], '\udc00lone');
  await assert.rejects(
    program.run({ inputs: { input: [new Date()] }, capabilities: { echo: (v) => v } }),
    { name: 'TypeError', message: 'Unsupported host value: only plain objects and arrays can cross the host boundary' },
  );
  await assert.rejects(
    program.run({ inputs: { input: [] }, capabilities: { echo: () => new Set() } }),
    { name: 'TypeError', message: 'Unsupported host value: only plain objects and arrays can cross the host boundary' },
  );
});
