package engine

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

var updateRealmShape = flag.Bool("update-realm-shape", false, "rewrite testdata/realm_shape.txt")

const realmShapeGolden = "testdata/realm_shape.txt"

// realmShapeSource lists what the lockdown changes, as a guest sees it:
// the global object's keys, the Function constructors' stubs and their
// prototypes (keys, attributes, names, lengths, source text), and what
// calling a stub throws, with its stack.
const realmShapeSource = `(function () {
  var out = [], gpo = Object.getPrototypeOf;
  function show(v) {
    if (typeof v === "function") {
      return "function name=" + v.name + " length=" + v.length + " text=" + Function.prototype.toString.call(v);
    }
    return typeof v === "object" || v === undefined ? typeof v : typeof v + " " + String(v);
  }
  function dump(label, o) {
    out.push(label + " extensible=" + Object.isExtensible(o) + " frozen=" + Object.isFrozen(o) +
      " proto=" + (gpo(o) === Function.prototype ? "Function.prototype" : gpo(o) === Object.prototype ? "Object.prototype" : String(gpo(o))));
    out.push("  keys " + Reflect.ownKeys(o).map(String).join(","));
    Reflect.ownKeys(o).forEach(function (k) {
      var p = Object.getOwnPropertyDescriptor(o, k);
      out.push("  " + String(k) + " w=" + p.writable + " e=" + p.enumerable + " c=" + p.configurable + " " + show(p.value));
    });
  }
  var protos = [["Function", Function.prototype], ["GeneratorFunction", gpo(function* () {})],
    ["AsyncFunction", gpo(async function () {})], ["AsyncGeneratorFunction", gpo(async function* () {})]];
  dump("globalThis", globalThis);
  protos.forEach(function (p) {
    dump(p[0] + ".prototype", p[1]);
    dump(p[0], p[1].constructor);
    out.push("  prototype is the prototype: " + (p[1].constructor.prototype === p[1]));
    try { p[1].constructor("return 1"); } catch (e) { out.push("  throws " + String(e) + " stack " + JSON.stringify(e.stack)); }
  });
  dump("Promise.prototype", Promise.prototype);
  out.push("eval " + ("eval" in globalThis) + " GoError " + ("GoError" in globalThis));
  return out.join("\n");
})()`

// TestRealmShape pins the realm a guest starts in, and the heap figure of
// a fresh realm and of one that holds a few built-ins' instances: making
// the realm cheaper must not change either. A deliberate change rewrites
// the golden file: go test ./engine -run TestRealmShape -update-realm-shape.
func TestRealmShape(t *testing.T) {
	r, err := buildRealm()
	if err != nil {
		t.Fatal(err)
	}
	// As a guest's program starts: the value the lockdown program left
	// as the runtime's last result is gone.
	if _, err := r.rt.RunString("void 0"); err != nil {
		t.Fatal(err)
	}
	fresh := r.rt.MustardRetainedBytes()
	if _, err := r.rt.RunString(`globalThis.kept = [Promise.resolve(1), (function* () {})(), (async function* () {})(), new Error("x"), function () {}];`); err != nil {
		t.Fatal(err)
	}
	kept := r.rt.MustardRetainedBytes()
	v, err := r.rt.RunString(realmShapeSource)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("retained fresh=%d kept=%d\n%s\n", fresh, kept, v)
	if *updateRealmShape {
		if err := os.WriteFile(realmShapeGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(realmShapeGolden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("realm differs from %s (rewrite with -update-realm-shape if on purpose):\n%s", realmShapeGolden, got)
	}
}
