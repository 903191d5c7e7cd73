package goja

import "testing"

// Promise.any's AggregateError says what happened, as V8's does.
func TestMustardAggregateErrorMessage(t *testing.T) {
	r := New()
	_, err := r.RunString(`var out; Promise.any([Promise.reject(1), Promise.reject(2)]).catch(e => {
		out = [e instanceof AggregateError, e.message, String(e), e.errors.join(), Object.getOwnPropertyNames(e).join()].join('|') })`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Get("out").String(), "true|All promises were rejected|AggregateError: All promises were rejected|1,2|stack,message,errors"; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
