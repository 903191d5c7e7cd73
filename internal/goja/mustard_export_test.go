package goja

import "testing"

func TestMustardOwnReads(t *testing.T) {
	r := New()
	v, err := r.RunString(`
		var ran = 0;
		var o = { b: 2, a: [1, , 3] };
		Object.defineProperty(o, 'acc', { get() { ran++; return 1 }, enumerable: true });
		Object.defineProperty(o, 'hidden', { value: 4, enumerable: false });
		Object.defineProperty(Object.prototype, 'get', { get() { ran++; return 1 }, configurable: true });
		Object.prototype.inherited = 1;
		o`)
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*Object)
	var keys []string
	ks, err := o.MustardOwnKeys()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		keys = append(keys, k.String())
	}
	if got := fmtList(keys); got != "b,a,acc" {
		t.Errorf("keys %s, want b,a,acc", got)
	}
	if v, present, acc := o.MustardOwnData(r.ToValue("b")); !present || acc || v.ToInteger() != 2 {
		t.Errorf("b: %v %v %v", v, present, acc)
	}
	if v, present, acc := o.MustardOwnData(r.ToValue("acc")); !present || !acc || v != nil {
		t.Errorf("acc: %v %v %v", v, present, acc)
	}
	if _, present, _ := o.MustardOwnData(r.ToValue("inherited")); present {
		t.Error("an inherited property read as own")
	}
	if v, present, _ := o.MustardOwnData(r.ToValue("hidden")); !present || v.ToInteger() != 4 {
		t.Errorf("non-enumerable own property: %v %v", v, present)
	}
	a := o.Get("a").(*Object)
	if v, present, _ := a.MustardOwnData(r.ToValue(2)); !present || v.ToInteger() != 3 {
		t.Errorf("a[2]: %v %v", v, present)
	}
	if _, present, _ := a.MustardOwnData(r.ToValue(1)); present {
		t.Error("a hole read as present")
	}
	if got := r.Get("ran").ToInteger(); got != 0 {
		t.Errorf("%d getters ran", got)
	}
}

func fmtList(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

// MustardPutData on a fresh object gives what DefineDataProperty gives:
// own data properties in first-definition order, "__proto__" as an own
// key, and no guest setter on Object.prototype consulted.
func TestMustardPutDataMatchesDefine(t *testing.T) {
	r := New()
	if _, err := r.RunString(`var ran = 0;
		Object.defineProperty(Object.prototype, 'a', { set() { ran++ }, configurable: true });`); err != nil {
		t.Fatal(err)
	}
	props := []struct {
		k string
		v int
	}{{"b", 1}, {"a", 2}, {"__proto__", 3}, {"1", 4}, {"é", 5}, {"b", 6}}
	put, def := r.MustardNewObject(3), r.NewObject() // fewer slots than properties: it grows
	for _, p := range props {
		put.MustardPutData(p.k, r.ToValue(p.v))
		if err := def.DefineDataProperty(p.k, r.ToValue(p.v), FLAG_TRUE, FLAG_TRUE, FLAG_TRUE); err != nil {
			t.Fatal(err)
		}
	}
	r.Set("put", put)
	r.Set("def", def)
	v, err := r.RunString(`JSON.stringify([put, Object.getOwnPropertyNames(put), Object.getOwnPropertyDescriptors(put), Object.getPrototypeOf(put) === Object.prototype, ran]) ===
		JSON.stringify([def, Object.getOwnPropertyNames(def), Object.getOwnPropertyDescriptors(def), Object.getPrototypeOf(def) === Object.prototype, ran])
		&& ran === 0 && put.__proto__ === 3 && put.b === 6`)
	if err != nil {
		t.Fatal(err)
	}
	if !v.ToBoolean() {
		got, _ := r.RunString(`JSON.stringify([put, Object.getOwnPropertyNames(put), ran])`)
		t.Fatalf("MustardPutData gave %s", got)
	}
}

// MustardNewObject gives an ordinary object like NewObject's, and
// MustardString the value ToValue gives for the same string.
func TestMustardNewObjectAndString(t *testing.T) {
	r := New()
	o := r.MustardNewObject(2)
	o.MustardPutData("a", r.MustardString("x"))
	r.Set("o", o)
	v, err := r.RunString(`Object.getPrototypeOf(o) === Object.prototype && Object.isExtensible(o) &&
		Object.prototype.toString.call(o) === "[object Object]" && JSON.stringify(o) === '{"a":"x"}' &&
		(o.b = 1, Object.keys(o).join()) === "a,b"`)
	if err != nil || !v.ToBoolean() {
		t.Fatalf("MustardNewObject: %v %v", v, err)
	}
	for _, s := range []string{"", "abc", "é", "😀", "0123456789abcdef", "0123456789abcdefg", "long é string beyond sixteen bytes"} {
		got, want := r.MustardString(s), r.ToValue(s)
		if !got.StrictEquals(want) || got.String() != s || got.Export() != want.Export() {
			t.Errorf("%q: %#v, ToValue gives %#v", s, got, want)
		}
		if r.ToValue(s).StrictEquals(r.MustardString(s + "x")) {
			t.Errorf("%q: equal to a longer string", s)
		}
	}
}
