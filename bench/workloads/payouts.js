// Payout reconciliation for one day: page through the settlements, fetch
// the day's payout batch, compute what each merchant should have been paid,
// compare, and flag the largest discrepancies (at most three; a
// discrepancy already flagged comes back as a DUPLICATE error).
async function main() {
  const settlements = [];
  let pages = 0;
  for (let page = 1; page <= 10; page++) {
    const res = await list_settlements({ date, page, page_size: 25 });
    pages++;
    for (const s of res.items) settlements.push(s);
    if (!res.has_more) break;
  }
  const batch = await get_payout_batch({ date, currency });
  const paid = new Map();
  for (const p of batch.payouts) paid.set(p.merchant_id, p.amount_cents);

  const owed = new Map();
  let reversed = 0;
  let foreign = 0;
  for (const s of settlements) {
    if (s.status === "reversed") {
      reversed++;
      continue;
    }
    if (s.currency !== currency) {
      foreign++;
      continue;
    }
    let m = owed.get(s.merchant.id);
    if (!m) {
      m = { id: s.merchant.id, name: s.merchant.name, settlements: 0, gross: 0, net: 0 };
      owed.set(s.merchant.id, m);
    }
    m.settlements++;
    m.gross += s.amounts.gross_cents;
    m.net += s.amounts.gross_cents - s.amounts.fee_cents - s.amounts.refund_cents;
  }

  const mismatches = [];
  for (const m of owed.values()) {
    const got = paid.has(m.id) ? paid.get(m.id) : 0;
    if (got !== m.net) {
      mismatches.push({ merchant: m.id, name: m.name, owed_cents: m.net, paid_cents: got, diff_cents: got - m.net });
    }
  }
  const unknown = batch.payouts.filter((p) => !owed.has(p.merchant_id)).map((p) => p.merchant_id);
  mismatches.sort((a, b) => Math.abs(b.diff_cents) - Math.abs(a.diff_cents) || (a.merchant < b.merchant ? -1 : 1));

  const cases = [];
  for (const mm of mismatches) {
    if (cases.length === 3) break;
    if (Math.abs(mm.diff_cents) < threshold_cents) break;
    try {
      const r = await flag_discrepancy({ date, merchant: mm.merchant, diff_cents: mm.diff_cents, batch: batch.id });
      cases.push({ merchant: mm.merchant, case: r.case_id, status: "opened" });
    } catch (e) {
      if (e.code !== "DUPLICATE") throw e;
      cases.push({ merchant: mm.merchant, case: e.message.split(" ").pop(), status: "already open" });
    }
  }

  const merchants = [...owed.values()];
  merchants.sort((a, b) => b.net - a.net || (a.id < b.id ? -1 : 1));
  const fmt = (cents) => {
    const abs = Math.abs(cents);
    const frac = abs % 100;
    return `${cents < 0 ? "-" : ""}${Math.floor(abs / 100)}.${frac < 10 ? "0" : ""}${frac}`;
  };
  return {
    date,
    batch: batch.id,
    pages,
    settlements: settlements.length,
    reversed,
    foreign,
    merchants: owed.size,
    owed_total: fmt(merchants.reduce((n, m) => n + m.net, 0)),
    paid_total: fmt(batch.payouts.reduce((n, p) => n + p.amount_cents, 0)),
    top: merchants.slice(0, 5).map((m) => ({ id: m.id, name: m.name, settlements: m.settlements, net: fmt(m.net) })),
    mismatches: mismatches.length,
    unknown,
    cases,
  };
}
main();
