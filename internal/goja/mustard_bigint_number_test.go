package goja

import (
	"errors"
	"strings"
	"testing"
)

// BigInt to Number: V8's answers (node 20), rounding to nearest, ties to
// even, past 2^53 and up to overflow.
func TestBigIntToNumberMatchesV8(t *testing.T) {
	r := New()
	for _, c := range []struct{ src, want string }{
		{"Number(2n**64n)", "18446744073709552000"},
		{"Number(2n**53n + 1n)", "9007199254740992"},
		{"Number(2n**53n + 3n)", "9007199254740996"},
		{"Number(-(2n**1024n))", "-Infinity"},
		{"Number(2n**1024n - 1n)", "Infinity"},
		{"Number(2n**1024n - 2n**970n)", "Infinity"},
		{"Number(2n**1024n - 2n**970n - 1n)", "1.7976931348623157e+308"},
		{"Number(2n**1024n - 2n**971n)", "1.7976931348623157e+308"},
		{"Number((2n**53n+3n) * 2n**100n)", "1.1417981541647684e+46"},
		{"Number((2n**53n+1n) * 2n**100n + 1n)", "1.1417981541647682e+46"},
		{"Number(-(2n**63n))", "-9223372036854776000"},
		{"Number(2n**63n - 1n)", "9223372036854776000"},
		{"Number(-(2n**63n) - 1n)", "-9223372036854776000"},
		{"Number(12345678901234567890123n)", "1.2345678901234568e+22"},
		{"Number(-12345678901234567890123n)", "-1.2345678901234568e+22"},
		{"Number(0n)", "0"},
		{"Number(-0n)", "0"},
		{"Object.is(Number(-0n), -0)", "false"},
		{"Number(Object(2n**64n))", "18446744073709552000"},
		{"new Number(2n**64n).valueOf()", "18446744073709552000"},
		{"2n**64n > 1e19", "true"},
		{"2n**64n > 18446744073709552000", "false"},
		{"2n**64n < 18446744073709552000", "false"},
		{"2n**64n == 18446744073709552000", "true"},
		{"2n**64n == 18446744073709551616", "true"},
		{"2n**64n + 1n == 18446744073709551616", "false"},
		{"2n**64n + 1n > 18446744073709551616", "true"},
		{"1n < 1.5", "true"},
		{"2n > 1.5", "true"},
		{"-2n < -1.5", "true"},
		{"-1n < -1.5", "false"},
		{"2n**64n+1n == true", "false"},
		{"1n == true", "true"},
		{"2n**64n < Infinity", "true"},
		{"-(2n**2000n) > -Infinity", "true"},
		{"2n**2000n < 1e308", "false"},
		{"(2n**64n + 1n) <= 18446744073709551616.0", "false"},
		{"BigInt.asIntN(64, 2n**64n + 5n)", "5n"},
		{"BigInt.asIntN(64, 2n**63n)", "-9223372036854775808n"},
		{"BigInt.asUintN(64, -1n)", "18446744073709551615n"},
		{"parseFloat(String(2n**64n))", "18446744073709552000"},
		{"String(Number(2n**70n))", "1.1805916207174113e+21"},
	} {
		v, err := r.RunString(`(() => { const r = (` + c.src + `); return typeof r === 'bigint' ? r + 'n' : String(r) })()`)
		if err != nil || v.String() != c.want {
			t.Errorf("%s: %v %v, want %s", c.src, v, err, c.want)
		}
	}
	for _, src := range []string{"+(2n**64n)", "Math.abs(2n**64n)", "isNaN(1n)", "new Float64Array([1n])", "Math.max(1n)"} {
		_, err := r.RunString(src)
		var ex *Exception
		if !errors.As(err, &ex) || !strings.Contains(ex.Error(), "TypeError: Cannot convert a BigInt value to a number") {
			t.Errorf("%s: %v, want TypeError: Cannot convert a BigInt value to a number", src, err)
		}
	}
}

// Comparing a BigInt with a double, both ways round, against comparing
// exact rationals.
func TestBigCmpFloat(t *testing.T) {
	r := New()
	for _, c := range []struct{ src, want string }{
		{"[1n < 1.5, 1n > 1.5, 2n > 1.5, 2n < 1.5, 1.5 < 2n, 1.5 > 1n, 1.5 < 1n]", "true,false,true,false,true,true,false"},
		{"[-1n < -1.5, -2n < -1.5, -1.5 < -1n, -1.5 > -2n, 0n < 0.5, 0n > -0.5, -0.5 < 0n]", "false,true,true,true,true,true,true"},
		{"[2n**2000n < Infinity, -(2n**2000n) > -Infinity, Infinity > 2n**2000n, -Infinity < -(2n**2000n), 2n**2000n > Infinity]", "true,true,true,true,false"},
		{"[1n < NaN, NaN < 1n, 1n >= NaN, NaN >= 1n]", "false,false,false,false"},
		{"[2n**64n <= 18446744073709551616, 2n**64n >= 18446744073709551616, 2n**64n+1n <= 18446744073709551616, 2n**64n-1n < 18446744073709551616]", "true,true,false,true"},
	} {
		v, err := r.RunString(c.src + ".join()")
		if err != nil || v.String() != c.want {
			t.Errorf("%s: %v %v, want %s", c.src, v, err, c.want)
		}
	}
}
