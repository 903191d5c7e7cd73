package value

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEqual(t *testing.T) {
	negZero := math.Copysign(0, -1)
	nan := math.NaN()
	otherNaN := math.Float64frombits(0x7ff0000000000001)
	tests := []struct {
		name string
		a, b Value
		want bool
	}{
		{"undefined", Undefined(), Undefined(), true},
		{"null", Null(), Null(), true},
		{"hole", Hole(), Hole(), true},
		{"undefined vs null", Undefined(), Null(), false},
		{"null vs hole", Null(), Hole(), false},
		{"bool same", Bool(true), Bool(true), true},
		{"bool differs", Bool(true), Bool(false), false},
		{"bool vs number", Bool(false), Number(0), false},
		{"string same", String("a\xed\xa0\x80"), String("a\xed\xa0\x80"), true},
		{"string differs", String("a"), String("b"), false},
		{"empty string vs undefined", String(""), Undefined(), false},
		{"number same", Number(1.5), Number(1.5), true},
		{"number differs", Number(1), Number(2), false},
		{"NaN equals NaN", Number(nan), Number(nan), true},
		{"NaN payloads equal", Number(nan), Number(otherNaN), true},
		{"NaN vs number", Number(nan), Number(0), false},
		{"+0 vs -0", Number(0), Number(negZero), false},
		{"-0 vs -0", Number(negZero), Number(negZero), true},
		{"+Inf", Number(math.Inf(1)), Number(math.Inf(1)), true},
		{"+Inf vs -Inf", Number(math.Inf(1)), Number(math.Inf(-1)), false},
		{"unused fields ignored", Value{Kind: KindNull, Str: "x", Num: 3}, Null(), true},
		{"unused bool ignored on number", Value{Kind: KindNumber, Num: 1, Bool: true}, Number(1), true},
		{"empty arrays", Array(), Value{Kind: KindArray, Elems: []Value{}}, true},
		{"arrays", Array(Number(1), Hole(), String("x")), Array(Number(1), Hole(), String("x")), true},
		{"array element differs", Array(Number(1), Hole()), Array(Number(1), Undefined()), false},
		{"array length differs", Array(Number(1)), Array(Number(1), Number(1)), false},
		{"array of -0", Array(Number(negZero)), Array(Number(0)), false},
		{"array vs object", Array(), Object(), false},
		{"objects", Object(M("a", Null()), M("b", Bool(true))), Object(M("a", Null()), M("b", Bool(true))), true},
		{"member order matters", Object(M("a", Null()), M("b", Null())), Object(M("b", Null()), M("a", Null())), false},
		{"member key differs", Object(M("a", Null())), Object(M("A", Null())), false},
		{"member value differs", Object(M("a", Null())), Object(M("a", Undefined())), false},
		{"member count differs", Object(M("a", Null())), Object(), false},
		{"nested", Object(M("x", Array(Object(M("y", Number(nan)))))), Object(M("x", Array(Object(M("y", Number(nan)))))), true},
		{"nested differs", Object(M("x", Array(Object(M("y", Number(1)))))), Object(M("x", Array(Object(M("y", Number(2)))))), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Equal(tc.a, tc.b))
			assert.Equal(t, tc.want, Equal(tc.b, tc.a), "symmetric")
		})
	}
}
