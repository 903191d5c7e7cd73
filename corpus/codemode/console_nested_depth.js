const tree = {
  level1: {
    level2: {
      level3: { level4: { level5: "deep" } },
      list: [[1, [2, [3, [4]]]]],
    },
    sibling: "x",
  },
};
console.log(tree);
console.log("%O", tree);
console.log("%o", { a: { b: { c: { d: { e: { f: 1 } } } } } });
console.log([{ a: { b: { c: {} } } }, { a: { b: { c: { d: 1 } } } }]);
console.log({ empty: {}, emptyArr: [], nested: { empty: {} } });
const wide = {};
for (let i = 0; i < 30; i++) wide["key" + i] = i * 1000;
console.log(wide);
console.log({ longString: "x".repeat(120), short: "y" });
console.log({ multi: "line one\nline two", quote: "it's", both: `it's "so"`, back: "a`b'c\"d" });
const nested = await data.fetch_tree({ id: 1 });
console.log(nested);
nested.level1.level2.level3;
