'use strict';

// The in-process engine: the sidecar's protocol sessions in a shared
// library this process loads as an addon (native/, built with Go), so a
// step is a function call instead of a round trip through a sidecar
// process's pipes. Requests, answers, limits and snapshots are the
// sidecar's own, framed the same way; what goes is the process boundary
// (README, "The in-process engine"). Chosen with configure({ engine:
// 'in-process' }); the synchronous API and run() without a pool then
// step here.

const fs = require('node:fs');
const path = require('node:path');

const { MustardProcessError } = require('./errors.js');
const { DirectSession } = require('./sync-direct.js');

const ENGINES = ['process', 'in-process'];

// The addon's file: the option, else $MUSTARD_SIDECAR_ADDON, else the
// one built into the package's native/ directory.
function resolveAddon(addon) {
  if (typeof addon === 'string' && addon.length > 0) return path.resolve(addon);
  const env = process.env.MUSTARD_SIDECAR_ADDON;
  if (typeof env === 'string' && env.length > 0) return path.resolve(env);
  return path.join(__dirname, '..', 'native', 'mustard-sidecar.node');
}

const loaded = new Map();

function loadAddon(file) {
  let addon = loaded.get(file);
  if (addon !== undefined) return addon;
  if (!fs.existsSync(file)) {
    throw new MustardProcessError(
      `the in-process engine is not built (no ${path.basename(file)}; build it with \`npm run build:native\`, or name it with the addon option or $MUSTARD_SIDECAR_ADDON)`,
    );
  }
  try {
    addon = require(file);
  } catch (error) {
    throw new MustardProcessError(`the in-process engine could not be loaded (${error.message})`);
  }
  if (typeof addon?.open !== 'function' || typeof addon.handle !== 'function' || typeof addon.close !== 'function') {
    throw new MustardProcessError('the in-process engine could not be loaded (the addon is not this package\'s)');
  }
  loaded.set(file, addon);
  return addon;
}

class InProcessSession extends DirectSession {
  constructor(options) {
    super(options, 'in-process');
    this.addon = loadAddon(resolveAddon(options.addon));
    // The sidecar command's arguments configure the session alike
    // (memory budget, stage bound, snapshot key file).
    try {
      this.session = this.addon.open(JSON.stringify(Array.isArray(options.args) ? options.args.map(String) : []));
    } catch (error) {
      if (error?.code !== 'MUSTARD_ARGUMENTS') throw error;
      throw new MustardProcessError(`the in-process engine refused its arguments (${error.message})`);
    }
    this.pid = null; // no process of its own: nothing to signal
  }

  close() {
    if (this.closed) return;
    this.closed = true;
    this.dead ??= new MustardProcessError('the sidecar client is closed');
    this.addon.close(this.session);
  }

  kill() {}

  // exchange serves a request frame and returns the response frame's
  // parts. A request that ends the session (one the contract makes
  // fatal) fails it, as a sidecar process's exit would.
  exchange(frame) {
    let out;
    try {
      out = this.addon.handle(this.session, frame);
    } catch (error) {
      if (error?.code !== 'MUSTARD_SESSION_ENDED') throw error;
      throw this.fail(new MustardProcessError(`the in-process session ended (${error.message})`));
    }
    const headerLength = out.readUInt32LE(0);
    const payloadLength = out.readUInt32LE(4);
    this.checkLength(headerLength, payloadLength);
    return { headerLength, body: out.subarray(8) };
  }
}

module.exports = { ENGINES, InProcessSession, resolveAddon };
