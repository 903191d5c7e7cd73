declare const metrics: { query(q: { name: string }): Promise<number[]> };

const thresholds: Record<string, number> = { cpu: 80, mem: 90, disk: 95 };

async function check(name: string): Promise<"ok" | "warn" | "crit"> {
  const series = await metrics.query({ name });
  const max = Math.max(...series);
  console.debug("%s series %o", name, series);
  if (max >= thresholds[name] + 10) {
    console.error(`${name} critical: ${max}`);
    return "crit";
  }
  if (max >= thresholds[name]) {
    console.warn(`${name} high: ${max}`);
    return "warn";
  }
  console.info(`${name} fine: ${max}`);
  return "ok";
}

(async () => {
  const out: Record<string, string> = {};
  for (const name of Object.keys(thresholds)) out[name] = await check(name);
  console.log("result", out);
  return out;
})();
