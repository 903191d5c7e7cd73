// Research brief: page through search results until enough relevant,
// distinct sources are found (or the pages run out), read each picked
// article in turn, pull out the sentences that mention the topic and
// build a short cited brief.
async function main() {
  const terms = topic.toLowerCase().split(" ").filter((t) => t.length > 3);
  const picked = [];
  const sources = new Set();
  let cursor = null;
  let pages = 0;
  let considered = 0;
  while (picked.length < want && pages < 6) {
    const page = await search_articles({ query: topic, cursor, page_size: 8 });
    pages++;
    for (const hit of page.results) {
      considered++;
      if (hit.score < min_score || hit.lang !== "en" || sources.has(hit.source)) continue;
      sources.add(hit.source);
      picked.push(hit);
      if (picked.length === want) break;
    }
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }

  const notes = [];
  for (const hit of picked) {
    const art = await get_article({ id: hit.id, format: "text" });
    const sentences = art.body.split(". ").map((s) => s.trim()).filter((s) => s.length > 0);
    const relevant = sentences.filter((s) => {
      const low = s.toLowerCase();
      return terms.some((t) => low.includes(t));
    });
    const words = art.body.split(" ").filter((w) => w.length > 0).length;
    let quote = relevant.length > 0 ? relevant[0] : sentences[0];
    if (quote.length > 140) quote = quote.slice(0, 137) + "...";
    notes.push({
      id: art.id,
      title: art.title,
      source: hit.source,
      published: art.published_at.slice(0, 10),
      authors: art.authors.map((a) => a.name).join(", "),
      words,
      mentions: relevant.length,
      quote,
    });
  }
  notes.sort((a, b) => {
    if (a.mentions !== b.mentions) return b.mentions - a.mentions;
    if (a.published !== b.published) return a.published < b.published ? 1 : -1;
    return a.id < b.id ? -1 : 1;
  });

  let brief = `Brief: ${topic} (${notes.length} sources from ${pages} result pages)\n`;
  notes.forEach((n, i) => {
    brief += `[${i + 1}] ${n.title} - ${n.source}, ${n.published} (${n.authors}): "${n.quote}"\n`;
  });
  return {
    topic,
    pages,
    considered,
    brief,
    sources: notes.map((n) => ({ id: n.id, words: n.words, mentions: n.mentions })),
  };
}
main();
