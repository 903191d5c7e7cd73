declare const github: { get_repo(a: { owner: string; repo: string }): Promise<{ stars: number }> };

async ({ owner, repos }: { owner: string; repos: string[] }) => {
  let total = 0;
  for (const repo of repos) {
    const r = await github.get_repo({ owner, repo });
    const seen = console.log(`${owner}/${repo}`, r.stars);
    console.info("typeof result:", typeof seen);
    total += r.stars;
  }
  return total;
};
