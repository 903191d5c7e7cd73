// yield* to async generators, sync iterables and custom async iterators,
// with next, throw and return passed through.
const log = [];
const L = (s) => log.push(s);
(async () => { for (let i = 0; i < 90; i++) { L('t' + i); await null; } print(log.join(' ')); })();
async function* inner() { try { const a = yield 'i1'; L('inner got ' + a); yield 'i2'; return 'iret' } finally { L('inner fin') } }
async function* outer() { L('o0'); const r = yield* inner(); L('outer r ' + r); const s = yield* [Promise.resolve('s1'), 's2']; L('s ' + s); yield 'o-last'; }
(async () => {
  const it = outer();
  for (const v of ['x', 'y', 'z', undefined, undefined, undefined, undefined]) L(JSON.stringify(await it.next(v)));
  const it2 = outer(); await it2.next();
  L(JSON.stringify(await it2.return('R')));
  const it3 = outer(); await it3.next();
  try { await it3.throw(new Error('boom')) } catch (e) { L('it3 ' + e.message) }
  async function* o2() { try { yield* [1, 2, 3] } finally { L('o2 fin') } }
  const it4 = o2(); await it4.next(); L(JSON.stringify(await it4.return(Promise.resolve('RR'))));
  const it5 = o2(); await it5.next(); try { await it5.throw('T') } catch (e) { L('it5 ' + e) }
  const custom = { [Symbol.asyncIterator]() { let i = 0; return {
    next(v) { L('c next ' + v); return Promise.resolve({ value: i++, done: i > 3 }) },
    return(v) { L('c return ' + v); return { value: 'cr', done: false } },
    throw(v) { L('c throw ' + v); return { value: 'ct', done: true } } } } };
  async function* o3() { const r = yield* custom; L('o3 r ' + r); return 'o3done' }
  const it6 = o3(); L(JSON.stringify(await it6.next('A'))); L(JSON.stringify(await it6.next('B')));
  L(JSON.stringify(await it6.return('Q'))); L(JSON.stringify(await it6.throw('W'))); L(JSON.stringify(await it6.next()));
  const doneRet = { [Symbol.asyncIterator]() { return {
    next() { return { value: 1, done: false } },
    return(v) { L('d return ' + (v instanceof Promise ? 'promise' : v)); return { value: Promise.resolve('drv'), done: true } } } } };
  async function* o4() { try { yield* doneRet } finally { L('o4 fin') } }
  const it7 = o4(); await it7.next(); const r7 = await it7.return(Promise.resolve('P')); L('o4 value is a promise: ' + (r7.value instanceof Promise));
  const noRet = { [Symbol.asyncIterator]() { return { next() { return { value: 1, done: false } } } } };
  async function* o5() { try { yield* noRet } finally { L('o5 fin') } }
  const it8 = o5(); await it8.next(); L(JSON.stringify(await it8.return(Promise.resolve('P5'))));
  const noThrow = { [Symbol.asyncIterator]() { return { next() { return { value: 1, done: false } }, return() { L('closed'); return {} } } } };
  async function* o6() { try { yield* noThrow } catch (e) { L('o6 ' + e.constructor.name) } }
  const it9 = o6(); await it9.next(); L(JSON.stringify(await it9.throw('x')));
})();
