// Triage a repository's open bugs, as a model writes it: TypeScript, a
// function of the inputs, namespaced tools and console.log for progress.
interface Issue {
  number: number;
  title: string;
  labels: string[];
}

type Input = { repo: string; label: string };

async ({ repo, label }: Input) => {
  console.log(`triaging ${label} issues in ${repo}`);
  const issues: Issue[] = await github.search_issues({ repo, label, state: "open" });
  const untriaged = issues.filter((issue) => !issue.labels.includes("triaged"));
  console.log(`found ${issues.length} open, ${untriaged.length} untriaged`);

  await Promise.all(untriaged.map((issue) => github.add_label({ repo, number: issue.number, label: "triaged" })));

  const body = untriaged.map((issue) => `- #${issue.number} ${issue.title}`).join("\n");
  const summary = await github.create_issue({ repo, title: `Triage: ${untriaged.length} ${label} issues`, body });
  try {
    await slack.post_message({ channel: "#triage", text: `${repo}: see #${summary.number}` });
  } catch (e) {
    console.warn(`slack is down (${e.code}); the summary is #${summary.number}`);
  }
  return { triaged: untriaged.map((issue) => issue.number), summary: summary.number };
};
