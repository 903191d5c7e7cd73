// No host calls: a plain (not async) function is called with the inputs.
function summarize({ scores, passMark }) {
  const passed = scores.filter((s) => s >= passMark);
  console.log("%d of %d passed", passed.length, scores.length);
  return { passed: passed.length, best: Math.max(...scores), mean: scores.reduce((a, b) => a + b, 0) / scores.length };
}

summarize;
