// Evaluates semantics_cases.json with the JavaScript engine running this
// script (Node.js) and prints the expected results, one JSON.stringify per
// case: node semantics_reference.js > semantics_expected.json
// Each case is strict-mode code, as guest code is.
const cases = require('./semantics_cases.json');
const out = {};
for (const [name, src] of Object.entries(cases)) {
  out[name] = JSON.stringify((0, eval)('"use strict"; (() => ' + src + ')')());
}
console.log(JSON.stringify(out, null, 1));
