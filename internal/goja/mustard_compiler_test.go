package goja

import "testing"

// An optional chain that short-circuits inside a call with spread
// arguments leaves nothing of the call on the stack.
func TestMustardOptionalCallWithSpread(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`const v=[2]; let o=null; JSON.stringify([o?.(...v)])`, `[null]`},
		{`const v=[2]; let o=null; typeof ({a: o?.(...v)}).a`, `undefined`},
		{`const v=[2]; let o=null; String(o?.(...v))`, `undefined`},
		{`const v=[2]; const o={f(x){return x+1}}; JSON.stringify([o.g?.(...v), o.f?.(...v), o?.f(...v), o?.g?.(...v)?.x, o?.f(...v).toString()])`, `[null,3,3,null,"3"]`},
		{`let a=null; JSON.stringify([a?.b(...[1]).c.d, 1])`, `[null,1]`},
		{`let a=null; String(delete a?.(...[1]))`, `true`},
		{`let n=0; const f=()=>n++; let o=null; o?.(...[f()]); String(n)`, `0`},
		{`function g(...xs){ return xs.length } String([null, {g}].map(o => o?.g(...[1, 2])).join())`, `,2`},
	} {
		v, err := New().RunString(c.src)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if v.String() != c.want {
			t.Errorf("%s = %s, want %s", c.src, v, c.want)
		}
	}
}
