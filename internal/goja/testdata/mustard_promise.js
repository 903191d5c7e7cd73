var log = [];
var evil = { then(res, rej) { res(1); rej(new Error("late")); res(2); } };
Promise.all([evil, Promise.resolve(3)]).then(v => log.push("all:" + v), e => log.push("allerr:" + e.message));
var racer = { then(res, rej) { rej("r1"); res("ignored"); } };
Promise.race([racer, new Promise(() => {})]).then(v => log.push("race:" + v), e => log.push("raceerr:" + e));
Promise.any([Promise.reject(1), { then(res) { res("any"); res("again"); } }]).then(v => log.push("any:" + v));
Promise.allSettled([Promise.reject(4), 5]).then(v => log.push("settled:" + JSON.stringify(v)));
(async () => { log.push("a1"); await null; log.push("a2"); try { await Promise.reject("x") } catch (e) { log.push("caught:" + e) } return "done" })().then(v => log.push(v));
Promise.resolve().then(() => log.push("t1")).then(() => log.push("t2"));
var selfp = Promise.resolve().then(() => selfp); selfp.catch(e => log.push("self:" + e.name));
new Promise((res, rej) => { res(Promise.resolve("nested")); rej("no"); }).then(v => log.push(v));
// An own then on a native promise receives Promise.all's own reject function.
var leaked, p0 = Promise.resolve(0);
p0.then = function (res, rej) { leaked = rej; res(0); };
var pall = Promise.all([p0]);
pall.then(v => { log.push("ok:" + v); leaked("after"); pall.then(v => log.push("still:" + v), e => log.push("flipped:" + e)); });
