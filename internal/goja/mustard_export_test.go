package goja

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

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

// MustardUTF8, MustardUTF16 and Length give what the units of a string
// give, for every kind of string, and never make an imported string
// UTF-16: one passed on keeps only its text.
func TestMustardTextWithoutUTF16(t *testing.T) {
	r := New()
	texts := []string{
		"plain ASCII, longer than sixteen bytes", "short", "é", "café au lait, longer than sixteen bytes",
		"日本語のテキスト、長い文字列です", "😀 an emoji, longer than sixteen bytes",
		"\xff\xfe not UTF-8, longer than sixteen bytes", "\xed\xa0\x80 a lone surrogate as WTF-8, long",
	}
	units := func(s String) []uint16 {
		u := make([]uint16, s.Length())
		for i := range u {
			u[i] = s.CharAt(i)
		}
		return u
	}
	for _, text := range texts {
		forms := map[string]func() String{
			"ToValue":        func() String { return r.ToValue(text).(String) },
			"newStringValue": func() String { return newStringValue(text) },
		}
		if _, ok := r.MustardStringUTF8(text); ok {
			forms["MustardStringUTF8"] = func() String { v, _ := r.MustardStringUTF8(text); return v.(String) }
		}
		for name, form := range forms {
			want := units(form())
			v := form()
			imp, _ := v.(*importedString)
			scanned := imp != nil && imp.scanned
			if got := v.Length(); got != len(want) {
				t.Errorf("%s(%q): length %d, want %d", name, text, got, len(want))
			}
			if s, ok := MustardUTF8(v); ok {
				if !utf8.ValidString(s) || !slices.Equal(utf16.Encode([]rune(s)), want) {
					t.Errorf("%s(%q): MustardUTF8 %q, not its units", name, text, s)
				}
			} else if utf8.ValidString(text) && imp != nil {
				t.Errorf("%s(%q): an imported string of UTF-8 not taken as it is", name, text)
			}
			if u := MustardUTF16(v); u != nil && !slices.Equal(u, want) {
				t.Errorf("%s(%q): MustardUTF16 %x, want %x", name, text, u, want)
			}
			// (An ill-formed one with a unit a byte is scanned at its
			// length, as one all ASCII is.)
			if imp != nil && !scanned && imp.u != nil && utf8.ValidString(text) {
				t.Errorf("%s(%q): made UTF-16 by the reads", name, text)
			}
		}
	}
}

// An imported string's length is its units' count, read without making it
// UTF-16 unless it is all ASCII (scanned then, as before: no copy), and
// the same after it is scanned.
func TestImportedLengthWithoutUnits(t *testing.T) {
	for _, text := range []string{
		"café au lait, longer than sixteen bytes", "日本語のテキスト、長い文字列です", "😀 an emoji, longer than sixteen bytes",
		"\xff\xfe ill-formed, longer than sixteen", "\xff\xfe", "plain ASCII, longer than sixteen bytes", "",
	} {
		want := len(utf16.Encode([]rune(text)))
		s := &importedString{s: text}
		for range 2 {
			if got := s.Length(); got != want {
				t.Errorf("%q: length %d, want %d", text, got, want)
			}
		}
		// Scanned when a unit a byte: ASCII, or bytes each a U+FFFD.
		if s.scanned != (want == len(text)) {
			t.Errorf("%q: scanned %v after its length", text, s.scanned)
		}
		s.ensureScanned()
		if got := s.Length(); got != want {
			t.Errorf("%q: length %d once scanned, want %d", text, got, want)
		}
	}
}

// Property reads on an imported string that is not scanned (through the
// wrapper that holds it as it is) give what they give on the same text
// made by the guest, and its length leaves it unscanned.
func TestImportedStringPropertyReads(t *testing.T) {
	const reads = `[s.length, s[0], s[3], s[s.length - 1], s[100000], s.charCodeAt(3), s.codePointAt(0),
		s.slice(2, 5), s.split("").length, [...s].length, s.indexOf("é"), s.at(-1), s.hasOwnProperty("length"),
		s.hasOwnProperty(2), "length" in Object(s), s.length + "abc".length + s.length, typeof s, s.constructor === String,
		Object.getOwnPropertyNames(Object(s)).length, s.toUpperCase().length, JSON.stringify(s).length]`
	for _, text := range []string{
		"café au lait, longer than sixteen bytes", "日本語のテキスト、長い文字列です", "😀 an emoji, longer than sixteen bytes",
		"plain ASCII, longer than sixteen bytes",
	} {
		r := New()
		lit, err := r.RunString("JSON.stringify((s => " + reads + ")(" + strconvQuote(text) + "))")
		if err != nil {
			t.Fatal(err)
		}
		v, _ := r.MustardStringUTF8(text)
		imp := v.(*importedString)
		r.Set("s", v)
		if n, err := r.RunString("s.length"); err != nil || n.ToInteger() != int64(len(utf16.Encode([]rune(text)))) {
			t.Fatalf("%q: length %v, %v", text, n, err)
		}
		if ascii := len(utf16.Encode([]rune(text))) == len(text); imp.scanned != ascii {
			t.Errorf("%q: scanned %v after its length", text, imp.scanned)
		}
		got, err := r.RunString("JSON.stringify(" + reads + ")")
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != lit.String() {
			t.Errorf("%q: imported %s, literal %s", text, got, lit)
		}
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// Strings whose length was answered without their units join as they
// would have once scanned (upstream scanned them at their length), and
// unmeasured ones as imported text, as before: the form a join gives, on
// which charges depend, is what it was.
func TestMeasuredStringsJoinAsScanned(t *testing.T) {
	r := New()
	pair := func() (String, String) {
		a, _ := r.MustardStringUTF8("a note with accents: café, crème brûlée")
		b, _ := r.MustardStringUTF8("another note with accents: déjà vu, naïve")
		return a.(String), b.(String)
	}
	a, b := pair()
	if _, ok := a.Concat(b).(*importedString); !ok {
		t.Errorf("unmeasured: joined as %T", a.Concat(b))
	}
	for _, measure := range []string{"left", "right"} {
		a, b := pair()
		if measure == "left" {
			a.Length()
		} else {
			b.Length()
		}
		if _, ok := a.Concat(b).(unicodeString); !ok {
			t.Errorf("%s measured: joined as %T", measure, a.Concat(b))
		}
	}
}

// A property read wraps an imported string not yet scanned as upstream
// does when it is all ASCII (an ASCII string: its length scans it, with
// no copy), and as it is when it is not (its length leaves it unscanned).
func TestImportedStringWrappers(t *testing.T) {
	for text, want := range map[string]string{
		"plain ASCII, longer than sixteen bytes":  "goja.asciiString",
		"café au lait, longer than sixteen bytes": "*goja.importedString",
	} {
		r := New()
		v := r.ToValue(text)
		if imp, ok := v.(*importedString); !ok || imp.scanned {
			t.Fatalf("%q: imported as %T, scanned", text, v)
		}
		r.Set("s", v)
		if _, err := r.RunString("s.length"); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%T", r.stringSingleton.value); got != want {
			t.Errorf("%q: wrapped as %s, want %s", text, got, want)
		}
	}
}
