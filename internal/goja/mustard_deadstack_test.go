package goja

import "testing"

func TestMustardTrimStacks(t *testing.T) {
	r := New()
	var sizes [][2]int
	r.Set("trim", func(FunctionCall) Value {
		r.MustardTrimStacks()
		sizes = append(sizes, [2]int{cap(r.vm.stack), cap(r.vm.callStack)})
		return _undefined
	})
	v, err := r.RunString(`
	function f(n) { return n ? [0].map(() => f(n - 1))[0] + 1 : 0 }
	function g(n) { return n ? g(n - 1) + 1 : (trim(), 0) }
	const deep = f(300);
	trim(); // shallow again: the room the recursion grew is given back
	let out = [deep, g(200)]; // trimmed inside a deep call: what is in use stays
	trim();
	try { out.push([1, 2, 3].map((x) => { try { throw x } finally { out.push(-x) } })) } catch (e) { out.push('caught ' + e) }
	out.push(f(50));
	out.join()`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.String(), "300,200,-1,caught 1,50"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if len(sizes) != 3 {
		t.Fatalf("trim ran %d times", len(sizes))
	}
	if sizes[0][0] > trimStackSlots || sizes[0][1] > trimCallFrames {
		t.Errorf("after the recursion, stacks of %d slots and %d frames", sizes[0][0], sizes[0][1])
	}
	if sizes[1][1] < 200 {
		t.Errorf("trimmed inside a 200-deep call to %d frames", sizes[1][1])
	}
}
