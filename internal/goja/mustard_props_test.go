package goja

import (
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/unistring"
)

func TestPropStore(t *testing.T) {
	var s propStore
	names := make([]unistring.String, 3*propStoreSmall)
	for i := range names {
		names[i] = unistring.String(string(rune('a'+i%26)) + string(rune('A'+i/26)))
	}
	for i, n := range names {
		if s.has(n) {
			t.Fatalf("%s present before it was set", n)
		}
		s.set(n, intToValue(int64(i)))
		if s.len() != i+1 {
			t.Fatalf("len %d after %d sets", s.len(), i+1)
		}
		if (s.m != nil) != (i >= propStoreSmall) {
			t.Fatalf("after %d properties: map %v", i+1, s.m != nil)
		}
		for j, m := range names[:i+1] {
			if v := s.get(m); v == nil || v.ToInteger() != int64(j) {
				t.Fatalf("get %s after %d sets: %v", m, i+1, v)
			}
		}
	}
	// A name present with a nil value (a template's white hole).
	s.set(names[1], nil)
	if v, ok := s.lookup(names[1]); !ok || v != nil {
		t.Fatalf("white hole: %v, %v", v, ok)
	}
	seen := 0
	for range s.all() {
		seen++
	}
	if seen != len(names) {
		t.Fatalf("all yielded %d of %d", seen, len(names))
	}

	var small propStore
	for _, n := range names[:4] {
		small.set(n, valueTrue)
	}
	small.del(names[1])
	small.del("absent")
	if small.len() != 3 || small.has(names[1]) || !small.has(names[0]) || !small.has(names[3]) {
		t.Fatalf("after delete: %+v", small.small)
	}
	small.set(names[1], valueFalse)
	if small.get(names[1]) != valueFalse || small.len() != 4 {
		t.Fatalf("set again after delete: %+v", small.small)
	}
}

// TestPropStoreOrder: the guest sees the same keys, order and values
// whichever form an object's properties are kept in.
func TestPropStoreOrder(t *testing.T) {
	vm := New()
	v, err := vm.RunString(`
	const out = [];
	for (let n = 0; n <= 20; n++) {
		const o = {};
		for (let i = 0; i < n; i++) o['k' + i] = i;
		for (let i = 0; i < n; i += 3) delete o['k' + i];
		for (let i = 0; i < n; i += 6) o['k' + i] = -i;
		o[2] = 'two'; o.z = 'z';
		Object.defineProperty(o, 'hidden', { value: 1, enumerable: false });
		out.push(JSON.stringify(o) + ' ' + Object.getOwnPropertyNames(o).join());
	}
	const f = function g(a, b) {}; f.extra = 1; delete f.name;
	out.push(Object.getOwnPropertyNames(f).join());
	const a = [1, 2]; a.x = 1; a.length = 1;
	out.push(Object.getOwnPropertyNames(a).join() + ' ' + JSON.stringify(a));
	out.join('\n');
	`)
	if err != nil {
		t.Fatal(err)
	}
	// Node prints the same, but for the function (goja lists a function's
	// prototype first, and has no arguments or caller): goja's order
	// before objects kept few properties in a slice.
	want := `{"2":"two","z":"z"} 2,z,hidden
{"2":"two","k0":0,"z":"z"} 2,k0,z,hidden
{"2":"two","k1":1,"k0":0,"z":"z"} 2,k1,k0,z,hidden
{"2":"two","k1":1,"k2":2,"k0":0,"z":"z"} 2,k1,k2,k0,z,hidden
{"2":"two","k1":1,"k2":2,"k0":0,"z":"z"} 2,k1,k2,k0,z,hidden
{"2":"two","k1":1,"k2":2,"k4":4,"k0":0,"z":"z"} 2,k1,k2,k4,k0,z,hidden
{"2":"two","k1":1,"k2":2,"k4":4,"k5":5,"k0":0,"z":"z"} 2,k1,k2,k4,k5,k0,z,hidden
{"2":"two","k1":1,"k2":2,"k4":4,"k5":5,"k0":0,"k6":-6,"z":"z"} 2,k1,k2,k4,k5,k0,k6,z,hidden
{"2":"two","k1":1,"k2":2,"k4":4,"k5":5,"k7":7,"k0":0,"k6":-6,"z":"z"} 2,k1,k2,k4,k5,k7,k0,k6,z,hidden
{"2":"two","k1":1,"k2":2,"k4":4,"k5":5,"k7":7,"k8":8,"k0":0,"k6":-6,"z":"z"} 2,k1,k2,k4,k5,k7,k8,k0,k6,z,hidden
{"2":"two","k1":1,"k2":2,"k4":4,"k5":5,"k7":7,"k8":8,"k0":0,"k6":-6,"z":"z"} 2,k1,k2,k4,k5,k7,k8,k0,k6,z,hidden
{"2":"two","k1":1,"k2":2,"k4":4,"k5":5,"k7":7,"k8":8,"k10":10,"k0":0,"k6":-6,"z":"z"} 2,k1,k2,k4,k5,k7,k8,k10,k0,k6,z,hidden
{"2":"two","k1":1,"k2":2,"k4":4,"k5":5,"k7":7,"k8":8,"k10":10,"k11":11,"k0":0,"k6":-6,"z":"z"} 2,k1,k2,k4,k5,k7,k8,k10,k11,k0,k6,z,hidden
{"2":"two","k1":1,"k2":2,"k4":4,"k5":5,"k7":7,"k8":8,"k10":10,"k11":11,"k0":0,"k6":-6,"k12":-12,"z":"z"} 2,k1,k2,k4,k5,k7,k8,k10,k11,k0,k6,k12,z,hidden
{"2":"two","k1":1,"k2":2,"k4":4,"k5":5,"k7":7,"k8":8,"k10":10,"k11":11,"k13":13,"k0":0,"k6":-6,"k12":-12,"z":"z"} 2,k1,k2,k4,k5,k7,k8,k10,k11,k13,k0,k6,k12,z,hidden
{"2":"two","k1":1,"k2":2,"k4":4,"k5":5,"k7":7,"k8":8,"k10":10,"k11":11,"k13":13,"k14":14,"k0":0,"k6":-6,"k12":-12,"z":"z"} 2,k1,k2,k4,k5,k7,k8,k10,k11,k13,k14,k0,k6,k12,z,hidden
{"2":"two","k1":1,"k2":2,"k4":4,"k5":5,"k7":7,"k8":8,"k10":10,"k11":11,"k13":13,"k14":14,"k0":0,"k6":-6,"k12":-12,"z":"z"} 2,k1,k2,k4,k5,k7,k8,k10,k11,k13,k14,k0,k6,k12,z,hidden
{"2":"two","k1":1,"k2":2,"k4":4,"k5":5,"k7":7,"k8":8,"k10":10,"k11":11,"k13":13,"k14":14,"k16":16,"k0":0,"k6":-6,"k12":-12,"z":"z"} 2,k1,k2,k4,k5,k7,k8,k10,k11,k13,k14,k16,k0,k6,k12,z,hidden
{"2":"two","k1":1,"k2":2,"k4":4,"k5":5,"k7":7,"k8":8,"k10":10,"k11":11,"k13":13,"k14":14,"k16":16,"k17":17,"k0":0,"k6":-6,"k12":-12,"z":"z"} 2,k1,k2,k4,k5,k7,k8,k10,k11,k13,k14,k16,k17,k0,k6,k12,z,hidden
{"2":"two","k1":1,"k2":2,"k4":4,"k5":5,"k7":7,"k8":8,"k10":10,"k11":11,"k13":13,"k14":14,"k16":16,"k17":17,"k0":0,"k6":-6,"k12":-12,"k18":-18,"z":"z"} 2,k1,k2,k4,k5,k7,k8,k10,k11,k13,k14,k16,k17,k0,k6,k12,k18,z,hidden
{"2":"two","k1":1,"k2":2,"k4":4,"k5":5,"k7":7,"k8":8,"k10":10,"k11":11,"k13":13,"k14":14,"k16":16,"k17":17,"k19":19,"k0":0,"k6":-6,"k12":-12,"k18":-18,"z":"z"} 2,k1,k2,k4,k5,k7,k8,k10,k11,k13,k14,k16,k17,k19,k0,k6,k12,k18,z,hidden
prototype,length,extra
0,length,x [1]`
	if got := v.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestObjectLiteralsSizeTheirProperties(t *testing.T) {
	vm := New()
	for _, c := range []struct {
		src  string
		size int // the capacity the literal's object starts with; 0 grows as before
		want string
	}{
		{`({a: 1, b: 'x', c: [1]})`, 3, `{"a":1,"b":"x","c":[1]} a,b,c`},
		{`var b = 2; ({a: 1, b})`, 2, `{"a":1,"b":2} a,b`},
		{`({a: 1, a: 2, get g() { return 3; }, set g(v) {}, m() {}})`, 5, `{"a":2,"g":3} a,g,m`},
		{`({__proto__: null, x: 1})`, 2, `{"x":1} x`},
		{`({a: 1, ['b' + 1]: 2})`, 0, `{"a":1,"b1":2} a,b1`},
		{`({...{a: 1}, b: 2})`, 0, `{"a":1,"b":2} a,b`},
		{`({a:1,b:2,c:3,d:4,e:5,f:6,g:7,h:8,i:9})`, 0, `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9} a,b,c,d,e,f,g,h,i`},
		{`({})`, 0, `{} `},
	} {
		v, err := vm.RunString(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		o := v.(*Object)
		b := o.self.(*baseObject)
		if c.size > 0 && (cap(b.values.small) != c.size || cap(b.propNames) != c.size) {
			t.Errorf("%s: room for %d properties and %d names, want %d", c.src, cap(b.values.small), cap(b.propNames), c.size)
		}
		vm.Set("o", o)
		shape, err := vm.RunString(`JSON.stringify(o) + ' ' + Object.getOwnPropertyNames(o).join()`)
		if err != nil {
			t.Fatal(err)
		}
		if got := shape.String(); got != c.want {
			t.Errorf("%s: %s, want %s", c.src, got, c.want)
		}
	}
}
