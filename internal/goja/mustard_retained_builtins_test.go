package goja

import (
	"reflect"
	"testing"
	"unsafe"
)

// builtinSeeds makes the built-ins the runtime makes on first use, which no
// property path reaches: iterator, generator and async prototypes, the
// error constructors natives throw, the thrower of strict arguments.
const builtinSeeds = `
[][Symbol.iterator](); new Map()[Symbol.iterator](); new Set()[Symbol.iterator](); ''[Symbol.iterator]();
new Uint8Array(1).values(); 'a'.matchAll(/a/g).next();
(function* () {})().next(); (async function () {})(); (async function* () {})().next();
(async () => { for await (const x of [1]) {} })();
(function () { 'use strict'; try { arguments.callee } catch {} })();
try { null.x } catch {} try { undefinedName } catch {} try { new Array(-1) } catch {}
try { eval('(') } catch {} try { decodeURI('%') } catch {}
new WeakMap([[{}, 1]]); new WeakSet([{}]); new Map([[1, 1]]); new Set([1]);
new DataView(new ArrayBuffer(1)); new Proxy({}, {}); Reflect.ownKeys({});
[1, 2].toString(); [1].values(); 'x'.trimStart(); 'x'.trimEnd(); parseInt('1'); parseFloat('1');
Promise.resolve(1).then(() => 1);
new AggregateError([]); new EvalError(); new URIError(); new SyntaxError(); new RangeError();
1
`

// reachableBuiltins lists every object reachable from the realm's roots
// through own properties (values and accessors, string and symbol keyed)
// and prototypes: every built-in a guest can reach. Reading a property
// makes it, so the whole realm exists afterwards.
func reachableBuiltins(r *Runtime) []*Object {
	var all []*Object
	seen := map[*Object]bool{}
	var visit func(o *Object)
	visit = func(o *Object) {
		if o == nil || seen[o] {
			return
		}
		seen[o] = true
		all = append(all, o)
	}
	visit(r.globalObject)
	base := unsafe.Pointer(&r.global)
	for _, off := range intrinsicFields {
		visit(*(**Object)(unsafe.Add(base, off)))
	}
	for i := 0; i < len(all); i++ {
		o := all[i]
		for _, k := range o.self.keys(true, nil) {
			switch p := o.getOwnProp(k).(type) {
			case *Object:
				visit(p)
			case *valueProperty:
				if v, ok := p.value.(*Object); ok {
					visit(v)
				}
				visit(p.getterFunc)
				visit(p.setterFunc)
			}
		}
		visit(o.self.proto())
	}
	return all
}

// Whatever is added to any built-in a guest can reach, under a string key
// or a symbol, or put in place of one of its own properties' values,
// counts.
func TestRetainedBytesSeesWhatIsAddedToEveryBuiltin(t *testing.T) {
	r := New()
	if _, err := r.RunString(builtinSeeds); err != nil {
		t.Fatal(err)
	}
	// Every built-in the runtime holds was made by the seeds.
	gt := reflect.TypeOf(global{})
	var missing []string
	var fieldNames func(t reflect.Type, at uintptr)
	fieldNames = func(t reflect.Type, at uintptr) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(stash{}) {
				fieldNames(f.Type, at+f.Offset)
				continue
			}
			if f.Type == reflect.TypeOf((*Object)(nil)) && *(**Object)(unsafe.Add(unsafe.Pointer(&r.global), at+f.Offset)) == nil {
				missing = append(missing, f.Name)
			}
		}
	}
	builtins := reachableBuiltins(r)
	fieldNames(gt, 0)
	if len(missing) > 0 {
		t.Errorf("built-ins the seeds did not make: %v", missing)
	}
	// Each is known as a built-in, which counts only what is added to it.
	for _, o := range builtins {
		if o.builtin == 0 && templateOf(o) == nil {
			t.Errorf("%s is not known as a built-in: a getter or factory made it outside makingBuiltins", describeBuiltin(o))
		}
	}
	probe, err := r.RunString("new Uint8Array(1 << 20)")
	if err != nil {
		t.Fatal(err)
	}
	sym := NewSymbol("probe")
	r.vm.result = nil
	base := r.MustardRetainedBytes()
	t.Logf("%d built-ins reachable, the realm retains %d bytes", len(builtins), base)
	if len(builtins) < 400 {
		t.Fatalf("only %d built-ins reachable", len(builtins))
	}
	if base > 4096 {
		t.Errorf("a realm whose every built-in was made retains %d bytes", base)
	}
	const size = 1 << 20
	check := func(o *Object, how string) {
		t.Helper()
		if got := r.MustardRetainedBytes(); got < base+size {
			t.Errorf("%s %s: %d bytes retained, %d without it", describeBuiltin(o), how, got, base)
		}
	}
	replaced := 0
	for _, o := range builtins {
		if !o.self.isExtensible() {
			continue
		}
		o.self.defineOwnPropertyStr("mustardProbe", PropertyDescriptor{Value: probe, Writable: FLAG_TRUE, Configurable: FLAG_TRUE}, true)
		check(o, "under a string key")
		o.self.deleteStr("mustardProbe", true)
		o.self.defineOwnPropertySym(sym, PropertyDescriptor{Value: probe, Writable: FLAG_TRUE, Configurable: FLAG_TRUE}, true)
		check(o, "under a symbol")
		o.self.deleteSym(sym, true)
		// In place of the value of each of its own writable properties.
		for _, k := range o.self.keys(true, nil) {
			p, ok := o.getOwnProp(k).(*valueProperty)
			if !ok || !p.writable || p.accessor {
				continue
			}
			was := p.value
			p.value = probe
			check(o, "in place of "+k.String())
			p.value = was
			replaced++
		}
	}
	if got := r.MustardRetainedBytes(); got != base {
		t.Errorf("%d bytes retained after the probes were removed, %d before", got, base)
	}
	t.Logf("%d values replaced", replaced)
}

func describeBuiltin(o *Object) string {
	if n, ok := o.self.getStr("name", nil).(String); ok && n.Length() > 0 {
		return o.self.className() + " " + n.String()
	}
	if c, ok := o.self.getStr("constructor", nil).(*Object); ok {
		if n, ok := c.self.getStr("name", nil).(String); ok {
			return n.String() + ".prototype"
		}
	}
	return o.self.className()
}
