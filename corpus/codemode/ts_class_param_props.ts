declare const github: {
  get_pull(args: { repo: string; number: number }): Promise<{ number: number; additions: number; deletions: number; draft: boolean }>;
};

class PullStats {
  #count = 0;
  static readonly bigChange = 500;

  constructor(private readonly repo: string, public label: string = "stats") {}

  async add(n: number): Promise<void> {
    const pr = await github.get_pull({ repo: this.repo, number: n });
    this.#count++;
    this.total += pr.additions + pr.deletions;
    if (pr.additions + pr.deletions > PullStats.bigChange) this.big.push(pr.number);
    if (pr.draft) this.drafts++;
  }

  total = 0;
  drafts = 0;
  big: number[] = [];

  get count(): number {
    return this.#count;
  }
}

async ({ repo, numbers }: { repo: string; numbers: number[] }) => {
  const stats = new PullStats(repo);
  for (const n of numbers) await stats.add(n);
  console.log(stats);
  console.log("%s: %d pulls, %d lines", stats.label, stats.count, stats.total);
  return { count: stats.count, total: stats.total, drafts: stats.drafts, big: stats.big };
};
