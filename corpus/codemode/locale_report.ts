declare const sales: {
  totals(args: { quarter: string }): Promise<Array<{ region: string; revenue: number; closed_at: string }>>;
};

async ({ quarter }: { quarter: string }) => {
  const rows = await sales.totals({ quarter });
  const lines = rows.map((r) => {
    const when = new Date(r.closed_at);
    return `${r.region.padEnd(6)} $${r.revenue.toLocaleString()} (closed ${when.toLocaleDateString()})`;
  });
  const total = rows.reduce((s, r) => s + r.revenue, 0);
  lines.push(`total  $${total.toLocaleString("en-US", { maximumFractionDigits: 0 })}`);
  console.log(lines.join("\n"));
  return lines;
};
