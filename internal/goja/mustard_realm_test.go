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
