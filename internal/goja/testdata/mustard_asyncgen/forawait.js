// for await: closing the iterator on break, return and throw (awaiting
// return()'s result, ignoring its failures when an exception leaves the
// loop), the errors that leave without closing, assignment targets,
// labelled jumps, sync iterables.
const log = [];
const L = (s) => log.push(s);
(async () => { for (let i = 0; i < 90; i++) { L('t' + i); await null; } print(log.join(' ')); })();
function mk(name, opts = {}) {
  return { [Symbol.asyncIterator]() { let i = 0; return {
    next() { L(name + ' next'); i++; return i > 3 ? { done: true } : Promise.resolve({ value: i, done: false }) },
    ...(opts.noReturn ? {} : { return(v) { L(name + ' return ' + v); if (opts.retThrows) throw new Error('retthrow'); if (opts.retReject) return Promise.reject('retreject'); return opts.retPrim ? 5 : Promise.resolve({ done: true }) } }),
  } } };
}
(async () => {
  for await (const v of mk('a')) { L('a ' + v); if (v == 2) break; }
  L('after a');
  try { for await (const v of mk('b')) { L('b ' + v); throw new Error('bx') } } catch (e) { L('caught ' + e.message) }
  try { for await (const v of mk('c', { retThrows: true })) { throw new Error('cx') } } catch (e) { L('caught ' + e.message) }
  try { for await (const v of mk('d', { retThrows: true })) { break } } catch (e) { L('caught ' + e.message) }
  try { for await (const v of mk('e', { retPrim: true })) { break } } catch (e) { L('caught ' + e.constructor.name) }
  try { for await (const v of mk('f', { retPrim: true })) { throw 'fx' } } catch (e) { L('caught ' + e) }
  try { for await (const v of mk('g', { retReject: true })) { break } } catch (e) { L('caught ' + e) }
  try { for await (const v of mk('h', { retReject: true })) { throw 'hx' } } catch (e) { L('caught ' + e) }
  for await (const v of mk('i', { noReturn: true })) { break }
  L('after i');
  const f = async () => { for await (const v of mk('j')) { return 'jr' + v } };
  L('j ' + await f());
  outer: for await (const x of mk('k')) { for await (const y of mk('l')) { if (y == 2) continue outer; if (x == 3) break outer; L('xy ' + x + y) } }
  try { for await (const [a, b] of mk('m')) { L('m') } } catch (e) { L('caught ' + e.constructor.name) }
  try { for await (const v of { [Symbol.asyncIterator]() { return { next() { return 1 } } } }) {} } catch (e) { L('caught ' + e.constructor.name) }
  try { for await (const v of { [Symbol.asyncIterator]() { return { next() { return Promise.reject('nr') }, return() { L('never') } } } }) {} } catch (e) { L('caught ' + e) }
  try { for await (const v of { alpha: 1 }) {} } catch (e) { L('caught ' + e.constructor.name) }
  for await (const v of 'ab') L('s ' + v);
  for await (const v of new Set([Promise.resolve(4), 5]).values()) L('set ' + v);
  let x; for await (x of [1, Promise.resolve(2)]) L('x ' + x);
  const o = { c: 0 }; for await (o.c of [Promise.resolve(7)]) L('o ' + o.c);
  try { for await (const v of [Promise.reject('rj'), 2]) L('rj ' + v) } catch (e) { L('caught ' + e) }
  function* closing() { try { yield Promise.reject('cr'); yield 2 } finally { L('sync gen closed') } }
  try { for await (const v of closing()) L('never') } catch (e) { L('caught ' + e) }
  for await (const v of []) L('never');
  for await (var vv of [3]) L('var ' + vv);
  let async; for await (async of [7]) L('async ' + async);
})();
