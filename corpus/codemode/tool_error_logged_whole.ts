declare const db: { query(sql: string, params?: unknown[]): Promise<Array<Record<string, unknown>>> };

async ({ table }: { table: string }) => {
  let rows: Array<Record<string, unknown>> = [];
  try {
    rows = await db.query(`SELECT * FROM ${table} LIMIT 10`);
  } catch (err) {
    console.error(err);
    console.error("query failed:", (err as Error).message);
    rows = await db.query("SELECT * FROM fallback LIMIT ?", [3]);
  }
  console.log(rows);
  return rows.length;
};
