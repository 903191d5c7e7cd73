declare const tickets: {
  create(args: { title: string; severity: number; tags: string[] }): Promise<{ id: string }>;
};

namespace Triage {
  export const prefix = "[triage]";
  export function title(kind: string, what: string): string {
    return `${prefix} ${kind}: ${what}`;
  }
  export namespace Tags {
    export const all = ["auto", "bot"];
  }
}

const enum Severity {
  Minor = 1,
  Major = 5,
  Blocker = 9,
}

type Finding = { kind: "crash" | "slow"; what: string };

async function file(findings: Finding[]) {
  const ids: string[] = [];
  for (const f of findings) {
    const severity = f.kind === "crash" ? Severity.Blocker : Severity.Minor;
    const t = await tickets.create({ title: Triage.title(f.kind, f.what), severity, tags: [...Triage.Tags.all, f.kind] });
    ids.push(t.id);
  }
  return ids;
}

const ids = await file(findings as Finding[]);
console.log("filed", ids, "with prefix", Triage.prefix);
ids;
