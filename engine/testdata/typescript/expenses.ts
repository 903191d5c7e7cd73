// Monthly expense audit for one employee: fetch the policy and the
// month's reports, then every report in parallel; convert foreign
// amounts to EUR (one exchange rate is unavailable and falls back to the
// policy's rate), check each line against the policy, total by category
// and file a note on every report with findings.
interface ReportRef { id: string }
interface Line {
  id: string;
  category: string;
  amount: number;
  currency: string;
  date: string;
  description: string;
  receipt?: boolean;
  nights?: number;
}
interface Report { id: string; title: string; lines: Line[] }
interface Policy {
  categories: string[];
  limits: Record<string, number>;
  receipt_required_over: number;
  blocked_terms: string[];
  fallback_rates: Record<string, number>;
}
interface Rate { currency: string; rate: number; source: string }
interface Total { category: string; lines: number; eur: number; flagged_eur: number }
interface Issue { line: string; eur: number; why: string }
interface Finding { report: string; title: string; issues: Issue[] }
type Severity = "high" | "low";

declare const employee: string;
declare const month: string;
declare function list_expense_reports(q: { employee: string; month: string }): Promise<{ reports: ReportRef[] }>;
declare function get_policy(q: { scope: string; employee: string }): Promise<Policy>;
declare function get_expense_report(q: { id: string }): Promise<Report>;
declare function get_fx_rate(q: { from: string; to: string; date: string }): Promise<{ rate: number }>;
declare function file_audit_note(q: { report: string; severity: Severity; text: string }): Promise<{ note_id: string }>;

async function main(): Promise<Record<string, unknown>> {
  const [index, policy] = await Promise.all([
    list_expense_reports({ employee, month }),
    get_policy({ scope: "travel", employee }),
  ]);
  const reports: Report[] = await Promise.all(index.reports.map((r: ReportRef) => get_expense_report({ id: r.id })));

  const currencies: string[] = [];
  for (const rep of reports) {
    for (const line of rep.lines) {
      if (line.currency !== "EUR" && !currencies.includes(line.currency)) currencies.push(line.currency);
    }
  }
  currencies.sort();
  const rates: Rate[] = await Promise.all(
    currencies.map(async (c: string): Promise<Rate> => {
      try {
        const fx = await get_fx_rate({ from: c, to: "EUR", date: `${month}-28` });
        return { currency: c, rate: fx.rate, source: "market" };
      } catch (e: any) {
        return { currency: c, rate: policy.fallback_rates[c], source: `fallback (${e.code as string})` };
      }
    })
  );
  const rateOf = new Map<string, number>(rates.map((r): [string, number] => [r.currency, r.rate]));
  const blocked = new RegExp(policy.blocked_terms.join("|"), "i");

  const totals: Total[] = policy.categories.map((c) => ({ category: c, lines: 0, eur: 0, flagged_eur: 0 }));
  const findings: Finding[] = [];
  let total: number = 0;
  for (const rep of reports) {
    const issues: Issue[] = [];
    for (const line of rep.lines) {
      const rate = line.currency === "EUR" ? 1 : rateOf.get(line.currency)!;
      const eur = Math.round(line.amount * rate * 100) / 100;
      const limit: number | undefined = policy.limits[line.category];
      const why: string[] = [];
      if (limit !== undefined && eur > limit * (line.nights || 1)) why.push(`over ${line.category} limit`);
      if (!line.receipt && eur > policy.receipt_required_over) why.push("missing receipt");
      const hit = line.description.match(blocked);
      if (hit) why.push(`not reimbursable: ${hit[0].toLowerCase()}`);
      if (line.date.slice(0, 7) !== month) why.push("outside the month");
      const t = (totals.find((x) => x.category === line.category) || totals[totals.length - 1]) as Total;
      t.lines++;
      t.eur = Math.round((t.eur + eur) * 100) / 100;
      total = Math.round((total + eur) * 100) / 100;
      if (why.length > 0) {
        t.flagged_eur = Math.round((t.flagged_eur + eur) * 100) / 100;
        issues.push({ line: line.id, eur, why: why.join(", ") } satisfies Issue);
      }
    }
    if (issues.length > 0) findings.push({ report: rep.id, title: rep.title, issues });
  }

  const notes: string[] = [];
  for (const f of findings) {
    const text = f.issues.map((i) => `${i.line} (${i.eur} EUR): ${i.why}`).join("\n");
    const severity: Severity = f.issues.length > 2 ? "high" : "low";
    const ack = await file_audit_note({ report: f.report, severity, text });
    notes.push(ack.note_id);
  }
  const flagged = findings.reduce<number>((n, f) => n + f.issues.length, 0);
  return {
    employee,
    month,
    reports: reports.length,
    lines: totals.reduce((n: number, t: Total) => n + t.lines, 0),
    total_eur: total,
    by_category: totals.filter((t) => t.lines > 0),
    rates,
    flagged_lines: flagged,
    findings,
    notes,
  };
}
main();
