declare const github: {
  search_issues(args: { repo: string; query: string; page?: number }): Promise<{ items: Issue[]; next?: number }>;
};

interface Issue {
  number: number;
  title: string;
  labels: string[];
  assignee?: { login: string } | null;
}

type Summary = { total: number; unassigned: number[]; byLabel: Record<string, number> };

async ({ owner, repo }: { owner: string; repo: string }) => {
  const res = await github.search_issues({ repo: `${owner}/${repo}`, query: "is:open" });
  const summary: Summary = { total: 0, unassigned: [], byLabel: {} };
  for (const issue of res.items) {
    summary.total++;
    if (!issue.assignee?.login) summary.unassigned.push(issue.number);
    for (const l of issue.labels) summary.byLabel[l] = (summary.byLabel[l] ?? 0) + 1;
  }
  console.log("summary for %s/%s:", owner, repo, summary);
  return summary;
};
