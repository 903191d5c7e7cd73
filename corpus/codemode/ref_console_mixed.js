(async () => {
  console.log("collected line");
  const items = await store.list({ prefix: "cfg/" });
  console.error("sent to the host:", items.length);
  console.warn("collected warning");
  for (const key of items) {
    const v = await store.get({ key });
    if (v === null) console.error("missing", key);
    else console.debug(key, "=", v);
  }
  return items.length;
})();
