const order = [];
const a = queue.pop({ name: "a" })
  .then((v) => v * 10)
  .then((v) => v + 1)
  .then((v) => {
    order.push("a:" + v);
    return queue.pop({ name: "a2" });
  })
  .then((v) => order.push("a2:" + v));
const b = queue.pop({ name: "b" })
  .then((v) => order.push("b:" + v))
  .catch((e) => order.push("b failed: " + e.message))
  .finally(() => console.log("b settled"));
await Promise.all([a, b]);
console.log(order);
order;
