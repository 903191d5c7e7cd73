// Monthly expense audit for one employee: fetch the policy and the
// month's reports, then every report in parallel; convert foreign
// amounts to EUR (one exchange rate is unavailable and falls back to the
// policy's rate), check each line against the policy, total by category
// and file a note on every report with findings.
async function main() {
  const [index, policy] = await Promise.all([
    list_expense_reports({ employee, month }),
    get_policy({ scope: "travel", employee }),
  ]);
  const reports = await Promise.all(index.reports.map((r) => get_expense_report({ id: r.id })));

  const currencies = [];
  for (const rep of reports) {
    for (const line of rep.lines) {
      if (line.currency !== "EUR" && !currencies.includes(line.currency)) currencies.push(line.currency);
    }
  }
  currencies.sort();
  const rates = await Promise.all(
    currencies.map(async (c) => {
      try {
        const fx = await get_fx_rate({ from: c, to: "EUR", date: `${month}-28` });
        return { currency: c, rate: fx.rate, source: "market" };
      } catch (e) {
        return { currency: c, rate: policy.fallback_rates[c], source: `fallback (${e.code})` };
      }
    })
  );
  const rateOf = new Map(rates.map((r) => [r.currency, r.rate]));
  const blocked = new RegExp(policy.blocked_terms.join("|"), "i");

  const totals = policy.categories.map((c) => ({ category: c, lines: 0, eur: 0, flagged_eur: 0 }));
  const findings = [];
  let total = 0;
  for (const rep of reports) {
    const issues = [];
    for (const line of rep.lines) {
      const rate = line.currency === "EUR" ? 1 : rateOf.get(line.currency);
      const eur = Math.round(line.amount * rate * 100) / 100;
      const limit = policy.limits[line.category];
      const why = [];
      if (limit !== undefined && eur > limit * (line.nights || 1)) why.push(`over ${line.category} limit`);
      if (!line.receipt && eur > policy.receipt_required_over) why.push("missing receipt");
      const hit = line.description.match(blocked);
      if (hit) why.push(`not reimbursable: ${hit[0].toLowerCase()}`);
      if (line.date.slice(0, 7) !== month) why.push("outside the month");
      const t = totals.find((x) => x.category === line.category) || totals[totals.length - 1];
      t.lines++;
      t.eur = Math.round((t.eur + eur) * 100) / 100;
      total = Math.round((total + eur) * 100) / 100;
      if (why.length > 0) {
        t.flagged_eur = Math.round((t.flagged_eur + eur) * 100) / 100;
        issues.push({ line: line.id, eur, why: why.join(", ") });
      }
    }
    if (issues.length > 0) findings.push({ report: rep.id, title: rep.title, issues });
  }

  const notes = [];
  for (const f of findings) {
    const text = f.issues.map((i) => `${i.line} (${i.eur} EUR): ${i.why}`).join("\n");
    const ack = await file_audit_note({ report: f.report, severity: f.issues.length > 2 ? "high" : "low", text });
    notes.push(ack.note_id);
  }
  const flagged = findings.reduce((n, f) => n + f.issues.length, 0);
  return {
    employee,
    month,
    reports: reports.length,
    lines: totals.reduce((n, t) => n + t.lines, 0),
    total_eur: total,
    by_category: totals.filter((t) => t.lines > 0),
    rates,
    flagged_lines: flagged,
    findings,
    notes,
  };
}
main();
