async function main() {
  const results = [];
  for (const id of ids) {
    const res = await api.get_order({ id });
    try {
      results.push({ id, total: res.data.order.total });
    } catch (e) {
      console.log("order %s: %s: %s", id, e.name, e.message);
      results.push({ id, error: e.message });
    }
  }
  return results;
}
main();
