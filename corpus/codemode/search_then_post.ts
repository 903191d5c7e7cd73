declare const github: {
  search_issues(args: { q: string; per_page?: number }): Promise<{ total_count: number; items: Array<{ number: number; title: string; html_url: string; comments: number }> }>;
};
declare const slack: {
  post_message(args: { channel: string; text: string }): Promise<{ ok: boolean; ts: string }>;
};

async ({ owner, repo }: { owner: string; repo: string }) => {
  const { total_count, items } = await github.search_issues({ q: `repo:${owner}/${repo} is:issue is:open label:bug`, per_page: 5 });
  if (total_count === 0) {
    console.log("nothing to report");
    return { posted: false };
  }
  const hot = [...items].sort((a, b) => b.comments - a.comments).slice(0, 3);
  const text = [
    `*${total_count} open bugs in ${owner}/${repo}*`,
    ...hot.map((i, n) => `${n + 1}. <${i.html_url}|#${i.number}> ${i.title} (${i.comments} comments)`),
  ].join("\n");
  console.log(text);
  const res = await slack.post_message({ channel: "#eng", text });
  return { posted: res.ok, ts: res.ts, top: hot.map((i) => i.number) };
};
