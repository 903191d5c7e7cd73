'use strict';

// Binary framing: every message, both ways, is
//   u32 LE header_len | u32 LE payload_len | JSON header | payload.

const { MustardRequestTooLargeError } = require('./errors.js');

const PROTOCOL_VERSION = 2;
// The sidecar's request limit; a larger request would end its session.
const MAX_REQUEST_BYTES = 1 << 20;
// The default bound on one response: the sidecar's default 64 MiB
// snapshot bound plus room for the header.
const DEFAULT_MAX_RESPONSE_BYTES = 65 << 20;

// encodeFrame returns the bytes of a request, or throws a
// MustardRequestTooLargeError if it is over the sidecar's limit.
function encodeFrame(header, payload) {
  const json = JSON.stringify(header);
  const headLength = Buffer.byteLength(json, 'utf8');
  const bodyLength = payload ? payload.byteLength : 0;
  if (headLength + bodyLength > MAX_REQUEST_BYTES) {
    throw new MustardRequestTooLargeError(
      `${header.method} request of ${headLength + bodyLength} bytes exceeds the sidecar's limit of ${MAX_REQUEST_BYTES} bytes`,
    );
  }
  // One allocation: prefix, header and payload.
  const frame = Buffer.allocUnsafe(8 + headLength + bodyLength);
  frame.writeUInt32LE(headLength, 0);
  frame.writeUInt32LE(bodyLength, 4);
  frame.write(json, 8, headLength, 'utf8');
  if (bodyLength > 0) frame.set(payload instanceof Uint8Array ? payload : new Uint8Array(payload.buffer, payload.byteOffset, payload.byteLength), 8 + headLength);
  return frame;
}

// FrameReader assembles response frames from stdout chunks. It holds at
// most one frame: a frame whose prefix announces more than `limit` bytes
// is refused before any of it is buffered, and memory grows only with the
// bytes that actually arrive.
class FrameReader {
  constructor(limit) {
    this.limit = limit;
    this.chunks = [];
    this.buffered = 0;
    this.need = -1; // header_len + payload_len of the frame being read, once known
    this.headerLength = 0;
  }

  // push adds a chunk and returns the frames it completed, as
  // { header: Buffer, payload: Buffer }; it throws on a frame over the limit.
  push(chunk) {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const out = [];
    for (;;) {
      if (this.need < 0) {
        if (this.buffered < 8) break;
        const prefix = this.take(8);
        this.headerLength = prefix.readUInt32LE(0);
        const payloadLength = prefix.readUInt32LE(4);
        const total = this.headerLength + payloadLength;
        if (total > this.limit) {
          throw new Error(`a response of ${total} bytes exceeds the client's limit of ${this.limit} bytes (maxResponseBytes)`);
        }
        this.need = total;
      }
      if (this.buffered < this.need) break;
      const body = this.take(this.need);
      out.push({ header: body.subarray(0, this.headerLength), payload: body.subarray(this.headerLength) });
      this.need = -1;
    }
    return out;
  }

  // pending reports whether part of a frame has been read.
  pending() {
    return this.buffered > 0 || this.need >= 0;
  }

  take(n) {
    let out;
    const first = this.chunks[0];
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
    } else {
      out = Buffer.allocUnsafe(n);
      let off = 0;
      while (off < n) {
        const c = this.chunks[0];
        const k = Math.min(c.length, n - off);
        c.copy(out, off, 0, k);
        off += k;
        if (k === c.length) this.chunks.shift();
        else this.chunks[0] = c.subarray(k);
      }
    }
    this.buffered -= n;
    return out;
  }
}

module.exports = {
  PROTOCOL_VERSION,
  MAX_REQUEST_BYTES,
  DEFAULT_MAX_RESPONSE_BYTES,
  encodeFrame,
  FrameReader,
};
