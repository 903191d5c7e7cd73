'use strict';

// Errors. A guest-side failure is a MustardError whose kind is the
// sidecar's ("Parse", "Validation", "Runtime", "Limit", "Serialization"),
// named as the reference names them (MustardRuntimeError, ...). Every
// error the sidecar reports carries its stable error_code as `code`.

const KINDS = ['Parse', 'Validation', 'Runtime', 'Limit', 'Serialization'];

// The third argument is the reference's `cause`, or this package's
// options ({ cause, code, logs }): a plain object whose own keys are all
// among those.
const OPTION_KEYS = ['cause', 'code', 'logs'];
function isOptions(value) {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((k) => OPTION_KEYS.includes(k));
}

class MustardError extends Error {
  constructor(kind, message, causeOrOptions = undefined) {
    const options = isOptions(causeOrOptions) ? causeOrOptions : causeOrOptions === undefined ? undefined : { cause: causeOrOptions };
    super(message, options && 'cause' in options ? { cause: options.cause } : undefined);
    this.kind = kind;
    this.name = `Mustard${kind}Error`;
    if (options && typeof options.code === 'string') {
      this.code = options.code;
    }
    if (options && Array.isArray(options.logs) && options.logs.length > 0) {
      // The lines the guest wrote with console before it failed
      // (consoleMode "collect").
      this.logs = options.logs;
    }
  }
}

class MustardParseError extends MustardError {
  constructor(message, options) { super('Parse', message, options); }
}
class MustardValidationError extends MustardError {
  constructor(message, options) { super('Validation', message, options); }
}
class MustardRuntimeError extends MustardError {
  constructor(message, options) { super('Runtime', message, options); }
}
class MustardLimitError extends MustardError {
  constructor(message, options) { super('Limit', message, options); }
}
class MustardSerializationError extends MustardError {
  constructor(message, options) { super('Serialization', message, options); }
}

// A request the sidecar refused that is not a guest failure: a protocol
// phrase from docs/protocol.md, e.g. "unknown snapshot_id `…`".
class MustardSidecarError extends MustardError {
  constructor(message, options) { super('Sidecar', message, options); }
}

// A request that cannot reach the sidecar: over its 1 MiB request limit
// even with its large values staged, or with a value the sidecar's stage
// bound (--max-stage-bytes, 64 MiB by default) cannot hold; `code` is then
// the stage's refusal (stage_too_large, too_many_stages). The request did
// not run, and the process goes on serving.
class MustardRequestTooLargeError extends MustardSidecarError {
  constructor(message, options) {
    super(message, options);
    this.name = 'MustardRequestTooLargeError';
  }
}

// The sidecar process could not be started, died, was killed, or broke
// the wire contract (and was stopped). The request may be retried on
// another process.
class MustardProcessError extends MustardError {
  constructor(message, options) { super('Process', message, options); }
}

const KIND_CLASSES = {
  Parse: MustardParseError,
  Validation: MustardValidationError,
  Runtime: MustardRuntimeError,
  Limit: MustardLimitError,
  Serialization: MustardSerializationError,
};

// Authentication and sealing failures are the reference's Serialization
// failures ("rejected a tampered or unauthenticated snapshot").
const SERIALIZATION_CODES = new Set([
  'tampered_snapshot',
  'key_digest_mismatch',
  'snapshot_id_mismatch',
  'seal_key_required',
  'snapshot_not_sealed',
  'wrong_seal_key',
  'unauthorized_capability',
]);

// The reference's wording for failures the sidecar words its own way,
// where the reference's tests check it. The sidecar's wording stays on the
// wire, and a guest that catches one of these errors reads Node's words;
// an error that reaches the host reads as the reference's. Each entry is
// [the sidecar's text (a string, or a RegExp with the g flag), the
// reference's].
const REFERENCE_WORDING = [
  ['a value reachable twice (shared reference) cannot cross the structured host boundary', 'shared references cannot cross the structured host boundary'],
  // Number.prototype's methods.
  [/\b(Number\.prototype\.\w+) requires that 'this' be a Number/g, '$1 called on incompatible receiver'],
  [/\btoFixed\(\) digits argument must be between 0 and 100/g, 'Number.prototype.toFixed digits must be between 0 and 100'],
  [/\btoString\(\) radix argument must be between 2 and 36/g, 'Number.prototype.toString radix must be between 2 and 36'],
  [/\btoExponential\(\) argument must be between 0 and 100/g, 'Number.prototype.toExponential digits must be between 0 and 100'],
  [/\btoPrecision\(\) argument must be between 1 and 100/g, 'Number.prototype.toPrecision precision must be between 1 and 100'],
  // Receivers, iteration, `in`.
  [/\b(Array\.prototype\.\w+) called on null or undefined/g, '$1 called on incompatible receiver'],
  [/\bobject is not iterable\b/g, 'value is not iterable in the supported surface'],
  [/\bCannot use 'in' operator to search for '[^\n]*' in [^\n]*/g, "right-hand side of 'in' must be an object in the supported surface"],
  ['String.prototype.replaceAll called with a non-global RegExp argument', 'String.prototype.replaceAll requires a global RegExp'],
];

function referenceWording(text) {
  for (const [ours, theirs] of REFERENCE_WORDING) {
    if (typeof ours === 'string') {
      if (text.includes(ours)) text = text.split(ours).join(theirs);
    } else {
      text = text.replace(ours, theirs);
    }
  }
  return text;
}

// fromResponse turns an ok:false response into a typed error.
function fromResponse(text, code, logs) {
  text = referenceWording(text);
  const options = { code: typeof code === 'string' ? code : undefined, logs: toLogLines(logs) };
  const m = /^([A-Za-z]+): ([\s\S]*)$/.exec(text);
  if (m && KINDS.includes(m[1])) {
    return new KIND_CLASSES[m[1]](m[2], options);
  }
  if (options.code && SERIALIZATION_CODES.has(options.code)) {
    return new MustardSerializationError(text, options);
  }
  return new MustardSidecarError(text, options);
}

// toLogLines checks a response's log lines ([{ level, text }]) and
// freezes them; anything else is no lines.
function toLogLines(logs) {
  if (!Array.isArray(logs)) return [];
  return Object.freeze(
    logs
      .filter((l) => l !== null && typeof l === 'object' && typeof l.level === 'string' && typeof l.text === 'string')
      .map((l) => Object.freeze({ level: l.level, text: l.text })),
  );
}

function cancelledError() {
  return new MustardLimitError('execution cancelled', { code: 'limit_cancelled' });
}

module.exports = {
  MustardError,
  MustardParseError,
  MustardValidationError,
  MustardRuntimeError,
  MustardLimitError,
  MustardSerializationError,
  MustardSidecarError,
  MustardRequestTooLargeError,
  MustardProcessError,
  KIND_CLASSES,
  fromResponse,
  toLogLines,
  cancelledError,
};
