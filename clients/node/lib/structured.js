'use strict';

// StructuredValue: the one value format crossing the boundary, in its JSON
// form (docs/protocol.md#structuredvalue). encode turns a host value into
// it and refuses what cannot cross, with the reference's messages; decode
// turns the sidecar's form back into a JavaScript value. Both keep -0,
// NaN, ±Infinity, undefined, array holes, lone surrogates and key order.

const { types } = require('node:util');

const MAX_DEPTH = 128;
const MAX_ARRAY_LENGTH = 1_000_000;

function assertDepth(depth, label) {
  if (depth > MAX_DEPTH) {
    throw new TypeError(`${label} nesting limit exceeded`);
  }
}

function assertArrayLength(length, label) {
  if (length > MAX_ARRAY_LENGTH) {
    throw new TypeError(
      `${label} arrays longer than ${MAX_ARRAY_LENGTH} elements cannot cross the host boundary`,
    );
  }
}

function isObjectLike(value) {
  return value !== null && (typeof value === 'object' || typeof value === 'function');
}

function assertNotProxy(value) {
  if (isObjectLike(value) && types.isProxy(value)) {
    throw new TypeError('Proxy values cannot cross the host boundary');
  }
}

function hasOwn(value, key) {
  return Object.prototype.hasOwnProperty.call(value, key);
}

function isAccessor(descriptor) {
  return hasOwn(descriptor, 'get') || hasOwn(descriptor, 'set');
}

function defineEnumerable(target, key, value) {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

// dataProperties lists an object's own enumerable string-keyed data
// properties, in property order; an accessor is refused.
function dataProperties(value) {
  assertNotProxy(value);
  const out = [];
  for (const key of Object.keys(value)) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (descriptor === undefined) continue;
    if (isAccessor(descriptor)) {
      throw new TypeError('host objects with accessors cannot cross the host boundary');
    }
    out.push([key, descriptor.value]);
  }
  return out;
}

function encodeNumber(value) {
  if (Number.isNaN(value)) return { Number: 'NaN' };
  if (Object.is(value, -0)) return { Number: 'NegZero' };
  if (value === Infinity) return { Number: 'Infinity' };
  if (value === -Infinity) return { Number: 'NegInfinity' };
  return { Number: { Finite: value } };
}

// encode returns the JSON form of a host value, or throws a TypeError for
// a value that cannot cross: functions, symbols, BigInt, class instances
// (Map, Set, Date, RegExp, Error, boxed primitives, ...), proxies,
// accessors, cycles, nesting past 128 levels, arrays past 10^6 elements.
function encode(value, active = new Set(), depth = 1) {
  assertDepth(depth, 'host boundary');
  switch (typeof value) {
    case 'undefined':
      return 'Undefined';
    case 'boolean':
      return { Bool: value };
    case 'number':
      return encodeNumber(value);
    case 'string':
      return { String: value };
    case 'object':
      break;
    default:
      throw new TypeError('Unsupported host value');
  }
  if (value === null) return 'Null';
  assertNotProxy(value);
  if (active.has(value)) {
    throw new TypeError('cyclic values cannot cross the host boundary');
  }
  if (Array.isArray(value)) {
    assertArrayLength(value.length, 'host boundary');
    active.add(value);
    try {
      const out = new Array(value.length);
      for (let i = 0; i < value.length; i += 1) {
        const descriptor = Object.getOwnPropertyDescriptor(value, String(i));
        if (descriptor === undefined) {
          out[i] = 'Hole';
          continue;
        }
        if (isAccessor(descriptor)) {
          throw new TypeError('host objects with accessors cannot cross the host boundary');
        }
        out[i] = encode(descriptor.value, active, depth + 1);
      }
      return { Array: out };
    } finally {
      active.delete(value);
    }
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) {
    throw new TypeError(
      'Unsupported host value: only plain objects and arrays can cross the host boundary',
    );
  }
  active.add(value);
  try {
    const out = {};
    for (const [key, v] of dataProperties(value)) {
      defineEnumerable(out, key, encode(v, active, depth + 1));
    }
    return { Object: out };
  } finally {
    active.delete(value);
  }
}

function unsupported(value) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch {
    text = String(value);
  }
  if (typeof text === 'string' && text.length > 200) text = `${text.slice(0, 200)}…`;
  return new TypeError(`Unsupported structured value: ${text}`);
}

// decode returns the JavaScript value of a StructuredValue's JSON form.
function decode(value, depth = 1) {
  assertDepth(depth, 'structured host boundary');
  if (value === 'Undefined') return undefined;
  if (value === 'Null') return null;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw unsupported(value);
  }
  if (hasOwn(value, 'Bool') && typeof value.Bool === 'boolean') return value.Bool;
  if (hasOwn(value, 'String') && typeof value.String === 'string') return value.String;
  if (hasOwn(value, 'Number')) {
    const n = value.Number;
    if (n === 'NaN') return NaN;
    if (n === 'Infinity') return Infinity;
    if (n === 'NegInfinity') return -Infinity;
    if (n === 'NegZero') return -0;
    if (n !== null && typeof n === 'object' && typeof n.Finite === 'number') return n.Finite;
    throw unsupported(value);
  }
  if (hasOwn(value, 'Array') && Array.isArray(value.Array)) {
    const items = value.Array;
    assertArrayLength(items.length, 'structured host boundary');
    const out = new Array(items.length);
    for (let i = 0; i < items.length; i += 1) {
      if (items[i] !== 'Hole') out[i] = decode(items[i], depth + 1);
    }
    return out;
  }
  if (hasOwn(value, 'Object') && value.Object !== null && typeof value.Object === 'object') {
    const out = {};
    for (const [key, entry] of Object.entries(value.Object)) {
      defineEnumerable(out, key, decode(entry, depth + 1));
    }
    return out;
  }
  throw unsupported(value);
}

// encodeInputs encodes an inputs object: each own data property is a
// global binding.
function encodeInputs(inputs) {
  if (inputs === undefined) return {};
  if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs)) {
    throw new TypeError('options.inputs must be a plain object');
  }
  const out = {};
  for (const [key, v] of dataProperties(inputs)) {
    defineEnumerable(out, key, encode(v));
  }
  return out;
}

function readOwnData(source, key) {
  const descriptor = Object.getOwnPropertyDescriptor(source, key);
  if (descriptor === undefined) return undefined;
  if (isAccessor(descriptor)) {
    throw new TypeError(`host errors cannot use accessor-backed ${key} properties`);
  }
  return descriptor.value;
}

// encodeError turns what a capability threw into an error payload, as the
// reference does: own name, message and code when they are strings,
// details when present.
function encodeError(error) {
  const source = error instanceof Error ? error : Object(error);
  assertNotProxy(source);
  const name = readOwnData(source, 'name');
  const message = readOwnData(source, 'message');
  const code = readOwnData(source, 'code');
  const details = readOwnData(source, 'details');
  const out = {
    name: typeof name === 'string' ? name : 'Error',
    message: typeof message === 'string' ? message : '',
  };
  if (typeof code === 'string') out.code = code;
  if (details !== undefined) out.details = encode(details);
  return { type: 'error', error: out };
}

module.exports = {
  encode,
  decode,
  encodeInputs,
  encodeError,
  dataProperties,
  defineEnumerable,
  hasOwn,
  isAccessor,
  MAX_DEPTH,
};
