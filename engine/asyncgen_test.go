package engine

import (
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/value"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// for await and async generators (internal/goja/PATCHES.md, "async
// generators and for await"). The suite runs every case hot
// (TestGuestSuite) and cold, each suspension resumed from its snapshot
// bytes in a fresh run (TestGuestSuiteCold); the batch tests below answer
// several outstanding calls at once.

func asyncIterationCases() []guestCase {
	caps := []string{"cap", "fetch_data"}
	return []guestCase{
		// The reference's own programs.
		//
		// crates/mustard/tests/iteration.rs for_await_supports_documented_iterable_surface,
		// tests/node/iteration.test.js "run supports for await...of over the documented
		// iterable surface", tests/node/differential.test.js "for await...of awaits
		// yielded values from supported iterables".
		{name: "forawait/ref-documented-iterable-surface", src: `
			async function main() {
			  const values = [Promise.resolve(1), 2, Promise.resolve(3)];
			  const seen = [];
			  let total = 0;
			  for await (const value of values.values()) {
			    seen[seen.length] = value;
			    total += value;
			  }
			  const state = { current: 0 };
			  for await (state.current of new Set([Promise.resolve(4), 5]).values()) {
			    total += state.current;
			  }
			  return [seen, total, state.current];
			}
			main();`,
			want: jsA(jsA(jsN(1), jsN(2), jsN(3)), jsN(15), jsN(5)), calls: noCalls},
		// crates/mustard/tests/iteration.rs for_await_rejects_unsupported_iterable_inputs:
		// the reference's message is its own; ours is a TypeError.
		{name: "forawait/ref-rejects-plain-object", src: "async function main() {\n  for await (const value of { alpha: 1 }) {\n    value;\n  }\n}\nmain();",
			errKind: KindRuntime, errIs: "Runtime: TypeError: object is not async iterable\n  at main (2:29)\n  at <script> (6:5)"},
		// crates/mustard/tests/iteration.rs snapshot_round_trip_preserves_for_await_assignment_targets,
		// tests/node/iteration.test.js "progress snapshots preserve for await...of
		// assignment-target headers across resumes" (the reference resumes from
		// dumped bytes; TestGuestSuiteCold does that at every step).
		{name: "forawait/ref-snapshot-round-trip-assignment-target", src: `
			async function load(value) {
			  return await fetch_data(value);
			}
			async function main() {
			  const state = { current: 0, total: 0 };
			  for await (state.current of [load(1), load(2), load(3)]) {
			    state.total += state.current;
			  }
			  return [state.current, state.total];
			}
			main();`,
			caps: caps, each: gsEcho, want: jsA(jsN(3), jsN(6)),
			calls: []gsCall{cl("fetch_data", jsN(1)), cl("fetch_data", jsN(2)), cl("fetch_data", jsN(3))}},
		// crates/mustard/src/parser/tests/acceptance.rs parses_for_await_of_inside_async_functions
		// (the reference only compiles it; this also runs it).
		{name: "forawait/ref-parses-in-async-functions", src: `
			async function run(values, boxRef) {
			  for await (const value of values) {
			    boxRef.total += value;
			  }
			  for await (boxRef.current of values) {
			    boxRef.total += boxRef.current;
			  }
			  return boxRef.total;
			}
			run([1, Promise.resolve(2)], { total: 0, current: 0 });`,
			want: jsN(6)},
		// tests/test262/cases/pass/language/statements/for-await-of/basic.js
		{name: "forawait/ref-test262-pass-basic", src: `
			async function run() {
			  let total = 0;
			  for await (const value of [Promise.resolve(1), 2]) {
			    total += value;
			  }
			  return total;
			}

			run();`,
			want: jsN(3)},
		// tests/test262/cases/unsupported/language/statements/for-await-of/basic.js
		// (unsupported in the reference; it runs here)
		{name: "forawait/ref-test262-unsupported-basic", src: `
			async function run() {
			  for await (const value of [1, 2]) {
			    value;
			  }
			}

			run();`,
			want: jsU},

		// for await at the top level of a script with top-level await.
		{name: "forawait/top-level", src: `const out = []; for await (const v of [cap(1), cap(2)]) out.push(v * 10); out`,
			caps: caps, each: gsEcho, want: jsA(jsN(10), jsN(20)), calls: []gsCall{cl("cap", jsN(1)), cl("cap", jsN(2))}},
		{name: "forawait/top-level-completion-value", src: `for await (const v of [cap(1), cap(2)]) { v * 3 }`,
			caps: caps, each: gsEcho, want: jsN(6)},
		{name: "forawait/top-level-break-closes", src: `
			const log = [];
			async function* g() { try { yield 1; yield 2 } finally { log.push('closed ' + await cap('cleanup')) } }
			for await (const v of g()) { log.push(v); break }
			log`,
			caps: caps, each: gsEcho, want: jsA(jsN(1), jsS("closed cleanup")),
			calls: []gsCall{cl("cap", jsS("cleanup"))}},
		{name: "forawait/suspends-in-body", src: `
			async function main() {
			  const out = [];
			  for await (const x of [1, Promise.resolve(2)]) out.push(await cap(x) + 1);
			  return out;
			}
			main();`,
			caps: caps, each: gsEcho, want: jsA(jsN(2), jsN(3)), calls: []gsCall{cl("cap", jsN(1)), cl("cap", jsN(2))}},
		{name: "forawait/host-error-in-body-closes-and-is-caught", src: `
			const log = [];
			async function* src() { try { yield 1; yield 2 } finally { log.push('src closed') } }
			async function main() {
			  try {
			    for await (const v of src()) { log.push('got ' + v); await cap(v) }
			  } catch (e) { log.push('caught ' + e.message) }
			  return log;
			}
			main();`,
			caps: caps, script: []any{hostErr("Error", "denied")},
			want: jsStrs("got 1", "src closed", "caught denied")},
		{name: "forawait/rejected-value-is-thrown-in-loop", src: `
			async function main() {
			  const out = [];
			  try {
			    for await (const v of [cap(1), cap(2), cap(3)]) out.push(v);
			  } catch (e) { out.push('caught ' + e.message) }
			  return out;
			}
			main();`,
			caps: caps, script: []any{ret(jsN(1)), hostErr("Error", "two failed"), ret(jsN(3))},
			want: jsA(jsN(1), jsS("caught two failed"))},
		{name: "forawait/await-rejected-in-body", src: `
			async function main() {
			  const out = [];
			  for await (const v of [1, 2]) {
			    try { await Promise.reject(new Error('r' + v)) } catch (e) { out.push(e.message) }
			  }
			  return out;
			}
			main();`,
			want: jsStrs("r1", "r2")},
		{name: "forawait/custom-async-iterator", src: `
			const feed = {
			  [Symbol.asyncIterator]() {
			    let i = 0;
			    return {
			      next: () => i < 2 ? cap(++i).then((v) => ({ value: v, done: false })) : Promise.resolve({ done: true }),
			      return: () => { log.push('return'); return Promise.resolve({ done: true }) },
			    };
			  },
			};
			const log = [];
			async function main() {
			  for await (const v of feed) log.push(v);
			  for await (const v of feed) { log.push(v); break }
			  return log;
			}
			main();`,
			caps: caps, each: gsEcho, want: jsA(jsN(1), jsN(2), jsN(1), jsS("return"))},
		{name: "forawait/not-an-object-result", src: "async function main() {\n  for await (const v of { [Symbol.asyncIterator]() { return { next() { return 1 } } } }) {}\n}\nmain()",
			errKind: KindRuntime, errHas: "Runtime: TypeError: "},
		{name: "forawait/outside-async-is-parse-error", src: `function f() { for await (const v of []) {} }`, errKind: KindParse},
		{name: "forawait/for-await-in-is-parse-error", src: `async function f() { for await (const k in {}) {} }`, errKind: KindParse},
		{name: "forawait/runaway-async-generator-hits-budget", src: `async function* g() { while (true) yield 1 } async function main() { for await (const v of g()) {} } main()`,
			limits: smallBudget(), errKind: KindLimit, errIs: "Limit: instruction budget exhausted"},
		{name: "forawait/cancel-inside-loop-runs-no-finally", src: `
			async function* g() { try { yield 1; yield 2 } finally { probe('finally') } }
			async function main() { for await (const v of g()) { await cap(v) } }
			main()`,
			caps: []string{"cap", "probe"}, script: []any{cancelled}, errKind: KindLimit, errIs: "Limit: execution cancelled",
			calls: []gsCall{cl("cap", jsN(1))}},

		// Async generators.
		{name: "asyncgen/paging", src: `
			async function* pages() {
			  let page = 1;
			  while (page) {
			    const r = await fetch_data(page);
			    yield* r.items;
			    page = r.next;
			  }
			}
			async function main() {
			  const all = [];
			  for await (const item of pages()) all.push(item);
			  return all;
			}
			main();`,
			caps: caps, script: []any{
				jsO(kv("items", jsStrs("a", "b")), kv("next", jsN(2))),
				jsO(kv("items", jsStrs("c")), kv("next", jsN(0))),
			},
			want: jsStrs("a", "b", "c"), calls: []gsCall{cl("fetch_data", jsN(1)), cl("fetch_data", jsN(2))}},
		{name: "asyncgen/capability-in-body-is-async", src: `
			async function* g() { const p = cap(1); yield p instanceof Promise; yield await p }
			const it = g();
			const first = it.next();
			first.then((a) => it.next().then((b) => [a.value, b.value]))`,
			caps: caps, each: gsEcho, want: jsA(jsT, jsN(1)), calls: []gsCall{cl("cap", jsN(1))}},
		{name: "asyncgen/capability-in-parameters-is-async", src: `
			async function* g(x = cap(1)) { yield x instanceof Promise }
			g().next().then((r) => r.value)`,
			caps: caps, each: gsEcho, want: jsT, calls: []gsCall{cl("cap", jsN(1))}},
		{name: "asyncgen/next-return-throw", src: `
			async function* g() {
			  try { const x = yield 1; yield x * 2 } catch (e) { yield 'caught ' + e } finally { await cap('fin') }
			}
			async function main() {
			  const a = g(), b = g(), c = g();
			  const out = [await a.next(), await a.next(5), await a.return(9), await a.next()];
			  await b.next();
			  out.push(await b.throw('boom'), await b.next());
			  out.push(await c.return(7), await c.next());
			  return out;
			}
			main();`,
			caps: caps, each: gsEcho,
			want: jsA(
				jsO(kv("value", jsN(1)), kv("done", jsF)), jsO(kv("value", jsN(10)), kv("done", jsF)),
				jsO(kv("value", jsN(9)), kv("done", jsT)), jsO(kv("value", jsU), kv("done", jsT)),
				jsO(kv("value", jsS("caught boom")), kv("done", jsF)), jsO(kv("value", jsU), kv("done", jsT)),
				jsO(kv("value", jsN(7)), kv("done", jsT)), jsO(kv("value", jsU), kv("done", jsT))),
			calls: []gsCall{cl("cap", jsS("fin")), cl("cap", jsS("fin"))}},
		{name: "asyncgen/queued-requests", src: `
			async function* g() { yield cap(1); yield cap(2) }
			const it = g();
			Promise.all([it.next(), it.next(), it.next(), it.return('r')]).then((rs) => rs.map((r) => [r.value, r.done]))`,
			caps: caps, each: gsEcho,
			want:  jsA(jsA(jsN(1), jsF), jsA(jsN(2), jsF), jsA(jsU, jsT), jsA(jsS("r"), jsT)),
			calls: []gsCall{cl("cap", jsN(1)), cl("cap", jsN(2))}},
		{name: "asyncgen/yield-star", src: `
			async function* inner() { const a = yield await cap('i1'); yield a; return 'inner done' }
			async function* outer() { const r = yield* inner(); yield r; yield* [cap('s1'), 's2'] }
			async function main() {
			  const it = outer();
			  const out = [];
			  out.push((await it.next()).value, (await it.next('sent')).value);
			  for (let r = await it.next(); !r.done; r = await it.next()) out.push(r.value);
			  return out;
			}
			main();`,
			caps: caps, each: gsEcho, want: jsStrs("i1", "sent", "inner done", "s1", "s2"),
			calls: []gsCall{cl("cap", jsS("i1")), cl("cap", jsS("s1"))}},
		{name: "asyncgen/return-through-yield-star-runs-finally", src: `
			const log = [];
			async function* inner() { try { yield 1; yield 2 } finally { log.push('inner ' + await cap('i')) } }
			async function* outer() { try { yield* inner() } finally { log.push('outer ' + await cap('o')) } }
			async function main() {
			  for await (const v of outer()) { log.push(v); break }
			  return log;
			}
			main();`,
			caps: caps, each: gsEcho, want: jsA(jsN(1), jsS("inner i"), jsS("outer o")),
			calls: []gsCall{cl("cap", jsS("i")), cl("cap", jsS("o"))}},
		{name: "asyncgen/cleanup-host-error-replaces-break", src: `
			async function* g() { try { yield 1 } finally { await cap('cleanup') } }
			async function main() {
			  try { for await (const v of g()) break; return 'no error' } catch (e) { return 'caught ' + e.message }
			}
			main();`,
			caps: caps, script: []any{hostErr("Error", "cleanup failed")}, want: jsS("caught cleanup failed")},
		{name: "asyncgen/symbol-async-iterator-method", src: `
			class Feed {
			  constructor(ids) { this.ids = ids }
			  async *[Symbol.asyncIterator]() { for (const id of this.ids) yield await cap(id) }
			}
			const o = { async *m() { yield 'm' } };
			async function main() {
			  const out = [];
			  for await (const v of new Feed([3, 4])) out.push(v);
			  for await (const v of o.m()) out.push(v);
			  return out;
			}
			main();`,
			caps: caps, each: gsEcho, want: jsA(jsN(3), jsN(4), jsS("m"))},
		{name: "asyncgen/introspection", src: `
			async function* g() {}
			const AGF = Object.getPrototypeOf(g);
			[Object.prototype.toString.call(g), Object.prototype.toString.call(g()), typeof Symbol.asyncIterator,
			 g()[Symbol.asyncIterator]() instanceof g, AGF.prototype === Object.getPrototypeOf(g.prototype),
			 AGF.constructor.name, String(Symbol.asyncIterator)]`,
			want: jsA(jsS("[object AsyncGeneratorFunction]"), jsS("[object AsyncGenerator]"), jsS("symbol"), jsT, jsT,
				jsS("AsyncGeneratorFunction"), jsS("Symbol(Symbol.asyncIterator)"))},
		{name: "asyncgen/constructor-is-locked", src: `
			try { Object.getPrototypeOf(async function* () {}).constructor('yield 1'); 'ran' } catch (e) { e.message }`,
			want: jsS("dynamic code evaluation is not available")},
		{name: "asyncgen/uncaught-traceback", src: "async function* g() {\n  yield 1;\n  throw new RangeError('late');\n}\nasync function main() {\n  for await (const v of g()) {}\n}\nmain();",
			errKind: KindRuntime, errIs: "Runtime: RangeError: late\n  at g (3:9)\n  at main (6:26)"},
		{name: "asyncgen/deep-recursion-hits-call-depth", src: `async function* g(n) { if (n > 0) { await g(n - 1).next() } yield n } g(100000).next().then((r) => r.value)`,
			errKind: KindLimit, errIs: "Limit: call depth limit exceeded"},
		{name: "forawait/deep-recursion-hits-call-depth", src: `async function f(n) { if (n > 0) for await (const x of [f(n - 1)]) {} return n } f(100000)`,
			errKind: KindLimit, errIs: "Limit: call depth limit exceeded"},
		{name: "asyncgen/yield-star-chain-is-metered", src: `
			async function* g(n) { if (n > 0) yield* g(n - 1); yield n }
			(async () => { let c = 0; for await (const x of g(3000)) c++; return c })()`,
			errKind: KindLimit, errIs: "Limit: instruction budget exhausted"},
		{name: "asyncgen/not-a-constructor", src: `async function* g() {} try { new g() } catch (e) { e instanceof TypeError }`, want: jsT},
		{name: "asyncgen/outstanding-limit", src: `
			async function* g() { for (let i = 0; ; i++) yield cap(i) }
			async function main() { const it = g(); const ps = []; for (let i = 0; i < 5; i++) ps.push(it.next()); return Promise.all(ps) }
			main();`,
			caps: caps, limits: outstandingLimit(1), each: gsEcho,
			want: jsA(jsO(kv("value", jsN(0)), kv("done", jsF)), jsO(kv("value", jsN(1)), kv("done", jsF)), jsO(kv("value", jsN(2)), kv("done", jsF)),
				jsO(kv("value", jsN(3)), kv("done", jsF)), jsO(kv("value", jsN(4)), kv("done", jsF)))},
	}
}

// Batch mode: every outstanding call is listed at each step and answered
// in any order; a cold resume from every step's snapshot goes on as the
// hot run did (runBatch).
func TestBatchForAwait(t *testing.T) {
	const topLevel = `const out = [];
	for await (const v of [get(1), get(2), get(3)]) out.push(v);
	out`
	const generator = `async function* g() {
	  const firsts = await Promise.all([get(1), get(2)]);
	  for (const f of firsts) yield f;
	  yield* [get(3), get(4)];
	}
	async function main() {
	  const out = [];
	  for await (const v of g()) out.push(v + (await get(v)));
	  return out;
	}
	main();`
	const closing = `async function* g() {
	  try { for (let i = 1; ; i++) yield get(i) } finally { await get(100) }
	}
	async function main() {
	  const early = get(5);
	  const out = [];
	  for await (const v of g()) { out.push(v); if (v >= 20) break }
	  return [out, await early, await get(7)];
	}
	main();`
	for _, c := range []struct {
		name, src string
		pick      pickFunc
		want      value.Value
		rounds    int
	}{
		{"top level, all at once", topLevel, answerAll, jsA(jsN(10), jsN(20), jsN(30)), 1},
		{"top level, newest first", topLevel, func(step Step, _ int) []int { return []int{len(step.Calls) - 1} }, jsA(jsN(10), jsN(20), jsN(30)), 3},
		{"generator, all at once", generator, answerAll, jsA(jsN(110), jsN(220), jsN(330), jsN(440)), 0},
		{"generator, oldest first", generator, func(Step, int) []int { return []int{0} }, jsA(jsN(110), jsN(220), jsN(330), jsN(440)), 0},
		{"closing, all at once", closing, answerAll, jsA(jsA(jsN(10), jsN(20)), jsN(50), jsN(70)), 4},
		{"closing, newest first", closing, func(step Step, _ int) []int { return []int{len(step.Calls) - 1} }, jsA(jsA(jsN(10), jsN(20)), jsN(50), jsN(70)), 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runBatch(t, c.src, c.pick)
			last := r.steps[len(r.steps)-1]
			require.NoError(t, last.Err)
			assert.Equal(t, fmtValue(c.want), fmtValue(last.Value))
			if c.rounds > 0 {
				assert.Len(t, r.steps, c.rounds+1)
			}
		})
	}
}

func outstandingLimit(n uint64) *policy.Limits {
	l := policy.DefaultLimits()
	l.MaxOutstandingHostCalls = n
	return &l
}
