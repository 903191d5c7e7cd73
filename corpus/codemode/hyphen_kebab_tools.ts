declare const k8s: {
  "get-pods"(args: { namespace: string; selector?: string }): Promise<Pod[]>;
  "get-logs"(args: { namespace: string; pod: string; tail: number }): Promise<string>;
  "restart-deployment"(args: { namespace: string; name: string }): Promise<{ restarted: boolean }>;
};

type Pod = { name: string; phase: "Running" | "CrashLoopBackOff" | "Pending"; restarts: number; owner: string };

const ns = namespace as string;
const pods = await k8s["get-pods"]({ namespace: ns, selector: "app=api" });
const bad = pods.filter((p) => p.phase === "CrashLoopBackOff" || p.restarts > 5);
console.log("%d pods, %d bad", pods.length, bad.length);
const owners = new Set<string>();
for (const p of bad) {
  const tail = await k8s["get-logs"]({ namespace: ns, pod: p.name, tail: 3 });
  console.log(`--- ${p.name} ---\n${tail}`);
  owners.add(p.owner);
}
const restarted: string[] = [];
for (const owner of owners) {
  const r = await k8s["restart-deployment"]({ namespace: ns, name: owner });
  if (r.restarted) restarted.push(owner);
}
console.log(owners);
({ restarted });
