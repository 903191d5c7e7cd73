const listing = await fs["list-dir"]("/logs");
const sizes = {};
for (const name of listing) {
  const text = await fs["read-file"](`/logs/${name}`);
  const lines = text.split("\n").filter(Boolean);
  sizes[name] = lines.length;
  console.log("%s: %d lines, first %j", name, lines.length, lines[0]);
}
const stat = await fs["stat-file"]({ path: "/logs" });
({ sizes, bytes: stat.bytes });
