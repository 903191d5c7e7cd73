package goja

import (
	"strings"
	"testing"
)

func footprintOf(t *testing.T, src string) uint64 {
	t.Helper()
	p, err := Compile("", src, true)
	if err != nil {
		t.Fatal(err)
	}
	return p.MustardFootprint()
}

// The footprint counts what a program's instructions hold, nested
// functions included, and not the source text, which functions share.
func TestMustardFootprint(t *testing.T) {
	one := footprintOf(t, "x = 1;")
	if one == 0 || footprintOf(t, "x = 1;") != one {
		t.Fatal("not deterministic, or nothing counted")
	}
	// Each statement adds code: the count grows with them.
	many := footprintOf(t, strings.Repeat("x = 1;", 1000))
	if many < 1000*16 {
		t.Fatalf("1,000 statements count %d bytes", many)
	}
	// Nested functions are counted.
	fns := footprintOf(t, strings.Repeat("(function(){ return 1 });", 1000))
	if fns < 1000*programSize {
		t.Fatalf("1,000 functions count %d bytes", fns)
	}
	// A function's own text is the source's: a long body of comments
	// costs nothing.
	short := footprintOf(t, "(function(){ return 1 });")
	long := footprintOf(t, "(function(){ /*"+strings.Repeat("x", 100000)+"*/ return 1 });")
	if long != short {
		t.Fatalf("a function's comments counted: %d vs %d", long, short)
	}
	// A string constant is not the source text once unescaped: counted.
	str := footprintOf(t, "x = '\\x41"+strings.Repeat("b", 100000)+"';")
	if str < 100000 {
		t.Fatalf("a 100,000-byte string constant counts %d bytes", str)
	}
}
