'use strict';
// Resumes one dumped suspension in a Node process of its own: the
// reference's cold resume as a host that restarted sees it, the
// counterpart of the sidecar's fresh-process row (bench/peer.go spawns it).
// It loads the package and says so, then reads one line (the dump, its
// buffers in base64, the answer, the key and the value the hot run
// completed with), loads and resumes, and replies with whether the value
// was the hot run's.
const readline = require('readline');

const { reply, api } = require('./reference');

const { Progress } = api;

// A dump's buffers travel as {"b64": "..."} (peer.js, encodeFresh): the
// key, and the dump's own members. A reviver would be called for every
// value of a structured answer too.
const buffer = (v) => (v && typeof v === 'object' && typeof v.b64 === 'string' ? Buffer.from(v.b64, 'base64') : v);

const rl = readline.createInterface({ input: process.stdin });
rl.once('line', (line) => {
  try {
    const cmd = JSON.parse(line);
    cmd.key = buffer(cmd.key);
    for (const k of Object.keys(cmd.dump)) cmd.dump[k] = buffer(cmd.dump[k]);
    const caps = Object.fromEntries(cmd.capabilities.map((n) => [n, () => null]));
    const loaded = Progress.load(cmd.dump, { capabilities: caps, limits: {}, snapshotKey: cmd.key });
    const v = loaded.resume(cmd.answer);
    if (v !== cmd.want) throw new Error(`cold resume gave ${v}, the hot run ${cmd.want}`);
    reply({ ok: true });
  } catch (e) {
    reply({ error: String((e && e.message) || e) });
  }
  rl.close();
});
reply({ ready: true });
