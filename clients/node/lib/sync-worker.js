'use strict';

// The helper thread behind the synchronous API (new Mustard(), start(),
// resume()): it owns a SidecarPool of its own and runs each request the
// main thread sends, while the main thread blocks on a shared flag. See
// lib/sync.js.

const { parentPort, workerData } = require('node:worker_threads');

const ops = require('./ops.js');
const { SidecarPool } = require('./pool.js');

const flag = new Int32Array(workerData.flag);
const port = workerData.port;
const pool = new SidecarPool(workerData.pool);

function serializeError(error) {
  if (error instanceof Error) {
    return {
      name: error.name,
      kind: error.kind,
      message: error.message,
      code: typeof error.code === 'string' ? error.code : undefined,
      logs: Array.isArray(error.logs) ? error.logs : undefined,
      type: error instanceof TypeError ? 'TypeError' : error instanceof RangeError ? 'RangeError' : 'Error',
    };
  }
  return { name: 'Error', message: String(error), type: 'Error' };
}

const handlers = {
  compile: (args) => ops.compile(pool, args.source, args.language),
  start: async (args) => ops.portable(await ops.start(pool, args)),
  resume: async (args) => ops.portable(await ops.resume(pool, args)),
  processes: () => pool.processes(),
  close: () => pool.close(),
};

parentPort.on('message', async (msg) => {
  let reply;
  try {
    const handler = handlers[msg.op];
    if (handler === undefined) throw new Error(`unknown operation ${msg.op}`);
    reply = { ok: true, value: await handler(msg.args) };
  } catch (error) {
    reply = { ok: false, error: serializeError(error) };
  }
  port.postMessage(reply);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});
