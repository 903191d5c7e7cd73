declare const crawler: { fetch(args: { url: string }): Promise<{ links: string[] }> };

async function worker(name: string, urls: string[]): Promise<number> {
  let links = 0;
  for (const url of urls) {
    console.log(`${name} -> ${url}`);
    const page = await crawler.fetch({ url });
    links += page.links.length;
    console.log(`${name} <- ${url} (${page.links.length} links)`);
  }
  return links;
}

const [x, y] = await Promise.all([worker("w1", ["/a", "/b"]), worker("w2", ["/c", "/d", "/e"])]);
({ x, y });
