// On-call digest: list the alerts firing since the last hand-off, group
// the production ones by service, look up each service's owner and recent
// deploys in parallel (a retired service is no longer in the catalogue),
// rank the groups and post a digest to the hand-off channel.
const SEVERITY = ["", "SEV1", "SEV2", "SEV3", "SEV4"];

async function describe(group) {
  let svc;
  try {
    svc = await get_service({ name: group.service });
  } catch (e) {
    if (e.code === "NOT_FOUND") return null;
    throw e;
  }
  const deploys = await get_deploys({ service: svc.name, since, limit: 5 });
  const good = deploys.items.filter((d) => d.status === "succeeded");
  return {
    team: svc.owner.team,
    pager: svc.owner.pager,
    tier: svc.tier,
    last_deploy: good.length > 0 ? good[0].version : null,
    rolled_back: deploys.items.some((d) => d.status === "rolled_back"),
  };
}

async function main() {
  const alerts = await list_alerts({ since, state: "firing", limit: 40 });
  const groups = new Map();
  let ignored = 0;
  for (const a of alerts.items) {
    if (a.labels.env !== "prod" || a.silenced) {
      ignored++;
      continue;
    }
    let g = groups.get(a.service);
    if (!g) {
      g = { service: a.service, alerts: 0, worst: 4, first: a.started_at, titles: [] };
      groups.set(a.service, g);
    }
    g.alerts++;
    g.worst = Math.min(g.worst, a.severity);
    if (a.started_at < g.first) g.first = a.started_at;
    if (g.titles.length < 2 && !g.titles.includes(a.title)) g.titles.push(a.title);
  }

  const list = [...groups.values()];
  const info = await Promise.all(list.map((g) => describe(g)));
  const rows = list.map((g, i) => {
    const d = info[i];
    return {
      service: g.service,
      severity: SEVERITY[g.worst],
      rank: g.worst * 10 + (d ? d.tier : 9),
      alerts: g.alerts,
      since: g.first.slice(11, 16),
      team: d ? d.team : "unowned",
      pager: d ? d.pager : null,
      last_deploy: d ? d.last_deploy : null,
      rolled_back: d ? d.rolled_back : false,
      titles: g.titles.join(" / "),
    };
  });
  rows.sort((a, b) => a.rank - b.rank || b.alerts - a.alerts || (a.service < b.service ? -1 : 1));

  const shown = rows.slice(0, 8);
  const lines = shown.map(
    (r) =>
      `${r.severity} ${r.service} (${r.team}): ${r.alerts} alert${r.alerts === 1 ? "" : "s"} since ${r.since} UTC` +
      (r.last_deploy ? `, last deploy ${r.last_deploy}` : "") +
      (r.rolled_back ? ", ROLLED BACK" : "") +
      ` - ${r.titles}`
  );
  if (rows.length > shown.length) lines.push(`...and ${rows.length - shown.length} more services`);
  const pages = rows.filter((r) => r.severity === "SEV1" && r.pager).map((r) => r.pager);
  const text = [`On-call digest since ${since}: ${alerts.items.length - ignored} prod alerts on ${rows.length} services`]
    .concat(lines)
    .join("\n");
  const posted = await post_message({ channel, text, notify: pages });
  return {
    channel,
    firing: alerts.items.length,
    ignored,
    services: rows.length,
    unowned: rows.filter((r) => r.team === "unowned").map((r) => r.service),
    pages,
    top: rows.slice(0, 3).map((r) => ({ service: r.service, severity: r.severity, team: r.team, alerts: r.alerts })),
    text,
    posted: posted.ts,
  };
}
main();
