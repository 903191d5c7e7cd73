'use strict';

// inspectSnapshot reads the suspended call(s) of an unsealed snapshot of
// this sidecar: what the reference reads from its own snapshot when a dump
// comes without its signed manifest (a "legacy" dump). It is called only
// after the snapshot's token was checked under the host's key, so the
// bytes are the sidecar's own; anything it does not recognise (a sealed
// snapshot, another format version) returns null.
//
// The format (snapshot/format.go): a deterministic CBOR header, an array
// of 7 or 8 items ("mustard-snapshot", version, program, inputs,
// capabilities, seed, clock[, shape]), then journal items: in version 1
// [1, capability, args, meter..., limits?] each followed by its outcome; in
// later versions calls [5, capability, args, ...], suspensions
// [6, focus call id, ...] and answers [7, call id, outcome]. Values are
// the binary StructuredValue form (value/cbor.go).

const MAGIC = 'mustard-snapshot';

class Reader {
  constructor(b) {
    this.b = b;
    this.at = 0;
  }

  head() {
    if (this.at >= this.b.length) throw new Error('truncated');
    const first = this.b[this.at++];
    const major = first >> 5;
    const info = first & 31;
    let n;
    if (info < 24) n = info;
    else if (info === 24) n = this.b[this.at++];
    else if (info === 25) (n = this.b.readUInt16BE(this.at)), (this.at += 2);
    else if (info === 26) (n = this.b.readUInt32BE(this.at)), (this.at += 4);
    else if (info === 27) {
      const big = this.b.readBigUInt64BE(this.at);
      this.at += 8;
      // A seed or a clock reading may take 64 bits; only lengths must fit.
      if (major === 0 || major === 1 || major === 7) return { major, info, n: Number(big) };
      if (big > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error('length');
      n = Number(big);
    } else throw new Error('indefinite');
    if (n === undefined) throw new Error('truncated');
    return { major, info, n };
  }

  bytes(n) {
    if (this.at + n > this.b.length) throw new Error('truncated');
    const out = this.b.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  skip() {
    const h = this.head();
    switch (h.major) {
      case 0:
      case 1:
      case 7:
        return;
      case 2:
      case 3:
        this.bytes(h.n);
        return;
      case 4:
        for (let i = 0; i < h.n; i++) this.skip();
        return;
      case 5:
        for (let i = 0; i < 2 * h.n; i++) this.skip();
        return;
      default:
        throw new Error('tag');
    }
  }

  expect(major) {
    const h = this.head();
    if (h.major !== major) throw new Error('shape');
    return h.n;
  }

  text() {
    return this.bytes(this.expect(3)).toString('utf8');
  }

  // value reads a binary StructuredValue into its JSON form.
  value(depth = 0) {
    if (depth > 130) throw new Error('depth');
    const first = this.b[this.at];
    switch (first) {
      case 0xf7:
        this.at++;
        return 'Undefined';
      case 0xf6:
        this.at++;
        return 'Null';
      case 0xe0:
        this.at++;
        return 'Hole';
      case 0xf4:
        this.at++;
        return { Bool: false };
      case 0xf5:
        this.at++;
        return { Bool: true };
      case 0xfb: {
        this.at++;
        const f = this.bytes(8).readDoubleBE(0);
        if (Number.isNaN(f)) return { Number: 'NaN' };
        if (f === Infinity) return { Number: 'Infinity' };
        if (f === -Infinity) return { Number: 'NegInfinity' };
        if (Object.is(f, -0)) return { Number: 'NegZero' };
        return { Number: { Finite: f } };
      }
      default:
        break;
    }
    const h = this.head();
    if (h.major === 2) return { String: wtf8(this.bytes(h.n)) };
    if (h.major === 4) {
      const items = [];
      for (let i = 0; i < h.n; i++) items.push(this.value(depth + 1));
      return { Array: items };
    }
    if (h.major === 5) {
      const members = {};
      for (let i = 0; i < h.n; i++) {
        const key = wtf8(this.bytes(this.expect(2)));
        Object.defineProperty(members, key, { value: this.value(depth + 1), enumerable: true, writable: true, configurable: true });
      }
      return { Object: members };
    }
    throw new Error('value');
  }
}

// wtf8 decodes WTF-8 (UTF-8 that may encode lone surrogates).
function wtf8(b) {
  let out = '';
  for (let i = 0; i < b.length; ) {
    const c = b[i];
    let cp;
    if (c < 0x80) (cp = c), (i += 1);
    else if (c >= 0xf0) (cp = ((c & 7) << 18) | ((b[i + 1] & 63) << 12) | ((b[i + 2] & 63) << 6) | (b[i + 3] & 63)), (i += 4);
    else if (c >= 0xe0) (cp = ((c & 15) << 12) | ((b[i + 1] & 63) << 6) | (b[i + 2] & 63)), (i += 3);
    else (cp = ((c & 31) << 6) | (b[i + 1] & 63)), (i += 2);
    out += String.fromCodePoint(cp);
  }
  return out;
}

function readArgs(r) {
  const n = r.expect(4);
  const args = [];
  for (let i = 0; i < n; i++) args.push(r.value());
  return args;
}

// inspectSnapshot returns { capability, args, calls } (calls: every
// outstanding call, { call_id, capability, args }, in call order), or null.
function inspectSnapshot(bytes) {
  try {
    const r = new Reader(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    const items = r.expect(4);
    if ((items !== 7 && items !== 8) || r.text() !== MAGIC) return null;
    const version = r.expect(0);
    for (let i = 2; i < items; i++) r.skip();
    const calls = [];
    if (version === 1) {
      let last = null;
      while (r.at < r.b.length) {
        const n = r.expect(4);
        if (r.expect(0) !== 1) return null;
        last = { call_id: calls.length + 1, capability: r.text(), args: readArgs(r) };
        calls.push(last);
        for (let i = 3; i < n; i++) r.skip();
        if (r.at < r.b.length) r.skip(); // its outcome
      }
      return last === null ? null : { capability: last.capability, args: last.args, calls: [last] };
    }
    const answered = new Set();
    let focus = 0;
    while (r.at < r.b.length) {
      const n = r.expect(4);
      const tag = r.expect(0);
      if (tag === 5) {
        calls.push({ call_id: calls.length + 1, capability: r.text(), args: readArgs(r) });
        for (let i = 3; i < n; i++) r.skip();
      } else if (tag === 6) {
        focus = r.expect(0);
        for (let i = 2; i < n; i++) r.skip();
      } else if (tag === 7) {
        answered.add(r.expect(0));
        for (let i = 2; i < n; i++) r.skip();
      } else return null;
    }
    const call = calls[focus - 1];
    if (call === undefined || answered.has(focus)) return null;
    return { capability: call.capability, args: call.args, calls: calls.filter((c) => !answered.has(c.call_id)) };
  } catch {
    return null;
  }
}

module.exports = { inspectSnapshot };
