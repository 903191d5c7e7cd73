package goja

import (
	"os"
	"testing"
)

// The resolving functions of intrinsic promise capabilities are made only
// when handed out; the order of jobs and every already-resolved rule must
// be what they were with eager functions. The expected log is V8's for the
// same program.
func TestMustardLazyResolvingFunctions(t *testing.T) {
	src, err := os.ReadFile("testdata/mustard_promise.js")
	if err != nil {
		t.Fatal(err)
	}
	r := New()
	if _, err := r.RunString(string(src)); err != nil {
		t.Fatal(err)
	}
	const want = `a1|a2|t1|ok:0|settled:[{"status":"rejected","reason":4},{"status":"fulfilled","value":5}]|caught:x|t2|self:TypeError|still:0|all:1,3|raceerr:r1|any:any|done|nested`
	v, err := r.RunString(`log.join("|")`)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.String(); got != want {
		t.Fatalf("log\n got %s\nwant %s", got, want)
	}
}
