'use strict';

// The executor's job states and the moves between them, shared by every
// store that checks them.

const TERMINAL_STATES = new Set(['completed', 'failed', 'cancelled']);
const RUNNABLE_STATES = new Set(['queued', 'waiting']);
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

module.exports = { TERMINAL_STATES, RUNNABLE_STATES, TRANSITIONS };
