package value

import (
	"math"
	"strings"
)

type namedValue struct {
	name string
	v    Value
}

// sampleValues covers every kind, the number edge cases and awkward
// strings; every one of them is valid.
func sampleValues() []namedValue {
	return []namedValue{
		{"undefined", Undefined()},
		{"null", Null()},
		{"true", Bool(true)},
		{"false", Bool(false)},
		{"empty string", String("")},
		{"ascii", String("hello")},
		{"escapes", String("\"\\/\b\f\n\r\t\x00\x1f\x7f")},
		{"unicode", String("héllo € 😀 \u2028 \uFFFD \U0010FFFF")},
		{"lone surrogates", String("\xed\xa0\x80 \xed\xbf\xbf \xed\xb0\x80\xed\xa0\x80 \xed\xa0\xbd😀")},
		{"long string", String(strings.Repeat("abcé", 100))},
		{"zero", Number(0)},
		{"negative zero", Number(math.Copysign(0, -1))},
		{"integer", Number(6)},
		{"negative", Number(-42.125)},
		{"fraction", Number(0.1)},
		{"big", Number(1e300)},
		{"max safe integer", Number(9007199254740991)},
		{"max", Number(math.MaxFloat64)},
		{"denormal", Number(5e-324)},
		{"NaN", Number(math.NaN())},
		{"Infinity", Number(math.Inf(1))},
		{"NegInfinity", Number(math.Inf(-1))},
		{"empty array", Array()},
		{"array with holes", Array(Hole(), Number(1), Hole(), Hole())},
		{"empty object", Object()},
		{"object", Object(M("z", Null()), M("a", Undefined()), M("", String("")), M("\xed\xa0\x80", Bool(false)))},
		{"nested", Object(M("list", Array(Object(M("x", Array(Array(), Object()))), Hole())), M("n", Number(1)))},
		{"max depth arrays", nestValue(MaxDepth, false)},
		{"max depth objects", nestValue(MaxDepth, true)},
		{"many members", manyMembers(100)},
		{"realistic", realisticValue()},
	}
}

func manyMembers(n int) Value {
	ms := make([]Member, n)
	for i := range ms {
		ms[i] = M(strings.Repeat("k", i), Number(float64(i)))
	}
	return Object(ms...)
}

// realisticValue resembles a capability result: an object of about twenty
// members with nested arrays and strings.
func realisticValue() Value {
	row := func(id int, name, email string, tags ...string) Value {
		ts := make([]Value, len(tags))
		for i, t := range tags {
			ts[i] = String(t)
		}
		return Object(
			M("id", Number(float64(id))),
			M("name", String(name)),
			M("email", String(email)),
			M("active", Bool(id%2 == 0)),
			M("score", Number(float64(id)*1.25)),
			M("tags", Array(ts...)),
		)
	}
	return Object(
		M("requestId", String("9f1c2a7e-3b4d-4e5f-8a9b-0c1d2e3f4a5b")),
		M("status", String("ok")),
		M("code", Number(200)),
		M("elapsedMs", Number(12.75)),
		M("cached", Bool(false)),
		M("next", Null()),
		M("cursor", Undefined()),
		M("total", Number(3)),
		M("page", Number(1)),
		M("pageSize", Number(50)),
		M("region", String("eu-west-1")),
		M("message", String("Résultats trouvés — 3 éléments ✓")),
		M("rows", Array(
			row(1, "Ada Lovelace", "ada@example.com", "admin", "math"),
			row(2, "Alan Turing", "alan@example.com", "crypto"),
			row(3, "Grace Hopper", "grace@example.com", "navy", "cobol", "compilers"),
		)),
		M("matrix", Array(
			Array(Number(1), Number(0), Number(0)),
			Array(Number(0), Number(1), Number(0)),
			Array(Number(0), Number(0), Number(1)),
		)),
		M("sparse", Array(Number(1), Hole(), Number(3))),
		M("ratio", Number(0.3333333333333333)),
		M("limits", Object(M("min", Number(math.Inf(-1))), M("max", Number(math.Inf(1))))),
		M("flags", Array(Bool(true), Bool(false), Bool(true))),
		M("note", String("line one\nline \"two\"\ttabbed")),
		M("emoji", String("👍🏽 done")),
	)
}
