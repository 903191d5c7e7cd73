async function main() {
  try {
    const [a, b, c] = await Promise.all([kv.get("a"), kv.get("b"), kv.get("c")]);
    return a + b + c;
  } catch (e) {
    console.log("Promise.all rejected:", e.message);
  }
  const again = await kv.get("a");
  console.log("a again:", again);
  return again;
}
main();
