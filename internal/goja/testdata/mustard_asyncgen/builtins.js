// The intrinsics: %AsyncGeneratorFunction%, %AsyncGeneratorPrototype%,
// %AsyncIteratorPrototype%, Symbol.asyncIterator; async generator methods
// in object literals and classes; receivers and parameters.
const out = [];
const O = (s) => out.push(String(s));
async function* g(a, b) {}
const AGF = Object.getPrototypeOf(g);
const AGP = AGF.prototype;
const AIP = Object.getPrototypeOf(AGP);
O(Object.prototype.toString.call(g));
O(Object.prototype.toString.call(g()));
O(AGF[Symbol.toStringTag] + ' ' + AGP[Symbol.toStringTag]);
O(Object.getPrototypeOf(AGF) === Function.prototype);
O(AGF.constructor.name + ' ' + AGF.constructor.length);
O(AGP.constructor === AGF);
O(Object.getPrototypeOf(AIP) === Object.prototype);
O(AIP[Symbol.asyncIterator].name + ' ' + typeof AIP[Symbol.asyncIterator]);
const it = g(); O(it[Symbol.asyncIterator]() === it);
O(Object.getPrototypeOf(it) === g.prototype);
O(Object.getPrototypeOf(g.prototype) === AGP);
O(JSON.stringify(Object.getOwnPropertyDescriptor(g, 'prototype')));
O(g.hasOwnProperty('caller') + ' ' + g.length + ' ' + g.name);
O(Object.getOwnPropertyNames(AGP).join());
O(Object.getOwnPropertyNames(AGF).join());
O(['next', 'return', 'throw'].map((k) => AGP[k].name + AGP[k].length).join());
O(typeof Symbol.asyncIterator + ' ' + Symbol.asyncIterator.toString() + ' ' + Symbol.asyncIterator.description);
O(JSON.stringify(Object.getOwnPropertyDescriptor(Symbol, 'asyncIterator')));
try { new g() } catch (e) { O(e.constructor.name) }
const o = { async *m() { yield 1 }, async *[Symbol.asyncIterator]() { yield 2 }, async* 'str'() {} };
O(o.m.name + ' ' + o[Symbol.asyncIterator].name + ' ' + o.str.name);
O(Object.getPrototypeOf(o.m) === AGF);
class C { async *m() { yield this.x } static async *s() {} async *#p() { yield 'p' } q() { return this.#p() } }
O(Object.getPrototypeOf(C.prototype.m) === AGF);
const ge = async function* named() {}; O(ge.name);
O(String(g));
O(String(o.m));
class B { async *m() { yield 'base' } }
class D extends B { async *m() { yield* super.m(); yield 'derived' } }
(async () => {
  for await (const v of new D().m()) O('D ' + v);
  for await (const v of o) O('o ' + v);
  for await (const v of new C().q()) O('p ' + v);
  const r = AGP.next.call({}); O(r instanceof Promise); try { await r } catch (e) { O(e.constructor.name) }
  try { await AGP.return.call(1) } catch (e) { O(e.constructor.name) }
  async function* pd(x = (() => { throw new Error('param') })()) {}
  try { pd() } catch (e) { O('sync ' + e.message) }
  print(out.join('\n'));
})();
