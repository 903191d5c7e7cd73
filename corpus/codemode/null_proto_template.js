async () => {
  const counts = Object.create(null);
  for (const w of (await text.words({ doc: "readme" }))) counts[w] = (counts[w] ?? 0) + 1;
  let line;
  try {
    line = `counts: ${counts}`;
  } catch (e) {
    line = `${e.name}: ${e.message}`;
  }
  await text.save({ line });
  console.log(line);
  return Object.keys(counts).length;
}
