package value

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func wireText(t *testing.T, v Value) string {
	t.Helper()
	return string(v.AppendJSON(nil))
}

func TestFromGoSpecialValues(t *testing.T) {
	v, err := FromGo([]any{Undefined(), nil, Hole(), math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, "s", true})
	require.NoError(t, err)
	require.Equal(t, `{"Array":["Undefined","Null","Hole",{"Number":"NaN"},{"Number":"Infinity"},{"Number":"NegInfinity"},{"Number":"NegZero"},{"Number":{"Finite":0.0}},{"String":"s"},{"Bool":true}]}`, wireText(t, v))

	var back any
	require.NoError(t, Decode(v, &back))
	got := back.([]any)
	require.Equal(t, Undefined(), got[0])
	require.Nil(t, got[1])
	require.Equal(t, Hole(), got[2])
	require.True(t, math.IsNaN(got[3].(float64)))
	require.True(t, math.IsInf(got[4].(float64), 1))
	require.True(t, math.IsInf(got[5].(float64), -1))
	require.True(t, math.Signbit(got[6].(float64)), "-0 keeps its sign")
	require.False(t, math.Signbit(got[7].(float64)))

	_, err = FromGo(Hole())
	require.ErrorContains(t, err, "Hole is only valid as an element of an Array")
}

type address struct {
	City string `json:"city"`
	Zip  string `json:"zip,omitempty"`
}

type Meta struct {
	Tags []string `json:"tags"`
}

type person struct {
	Name    string            `json:"name"`
	Age     int               `json:"age"`
	Home    *address          `json:"home"`
	Scores  map[string]uint16 `json:"scores,omitempty"`
	Secret  string            `json:"-"`
	private int
	Meta
	When time.Time `json:"when,omitzero"`
	Raw  Value
}

func TestFromGoAndDecodeStructs(t *testing.T) {
	in := person{Name: "Ada", Age: 36, Home: &address{City: "London"}, Scores: map[string]uint16{"b": 2, "a": 1},
		Secret: "x", private: 7, Meta: Meta{Tags: []string{"x"}}, Raw: Undefined()}
	v, err := FromGo(in)
	require.NoError(t, err)
	require.Equal(t, `{"Object":{"name":{"String":"Ada"},"age":{"Number":{"Finite":36.0}},"home":{"Object":{"city":{"String":"London"}}},"scores":{"Object":{"a":{"Number":{"Finite":1.0}},"b":{"Number":{"Finite":2.0}}}},"tags":{"Array":[{"String":"x"}]},"Raw":"Undefined"}}`, wireText(t, v))

	var out person
	require.NoError(t, Decode(v, &out))
	in.Secret, in.private = "", 0
	require.Equal(t, in, out)

	// Members match names ignoring case, unknown ones are ignored, Null
	// and Undefined clear pointers and leave the rest.
	v = MustFromGo(map[string]any{"NAME": "Bob", "extra": 1, "home": nil, "age": Undefined()})
	out = person{Age: 9, Home: &address{}}
	require.NoError(t, Decode(v, &out))
	require.Equal(t, "Bob", out.Name)
	require.Equal(t, 9, out.Age)
	require.Nil(t, out.Home)

	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	v = MustFromGo(person{When: when})
	require.Contains(t, wireText(t, v), `"when":{"String":"2026-01-02T03:04:05Z"}`)
	out = person{}
	require.NoError(t, Decode(v, &out))
	require.True(t, when.Equal(out.When))
}

func TestDecodeRefusesWhatDoesNotFit(t *testing.T) {
	cases := []struct {
		v    Value
		dst  any
		want string
	}{
		{Number(1.5), new(int), "value: cannot decode Number 1.5 into Go int"},
		{Number(300), new(uint8), "value: cannot decode Number 300 into Go uint8"},
		{Number(-1), new(uint), "value: cannot decode Number -1 into Go uint"},
		{Number(math.NaN()), new(int64), "value: cannot decode Number NaN into Go int64"},
		{String("x"), new(bool), "value: cannot decode String into Go bool"},
		{MustFromGo([]any{1, "x"}), new([]int), "value[1]: cannot decode String into Go int"},
		{MustFromGo(map[string]any{"home": map[string]any{"city": 3}}), new(person), "value.home.city: cannot decode Number 3 into Go string"},
		{Number(math.NaN()), new(time.Time), "value: Number NaN has no plain JSON form"},
	}
	for _, tc := range cases {
		err := Decode(tc.v, tc.dst)
		require.EqualError(t, err, tc.want)
	}
	require.Error(t, Decode(Null(), nil))
}

func TestFromGoRefusesWhatCannotCross(t *testing.T) {
	type node struct{ Next *node }
	loop := &node{}
	loop.Next = loop
	cases := []struct {
		x    any
		want string
	}{
		{int64(1 << 53), "integer 9007199254740992 is beyond"},
		{uint64(math.MaxUint64), "is beyond 2^53-1"},
		{make(chan int), "a Go chan int cannot cross"},
		{map[bool]int{true: 1}, "a Go map with bool keys cannot cross"},
		{loop, "nesting limit exceeded"},
		{"\xff", "invalid StructuredValue"},
	}
	for _, tc := range cases {
		_, err := FromGo(tc.x)
		require.ErrorContains(t, err, tc.want, "%T", tc.x)
	}
	v, err := FromGo(int64(-(1<<53 - 1)))
	require.NoError(t, err)
	require.Equal(t, float64(-(1<<53 - 1)), v.Num)
}

func TestPlainJSONKeepsOrder(t *testing.T) {
	v, err := FromPlainJSON([]byte(`{"z":1,"a":[true,null,"s",1e400],"m":{"k":-0}, "z":2}`))
	require.NoError(t, err)
	require.Equal(t, `{"Object":{"z":{"Number":{"Finite":2.0}},"a":{"Array":[{"Bool":true},"Null",{"String":"s"},{"Number":"Infinity"}]},"m":{"Object":{"k":{"Number":"NegZero"}}}}}`, wireText(t, v))
	_, err = FromPlainJSON([]byte(`{} {}`))
	require.ErrorContains(t, err, "data after the value")
	_, err = FromPlainJSON([]byte(strings.Repeat("[", 200) + strings.Repeat("]", 200)))
	require.ErrorContains(t, err, "nesting limit")

	b, err := ToPlainJSON(MustFromGo(map[string]any{"b": []any{1.5, -0.0, "é"}, "a": nil}))
	require.NoError(t, err)
	require.Equal(t, `{"a":null,"b":[1.5,0,"é"]}`, string(b))
	_, err = ToPlainJSON(MustFromGo([]any{Undefined()}))
	require.ErrorContains(t, err, "Undefined has no plain JSON form")
}

// Numbers are written as JSON.stringify writes them (Node 20).
func TestToPlainJSONNumbersAsJavaScript(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{
		{math.Pow(2, 52), "4503599627370496"}, {1e21, "1e+21"}, {1e-7, "1e-7"}, {0.1, "0.1"},
		{123.456, "123.456"}, {-1e300, "-1e+300"}, {1e-6, "0.000001"}, {5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e+308"}, {math.Copysign(0, -1), "0"}, {100, "100"},
		{1e20, "100000000000000000000"}, {123456789012345680000, "123456789012345680000"},
	} {
		b, err := ToPlainJSON(Number(c.f))
		require.NoError(t, err)
		require.Equal(t, c.want, string(b), "%v", c.f)
	}
}
