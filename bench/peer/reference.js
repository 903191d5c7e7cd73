'use strict';
// What peer.js and fresh.js share: replies are JSON lines on stdout, and
// the reference implementation is loaded or the reply says why not.
const reply = (v) => process.stdout.write(JSON.stringify(v) + '\n');

let api;
try {
  api = require('mustardscript');
} catch (e) {
  reply({ error: `cannot load mustardscript: ${e.message}` });
  process.exit(1);
}

module.exports = { reply, api };
