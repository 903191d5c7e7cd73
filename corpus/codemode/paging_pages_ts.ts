declare const github: {
  list_commits(args: { repo: string; page: number; per_page: number }): Promise<Commit[]>;
};

type Commit = { sha: string; author: { login: string } | null; message: string };

const perPage = 2;
const authors = new Map<string, number>();
let page = 1;
let total = 0;
while (true) {
  const commits = await github.list_commits({ repo, page, per_page: perPage });
  for (const c of commits) {
    const who = c.author?.login ?? "(unknown)";
    authors.set(who, (authors.get(who) ?? 0) + 1);
    total++;
  }
  if (commits.length < perPage) break;
  page++;
}
console.log(authors);
const top = [...authors.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
({ total, pages: page, top: top.map(([login, n]) => `${login}:${n}`) });
