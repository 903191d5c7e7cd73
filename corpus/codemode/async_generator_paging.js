async function* pages(query) {
  let page = 1;
  while (true) {
    const res = await docs.search({ query, page });
    yield res.results;
    if (!res.has_more) return;
    page++;
  }
}

async function main() {
  const titles = [];
  for await (const results of pages("runbook")) {
    console.log("page with %d results", results.length);
    for (const r of results) titles.push(r.title);
  }
  return titles;
}
main();
