declare const github: {
  list_issues(args: { repo: string; state: "open" | "closed" }): Promise<RawIssue[]>;
};

enum Priority {
  Low = 1,
  Medium,
  High,
  Critical = 10,
}

enum Status {
  Open = "open",
  Closed = "closed",
}

interface RawIssue {
  id: number;
  labels: string[];
}

function priorityOf(issue: RawIssue): Priority {
  if (issue.labels.includes("sev1")) return Priority.Critical;
  if (issue.labels.includes("p1")) return Priority.High;
  if (issue.labels.includes("p2")) return Priority.Medium;
  return Priority.Low;
}

const issues = await github.list_issues({ repo, state: Status.Open });
const ranked = issues
  .map((i) => ({ id: i.id, priority: priorityOf(i) }))
  .sort((a, b) => b.priority - a.priority);
for (const r of ranked) {
  console.log(`#${r.id}: ${Priority[r.priority]} (${r.priority})`);
}
console.info("enum object:", Priority);
({ top: ranked[0].id, names: ranked.map((r) => Priority[r.priority]), status: Status.Open });
