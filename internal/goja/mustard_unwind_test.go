package goja

import (
	"errors"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// An uncatchable error thrown through many nested native calls (here the
// call-depth limit, reached through map callbacks) reaches the embedder
// in time linear in the depth: 100,000 levels took minutes when each
// level threw it on from inside a deferred call. That depth (13 s under
// the race detector) runs with the long suites; the engine's
// TestDeepCallbackRecursionFailsInLinearTime holds the bound by default.
func TestUncatchableThroughNestedNativeCallsIsLinear(t *testing.T) {
	depths := []int{10, 1000, 10_000}
	if longtest.Enabled() {
		depths = append(depths, 100_000)
	}
	for _, depth := range depths {
		r := New()
		r.SetMaxCallStackSize(depth)
		began := time.Now()
		_, err := r.RunString(`function f(n) { try { return [n].map((x) => f(x + 1)); } catch (e) { return "caught"; } } f(0);`)
		var so *StackOverflowError
		if !errors.As(err, &so) {
			t.Fatalf("depth %d: got %v, want a StackOverflowError", depth, err)
		}
		// A hang bound only: linear unwinding takes well under a second.
		if d := time.Since(began); d > 60*time.Second {
			t.Fatalf("depth %d: %v", depth, d)
		}
	}
}

// What a try frame catches is still caught at the nearest catch, through
// nested native calls, and an uncatchable error still passes every catch
// and finally without running them.
func TestNestedNativeCallsCatchAsBefore(t *testing.T) {
	r := New()
	v, err := r.RunString(`
		const seen = [];
		function f(n) {
			if (n === 50) throw new Error("deep " + n);
			try { return [n].map((x) => f(x + 1))[0]; }
			finally { seen.push(n); }
		}
		let out;
		try { f(0); } catch (e) { out = e.message + " " + seen.length; }
		out;`)
	if err != nil || v.String() != "deep 50 50" {
		t.Fatalf("got %v, %v", v, err)
	}
	r.SetMaxCallStackSize(40)
	_, err = r.RunString(`
		var finallies = 0, caught = 0;
		function g(n) { try { return [n].map((x) => g(x + 1)); } finally { finallies++; } }
		try { g(0); } catch (e) { caught++; }`)
	var so *StackOverflowError
	if !errors.As(err, &so) {
		t.Fatalf("got %v, want a StackOverflowError", err)
	}
	// As before the patch: neither the catch nor any finally ran.
	if f, c := r.Get("finallies").ToInteger(), r.Get("caught").ToInteger(); f != 0 || c != 0 {
		t.Fatalf("%d finally blocks and %d catches ran", f, c)
	}
}
