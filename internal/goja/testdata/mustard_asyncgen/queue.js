// The request queue of an async generator: next, return and throw made
// while it runs or awaits wait their turn; a ticker shows on which
// promise job each event happens.
const log = [];
const L = (s) => log.push(s);
(async () => { for (let i = 0; i < 12; i++) { L('t' + i); await null; } print(log.join(' ')); })();
async function* g() { L('g0'); try { const x = yield 1; L('gx ' + x); yield 2; yield 3 } finally { L('gfin'); await null; L('gfin2') } }
const it = g();
it.next('a').then((r) => L('n1 ' + JSON.stringify(r)));
it.next('b').then((r) => L('n2 ' + JSON.stringify(r)));
it.return(9).then((r) => L('r3 ' + JSON.stringify(r)));
it.next('c').then((r) => L('n4 ' + JSON.stringify(r)));
it.throw(new Error('e')).then((r) => L('t5 ' + JSON.stringify(r)), (e) => L('t5 rej ' + e.message));
it.return(Promise.resolve(7)).then((r) => L('r6 ' + JSON.stringify(r)));
const it2 = g();
it2.return(Promise.resolve(5)).then((r) => L('s1 ' + JSON.stringify(r)));
it2.next().then((r) => L('s2 ' + JSON.stringify(r)));
const it3 = g();
it3.throw('x').then(null, (e) => L('u1 ' + e));
it3.next().then((r) => L('u2 ' + JSON.stringify(r)));
it3.return(Promise.reject('rr')).then(null, (e) => L('u3 ' + e));
L('sync end');
