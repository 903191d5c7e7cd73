'use strict';

const errors = require('./lib/errors.js');
const { Mustard, Progress, ExecutionContext, SidecarPool, configure, processes, shutdown } = require('./lib/mustard.js');
const { SidecarClient } = require('./lib/client.js');
const { MustardExecutor, InMemoryMustardExecutorStore, FileMustardExecutorStore, MustardLeaseLostError, transient, isTransient } = require('./lib/executor.js');

module.exports = {
  Mustard,
  Progress,
  ExecutionContext,
  MustardExecutor,
  InMemoryMustardExecutorStore,
  FileMustardExecutorStore,
  MustardLeaseLostError,
  transient,
  isTransient,
  SidecarPool,
  SidecarClient,
  configure,
  processes,
  shutdown,
  MustardError: errors.MustardError,
  MustardParseError: errors.MustardParseError,
  MustardValidationError: errors.MustardValidationError,
  MustardRuntimeError: errors.MustardRuntimeError,
  MustardLimitError: errors.MustardLimitError,
  MustardSerializationError: errors.MustardSerializationError,
  MustardSidecarError: errors.MustardSidecarError,
  MustardRequestTooLargeError: errors.MustardRequestTooLargeError,
  MustardProcessError: errors.MustardProcessError,
};
