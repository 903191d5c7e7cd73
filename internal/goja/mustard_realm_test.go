package goja

import "testing"

func TestMustardDeleteGlobals(t *testing.T) {
	r := New()
	if _, err := r.RunString("globalThis.parseInt; globalThis.x = 1"); err != nil {
		t.Fatal(err)
	}
	if err := r.MustardDeleteGlobals("eval", "GoError", "parseInt", "x", "absent"); err != nil {
		t.Fatal(err)
	}
	if r.global.GoError != nil || r.global.Eval != nil {
		t.Error("a deleted built-in not read yet was made")
	}
	v, err := r.RunString(`["eval", "GoError", "parseInt", "x"].filter(function (k) { return k in globalThis; }).join() +
		"|" + Object.getOwnPropertyNames(globalThis).indexOf("eval") + "|" + typeof eval`)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.String(); got != "|-1|undefined" {
		t.Errorf("after deleting: %q", got)
	}
	if err := r.MustardDeleteGlobals("NaN"); err == nil {
		t.Error("deleting NaN succeeded")
	}
	if e := r.NewGoError(errTest{}); !r.global.GoError.self.hasInstance(e) {
		t.Error("GoError made later is not GoError's")
	}
}

type errTest struct{}

func (errTest) Error() string { return "test" }

func TestMustardNewNativeFunc(t *testing.T) {
	r := New()
	f := r.MustardNewNativeFunc(func(FunctionCall) Value { return _undefined }, "then", 2)
	g := r.ToValue(func(FunctionCall) Value { return _undefined }).(*Object)
	_ = g.DefineDataProperty("name", r.ToValue("then"), FLAG_FALSE, FLAG_TRUE, FLAG_FALSE)
	_ = g.DefineDataProperty("length", r.ToValue(2), FLAG_FALSE, FLAG_TRUE, FLAG_FALSE)
	r.Set("f", f)
	r.Set("g", g)
	v, err := r.RunString(`var shape = function (h) {
		return JSON.stringify([Reflect.ownKeys(h), Object.getOwnPropertyDescriptors(h), Object.getPrototypeOf(h) === Function.prototype]);
	}; [shape(f), shape(g)]`)
	if err != nil {
		t.Fatal(err)
	}
	both := v.(*Object)
	if a, b := both.Get("0").String(), both.Get("1").String(); a != b {
		t.Errorf("made differently: %s, not %s", a, b)
	}
}

func TestMustardStubConstructors(t *testing.T) {
	r := New()
	v, err := r.RunString(`(function () {
		function stub() { return function () { throw new TypeError("no"); }; }
		return [stub(), stub(), stub(), stub()];
	})()`)
	if err != nil {
		t.Fatal(err)
	}
	a := v.(*Object)
	stub := func(i int) *Object { return a.Get(string(rune('0' + i))).(*Object) }
	if err := r.MustardStubConstructors(stub(0), stub(1), stub(2), a); err == nil {
		t.Error("an array was taken for a stub")
	}
	if err := r.MustardStubConstructors(stub(0), stub(1), stub(2), stub(3)); err != nil {
		t.Fatal(err)
	}
	if r.global.GeneratorFunctionPrototype != nil || r.global.AsyncFunctionPrototype != nil ||
		r.global.AsyncGeneratorFunctionPrototype != nil || r.global.GeneratorPrototype != nil {
		t.Fatal("stubbing made a prototype")
	}
	r.Set("stubs", a)
	v, err = r.RunString(`(function () {
		var gpo = Object.getPrototypeOf, out = [];
		[Function.prototype, gpo(function* () {}), gpo(async function () {}), gpo(async function* () {})].forEach(function (p, i) {
			var c = Object.getOwnPropertyDescriptor(p, "constructor"), s = Object.getOwnPropertyDescriptor(stubs[i], "prototype");
			out.push([c.value === stubs[i], c.writable, c.configurable, s.value === p, s.writable, s.configurable].join());
		});
		out.push(Function === stubs[0]);
		return out.join(" ");
	})()`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.String(), "true,false,false,true,false,false true,false,false,true,false,false true,false,false,true,false,false true,false,false,true,false,false true"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if r.global.GeneratorFunctionPrototype == nil || r.global.AsyncGeneratorFunctionPrototype == nil {
		t.Error("the prototypes were not made when reached")
	}
	if err := r.MustardStubConstructors(stub(0), stub(1), stub(2), stub(3)); err == nil {
		t.Error("stubbed again after the prototypes were made")
	}
}
