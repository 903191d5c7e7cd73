declare const deploy: {
  status(args: { env: string }): Promise<{ env: string; version: string; healthy: boolean }>;
};

type Attempt<T> = { ok: true; value: T; tries: number } | { ok: false; error: string; tries: number };

async function retry<T>(what: string, times: number, fn: () => Promise<T>): Promise<Attempt<T>> {
  let last = "";
  for (let i = 1; i <= times; i++) {
    try {
      return { ok: true, value: await fn(), tries: i };
    } catch (e) {
      last = (e as Error).message;
      console.warn(`${what}: attempt ${i} of ${times} failed: ${last}`);
    }
  }
  return { ok: false, error: last, tries: times };
}

async ({ envs }: { envs: string[] }) => {
  const report: Record<string, string> = {};
  for (const env of envs) {
    const r = await retry(`status ${env}`, 3, () => deploy.status({ env }));
    report[env] = r.ok ? `${r.value.version}${r.value.healthy ? "" : " (unhealthy)"} after ${r.tries}` : `gave up: ${r.error}`;
  }
  console.info(report);
  return report;
};
