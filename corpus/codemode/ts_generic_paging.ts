declare const jira: {
  search(args: { jql: string; startAt: number; maxResults: number }): Promise<Page<Ticket>>;
};

interface Page<T> {
  startAt: number;
  total: number;
  values: T[];
}

type Ticket = { key: string; points?: number };

async function collectAll<T>(fetchPage: (startAt: number) => Promise<Page<T>>): Promise<T[]> {
  const all: T[] = [];
  let startAt = 0;
  for (;;) {
    const page = await fetchPage(startAt);
    all.push(...page.values);
    console.log("page at %d: %d of %d", page.startAt, page.values.length, page.total);
    startAt += page.values.length;
    if (startAt >= page.total || page.values.length === 0) break;
  }
  return all;
}

async function main() {
  const tickets = await collectAll<Ticket>((startAt) =>
    jira.search({ jql: `project = ${project}`, startAt, maxResults: 2 }),
  );
  const points = tickets.reduce((sum, t) => sum + (t.points ?? 0), 0);
  return { count: tickets.length, points, keys: tickets.map((t) => t.key) };
}

main();
