declare const github: {
  get_issue(args: { repo: string; number: number }): Promise<Issue>;
};

interface Issue {
  number: number;
  milestone?: { title: string; due_on?: string | null } | null;
  assignees?: { login: string }[];
  body?: string | null;
  reactions?: Record<string, number>;
}

async ({ repo, numbers }: { repo: string; numbers: number[] }) => {
  const out: Array<Record<string, unknown>> = [];
  for (const number of numbers) {
    const issue = await github.get_issue({ repo, number });
    const row: Record<string, unknown> = { number: issue.number };
    row.milestone = issue.milestone?.title ?? "none";
    row.due = issue.milestone?.due_on ?? null;
    row.firstAssignee = issue.assignees?.[0]?.login;
    row.firstAssignee ??= "unassigned";
    row.bodyLength = issue.body?.length ?? 0;
    row.thumbs = issue.reactions?.["+1"] || 0;
    const labelsUpper = (issue as any).labels?.map?.((l: string) => l.toUpperCase());
    row.labels = labelsUpper ?? [];
    out.push(row);
  }
  const first = out.find((r) => r.milestone !== "none")!;
  console.log(out);
  return { rows: out.length, firstWithMilestone: first.number as number };
};
