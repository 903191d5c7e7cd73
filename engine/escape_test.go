package engine

import (
	"encoding/base64"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/value"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Escape attempts: every route to dynamic code must fail with a clean
// error, and the dynamic code must never run. The code each attempt tries
// to run calls the probe capability and sets a global, so running it would
// show as a suspension or as the flag.

func TestEscapeAttempts(t *testing.T) {
	runCases(t, escapeCases())
}

// TestEscapeAttemptsV1: programs compiled before guest code was strict
// (program format version 1) still run, as sloppy-mode code, where this
// in a plain call is the global object and arguments.callee works. Every
// attempt must fail there too.
func TestEscapeAttemptsV1(t *testing.T) {
	runCases(t, legacyEscapeCases())
}

// legacyEscapeCases are the escape attempts, run as version 1 programs.
// A direct eval is not refused when they compile (the check is for new
// sources of the current format): it must fail when it runs.
func legacyEscapeCases() []guestCase {
	var out []guestCase
	for _, c := range escapeCasesFor(true) {
		c.name = "v1/" + c.name
		c.legacy = true
		out = append(out, c)
	}
	return out
}

// escapeCode is the dynamic code every attempt tries to run.
const escapeCode = `"probe('escaped'); globalThis.escaped = 1"`

// dynamicCodeRoutes are expressions that would run escapeCode (spelled
// CODE) if any route to eval or a Function constructor were left.
var dynamicCodeRoutes = []struct{ name, expr string }{
	{"eval-direct", `eval(CODE)`},
	{"eval-indirect", `(0, eval)(CODE)`},
	{"eval-globalThis", `globalThis.eval(CODE)`},
	{"eval-computed", `globalThis['ev' + 'al'](CODE)`},
	{"Function-call", `Function(CODE)()`},
	{"Function-new", `new Function(CODE)()`},
	{"Function-indirect", `(0, Function)(CODE)()`},
	{"function-constructor", `(function () {}).constructor(CODE)()`},
	{"arrow-constructor", `(() => {}).constructor(CODE)()`},
	{"async-function-constructor", `(async function () {}).constructor(CODE)()`},
	{"async-arrow-constructor", `(async () => {}).constructor(CODE)()`},
	{"generator-constructor", `(function* () {}).constructor(CODE)().next()`},
	{"generator-prototype-constructor", `Object.getPrototypeOf(function* () {}).constructor(CODE)().next()`},
	{"async-prototype-constructor-new", `new (Object.getPrototypeOf(async function () {}).constructor)(CODE)()`},
	{"async-method-constructor", `({ async m() {} }).m.constructor(CODE)()`},
	{"generator-method-constructor", `({ *g() {} }).g.constructor(CODE)().next()`},
	{"async-generator-constructor", `(async function* () {}).constructor(CODE)().next()`},
	{"async-generator-prototype-constructor", `Object.getPrototypeOf(async function* () {}).constructor(CODE)().next()`},
	{"async-generator-method-constructor", `({ async *g() {} }).g.constructor(CODE)().next()`},
	{"static-async-generator-method", `(class { static async *g() {} }).g.constructor(CODE)().next()`},
	{"async-generator-object-constructor", `(async function* () {})().constructor.constructor(CODE)().next()`},
	{"Reflect-construct-async-generator", `Reflect.construct(Object.getPrototypeOf(async function* () {}).constructor, [CODE])().next()`},
	{"getter-constructor", `Object.getOwnPropertyDescriptor({ get x() { return 1 } }, 'x').get.constructor(CODE)()`},
	{"bound-function-constructor", `(function () {}).bind().constructor(CODE)()`},
	{"class-constructor", `(class {}).constructor(CODE)()`},
	{"static-async-method", `(class { static async m() {} }).m.constructor(CODE)()`},
	{"Reflect-construct", `Reflect.construct(Function, [CODE])()`},
	{"Reflect-construct-async", `Reflect.construct(Object.getPrototypeOf(async () => {}).constructor, [CODE])()`},
	{"Reflect-apply", `Reflect.apply(Function, null, [CODE])()`},
	{"Function-prototype-constructor", `Function.prototype.constructor(CODE)()`},
	{"Function-prototype-constructor-new", `new Function.prototype.constructor(CODE)()`},
	{"descriptor-constructor", `Object.getOwnPropertyDescriptor(Function.prototype, 'constructor').value(CODE)()`},
	{"array-constructor-constructor", `[].constructor.constructor(CODE)()`},
	{"object-constructor-constructor", `({}).constructor.constructor(CODE)()`},
	{"globalThis-constructor-constructor", `globalThis.constructor.constructor(CODE)()`},
	{"native-function-constructor", `Math.max.constructor(CODE)()`},
	{"guarded-builtin-constructor", `''.repeat.constructor(CODE)()`},
	{"capability-constructor", `probe.constructor(CODE)()`},
	{"Function-apply", `Function.apply(null, [CODE])()`},
	{"Function-call-method", `Function.call(null, CODE)()`},
	{"Function-bind", `Function.bind(null, CODE)()()`},
	{"call-call", `Function.prototype.call.call(Function, null, CODE)()`},
	{"proxy-of-Function", `new Proxy(Function, {})(CODE)()`},
	{"after-delete", `(delete Function.prototype.constructor, Function.prototype.constructor(CODE)())`},
	{"after-redefine-attempt", `(() => { try { Object.defineProperty(Function.prototype, 'constructor', { value: 1 }) } catch (e) {} return Function.prototype.constructor(CODE)() })()`},
	{"setTimeout-string", `setTimeout(CODE, 0)`},
	{"setInterval-string", `setInterval(CODE, 0)`},
	// Through the this of a plain call (the global object in sloppy-mode
	// code, undefined in strict), arguments.callee and caller (sloppy
	// only; they throw in strict code), and the top-level this (the global
	// object in both).
	{"plain-call-this", `(function () { return this })().Function(CODE)()`},
	{"plain-call-this-eval", `(function () { return this })().eval(CODE)`},
	{"top-level-this", `this.Function(CODE)()`},
	{"top-level-this-constructor", `this.constructor.constructor(CODE)()`},
	{"arguments-callee", `(function () { return arguments.callee.constructor(CODE)() })()`},
	{"callee-caller", `(function f() { return (function () { return arguments.callee.caller.constructor(CODE)() })() })()`},
	{"function-caller", `(function f() { return (function g() { return g.caller.constructor(CODE)() })() })()`},
	{"capability-caller", `probe.caller.constructor(CODE)()`},
	{"map-this-arg", `[0].map(function () { return this.Function(CODE)() }, globalThis)[0]`},
}

func escapeCases() []guestCase { return escapeCasesFor(false) }

func escapeCasesFor(legacy bool) []guestCase {
	var out []guestCase
	for _, r := range dynamicCodeRoutes {
		expr := strings.ReplaceAll(r.expr, "CODE", escapeCode)
		if r.name == "eval-direct" && !legacy {
			// A direct call of eval is refused when the program compiles.
			for _, src := range []string{expr, "try { " + expr + " } catch (e) {}"} {
				out = append(out, guestCase{
					name:    "escape/refused/" + r.name + "/" + src[:3],
					src:     src,
					caps:    []string{"probe"},
					errKind: KindValidation,
					errIs:   "Validation: " + errDirectEval + " (1:" + fmt.Sprint(strings.Index(src, "eval")+1) + ")",
				})
			}
			continue
		}
		out = append(out,
			guestCase{
				name:    "escape/uncaught/" + r.name,
				src:     expr,
				caps:    []string{"probe"},
				errKind: KindRuntime,
				errHas:  "Error: ",
				calls:   noCalls,
			},
			guestCase{
				name:  "escape/caught/" + r.name,
				src:   "let out; try { " + expr + "; out = 'ran' } catch (e) { out = [e instanceof TypeError || e instanceof ReferenceError, typeof globalThis.escaped] } out",
				caps:  []string{"probe"},
				want:  jsA(jsT, jsS("undefined")),
				calls: noCalls,
			})
	}
	for _, name := range absentGlobals {
		out = append(out, guestCase{
			name: "absent/" + name,
			src:  "[typeof " + name + ", '" + name + "' in globalThis]",
			want: jsA(jsS("undefined"), jsF),
		})
	}
	for _, src := range []string{
		`import('x')`,
		`import('data:text/javascript,probe(1)').then(() => 1)`,
		`import x from 'y'; x`,
		`export default 1`,
		`import.meta`,
	} {
		out = append(out, guestCase{name: "escape/module-syntax/" + src, src: src, caps: []string{"probe"}, errKind: KindParse, calls: noCalls})
	}
	out = append(out,
		guestCase{name: "escape/require", src: `require('fs')`, errKind: KindRuntime, errIs: "Runtime: ReferenceError: require is not defined\n  at <script> (1:8)"},
		guestCase{name: "escape/lockdown-stub-is-clean", src: `[Function === Function.prototype.constructor, typeof Function, (() => 1) instanceof Function, Function.name]`,
			want: jsA(jsT, jsS("function"), jsT, jsS("Function"))},
		guestCase{name: "escape/stub-error-has-no-internal-frame", src: `Function('1')`, errKind: KindRuntime, errIs: "Runtime: TypeError: dynamic code evaluation is not available\n  at <script> (1:9)"},
	)
	for _, src := range reservedNameSources {
		// Programs metered by inserted calls (format version 2) may not
		// use the meters' prefix; current ones may use any name.
		out = append(out, guestCase{name: "reserved/" + src, src: src, version: programVersionStrict, errKind: KindValidation, errHas: ReservedPrefix})
	}
	out = append(out, meterTamperCases()...)
	out = append(out, sourceMapCases()...)
	return out
}

// absentGlobals are host and runtime facilities a guest must not see.
var absentGlobals = []string{
	"eval", "setTimeout", "setInterval", "setImmediate", "clearTimeout", "clearInterval", "queueMicrotask",
	"require", "process", "console", "fetch", "GoError", "print", "module", "exports", "global",
	"Buffer", "XMLHttpRequest", "WebAssembly", "Deno", "Bun", "__dirname", "__filename",
	"structuredClone", "importScripts", "navigator", "window", "self", "document", "load", "Java", "Packages",
}

var reservedNameSources = []string{
	`var __mustard_m = 1;`,
	`let __mustard_cv;`,
	`const __mustard_anything = 1;`,
	`function __mustard_f() {}`,
	`class __mustard_C {}`,
	`__mustard_m = function () {}`,
	`__mustard_m()`,
	`typeof __mustard_m`,
	`function f(__mustard_m) {}`,
	`function f({__mustard_m}) {}`,
	`function f(...__mustard_r) {}`,
	`try {} catch (__mustard_m) {}`,
	`for (var __mustard_i of []) {}`,
	`(__mustard_x) => 1`,
	`__mustard_l: for (;;) break __mustard_l;`,
	`var \u005f_mustard_m = 1;`,
	`var \u{5f}\u{5f}mustard_cv = 1;`,
	`({ __mustard_m } = {})`,
	`with ({}) { __mustard_m }`,
	`await 1; var __mustard_cv = 2;`,
	`await 1; __mustard_cv = 5`,
	`const x = await 1; function __mustard_g() {}`,
}

// meterTamperCases: whatever a guest does with the reserved globals, a
// loop still runs out of the instruction budget. Each loop is bounded, so
// a bypass shows as a completion rather than a hang.
func meterTamperCases() []guestCase {
	small := policy.DefaultLimits()
	small.InstructionBudget = 5_000
	loop := ` let n = 0; for (let i = 0; i < 50000; i++) { n++ } n`
	shadowAll := `const o = {}; for (const k of Object.getOwnPropertyNames(globalThis)) { if (k.startsWith('__mustard')) o[k] = Object } `
	cases := []struct{ name, src string }{
		{"baseline", loop},
		{"not-on-globalThis", `if (typeof globalThis['__mustard_m'] !== 'undefined' || '__mustard_m' in globalThis) throw new Error('visible');` + loop},
		{"overwrite-sloppy", `globalThis['__mustard_m'] = function () {};` + loop},
		{"overwrite-strict", `'use strict'; try { globalThis['__mustard_m'] = () => {} } catch (e) {}` + loop},
		{"delete", `delete globalThis['__mustard_m'];` + loop},
		{"reflect", `Reflect.deleteProperty(globalThis, '__mustard_m'); Reflect.set(globalThis, '__mustard_m', Math.abs);` + loop},
		{"define", `try { Object.defineProperty(globalThis, '__mustard_m', { value: Math.abs }) } catch (e) {}` + loop},
		{"all-reserved-overwritten", `for (const k of Object.getOwnPropertyNames(globalThis)) { if (k.startsWith('__mustard')) { try { globalThis[k] = Object; delete globalThis[k] } catch (e) {} } }` + loop},
		{"global-prototype", `Object.setPrototypeOf(globalThis, { ['__mustard_m']: Math.abs });` + loop},
		{"freeze-global", `Object.freeze(globalThis);` + loop},
		{"with-shadow", `with ({ ['__mustard_m']: Math.abs }) {` + loop + ` }`},
		{"with-shadow-all", shadowAll + `with (o) {` + loop + ` }`},
		{"with-object-prototype", `Object.prototype['__mustard_m'] = Math.abs; with ({}) {` + loop + ` }`},
		{"with-in-function", `function f(o) { with (o) {` + loop + ` } } f({ ['__mustard_m']: Math.abs })`},
		{"with-top-level-await", `await null; with ({ ['__mustard_m']: Math.abs }) {` + loop + ` }`},
	}
	var out []guestCase
	for _, c := range cases {
		out = append(out, guestCase{
			name:   "meter/" + c.name,
			src:    c.src,
			limits: &small,
			// Rejecting the program outright (with statements) is as good
			// as metering it.
			errOneOf: []ErrorKind{KindLimit, KindValidation, KindParse},
		})
	}
	alloc := policy.DefaultLimits()
	alloc.AllocationBudget = 1_000
	out = append(out,
		guestCase{name: "meter/allocation-baseline", src: `const a = []; for (let i = 0; i < 5000; i++) { a.push({i}) } a.length`, limits: &alloc, errOneOf: []ErrorKind{KindLimit}},
		guestCase{name: "meter/allocation-with-shadow", src: `with ({ ['__mustard_a']: Object }) { const a = []; for (let i = 0; i < 5000; i++) { a.push({i}) } a.length }`,
			limits: &alloc, errOneOf: []ErrorKind{KindLimit, KindValidation, KindParse}},
	)
	return out
}

// sourceMapCases: source map comments are inert. The program compiles and
// runs, and tracebacks keep the guest's own positions.
func sourceMapCases() []guestCase {
	inline := base64.StdEncoding.EncodeToString([]byte(`{"version":3,"sources":["evil.js"],"names":["evil"],"mappings":"AAAAA,UAAUA"}`))
	var out []guestCase
	for i, comment := range []string{
		"//# sourceMappingURL=/dev/stdin",
		"//# sourceMappingURL=/etc/passwd",
		"//# sourceMappingURL=/proc/self/environ",
		"//@ sourceMappingURL=/etc/passwd",
		"/*# sourceMappingURL=/etc/passwd */",
		"//# sourceMappingURL=file:///etc/passwd",
		"//# sourceMappingURL=https://example.invalid/x.map",
		"//# sourceMappingURL=data:application/json;base64," + inline,
		"//# sourceURL=/etc/passwd",
	} {
		out = append(out,
			guestCase{name: "sourcemap/" + string(rune('a'+i)) + "/runs", src: "1 + 1\n" + comment, want: jsN(2)},
			guestCase{name: "sourcemap/" + string(rune('a'+i)) + "/positions", src: "function f() {\n  return null.x\n}\nf()\n" + comment,
				errKind: KindRuntime, errHas: "\n  at f (2:15)\n  at <script> (4:2)"},
		)
	}
	return out
}

// standardGlobals are the ECMAScript (ECMA-262 and ECMA-402) global
// properties, including Annex B.
var standardGlobals = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`globalThis Infinity NaN undefined eval isFinite isNaN parseFloat parseInt
		decodeURI decodeURIComponent encodeURI encodeURIComponent escape unescape
		AggregateError Array ArrayBuffer Atomics BigInt BigInt64Array BigUint64Array Boolean DataView Date
		Error EvalError FinalizationRegistry Float16Array Float32Array Float64Array Function Int8Array
		Int16Array Int32Array Iterator JSON Map Math Number Object Promise Proxy RangeError ReferenceError
		Reflect RegExp Set SharedArrayBuffer String Symbol SyntaxError TypeError Uint8Array
		Uint8ClampedArray Uint16Array Uint32Array URIError WeakMap WeakRef WeakSet Intl DisposableStack
		AsyncDisposableStack SuppressedError`) {
		standardGlobals[n] = true
	}
}

// TestGlobalObjectHasOnlyStandardNames lists the guest's global names: the
// ECMAScript built-ins plus the inputs and capabilities, nothing else.
func TestGlobalObjectHasOnlyStandardNames(t *testing.T) {
	r := runGuest(guestCase{
		src:    `[Object.getOwnPropertyNames(globalThis), Object.getOwnPropertySymbols(globalThis).map(String)]`,
		inputs: []value.Member{kv("my_input", jsN(1))},
		caps:   []string{"fetch_data"},
	})
	require.NoError(t, r.err)
	names := r.step.Value.Elems[0].Elems
	var extra, seen []string
	for _, n := range names {
		seen = append(seen, n.Str)
		if !standardGlobals[n.Str] && n.Str != "my_input" && n.Str != "fetch_data" {
			extra = append(extra, n.Str)
		}
	}
	sort.Strings(seen)
	t.Logf("guest globals: %s", strings.Join(seen, " "))
	assert.Contains(t, seen, "my_input")
	assert.Contains(t, seen, "fetch_data")
	assert.NotContains(t, seen, "eval")
	assert.Empty(t, extra, "non-standard globals visible to the guest")
	for _, s := range r.step.Value.Elems[1].Elems {
		assert.Equal(t, "Symbol(Symbol.toStringTag)", s.Str, "symbol-keyed global")
	}
}

// TestSourceMapFileIsNeverOpened points sourceMappingURL at files that
// would show if read: a file that is not a source map, and (on Unix) a
// named pipe, whose opening would block until a writer appears.
func TestSourceMapFileIsNeverOpened(t *testing.T) {
	dir := t.TempDir()
	garbage := dir + "/garbage.map"
	require.NoError(t, os.WriteFile(garbage, []byte("this is not a source map {"), 0o600))
	paths := []string{garbage}
	if fifo, ok := makeFIFO(t, dir+"/pipe.map"); ok {
		paths = append(paths, fifo)
	}
	for _, path := range paths {
		t.Run(path[len(dir):], func(t *testing.T) {
			src := "function f() {\n  return null.x\n}\nf()\n//# sourceMappingURL=" + path
			done := make(chan guestRun, 1)
			go func() { done <- runGuest(guestCase{src: src}) }()
			select {
			case r := <-done:
				require.Empty(t, r.problem)
				require.Error(t, r.err)
				assert.True(t, strings.HasSuffix(r.err.Error(), "\n  at f (2:15)\n  at <script> (4:2)"), r.err.Error())
			case <-time.After(10 * time.Second):
				releaseFIFO(path)
				t.Fatalf("compiling or running the program blocked: %s was opened", path)
			}
		})
	}
}
