// Support triage for one account team, the shape of a model-written
// tool-calling program: list the open tickets, fetch them all in parallel,
// keep the urgent ones, look up their customers in parallel (tolerating a
// missing one), rank, aggregate, post a summary and return a compact report.
async function main() {
  const page = await list_tickets({ team, status: "open", limit: 16 });
  const tickets = await Promise.all(page.ids.map((id) => get_ticket({ id })));

  const urgent = tickets.filter(
    (t) => t.priority <= 2 && t.sla_hours_left < 48 && !t.tags.includes("spam")
  );
  const customerIds = [...new Set(urgent.map((t) => t.customer_id))];
  const customers = await Promise.all(
    customerIds.map(async (id) => {
      try {
        return await get_customer({ id });
      } catch (e) {
        if (e.code === "NOT_FOUND") return null;
        throw e;
      }
    })
  );
  const byId = {};
  customers.forEach((c, i) => {
    byId[customerIds[i]] = c;
  });

  const rows = urgent.map((t) => {
    const c = byId[t.customer_id];
    return {
      id: t.id,
      title: t.title,
      customer: c ? c.name : "unknown",
      plan: c ? c.plan : "unknown",
      mrr: c ? c.mrr : 0,
      hours_left: t.sla_hours_left,
    };
  });
  rows.sort((a, b) => a.hours_left - b.hours_left || b.mrr - a.mrr);

  const byPlan = {};
  for (const r of rows) {
    const g = byPlan[r.plan] || (byPlan[r.plan] = { tickets: 0, mrr: 0 });
    g.tickets += 1;
    g.mrr += r.mrr;
  }
  const atRisk = rows.reduce((sum, r) => sum + r.mrr, 0);
  const ack = await post_summary({
    team,
    urgent: rows.length,
    at_risk_mrr: atRisk,
    top: rows.slice(0, 3).map((r) => r.id),
  });
  return {
    team,
    scanned: tickets.length,
    urgent: rows.length,
    at_risk_mrr: atRisk,
    by_plan: byPlan,
    top: rows.slice(0, 5),
    posted: ack.message_id,
  };
}
main();
