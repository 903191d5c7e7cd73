'use strict';
// StructuredValue JSON (CONTRACT.md) to and from JavaScript values, as the
// differential runner exchanges them with the Go side.

function encode(v, depth = 0) {
  if (depth > 256) throw new TypeError('value nested too deeply');
  if (v === undefined) return 'Undefined';
  if (v === null) return 'Null';
  if (typeof v === 'boolean') return { Bool: v };
  if (typeof v === 'string') return { String: v };
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return { Number: 'NaN' };
    if (Object.is(v, -0)) return { Number: 'NegZero' };
    if (v === Infinity) return { Number: 'Infinity' };
    if (v === -Infinity) return { Number: 'NegInfinity' };
    return { Number: { Finite: v } };
  }
  if (Array.isArray(v)) {
    const out = [];
    for (let i = 0; i < v.length; i++) {
      const d = Object.getOwnPropertyDescriptor(v, String(i));
      if (d === undefined) out.push('Hole');
      else if (!('value' in d)) throw new TypeError('accessors cannot be encoded');
      else out.push(encode(d.value, depth + 1));
    }
    return { Array: out };
  }
  if (typeof v === 'object') {
    const proto = Object.getPrototypeOf(v);
    if (proto !== null && proto !== Object.prototype) {
      throw new TypeError(`${proto.constructor ? proto.constructor.name : 'object'} values cannot be encoded`);
    }
    const out = {};
    for (const k of Object.keys(v)) {
      const d = Object.getOwnPropertyDescriptor(v, k);
      if (!('value' in d)) throw new TypeError('accessors cannot be encoded');
      Object.defineProperty(out, k, { value: encode(d.value, depth + 1), enumerable: true, writable: true, configurable: true });
    }
    return { Object: out };
  }
  throw new TypeError(`${typeof v} values cannot be encoded`);
}

function decode(sv) {
  if (sv === 'Undefined') return undefined;
  if (sv === 'Null') return null;
  if ('Bool' in sv) return sv.Bool;
  if ('String' in sv) return sv.String;
  if ('Number' in sv) {
    const n = sv.Number;
    if (n === 'NaN') return NaN;
    if (n === 'Infinity') return Infinity;
    if (n === 'NegInfinity') return -Infinity;
    if (n === 'NegZero') return -0;
    return n.Finite;
  }
  if ('Array' in sv) {
    const a = new Array(sv.Array.length);
    sv.Array.forEach((e, i) => {
      if (e !== 'Hole') a[i] = decode(e);
    });
    return a;
  }
  const o = {};
  for (const k of Object.keys(sv.Object)) {
    Object.defineProperty(o, k, { value: decode(sv.Object[k]), writable: true, enumerable: true, configurable: true });
  }
  return o;
}

// An error a capability threw, as the runner replays it.
function encodeError(e) {
  if (e === null || typeof e !== 'object') return { name: 'Error', message: String(e) };
  const out = { name: typeof e.name === 'string' ? e.name : 'Error', message: typeof e.message === 'string' ? e.message : String(e) };
  if (typeof e.code === 'string') out.code = e.code;
  if (e.details !== undefined) {
    try {
      out.details = encode(e.details);
    } catch {
      // Details that cannot cross are dropped.
    }
  }
  return out;
}

function decodeError(e) {
  const err = new Error(e.message);
  err.name = e.name;
  if (e.code !== undefined) err.code = e.code;
  if (e.details !== undefined) err.details = decode(e.details);
  return err;
}

module.exports = { encode, decode, encodeError, decodeError };
