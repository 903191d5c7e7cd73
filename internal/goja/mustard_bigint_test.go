package goja

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/parser"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// Results V8 gives, which upstream got wrong or took unbounded memory for.
func TestBigIntShiftsAndSizes(t *testing.T) {
	r := New()
	for src, want := range map[string]string{
		`5n >> 2n**64n`:                                 "0",
		`-5n >> 2n**64n`:                                "-1",
		`5n << -(2n**64n)`:                              "0",
		`0n << 2n**64n`:                                 "0",
		`(1n << 100n) >> 99n`:                           "2",
		`-(2n**70n) >> 3n`:                              "-147573952589676412928",
		`BigInt.asIntN(2**31, 5n)`:                      "5",
		`BigInt.asIntN(2**31, -5n)`:                     "-5",
		`BigInt.asUintN(2**31, 5n)`:                     "5",
		`BigInt.asIntN(8, 255n)`:                        "-1",
		`BigInt.asUintN(8, -1n)`:                        "255",
		`BigInt.asIntN(0, 5n)`:                          "0",
		`BigInt.asIntN(3, 4n)`:                          "-4",
		`BigInt.asIntN(3, -4n)`:                         "-4",
		`(-1n) ** (2n**64n + 1n)`:                       "-1",
		`1n ** (2n**64n)`:                               "1",
		`3n ** 5n * 2n`:                                 "486",
		`(7n ** 3n) / 2n`:                               "171",
		`BigInt('123456789012345678901234567890') + 1n`: "123456789012345678901234567891",
	} {
		v, err := r.RunString(src)
		if err != nil || v.String() != want {
			t.Errorf("%s: %v %v, want %s", src, v, err, want)
		}
	}
	for _, src := range []string{
		`1n << (2n**64n + 5n)`,
		`1n << (2n**31n)`,
		`2n ** (2n**64n)`,
		`2n ** (2n**31n)`,
		`BigInt.asUintN(2**40, -1n)`,
	} {
		_, err := r.RunString(`try { ` + src + `; 'no error' } catch (e) { throw e }`)
		var ex *Exception
		if !errors.As(err, &ex) || !strings.Contains(ex.Error(), "RangeError: Maximum BigInt size exceeded") {
			t.Errorf("%s: %v, want RangeError: Maximum BigInt size exceeded", src, err)
		}
	}
}

// Every expensive BigInt operation is charged before it runs: a Meter
// that refuses the work stops it before any time or memory is spent.
func TestBigIntWorkChargedBeforeItRuns(t *testing.T) {
	for i, src := range []string{
		`BigInt('1'.repeat(2e6))`,
		`3n ** BigInt(1e8)`,
		`let x = 1n << 2000000n; x * x`,
		`let x = 1n << 2000000n; (x * x) / 3n`,
		`(1n << 4000000n).toString()`,
		`BigInt.asUintN(2**29, -1n)`,
		// Implicit conversions and comparisons, in loops.
		`const x = 7n ** 300000n; for (;;) '' + x`,
		"const x = 7n ** 300000n; for (;;) `${x}`",
		`const x = 7n ** 300000n; for (;;) String(x)`,
		`const x = 7n ** 300000n, o = {}; for (;;) o[x]`,
		`const x = 7n ** 300000n; for (;;) [x].join()`,
		`const x = 7n ** 300000n, s = String(x); for (;;) x == s`,
		`const x = 7n ** 300000n, s = String(x); for (;;) x < s`,
		`const x = 7n ** 300000n; for (;;) x % 7n`,
		`const x = 7n ** 300000n; for (;;) -x`,
		`const x = 7n ** 300000n, y = x + 1n; for (;;) x < y`,
		`const x = 7n ** 300000n, m = new Map(); for (;;) m.get(x)`,
		// Property keys given to built-ins, and String.raw.
		`const x = 7n ** 300000n, o = {}; for (;;) x in o`,
		`const x = 7n ** 300000n, o = {}; for (;;) o.hasOwnProperty(x)`,
		`const x = 7n ** 300000n, o = {}; for (;;) o.propertyIsEnumerable(x)`,
		`const x = 7n ** 300000n, o = {}; for (;;) Object.getOwnPropertyDescriptor(o, x)`,
		`const x = 7n ** 300000n, o = {}; for (;;) Reflect.has(o, x)`,
		`const x = 7n ** 300000n, o = {}; for (;;) Reflect.get(o, x)`,
		`const x = 7n ** 300000n; for (;;) Object.fromEntries([[x, 1]])`,
		`const x = 7n ** 300000n; for (;;) String.raw({raw: ['', '']}, x)`,
		`const x = 7n ** 300000n; for (;;) String.raw({raw: [x, '']})`,
	} {
		if !longtest.Sampled(i) {
			continue
		}
		r, m := newStrMetered()
		r.MustardMeterOperands(true)
		m.maxWork = 10_000_000
		m.maxAlloc = 8 << 20
		began := time.Now()
		_, err := r.RunString(src)
		var ie *InterruptedError
		if !errors.As(err, &ie) {
			t.Errorf("%s: %v, want an interrupt", src, err)
			continue
		}
		if d := time.Since(began); d > hangBound(5*time.Second) {
			t.Errorf("%s: %v before the interrupt", src, d)
		}
	}
	// Small BigInts cost next to nothing.
	r, m := newStrMetered()
	r.MustardMeterOperands(true)
	if _, err := r.RunString(`let s = 0n; for (let i = 0n; i < 1000n; i++) s += i * i; s`); err != nil {
		t.Fatal(err)
	}
	if m.work > 1000*64 {
		t.Fatalf("a thousand small operations charged %d units", m.work)
	}
}

// BigInt keys given to built-ins, and String.raw's substitutions, are
// converted as V8 converts them.
func TestBigIntKeysOfBuiltins(t *testing.T) {
	v, err := New().RunString(`const o = {5: 1}; JSON.stringify([5n in o, 6n in o, o.hasOwnProperty(5n), o.propertyIsEnumerable(5n),
		Object.getOwnPropertyDescriptor(o, 5n).value, Reflect.has(o, 5n), Reflect.get(o, 5n), Reflect.set(o, 7n, 2), o[7],
		Reflect.deleteProperty(o, 7n), Object.keys(Object.defineProperty({}, 9n, {value: 1, enumerable: true})),
		Object.fromEntries([[2n ** 64n, 1]]), String.raw({raw: ['a', 'b', 'c']}, 5n, -(2n ** 70n)), String.raw({raw: [5n, 6n]}, 0)])`)
	want := `[true,false,true,true,1,true,1,true,2,true,["9"],{"18446744073709551616":1},"a5b-1180591620717411303424c","506"]`
	if err != nil || v.String() != want {
		t.Fatalf("%v %v, want %s", v, err, want)
	}
}

// Metered compilation folds no BigInt constant: compiling stays cheap
// whatever the expression, and nothing folded stays in the program.
func TestMeteredCompileFoldsNoBigInt(t *testing.T) {
	for _, src := range []string{
		`function f() { return 7n ** 7n ** 9n } 1`,
		`if (false) { 1n << (2n ** 31n) } 1`,
		`const x = 2n ** 2n ** 24n; 1`,
	} {
		prg, err := parser.ParseFile(nil, "", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		if _, err := MustardCompile(prg, true, MustardCompileOptions{Metered: true}); err != nil {
			t.Fatal(src, err)
		}
		if d := time.Since(began); d > time.Second {
			t.Errorf("%s: compiled in %v", src, d)
		}
	}
	// Folding without metering is upstream's, and gives the same values.
	v, err := New().RunString(`-(2n ** 10n) + 1n`)
	if err != nil || v.String() != "-1023" {
		t.Fatal(v, err)
	}
}

// StringToBigInt as the specification and V8 have it: upstream handed a
// number past an int64 to SetString, which accepted separators and made 0
// of a trailing letter.
func TestStringToBigIntIsTheSpecifications(t *testing.T) {
	r := New()
	v, err := r.RunString(`
const t = (f) => { try { return String(f()) } catch (e) { return e.name } };
const L = "1".repeat(30);
[
 t(() => BigInt(L + "x")), t(() => BigInt(L + "_1")), t(() => BigInt("1_0")), t(() => BigInt(" 12 ")), t(() => BigInt("+12")),
 t(() => BigInt("-0")), t(() => BigInt("0x")), t(() => BigInt("-0x10")), t(() => BigInt("0X1F")), t(() => BigInt("0b102")),
 t(() => BigInt("")), t(() => BigInt("  \n ")), t(() => BigInt("0o17")), t(() => BigInt("1e3")), t(() => BigInt("12.0")),
 t(() => 10n == "1_0"), t(() => 10n == " 10 "), t(() => 10n < "0x10"), t(() => 10n < "zz"), t(() => 10n > "zz"),
 t(() => 10n == L + "x"), t(() => BigInt(L) == L), t(() => BigInt(L) < L + "1"), t(() => ({[10n]: 1})["10"]),
].join(" | ")`)
	if err != nil {
		t.Fatal(err)
	}
	// node -e (Node 20), the same program
	want := "SyntaxError | SyntaxError | SyntaxError | 12 | 12 | 0 | SyntaxError | SyntaxError | 31 | SyntaxError | 0 | 0 | 15 | SyntaxError | SyntaxError | false | true | true | false | false | false | true | true | 1"
	if v.String() != want {
		t.Errorf("got  %s\nwant %s", v, want)
	}
}
