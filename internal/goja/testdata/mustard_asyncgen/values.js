// Values in and out: yield awaits its operand, return awaits its value,
// next's argument is the value of the yield, for await over async
// generators and over sync iterables of promises.
const log = [];
const L = (s) => log.push(s);
async function* g() { L('start'); const x = yield 1; L('got ' + x); yield Promise.resolve(2); try { yield 3 } finally { L('fin') } return 4 }
async function* th() { yield { then(r) { L('then called'); r('TH') } } }
async function* rj() { try { yield Promise.reject('yr') } catch (e) { L('rj caught ' + e); yield 'after' } }
async function* retAwait() { try { return Promise.reject('retrej') } catch (e) { L('retAwait caught ' + e); yield 'ra' } }
(async () => {
  const it = g();
  L('made');
  for (const v of ['a', 'b', 'c', 'd', 'e']) L(JSON.stringify(await it.next(v)));
  for await (const v of g()) L('v ' + v);
  for await (const v of [Promise.resolve(10), 11, Promise.resolve(12)]) L('w ' + v);
  L(JSON.stringify(await th().next()));
  const r = rj(); L(JSON.stringify(await r.next())); L(JSON.stringify(await r.next()));
  const ra = retAwait(); L(JSON.stringify(await ra.next())); L(JSON.stringify(await ra.next()));
  async function* ar() { yield arguments.length; yield* arguments }
  for await (const v of ar(7, 8)) L('ar ' + v);
  print(log.join(' | '));
})();
