'use strict';

// The executor's job states and the moves between them, shared by every
// store that checks them, and the error a store's fenced write fails
// with once its writer no longer holds the job's lease.

const TERMINAL_STATES = new Set(['completed', 'failed', 'cancelled']);
const RUNNABLE_STATES = new Set(['queued', 'waiting']);
const JOB_STATES = new Set(['queued', 'running', 'waiting', 'completed', 'failed', 'cancelled']);
const TRANSITIONS = new Set([
  'queued:running',
  'queued:cancelled',
  'running:waiting',
  'running:completed',
  'running:failed',
  'running:cancelled',
  'waiting:running',
  'waiting:failed',
  'waiting:cancelled',
]);

// How long a lease lasts unless renewed: the executor's (renewed every
// third of it while the job runs), and a store's claim before the
// executor takes it as its lease.
const DEFAULT_LEASE_MS = 15000;

// MustardLeaseLostError: a write carried the fencing token of a lease
// that is no longer the job's (another executor took the job over after
// the lease expired). A store of your own throws any error whose `code`
// is 'lease_lost'.
class MustardLeaseLostError extends Error {
  constructor(jobId) {
    super(`job ${jobId}: its lease was taken over by another executor`);
    this.name = 'MustardLeaseLostError';
    this.code = 'lease_lost';
  }
}

function isLeaseLost(error) {
  return error !== null && typeof error === 'object' && error.code === 'lease_lost';
}

// nextToken is a fencing token greater than every one in prev: the
// clock's microseconds if they are, so that tokens keep growing after a
// job's lease file is gone.
function nextToken(...prev) {
  const floor = Math.max(0, ...prev.filter((t) => Number.isSafeInteger(t)));
  const t = Date.now() * 1000 + Math.floor(Math.random() * 1000);
  return t > floor ? t : floor + 1;
}

module.exports = { TERMINAL_STATES, RUNNABLE_STATES, JOB_STATES, TRANSITIONS, DEFAULT_LEASE_MS, MustardLeaseLostError, isLeaseLost, nextToken };
