'use strict';

// The reference's tests/node/support/helpers.js with its import pointed at
// this package, so that tests ported from mustardscript's suite run as
// written; plus `sidecarFeatures`, the features the sidecar under test
// announces in ping, for tests of extensions.

const test = require('node:test');
const assert = require('node:assert/strict');

const { ExecutionContext, InMemoryMustardExecutorStore, Mustard, MustardError, MustardExecutor, Progress, SidecarClient } =
  require('../..');

function runtime(code, options) {
  return new Mustard(code, options);
}

function assertGuestSafeMessage(message) {
  assert.ok(!message.includes(process.cwd()));
  assert.ok(!message.includes('crates/mustard'));
  assert.ok(!message.includes('.rs'));
  assert.ok(!message.includes('.go'));
}

function isMustardError({ kind, name = kind && `Mustard${kind}Error`, message, guestSafe = false, check } = {}) {
  return (error) => {
    assert.ok(error instanceof MustardError);
    if (name !== undefined) {
      assert.equal(error.name, name);
    }
    if (kind !== undefined) {
      assert.equal(error.kind, kind);
    }
    if (message !== undefined) {
      if (message instanceof RegExp) {
        assert.match(error.message, message);
      } else {
        assert.ok(error.message.includes(message));
      }
    }
    if (guestSafe) {
      assertGuestSafeMessage(error.message);
    }
    if (typeof check === 'function') {
      check(error);
    }
    return true;
  };
}

let features = null;

// sidecarFeatures returns the set of features the sidecar announces.
async function sidecarFeatures() {
  if (features === null) {
    const c = await SidecarClient.start();
    try {
      const { result } = await c.request('ping', {});
      features = new Set(result.features);
    } finally {
      await c.close();
    }
  }
  return features;
}

// needs skips t unless the sidecar announces every feature named; it
// returns whether the test should go on.
async function needs(t, ...names) {
  const have = await sidecarFeatures();
  const missing = names.filter((n) => !have.has(n));
  if (missing.length > 0) {
    t.skip(`the sidecar does not announce ${missing.join(', ')}`);
    return false;
  }
  return true;
}

module.exports = {
  assert,
  assertGuestSafeMessage,
  ExecutionContext,
  InMemoryMustardExecutorStore,
  isMustardError,
  Mustard,
  MustardError,
  MustardExecutor,
  Progress,
  runtime,
  test,
  needs,
};
