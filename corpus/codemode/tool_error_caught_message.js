async function fetchOrNull(owner, repo) {
  try {
    return await github.get_repo({ owner, repo });
  } catch (e) {
    console.log("get_repo %s/%s failed: %s (%s, code %s)", owner, repo, e.message, e.name, e.code);
    return null;
  }
}

async function main() {
  const found = [];
  for (const name of names) {
    const r = await fetchOrNull("acme", name);
    if (r) found.push(`${r.full_name}★${r.stars}`);
  }
  console.log("found %d of %d", found.length, names.length);
  return found;
}
main();
