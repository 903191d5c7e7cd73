package goja

import (
	"encoding/json"
	"os"
	"testing"
)

// The common TypeErrors and RangeErrors (a property of null or undefined
// read or written, `in` on a primitive, a callback that is not a function,
// a built-in method on an incompatible receiver, Number.prototype's
// ranges) are V8's words: testdata/mustard_wording.json holds each
// program with the message Node gives (testdata/mustard_wording.mjs writes
// it).
func TestErrorsInV8Words(t *testing.T) {
	data, err := os.ReadFile("testdata/mustard_wording.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct{ Src, Want string }
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 100 {
		t.Fatalf("%d cases", len(cases))
	}
	for _, c := range cases {
		r := New()
		v, err := r.RunString("var out; try { (function () { " + c.Src + "\n})(); out = 'no error' } catch (e) { out = e.name + ': ' + e.message }; out")
		if err != nil {
			t.Errorf("%s: %v", c.Src, err)
			continue
		}
		if got := v.String(); got != c.Want {
			t.Errorf("%s:\n got  %s\n want %s", c.Src, got, c.Want)
		}
	}
}

// Rendering a value for a message runs no guest code: an accessor or a
// proxy is not consulted.
func TestErrorRenderingRunsNoGuestCode(t *testing.T) {
	r := New()
	v, err := r.RunString(`var touched = 0;
	const o = {}; Object.defineProperty(o, 'constructor', { get() { touched++; return Map } });
	const p = new Proxy({}, { get() { touched++ }, getPrototypeOf() { touched++; return null } });
	const out = [];
	for (const x of [o, p]) { try { [1].map(x) } catch (e) { out.push(e.message) } }
	out.push(touched); out.join('|')`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.String(), "[object Object] is not a function|[object Object] is not a function|0"; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
