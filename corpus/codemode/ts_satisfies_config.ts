declare const github: {
  get_repo(args: { owner: string; repo: string }): Promise<{ default_branch: string; topics?: string[] }>;
  get_branch_protection(args: { owner: string; repo: string; branch: string }): Promise<Protection | null>;
};

type Protection = { required_reviews?: number; enforce_admins?: boolean };

type Rule = { minReviews: number; adminsToo: boolean };

const rules = {
  strict: { minReviews: 2, adminsToo: true },
  relaxed: { minReviews: 1, adminsToo: false },
} satisfies Record<string, Rule>;

const levels = ["strict", "relaxed"] as const;
type Level = (typeof levels)[number];

async ({ owner, repo, level }: { owner: string; repo: string; level: Level }) => {
  const info = await github.get_repo({ owner, repo });
  const prot = await github.get_branch_protection({ owner, repo, branch: info.default_branch });
  const rule = rules[level]!;
  const reviews = prot?.required_reviews ?? 0;
  const problems: string[] = [];
  if (reviews < rule.minReviews) problems.push(`needs ${rule.minReviews} reviews, has ${reviews}`);
  if (rule.adminsToo && !prot?.enforce_admins) problems.push("admins are not held to the rules");
  console.log("checked", { owner, repo, branch: info.default_branch, level, topics: info.topics ?? [] });
  return { ok: problems.length === 0, problems };
};
