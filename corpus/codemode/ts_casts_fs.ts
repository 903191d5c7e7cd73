declare const fs: {
  "read-file"(path: string): Promise<string>;
  "list-dir"(path: string): Promise<Array<{ name: string; kind: "file" | "dir" }>>;
};

interface PackageJson {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
}

function isPackageJson(x: unknown): x is PackageJson {
  return typeof x === "object" && x !== null && "name" in x && "version" in x;
}

async function main(root: string) {
  const entries = await fs["list-dir"](root);
  const manifests = entries.filter((e) => e.kind === "file" && e.name.endsWith(".json"));
  const out: Record<string, string> = {};
  for (const m of manifests) {
    const text = await fs["read-file"](`${root}/${m.name}`);
    const parsed = JSON.parse(text) as unknown;
    if (!isPackageJson(parsed)) {
      console.warn("skipping %s: not a package manifest", m.name);
      continue;
    }
    const pkg = parsed as PackageJson;
    const deps = Object.keys(pkg.dependencies ?? {}).length;
    out[pkg.name] = `${pkg.version} (${deps} deps)`;
  }
  return out;
}

main(root as string);
