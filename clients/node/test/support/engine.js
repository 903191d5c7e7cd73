'use strict';

// inProcess: this run steps on the in-process engine (test/run.js runs
// the suite a second time so), where the tests of a sidecar process's own
// behaviour (killing it, replacing it) do not apply.
const inProcess = process.env.MUSTARD_SIDECAR_ENGINE === 'in-process';

module.exports = { inProcess };
