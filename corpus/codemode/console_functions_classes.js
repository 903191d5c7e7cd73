function named() {}
const arrow = () => 1;
async function asyncFn() {}
function* gen() {}
class Widget {
  constructor() {
    this.id = 7;
  }
}
class Gadget extends Widget {}
console.log(named, arrow, asyncFn, gen);
console.log(Widget, Gadget);
console.log(new Widget(), new Gadget());
console.log({ fn: named, anon: function () {}, method() {}, cls: Widget });
console.log([Math.max, JSON.parse]);
const nullProto = Object.create(null);
nullProto.a = 1;
console.log(nullProto);
const withGetter = { get g() { return 1; }, set s(v) {}, get gs() { return 2; }, set gs(v) {} };
console.log(withGetter);
const circ = { name: "root", kids: [] };
circ.kids.push({ parent: circ });
circ.self = circ;
console.log(circ);
console.log(Object.assign(() => {}, { extra: 1 }));
console.log([function () {}]);
console.log(Math, JSON);
"ok";
