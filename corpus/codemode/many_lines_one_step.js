const rows = await warehouse.query({ sql: "select * from events" });
for (const [i, r] of rows.entries()) {
  console.log("%s %s %s", String(i).padStart(3, "0"), r.type.padEnd(8), JSON.stringify(r.payload));
}
const byType = {};
for (let round = 0; round < 4; round++) {
  for (const r of rows) {
    byType[r.type] = (byType[r.type] ?? 0) + 1;
    if (round === 3) console.debug(`round ${round}: ${r.type} -> ${byType[r.type]}`);
  }
}
console.log(JSON.stringify(byType, null, 2));
rows.length;
