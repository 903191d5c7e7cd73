// An async generator's return completion: finally blocks that await,
// yield, throw or catch; for await loops inside a generator closed by
// its consumer; throw completions through them.
const log = [];
const L = (s) => log.push(s);
(async () => { for (let i = 0; i < 90; i++) { L('t' + i); await null; } print(log.join(' ')); })();
async function* src(n) { try { for (let i = 1; i <= n; i++) { L('src yield ' + i); yield i } } finally { L('src fin'); await null; L('src fin2') } }
async function* gen() {
  try {
    for await (const v of src(3)) { L('gen got ' + v); const r = yield v * 10; L('gen r ' + r) }
  } catch (e) { L('gen caught ' + e) } finally { L('gen fin') }
}
async function* badfin() { try { yield 1 } finally { await Promise.reject('finrej') } }
async function* catcher() { try { try { yield 1 } finally { L('inner fin'); await null; throw 'from fin' } } catch (e) { L('catcher caught ' + e); yield 'after catch' } finally { L('outer fin') } }
async function* finYield() { try { yield 1 } finally { const x = yield 'in fin'; L('finYield x ' + x) } }
function* syncIt() { try { yield 1; yield 2 } finally { L('syncIt closed') } }
async function* nullClose() { for await ([ {} = yield 'nc' ] of [{ [Symbol.iterator]() { return { next() { return { value: undefined, done: false } }, return() { L('null return'); return null } } } }]) {} }
(async () => {
  for await (const v of gen()) { L('main ' + v); if (v == 20) break }
  L('--');
  const it = gen(); L(JSON.stringify(await it.next())); L(JSON.stringify(await it.return('X'))); L(JSON.stringify(await it.next()));
  L('--');
  const it2 = gen(); await it2.next(); try { L(JSON.stringify(await it2.throw('TT'))) } catch (e) { L('it2 ' + e) } L(JSON.stringify(await it2.next()));
  L('--');
  const b = badfin(); await b.next(); try { await b.return(1) } catch (e) { L('badfin ' + e) }
  const c = catcher(); await c.next(); L(JSON.stringify(await c.return('cr'))); L(JSON.stringify(await c.next()));
  const fy = finYield(); await fy.next(); L(JSON.stringify(await fy.return('fr'))); L(JSON.stringify(await fy.next('nx'))); L(JSON.stringify(await fy.next()));
  const fy2 = finYield(); await fy2.next(); L(JSON.stringify(await fy2.return('fr'))); try { await fy2.throw('thr') } catch (e) { L('fy2 ' + e) } L(JSON.stringify(await fy2.next()));
  async function* overSync() { for await (const v of syncIt()) yield v }
  const os = overSync(); await os.next(); L(JSON.stringify(await os.return('os')));
  const nc = nullClose(); L(JSON.stringify(await nc.next())); try { await nc.return('nc') } catch (e) { L('nullClose ' + e.constructor.name) }
})();
