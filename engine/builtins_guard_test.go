package engine

import (
	"flag"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
)

var updateBuiltins = flag.Bool("update-builtins", false, "rewrite testdata/builtins.txt from builtinRules")

const builtinsFile = "testdata/builtins.txt"

// builtinRules say how each built-in a guest can reach is charged, by the
// longest matching prefix of its path (PATCHES.md and docs/limits.md have
// the details); "constant" ones cost the instructions of their call. A
// built-in no rule matches fails the guard until someone decides how it
// is charged, and so does a rule that says it is not charged yet.
var builtinRules = []struct{ prefix, rule string }{
	{"AggregateError", "per element of errors (mustard_arrays.go)"},
	{"Array", "per element visited or made (mustard_arrays.go)"},
	{"Array.isArray", "constant"},
	{"Array.[Symbol(Symbol.species)] get", "constant"},
	{"Array.prototype.sort", "per comparison (16 units without a comparator; the comparator's instructions)"},
	{"ArrayBuffer", "per byte made or copied (mustard_arrays.go)"},
	{"ArrayBuffer.isView", "constant"},
	{"BigInt", "by operand size, before it runs (mustard_bigint.go)"},
	{"Boolean", "constant"},
	{"DataView", "constant: one element (the buffer is bounds-checked)"},
	{"DataView.prototype.buffer get", "constant"},
	{"Date", "constant"},
	{"Date.parse", "per character parsed (mustard_strings.go)"},
	{"Date.prototype.to", "constant: a short string"},
	{"Error", "constructors: the stack captured, a quarter of an instruction a frame"},
	{"EvalError", "constructors: the stack captured, a quarter of an instruction a frame"},
	{"RangeError", "constructors: the stack captured, a quarter of an instruction a frame"},
	{"ReferenceError", "constructors: the stack captured, a quarter of an instruction a frame"},
	{"SyntaxError", "constructors: the stack captured, a quarter of an instruction a frame"},
	{"TypeError", "constructors: the stack captured, a quarter of an instruction a frame"},
	{"Function", "dynamic code refused (guards.go)"},
	{"Function.prototype.apply", "per argument spread (mustard_arrays.go)"},
	{"Function.prototype.bind", "per argument bound (mustard_arrays.go)"},
	{"Function.prototype.call", "constant"},
	{"Function.prototype.toString", "a copy of the function's source text: a unit per 4 bytes from 256 characters on (mustard_hops.go)"},
	{"Function.prototype.[Symbol(Symbol.hasInstance)]", "per prototype link walked (a quarter of an instruction)"},
	{"JSON", "per value or character (mustard_strings.go, mustard_depth.go)"},
	{"Map", "per entry (mustard_arrays.go)"},
	{"Math", "constant"},
	{"Math.hypot", "per argument, charged by the call or spread that passes them"},
	{"Math.max", "per argument, charged by the call or spread that passes them"},
	{"Math.min", "per argument, charged by the call or spread that passes them"},
	{"Number", "per character of a string of 256 or more converted (mustard_hops.go)"},
	{"Number.is", "constant"},
	{"Number.prototype.constructor", "per character of a string of 256 or more converted (mustard_hops.go)"},
	{"Number.prototype.toLocaleString", "constant"},
	{"Number.prototype.valueOf", "constant"},
	{"Number.parseFloat", "per character (mustard_strings.go)"},
	{"Number.parseInt", "per character (mustard_strings.go)"},
	{"Number.prototype.toExponential", "per digit past 21 asked for (mustard_strings.go)"},
	{"Number.prototype.toFixed", "per digit past 21 asked for (mustard_strings.go)"},
	{"Number.prototype.toPrecision", "per digit past 21 asked for (mustard_strings.go)"},
	{"Number.prototype.toString", "per digit of a fraction in a radix other than 10, at most 1,100 (mustard_strings.go)"},
	{"Object", "per property (mustard_arrays.go)"},
	{"Object.is", "constant"},
	{"Object.isExtensible", "constant"},
	{"Object.isFrozen", "per property visited, as Object.freeze's (mustard_integrity.go)"},
	{"Object.isSealed", "per property visited, as Object.freeze's (mustard_integrity.go)"},
	{"Object.preventExtensions", "constant"},
	{"Object.prototype.__proto__", "constant"},
	{"Object.prototype.__proto__ set", "per prototype link walked by the cycle check (a quarter of an instruction)"},
	{"Object.prototype.hasOwnProperty", "constant"},
	{"Object.prototype.isPrototypeOf", "per prototype link walked (a quarter of an instruction)"},
	{"Object.prototype.propertyIsEnumerable", "constant"},
	{"Object.prototype.toString", "constant"},
	{"Object.prototype.valueOf", "constant"},
	{"Object.prototype.toLocaleString", "constant"},
	{"Object.getPrototypeOf", "constant"},
	{"Object.setPrototypeOf", "per prototype link walked by the cycle check (a quarter of an instruction)"},
	{"Promise", "per element; each job 16 instructions when it runs (mustard_arrays.go)"},
	{"Proxy", "constant; traps are guest code"},
	{"Reflect", "as the operation it reflects"},
	{"RegExp", "per span scanned, backtracking under a time bound (mustard_strings.go)"},
	{"Set", "per entry (mustard_arrays.go)"},
	{"String", "per character scanned or made (mustard_strings.go)"},
	{"String.prototype.[Symbol(Symbol.iterator)]", "constant"},
	{"Symbol", "constant"},
	{"URIError", "constructors: the stack captured, a quarter of an instruction a frame"},
	{"WeakMap", "constant"},
	{"WeakSet", "constant"},
	{"decodeURI", "per character (mustard_strings.go)"},
	{"encodeURI", "per character (mustard_strings.go)"},
	{"escape", "per character (mustard_strings.go)"},
	{"unescape", "per character (mustard_strings.go)"},
	{"isFinite", "constant"},
	{"isNaN", "constant"},
	{"parseFloat", "per character (mustard_strings.go)"},
	{"parseInt", "per character (mustard_strings.go)"},
	{"globalThis", "constant"},
	{"%TypedArray%", "per element visited or made (mustard_arrays.go)"},
	{"%TypedArray%.prototype.buffer get", "constant"},
	{"%TypedArray%.prototype.byteLength get", "constant"},
	{"%TypedArray%.prototype.byteOffset get", "constant"},
	{"%TypedArray%.prototype.length get", "constant"},
	{"%TypedArray%.prototype.[Symbol(Symbol.toStringTag)] get", "constant"},
	{"%TypedArray%.[Symbol(Symbol.species)] get", "constant"},
	{"%IteratorPrototype%", "constant"},
	{"%AsyncIteratorPrototype%", "constant"},
	{"%ArrayIteratorPrototype%", "constant: one element a step"},
	{"%MapIteratorPrototype%", "constant: one element a step"},
	{"%SetIteratorPrototype%", "constant: one element a step"},
	{"%StringIteratorPrototype%", "constant: one element a step"},
	{"%RegExpStringIteratorPrototype%", "per span scanned, backtracking under a time bound (mustard_strings.go)"},
	{"%GeneratorPrototype%", "constant; resumes guest code"},
	{"%AsyncGeneratorPrototype%", "constant; resumes guest code"},
	{"%GeneratorFunction%", "dynamic code refused (guards.go)"},
	{"%AsyncFunction%", "dynamic code refused (guards.go)"},
	{"%AsyncGeneratorFunction%", "dynamic code refused (guards.go)"},
	{"%ThrowTypeError%", "constant"},
	{"%GeneratorPrototype%.constructor.constructor", "dynamic code refused (guards.go)"},
	{"%AsyncGeneratorPrototype%.constructor.constructor", "dynamic code refused (guards.go)"},
}

// typedArrays share TypedArray's rule.
var typedArrays = []string{"Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"}

func builtinRule(path string) string {
	for _, ta := range typedArrays {
		if path == ta || strings.HasPrefix(path, ta+".") {
			return "per element visited or made (mustard_arrays.go)"
		}
	}
	best, rule := -1, ""
	for _, r := range builtinRules {
		if strings.HasPrefix(path, r.prefix) && len(r.prefix) > best {
			best, rule = len(r.prefix), r.rule
		}
	}
	if best <= 0 {
		return ""
	}
	return rule
}

// enumerateBuiltins lists every function a guest can reach from the global
// object, prototypes, accessors and symbol-keyed properties included, each
// under the first path the walk finds it by.
const enumerateBuiltins = `(() => {
  const out = [], seen = new Set();
  const walk = (obj, path, depth) => {
    if (obj === null || (typeof obj !== 'object' && typeof obj !== 'function') || seen.has(obj) || depth > 6) return;
    seen.add(obj);
    for (const key of Reflect.ownKeys(obj)) {
      const name = typeof key === 'symbol' ? '[' + String(key) + ']' : key;
      const d = Object.getOwnPropertyDescriptor(obj, key);
      const p = path ? path + '.' + name : name;
      for (const [kind, v] of [['', d.value], [' get', d.get], [' set', d.set]]) {
        if (typeof v === 'function') out.push(p + kind);
        walk(v, p + kind, depth + 1);
      }
    }
  };
  walk(globalThis, '', 0);
  for (const [name, obj] of Object.entries(hiddenIntrinsics())) {
    if (typeof obj === 'function' && !seen.has(obj)) out.push(name);
    walk(obj, name, 0);
  }
  return out.sort().join('\n');
})()`

// hiddenIntrinsicsSource defines hiddenIntrinsics(): the intrinsics no
// property path from the global object reaches (the prototypes of
// iterators and generators, %TypedArray%, the constructors of generator
// and async functions), each under its name in the specification. The
// walk reaches their methods through them.
const hiddenIntrinsicsSource = `const hiddenIntrinsics = () => {
  const proto = Object.getPrototypeOf;
  const gen = function* () {}, agen = async function* () {}, afn = async function () {};
  const d = Object.getOwnPropertyDescriptor(Function.prototype, 'caller');
  return {
    '%TypedArray%': proto(Int8Array),
    '%IteratorPrototype%': proto(proto([][Symbol.iterator]())),
    '%ArrayIteratorPrototype%': proto([][Symbol.iterator]()),
    '%MapIteratorPrototype%': proto(new Map()[Symbol.iterator]()),
    '%SetIteratorPrototype%': proto(new Set()[Symbol.iterator]()),
    '%StringIteratorPrototype%': proto(''[Symbol.iterator]()),
    '%RegExpStringIteratorPrototype%': proto('a'.matchAll(/a/g)),
    '%GeneratorPrototype%': proto(proto(gen())),
    '%AsyncGeneratorPrototype%': proto(proto(agen())),
    '%AsyncIteratorPrototype%': proto(proto(proto(agen()))),
    '%GeneratorFunction%': gen.constructor,
    '%AsyncFunction%': afn.constructor,
    '%AsyncGeneratorFunction%': agen.constructor,
    '%ThrowTypeError%': d && d.get,
  };
};
`

// Every built-in function a guest can reach has a metering rule in
// testdata/builtins.txt: a goja update that adds one fails here until
// someone decides how it is charged (add a rule to builtinRules, then
// go test ./engine -run TestEveryBuiltinHasAMeteringRule -update-builtins).
func TestEveryBuiltinHasAMeteringRule(t *testing.T) {
	limits := policy.DefaultLimits()
	limits.InstructionBudget = 1 << 40
	step := runLimits(t, hiddenIntrinsicsSource+enumerateBuiltins, limits)
	require.NoError(t, step.Err)
	reachable := strings.Split(step.Value.Str, "\n")
	require.Greater(t, len(reachable), 300)
	if *updateBuiltins {
		var b strings.Builder
		b.WriteString("# Every built-in function a guest can reach, and how it is charged (engine/builtins_guard_test.go).\n")
		var unruled []string
		for _, p := range reachable {
			rule := builtinRule(p)
			if rule == "" {
				unruled = append(unruled, p)
			}
			b.WriteString(p + "\t" + rule + "\n")
		}
		require.Empty(t, unruled, "no metering rule: add them to builtinRules")
		require.NoError(t, os.WriteFile(builtinsFile, []byte(b.String()), 0o644))
	}
	raw, err := os.ReadFile(builtinsFile)
	require.NoError(t, err)
	listed := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		path, rule, ok := strings.Cut(line, "\t")
		require.True(t, ok && rule != "", "line without a rule: %q", line)
		require.NotContains(t, rule, "not yet charged", "%s: work that grows with its operands must be charged", path)
		listed[path] = rule
	}
	var missing []string
	for _, p := range reachable {
		if _, ok := listed[p]; !ok {
			missing = append(missing, p)
		}
		delete(listed, p)
	}
	var gone []string
	for p := range listed {
		gone = append(gone, p)
	}
	sort.Strings(gone)
	require.Empty(t, missing, "built-ins a guest can reach with no metering rule in %s", builtinsFile)
	require.Empty(t, gone, "built-ins listed in %s that a guest can no longer reach", builtinsFile)
}
