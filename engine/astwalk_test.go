package engine

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/parser"
)

// walkSyntax uses most of the language's syntax, so that its tree holds
// most of the parser's node types.
const walkSyntax = `
class A extends Object { #p = 1; static s = 2; get g() { return this.#p } set g(v) {} static { } m(...r) { return super.toString() } }
function* gen(a = 1, { b, c: [d, ...e] } = {}) { yield* [a]; yield b ?? d?.x?.[0]?.(e) }
async function af() { for await (const x of []) {} await null; try { throw 1 } catch ({ m }) {} finally {} }
const arrow = async (x, y) => ({ x, [y]: y, ...x, get z() { return 1 } });
label: for (let i = 0, j; i < 2; i++) { if (i) continue label; else break label }
for (const k in {}) {} for (var v of []) {} while (false) {} do {} while (false)
switch (1) { case 1: break; default: }
let t = tag` + "`a${1}b${`c${2}`}`" + `, r = /a(b)?/gu, n = 1n, o = { a, 'b': 2, 3: c };
({ a, b: [c] } = {});
new (class {})(), typeof x, void 0, delete o.a, !a && b || c, a ? b : c, a **= 2, [a, , b] = [1, 2, 3];
`

// referenceWalk is the walk without its per-type table: every exported
// field of every struct, asked of reflection each time. It records the
// structs reached as the instrumenter's walk does.
func referenceWalk(v reflect.Value, seen map[visitKey]bool) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if !v.IsNil() {
			referenceWalk(v.Elem(), seen)
		}
	case reflect.Struct:
		if v.Type() == fileType {
			return
		}
		if v.CanAddr() {
			key := visitKey{v.Type(), v.Addr().Pointer()}
			if seen[key] {
				return
			}
			seen[key] = true
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				referenceWalk(v.Field(i), seen)
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			referenceWalk(v.Index(i), seen)
		}
	}
}

// The walk's table of fields leaves out only fields where a walk does
// nothing: it reaches every struct of a tree that asking reflection of
// every field reaches, and no other.
func TestWalkReachesWhatReflectionReaches(t *testing.T) {
	sources := map[string]string{"syntax": walkSyntax}
	paths, _ := filepath.Glob("../bench/workloads/*.js")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sources[filepath.Base(p)] = string(b)
	}
	if len(sources) < 9 {
		t.Fatalf("found %d sources, want the 8 workloads and the syntax", len(sources))
	}
	for name, src := range sources {
		prg, err := parser.ParseFile(nil, "", src, 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := map[visitKey]bool{}
		referenceWalk(reflect.ValueOf(prg), want)
		in := &instrumenter{src: src, seen: make(map[visitKey]bool, seenHint(src)), checkOnly: true, evalAt: -1}
		in.walk(reflect.ValueOf(prg))
		if len(in.seen) != len(want) {
			t.Errorf("%s: the walk reached %d structs, reflection %d", name, len(in.seen), len(want))
		}
		for k := range want {
			if !in.seen[k] {
				t.Errorf("%s: the walk missed a %v", name, k.t)
				break
			}
		}
		for k := range want {
			if f := astFieldsOf(k.t); f.node != reflect.PointerTo(k.t).Implements(nodeType) {
				t.Errorf("%v: node %v, want %v", k.t, f.node, !f.node)
			}
		}
	}
}
