// Release gate: fetch a release candidate, run its checks in parallel
// (a check that errors is inconclusive, not failed), read the error
// budget, classify the commits since the last release, decide
// ship / ship-with-watch / hold, and open a change ticket unless held.
// The checks are called through an async function so that a failing one
// is a rejection allSettled collects, whatever the engine's calls return.
const COMMIT = /^(feat|fix|perf|chore|docs|refactor)(\(([a-z0-9-]+)\))?(!)?: (.+)$/;

async function main() {
  const release = await get_release({ service, version });
  const settled = await Promise.allSettled(
    release.checks.map(async (c) => run_check({ service, version, check: c.name, timeout_s: c.timeout_s }))
  );
  const checks = release.checks.map((c, i) => {
    const s = settled[i];
    if (s.status === "rejected") {
      return { name: c.name, required: c.required, outcome: "inconclusive", detail: s.reason.code || s.reason.message };
    }
    const r = s.value;
    const worst = r.findings.reduce((w, f) => Math.max(w, f.level), 0);
    return {
      name: c.name,
      required: c.required,
      outcome: r.passed ? "passed" : "failed",
      detail: `${r.findings.length} findings, worst ${worst}, ${r.duration_ms} ms`,
    };
  });

  const budget = await get_error_budget({ service, window: "28d" });
  const burn = budget.slo_target_pct < 100 ? budget.spent_pct / (100 - budget.slo_target_pct) : 0;

  const kinds = { feat: 0, fix: 0, perf: 0, chore: 0, docs: 0, refactor: 0, other: 0 };
  const scopes = [];
  const breaking = [];
  const risky = [];
  for (const c of release.commits) {
    const m = COMMIT.exec(c.message);
    if (!m) {
      kinds.other++;
      continue;
    }
    kinds[m[1]]++;
    if (m[3] && !scopes.includes(m[3])) scopes.push(m[3]);
    if (m[4]) breaking.push(c.sha.slice(0, 7));
    if (c.files.some((f) => f.startsWith("db/migrations/") || f.endsWith(".sql"))) risky.push(c.sha.slice(0, 7));
  }
  scopes.sort();

  const failedRequired = checks.filter((c) => c.required && c.outcome === "failed").map((c) => c.name);
  const inconclusive = checks.filter((c) => c.outcome === "inconclusive").map((c) => c.name);
  let decision = "ship";
  const reasons = [];
  if (failedRequired.length > 0) {
    decision = "hold";
    reasons.push(`required checks failed: ${failedRequired.join(", ")}`);
  }
  if (budget.remaining_pct < 10) {
    decision = "hold";
    reasons.push(`error budget at ${budget.remaining_pct}%`);
  }
  if (decision === "ship" && (inconclusive.length > 0 || risky.length > 0 || breaking.length > 0)) {
    decision = "ship-with-watch";
    if (inconclusive.length > 0) reasons.push(`inconclusive: ${inconclusive.join(", ")}`);
    if (risky.length > 0) reasons.push(`${risky.length} commits touch migrations`);
    if (breaking.length > 0) reasons.push(`${breaking.length} breaking changes`);
  }

  let ticket = null;
  if (decision !== "hold") {
    const t = await create_change_ticket({
      service,
      version,
      previous: release.previous_version,
      decision,
      summary: `${service} ${release.previous_version} -> ${version}: ${release.commits.length} commits (${kinds.feat} feat, ${kinds.fix} fix), scopes ${scopes.join(", ")}`,
      watchers: release.owners.map((o) => o.handle),
      reasons,
    });
    ticket = t.key;
  }
  return {
    service,
    version,
    decision,
    reasons,
    checks,
    burn_rate: Math.round(burn * 1000) / 1000,
    commits: kinds,
    scopes,
    breaking,
    risky,
    ticket,
  };
}
main();
