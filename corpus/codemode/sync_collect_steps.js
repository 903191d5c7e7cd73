console.log("before any call");
const a = kv.get("alpha");
console.log("alpha is", a);
const b = kv.get("beta");
console.info("beta is %j", b);
let c;
try {
  c = kv.get("gamma");
} catch (e) {
  console.error("gamma failed:", e.message);
  c = null;
}
console.log("done");
[a, b, c];
