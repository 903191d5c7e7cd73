declare const status: {
  check(args: { service: string }): Promise<{ service: string; latency_ms: number }>;
};

const services = ["auth", "billing", "search", "email"] as const;
type Service = (typeof services)[number];

const settled = await Promise.allSettled(services.map((service) => status.check({ service })));
const up = settled.filter(
  (r): r is PromiseFulfilledResult<{ service: string; latency_ms: number }> => r.status === "fulfilled",
);
const down = settled
  .map((r, i) => [services[i], r] as [Service, PromiseSettledResult<unknown>])
  .filter(([, r]) => r.status === "rejected")
  .map(([s, r]) => `${s}: ${((r as PromiseRejectedResult).reason as Error).message}`);
console.log("up:", up.map((r) => r.value));
if (down.length) console.error("down:", down);
const slowest = up.reduce((a, b) => (b.value.latency_ms > a.value.latency_ms ? b : a));
({ up: up.length, down, slowest: slowest.value.service });
