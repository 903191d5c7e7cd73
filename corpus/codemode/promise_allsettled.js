async ({ urls }) => {
  const results = await Promise.allSettled(urls.map((url) => web.fetch({ url, timeout_ms: 2000 })));
  const summary = results.map((r, i) =>
    r.status === "fulfilled" ? { url: urls[i], status: r.value.status } : { url: urls[i], error: r.reason.message },
  );
  console.log(summary);
  console.log(results.map((r) => r.status));
  const failed = results.filter((r) => r.status === "rejected");
  if (failed.length) console.warn("%d of %d failed; first: %s", failed.length, urls.length, failed[0].reason.name);
  return summary;
}
