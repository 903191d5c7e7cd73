'use strict';

// Retries of the executor's capability calls. A policy says how many
// tries a call gets, how long to wait between them, and which errors are
// worth another try; every try is the same call (the same `this.callId`,
// an idempotency key), `this.attempt` counts them. An error that is not
// retryable, or the last try's, is the call's outcome: the guest's call
// throws it (its name, message, code and details), and guest code can
// catch it.

const DEFAULT_BACKOFF_MS = 100;
const DEFAULT_MAX_BACKOFF_MS = 10000;

// transient marks error as worth another try and returns it (a value that
// is not an object becomes an Error with its text).
function transient(error) {
  const out = error !== null && (typeof error === 'object' || typeof error === 'function') ? error : new Error(String(error));
  Object.defineProperty(out, 'transient', { value: true, configurable: true, writable: true, enumerable: false });
  return out;
}

// isTransient reports whether error says it is worth another try: made
// with transient(), or any error whose `transient` property is true.
function isTransient(error) {
  if (error === null || (typeof error !== 'object' && typeof error !== 'function')) return false;
  try {
    return error.transient === true;
  } catch {
    return false;
  }
}

function normalizeRetry(policy, label) {
  if (policy === undefined || policy === null) return null;
  if (typeof policy !== 'object' || Array.isArray(policy)) throw new TypeError(`${label} must be an object`);
  const attempts = policy.attempts ?? 1;
  if (!Number.isInteger(attempts) || attempts <= 0) throw new TypeError(`${label}.attempts must be a positive integer`);
  const backoffMs = policy.backoffMs ?? DEFAULT_BACKOFF_MS;
  const maxBackoffMs = policy.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS;
  for (const [name, v] of [['backoffMs', backoffMs], ['maxBackoffMs', maxBackoffMs]]) {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new TypeError(`${label}.${name} must be a non-negative number`);
  }
  const retryable = policy.retryable ?? isTransient;
  if (typeof retryable !== 'function') throw new TypeError(`${label}.retryable must be a function`);
  return { attempts, backoffMs, maxBackoffMs, retryable };
}

// shouldRetry reports whether a try's error gets another try.
function shouldRetry(policy, attempt, error) {
  if (policy === null || attempt >= policy.attempts) return false;
  try {
    return policy.retryable(error) === true;
  } catch {
    return false;
  }
}

// backoffMs is the wait after try attempt (1, 2, ...): backoffMs doubled
// each try, at most maxBackoffMs, drawn at random between half and all
// of that, so that calls failing together do not retry together.
function backoffMs(policy, attempt) {
  const full = Math.min(policy.backoffMs * 2 ** Math.min(attempt - 1, 30), policy.maxBackoffMs);
  return full / 2 + Math.random() * (full / 2);
}

module.exports = { transient, isTransient, normalizeRetry, shouldRetry, backoffMs };
