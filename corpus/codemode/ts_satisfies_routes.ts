declare const http: {
  get(args: { url: string; headers?: Record<string, string> }): Promise<{ status: number; body: string }>;
};

type Route = { path: string; expect: number };

const routes = {
  home: { path: "/", expect: 200 },
  health: { path: "/healthz", expect: 200 },
  admin: { path: "/admin", expect: 401 },
} satisfies Record<string, Route>;

type RouteName = keyof typeof routes;
type Outcome = { [K in RouteName]?: "pass" | "fail" };

const outcome: Outcome = {};
for (const name of Object.keys(routes) as RouteName[]) {
  const r = routes[name];
  const res = await http.get({ url: base + r.path, headers: { accept: "text/html" } });
  outcome[name] = res.status === r.expect ? "pass" : "fail";
  if (outcome[name] === "fail") console.warn(`${name}: got ${res.status}, want ${r.expect}`, { body: res.body.slice(0, 20) });
}
console.log(outcome);
outcome;
