package value

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var negZero = math.Copysign(0, -1)

func TestAppendJSON(t *testing.T) {
	tests := []struct {
		name string
		v    Value
		want string
	}{
		{"undefined", Undefined(), `"Undefined"`},
		{"null", Null(), `"Null"`},
		{"hole", Hole(), `"Hole"`},
		{"true", Bool(true), `{"Bool":true}`},
		{"false", Bool(false), `{"Bool":false}`},
		{"empty string", String(""), `{"String":""}`},
		{"string", String("héllo 😀"), `{"String":"héllo 😀"}`},
		{"string escapes", String("q\"b\\s/\n\r\t\b\f\x00\x1f\x7f"), `{"String":"q\"b\\s/\n\r\t\u0008\u000c\u0000\u001f` + "\x7f" + `"}`},
		{"line separators kept", String("\u2028\u2029"), "{\"String\":\"\u2028\u2029\"}"},
		{"lone high surrogate", String("a\xed\xa0\xbdb"), `{"String":"a\ud83db"}`},
		{"lone low surrogate", String("\xed\xbf\xbf"), `{"String":"\udfff"}`},
		{"invalid byte", String("a\xffb"), `{"String":"a\ufffdb"}`},
		{"U+FFFD kept raw", String("\uFFFD"), "{\"String\":\"\uFFFD\"}"},
		{"integral number", Number(6), `{"Number":{"Finite":6.0}}`},
		{"zero", Number(0), `{"Number":{"Finite":0.0}}`},
		{"negative", Number(-2.5), `{"Number":{"Finite":-2.5}}`},
		{"fraction", Number(0.1), `{"Number":{"Finite":0.1}}`},
		{"large", Number(1e21), `{"Number":{"Finite":1e21}}`},
		{"tiny", Number(5e-324), `{"Number":{"Finite":5e-324}}`},
		{"max", Number(math.MaxFloat64), `{"Number":{"Finite":1.7976931348623157e308}}`},
		{"NaN", Number(math.NaN()), `{"Number":"NaN"}`},
		{"Infinity", Number(math.Inf(1)), `{"Number":"Infinity"}`},
		{"NegInfinity", Number(math.Inf(-1)), `{"Number":"NegInfinity"}`},
		{"NegZero", Number(negZero), `{"Number":"NegZero"}`},
		{"empty array", Array(), `{"Array":[]}`},
		{"array", Array(Number(1), Hole(), Null()), `{"Array":[{"Number":{"Finite":1.0}},"Hole","Null"]}`},
		{"empty object", Object(), `{"Object":{}}`},
		{"object order kept", Object(M("z", Null()), M("a", Bool(true)), M("", Undefined())),
			`{"Object":{"z":"Null","a":{"Bool":true},"":"Undefined"}}`},
		{"object key escaped", Object(M("k\"\xed\xa0\x80", Null())), `{"Object":{"k\"\ud800":"Null"}}`},
		{"nested", Object(M("a", Array(Array(), Object(M("b", String("c")))))),
			`{"Object":{"a":{"Array":[{"Array":[]},{"Object":{"b":{"String":"c"}}}]}}}`},
		{"unknown kind", Value{Kind: 99}, `null`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, string(tc.v.AppendJSON(nil)))
			assert.Equal(t, "prefix"+tc.want, string(tc.v.AppendJSON([]byte("prefix"))))
		})
	}
}

func TestAppendFinite(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0.0"},
		{negZero, "-0.0"},
		{1, "1.0"},
		{-1, "-1.0"},
		{6, "6.0"},
		{10, "10.0"},
		{100, "100.0"},
		{1.5, "1.5"},
		{123.456, "123.456"},
		{0.1, "0.1"},
		{0.001234, "0.001234"},
		{1e-5, "0.00001"},
		{1.5e-5, "0.000015"},
		{1e-6, "1e-6"},
		{1.5e-7, "1.5e-7"},
		{1e15, "1000000000000000.0"},
		{123456789012345680, "1.2345678901234568e17"},
		{9007199254740992, "9007199254740992.0"},
		{1e16, "1e16"},
		{1.2345e16, "1.2345e16"},
		{1e21, "1e21"},
		{1e100, "1e100"},
		{-1.5e300, "-1.5e300"},
		{math.MaxFloat64, "1.7976931348623157e308"},
		{math.SmallestNonzeroFloat64, "5e-324"},
		{2.2250738585072014e-308, "2.2250738585072014e-308"},
		{1234.5e10, "12345000000000.0"},
	}
	for _, tc := range tests {
		got := string(appendFinite(nil, tc.f))
		assert.Equal(t, tc.want, got, "%v", tc.f)
		back, err := strconv.ParseFloat(got, 64)
		require.NoError(t, err)
		assert.Equal(t, math.Float64bits(tc.f), math.Float64bits(back))
	}
}

func TestAppendFiniteRoundTripsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		s := appendFinite(nil, f)
		back, err := strconv.ParseFloat(string(s), 64)
		require.NoError(t, err, "%s", s)
		require.Equal(t, math.Float64bits(f), math.Float64bits(back), "%s", s)
		require.True(t, json.Valid(s), "%s", s)
	}
}

func TestParseJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Value
	}{
		{"undefined", `"Undefined"`, Undefined()},
		{"null", `"Null"`, Null()},
		{"undefined map form", `{"Undefined":null}`, Undefined()},
		{"null map form", `{"Null":null}`, Null()},
		{"hole map form in array", `{"Array":[{"Hole":null}]}`, Array(Hole())},
		{"hole in array", `{"Array":["Hole","Hole"]}`, Array(Hole(), Hole())},
		{"true", `{"Bool":true}`, Bool(true)},
		{"false", `{"Bool":false}`, Bool(false)},
		{"string", `{"String":"hi"}`, String("hi")},
		{"string utf8", `{"String":"héllo 😀"}`, String("héllo 😀")},
		{"string escapes", `{"String":"\"\\\/\b\f\n\r\t\u0000\u00e9\u20AC"}`, String("\"\\/\b\f\n\r\t\x00é€")},
		{"escaped pair", `{"String":"\ud83d\ude00"}`, String("😀")},
		{"escaped pair upper hex", `{"String":"\uD83D\uDE00"}`, String("😀")},
		{"lone high", `{"String":"\ud800"}`, String("\xed\xa0\x80")},
		{"lone high at end with text", `{"String":"a\uD83Db"}`, String("a\xed\xa0\xbdb")},
		{"lone low", `{"String":"\udc00x"}`, String("\xed\xb0\x80x")},
		{"low then high", `{"String":"\udc00\ud800"}`, String("\xed\xb0\x80\xed\xa0\x80")},
		{"high then non-surrogate escape", `{"String":"\ud800\u0041"}`, String("\xed\xa0\x80A")},
		{"high high low", `{"String":"\ud800\ud83d\ude00"}`, String("\xed\xa0\x80😀")},
		{"escaped U+FFFD stays", `{"String":"\ufffd"}`, String("\uFFFD")},
		{"integral", `{"Number":{"Finite":6}}`, Number(6)},
		{"integral with .0", `{"Number":{"Finite":6.0}}`, Number(6)},
		{"exponent", `{"Number":{"Finite":-1.5E+3}}`, Number(-1500)},
		{"exponent lower", `{"Number":{"Finite":2e-3}}`, Number(0.002)},
		{"finite negative zero", `{"Number":{"Finite":-0.0}}`, Number(negZero)},
		{"finite negative zero int", `{"Number":{"Finite":-0}}`, Number(negZero)},
		{"underflow to zero", `{"Number":{"Finite":1e-400}}`, Number(0)},
		{"NaN", `{"Number":"NaN"}`, Number(math.NaN())},
		{"Infinity", `{"Number":"Infinity"}`, Number(math.Inf(1))},
		{"NegInfinity", `{"Number":"NegInfinity"}`, Number(math.Inf(-1))},
		{"NegZero", `{"Number":"NegZero"}`, Number(negZero)},
		{"empty array", `{"Array":[]}`, Array()},
		{"empty object", `{"Object":{}}`, Object()},
		{"object order", `{"Object":{"b":"Null","a":"Undefined","":{"Bool":true}}}`,
			Object(M("b", Null()), M("a", Undefined()), M("", Bool(true)))},
		{"object escaped key", `{"Object":{"\ud800k":"Null"}}`, Object(M("\xed\xa0\x80k", Null()))},
		{"keys differing only by escape spelling", `{"Object":{"a":"Null","\u0062":"Null"}}`, Object(M("a", Null()), M("b", Null()))},
		{"whitespace everywhere", " \t\r\n{ \"Object\" : { \"a\" : { \"Array\" : [ \"Null\" , { \"Number\" : { \"Finite\" : 1 } } ] } } } \n",
			Object(M("a", Array(Null(), Number(1))))},
		{"escaped variant name", `{"\u0042ool":true}`, Bool(true)},
		{"nested", `{"Object":{"a":{"Array":[{"Array":[]},{"Object":{"b":{"String":"c"}}}]}}}`,
			Object(M("a", Array(Array(), Object(M("b", String("c"))))))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseJSON([]byte(tc.in))
			require.NoError(t, err)
			checkTranscode(t, []byte(tc.in), got, err)
			assert.True(t, Equal(tc.want, got), "got %#v", got)
			assert.NoError(t, got.Validate())
		})
	}
}

func TestParseJSONErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"empty", ``, "expected a StructuredValue, found end of input"},
		{"only whitespace", `  `, "found end of input"},
		{"bare null", `null`, "expected a StructuredValue"},
		{"bare number", `1`, "expected a StructuredValue"},
		{"bare array", `[]`, "expected a StructuredValue"},
		{"unknown variant", `"Foo"`, `invalid StructuredValue: unknown variant "Foo"`},
		{"unknown map variant", `{"Foo":1}`, `invalid StructuredValue: unknown variant "Foo"`},
		{"variant case matters", `"null"`, `unknown variant "null"`},
		{"long unknown variant is cut", `"` + strings.Repeat("x", 1000) + `"`, `unknown variant "xxxxxxxx`},
		{"content variant as string", `"Bool"`, `variant "Bool" requires content`},
		{"hole at top", `"Hole"`, "Hole is only valid as an element of an Array"},
		{"hole map form at top", `{"Hole":null}`, "Hole is only valid as an element of an Array"},
		{"hole as member", `{"Object":{"a":"Hole"}}`, "Hole is only valid as an element of an Array"},
		{"hole in nested object", `{"Array":[{"Object":{"a":"Hole"}}]}`, "Hole is only valid"},
		{"unit with content", `{"Null":1}`, `variant "Null" takes no content, expected null`},
		{"unit with object", `{"Undefined":{}}`, `variant "Undefined" takes no content`},
		{"empty variant object", `{}`, "a variant object must have exactly one key"},
		{"two variant keys", `{"Null":null,"Undefined":null}`, "a variant object must have exactly one key"},
		{"repeated variant key", `{"Bool":true,"Bool":false}`, "a variant object must have exactly one key"},
		{"bool wrong type", `{"Bool":1}`, "Bool must be true or false"},
		{"bool string", `{"Bool":"true"}`, "Bool must be true or false"},
		{"string wrong type", `{"String":1}`, "String must be a JSON string"},
		{"number bare", `{"Number":1}`, `Number must be "NaN"`},
		{"number unknown name", `{"Number":"Inf"}`, `unknown Number variant "Inf"`},
		{"number unknown object", `{"Number":{"Int":1}}`, `unknown Number variant "Int"`},
		{"number empty object", `{"Number":{}}`, `Number must be "NaN"`},
		{"finite string", `{"Number":{"Finite":"1"}}`, "Finite must be a JSON number"},
		{"finite NaN", `{"Number":{"Finite":NaN}}`, "Finite must be a JSON number"},
		{"finite extra key", `{"Number":{"Finite":1,"x":2}}`, `Number must be "NaN"`},
		{"finite leading zero", `{"Number":{"Finite":01}}`, "expected '}'"},
		{"finite leading plus", `{"Number":{"Finite":+1}}`, "Finite must be a JSON number"},
		{"finite bare dot", `{"Number":{"Finite":1.}}`, "expected a digit"},
		{"finite dot first", `{"Number":{"Finite":.5}}`, "Finite must be a JSON number"},
		{"finite bare exponent", `{"Number":{"Finite":1e}}`, "expected a digit"},
		{"finite hex", `{"Number":{"Finite":0x10}}`, "expected '}'"},
		{"finite overflow", `{"Number":{"Finite":1e400}}`, "number out of range"},
		{"finite negative overflow", `{"Number":{"Finite":-1e309}}`, "number out of range"},
		{"array wrong type", `{"Array":{}}`, "Array must be a JSON array"},
		{"array trailing comma", `{"Array":["Null",]}`, "expected a StructuredValue"},
		{"array missing comma", `{"Array":["Null" "Null"]}`, "expected ',' or ']'"},
		{"array unterminated", `{"Array":["Null"`, "expected ',' or ']', found end of input"},
		{"object wrong type", `{"Object":[]}`, "Object must be a JSON object"},
		{"object duplicate key", `{"Object":{"a":"Null","a":"Null"}}`, `duplicate object key "a"`},
		{"object duplicate key via escape", `{"Object":{"a":"Null","\u0061":"Null"}}`, `duplicate object key "a"`},
		{"object trailing comma", `{"Object":{"a":"Null",}}`, "expected an object key"},
		{"object non-string key", `{"Object":{1:"Null"}}`, "expected an object key"},
		{"object missing colon", `{"Object":{"a" "Null"}}`, "expected ':'"},
		{"object raw json value", `{"Object":{"a":1}}`, "expected a StructuredValue"},
		{"missing close", `{"Bool":true`, "expected '}', found end of input"},
		{"trailing garbage", `"Null"x`, "unexpected data after the value at offset 6"},
		{"two values", `"Null" "Null"`, "unexpected data after the value"},
		{"trailing brace", `{"Bool":true}}`, "unexpected data after the value"},
		{"raw control char", "{\"String\":\"a\nb\"}", "unescaped control character in string"},
		{"raw control char after escape", "{\"String\":\"\\n\x01\"}", "unescaped control character in string"},
		{"invalid utf8", "{\"String\":\"\xff\"}", "invalid UTF-8 in string"},
		{"invalid utf8 after escape", "{\"String\":\"\\n\xc3\"}", "invalid UTF-8 in string"},
		{"raw surrogate bytes", "{\"String\":\"\xed\xa0\x80\"}", "invalid UTF-8 in string"},
		{"invalid utf8 key", "{\"Object\":{\"\xc0\xaf\":\"Null\"}}", "invalid UTF-8 in string"},
		{"invalid utf8 variant", "\"\xff\"", "invalid UTF-8 in string"},
		{"bad escape", `{"String":"\x"}`, "invalid escape in string"},
		{"short unicode escape", `{"String":"\u12"}`, `invalid \u escape`},
		{"bad unicode escape", `{"String":"\u12g4"}`, `invalid \u escape`},
		{"bad escape after high", `{"String":"\ud800\u12"}`, `invalid \u escape`},
		{"unterminated string", `{"String":"abc`, "unterminated string"},
		{"unterminated after escape", `{"String":"abc\`, "unterminated string"},
		{"unterminated in escape", `{"String":"abc\u00`, `invalid \u escape`},
		{"literal typo", `{"Bool":tru}`, "Bool must be true or false"},
		{"nul byte", "\x00", "found byte 0x00 at offset 0"},
		{"single quotes", `'Null'`, `found '\'' at offset 0`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ParseJSON([]byte(tc.in))
			require.Error(t, err)
			checkTranscode(t, []byte(tc.in), v, err)
			assert.Contains(t, err.Error(), tc.want)
			assertHostError(t, err)
			assert.True(t, Equal(Undefined(), v))
			var u Value = String("unchanged")
			require.Error(t, u.UnmarshalJSON([]byte(tc.in)))
			assert.Equal(t, String("unchanged"), u)
		})
	}
}

// assertHostError checks an error is fit to send to a host.
func assertHostError(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	assert.True(t, strings.HasPrefix(msg, "invalid StructuredValue: "), msg)
	for _, s := range []string{"value.", "Value{", "[]", "*", "Kind", "interface", "%!"} {
		assert.NotContains(t, msg, s)
	}
	assert.Less(t, len(msg), 200)
}

// nestJSON wraps "Null" in depth arrays (or objects).
func nestJSON(depth int, object bool) string {
	open, close := `{"Array":[`, `]}`
	if object {
		open, close = `{"Object":{"k":`, `}}`
	}
	return strings.Repeat(open, depth) + `"Null"` + strings.Repeat(close, depth)
}

func nestValue(depth int, object bool) Value {
	v := Null()
	for range depth {
		if object {
			v = Object(M("k", v))
		} else {
			v = Array(v)
		}
	}
	return v
}

func TestParseJSONDepth(t *testing.T) {
	for _, object := range []bool{false, true} {
		v, err := ParseJSON([]byte(nestJSON(MaxDepth, object)))
		require.NoError(t, err)
		checkTranscode(t, []byte(nestJSON(MaxDepth, object)), v, err)
		assert.True(t, Equal(nestValue(MaxDepth, object), v))

		v, err = ParseJSON([]byte(nestJSON(MaxDepth+1, object)))
		require.Error(t, err)
		checkTranscode(t, []byte(nestJSON(MaxDepth+1, object)), v, err)
		assert.Contains(t, err.Error(), "structured host boundary nesting limit exceeded")
		assert.True(t, errors.Is(err, ErrNestingLimit))
		assertHostError(t, err)
	}
	// A hostile prefix far deeper than the limit fails at the limit.
	deep := strings.Repeat(`{"Array":[`, 1_000_000)
	_, err := ParseJSON([]byte(deep))
	require.ErrorIs(t, err, ErrNestingLimit)
	deep = strings.Repeat(`{"Object":{"":`, 1_000_000)
	_, err = ParseJSON([]byte(deep))
	require.ErrorIs(t, err, ErrNestingLimit)
}

func TestParseJSONArrayLength(t *testing.T) {
	build := func(n int) []byte {
		b := make([]byte, 0, 10+7*n)
		b = append(b, `{"Array":[`...)
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `"Hole"`...)
		}
		return append(b, "]}"...)
	}
	if testing.Short() {
		t.Skip("builds arrays of a million elements")
	}
	v, err := ParseJSON(build(MaxArrayLength))
	require.NoError(t, err)
	checkTranscode(t, build(MaxArrayLength), v, err)
	assert.Len(t, v.Elems, MaxArrayLength)

	v, err = ParseJSON(build(MaxArrayLength + 1))
	require.ErrorIs(t, err, ErrArrayTooLong)
	checkTranscode(t, build(MaxArrayLength+1), v, err)
	assertHostError(t, err)
}

func TestJSONRoundTrip(t *testing.T) {
	for _, tc := range sampleValues() {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.v.AppendJSON(nil)
			require.True(t, json.Valid(b), "%s", b)
			got, err := ParseJSON(b)
			require.NoError(t, err, "%s", b)
			checkTranscode(t, b, got, err)
			assert.True(t, Equal(tc.v, got), "%s", b)
			assert.Equal(t, string(b), string(got.AppendJSON(nil)))
		})
	}
}

func TestJSONRoundTripRandomStrings(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	interesting := []uint16{0, 1, 0x1F, '"', '\\', '/', 'a', 0x7F, 0x80, 0x7FF, 0x800, 0x2028, 0xD7FF, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xE000, 0xFFFD, 0xFFFF}
	for range 20_000 {
		units := make([]uint16, r.IntN(8))
		for i := range units {
			if r.IntN(4) == 0 {
				units[i] = uint16(r.Uint32())
			} else {
				units[i] = interesting[r.IntN(len(interesting))]
			}
		}
		s := FromUTF16(units)
		v := Object(M(s, String(s)))
		b := v.AppendJSON(nil)
		got, err := ParseJSON(b)
		require.NoError(t, err, "%s", b)
		require.True(t, Equal(v, got), "%q -> %s", s, b)
		if len(units) > 0 {
			require.Equal(t, units, ToUTF16(got.Members[0].Key))
			require.Equal(t, units, ToUTF16(got.Members[0].Value.Str))
		}
	}
}

func TestMarshalJSONValidates(t *testing.T) {
	b, err := Array(Hole()).MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, `{"Array":["Hole"]}`, string(b))

	_, err = Hole().MarshalJSON()
	require.Error(t, err)
	_, err = nestValue(MaxDepth+1, false).MarshalJSON()
	require.ErrorIs(t, err, ErrNestingLimit)
	// AppendJSON writes it anyway.
	assert.Equal(t, `"Hole"`, string(Hole().AppendJSON(nil)))
}

func TestJSONInStruct(t *testing.T) {
	type envelope struct {
		V    Value   `json:"v"`
		Opt  *Value  `json:"opt,omitempty"`
		List []Value `json:"list"`
	}
	in := envelope{
		V:    Object(M("b", Number(1)), M("a", String("\xed\xa0\x80<&>"))),
		List: []Value{Null(), Number(negZero)},
	}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	var out envelope
	require.NoError(t, json.Unmarshal(b, &out))
	assert.True(t, Equal(in.V, out.V))
	assert.Nil(t, out.Opt)
	require.Len(t, out.List, 2)
	assert.True(t, Equal(in.List[1], out.List[1]))

	require.NoError(t, json.Unmarshal([]byte(`{"v":"Null","opt":null,"list":[]}`), &out))
	assert.Nil(t, out.Opt)
	require.NoError(t, json.Unmarshal([]byte(`{"v":"Null","opt":{"Bool":true}}`), &out))
	require.NotNil(t, out.Opt)
	assert.True(t, Equal(Bool(true), *out.Opt))

	// The JSON literal null is not a StructuredValue.
	err = json.Unmarshal([]byte(`{"v":null}`), &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "expected a StructuredValue")
	err = json.Unmarshal([]byte(`{"v":"Foo"}`), &out)
	assert.ErrorContains(t, err, `unknown variant "Foo"`)

	_, err = json.Marshal(envelope{V: Hole()})
	assert.Error(t, err)
}

func TestParseJSONAllocations(t *testing.T) {
	in := []byte(`{"Object":{"a":{"Number":{"Finite":1.5}},"b":{"Array":["Null",{"Bool":true},{"Number":"NaN"}]}}}`)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := ParseJSON(in); err != nil {
			t.Fatal(err)
		}
	})
	// Two keys, the members, the elements and the scratch stacks; variant
	// names and numbers must not allocate.
	assert.LessOrEqual(t, allocs, 7.0)
}

// Keys seen before come back without an allocation; a long key, and keys
// past the interning bound, are still decoded right.
func TestObjectKeysInterned(t *testing.T) {
	var s scratch
	first := s.key([]byte("title"))
	if n := testing.AllocsPerRun(50, func() { _ = s.key([]byte("title")) }); n != 0 {
		t.Fatalf("%v allocations for a key seen before", n)
	}
	if again := s.key([]byte("title")); unsafe.StringData(again) != unsafe.StringData(first) {
		t.Fatal("a key seen before is a new string")
	}
	// Within one decode the scratch is the same: a repeated key is shared.
	v, err := ParseJSON([]byte(`{"Array":[{"Object":{"title":"Null"}},{"Object":{"title":"Null"}}]}`))
	if err != nil || unsafe.StringData(v.Elems[0].Members[0].Key) != unsafe.StringData(v.Elems[1].Members[0].Key) {
		t.Fatalf("a repeated key is not shared (%v)", err)
	}
	long := strings.Repeat("k", maxInternedKeyLen+1)
	b := []byte(`{"Object":{`)
	for i := range maxInternedKeys + 10 {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `"k%d":"Null"`, i)
	}
	b = fmt.Appendf(b, `,%q:"Null"}}`, long)
	for range 2 {
		v, err := ParseJSON(b)
		if err != nil || len(v.Members) != maxInternedKeys+11 {
			t.Fatalf("many keys: %v", err)
		}
		for i, m := range v.Members[:maxInternedKeys+10] {
			if m.Key != fmt.Sprintf("k%d", i) {
				t.Fatalf("member %d has key %q", i, m.Key)
			}
		}
		if v.Members[len(v.Members)-1].Key != long {
			t.Fatal("long key changed")
		}
	}
	var full scratch
	for i := range maxInternedKeys + 10 {
		full.key(fmt.Appendf(nil, "x%d", i))
	}
	if len(full.keys) > maxInternedKeys {
		t.Fatalf("%d keys interned, bound %d", len(full.keys), maxInternedKeys)
	}
	if first, again := full.key([]byte("x0")), full.key([]byte("x0")); unsafe.StringData(first) != unsafe.StringData(again) {
		t.Fatal("interning stopped once the table filled")
	}
}

// fmt prints a value in its wire form.
func TestValueString(t *testing.T) {
	v := Object(M("a", Array(Number(1), Hole(), String("x"))), M("b", Undefined()))
	if got, want := fmt.Sprint(v), `{"Object":{"a":{"Array":[{"Number":{"Finite":1.0}},"Hole",{"String":"x"}]},"b":"Undefined"}}`; got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

// TranscodeJSONValue's result is the caller's own, at about its size,
// whatever follows the value: the output room it had is not the caller's.
func TestTranscodeJSONValueOwnsItsResult(t *testing.T) {
	pad := strings.Repeat(" ", 100_000)
	first, n, err := TranscodeJSONValue([]byte(`{"String":"first"}` + pad))
	if err != nil || n != len(`{"String":"first"}`) {
		t.Fatal(n, err)
	}
	if cap(first) > 64 {
		t.Fatalf("a 6-byte result kept %d bytes of room", cap(first))
	}
	for range 3 { // the same scratch, most likely
		if _, _, err := TranscodeJSONValue([]byte(`{"String":"other"}` + pad)); err != nil {
			t.Fatal(err)
		}
	}
	if v, _, err := DecodeCBOR(first); err != nil || v.Str != "first" {
		t.Fatalf("the first result now reads %q, %v", v.Str, err)
	}
	// A value that is most of its input: room about its size (an eighth
	// more, and the allocator's rounding to pages).
	long := `{"String":"` + strings.Repeat("x", 50_000) + `"}`
	out, _, err := TranscodeJSONValue([]byte(long + "}"))
	if err != nil || cap(out) > len(out)+len(out)/8+8192 {
		t.Fatalf("%d bytes, room %d, %v", len(out), cap(out), err)
	}
}

// A string is written a word at a time between the bytes that need a
// look: each such byte, at every position around the word boundaries,
// comes out escaped as it should, and the plain bytes around it whole.
func TestAppendJSONStringAtEveryPosition(t *testing.T) {
	specials := []struct{ in, out string }{
		{`"`, `\"`}, {`\`, `\\`}, {"\n", `\n`}, {"\x01", `\u0001`}, {"\x1f", `\u001f`},
		{"é", "é"}, {"€", "€"}, {"😀", "😀"},
		{"\xed\xa0\x80", `\ud800`}, // a lone surrogate, as WTF-8
		{"\xff", `\ufffd`},         // not UTF-8 at all
		{"\x7f", "\x7f"}, {" ", " "},
	}
	for n := 0; n <= 20; n++ {
		for at := 0; at <= n; at++ {
			for _, sp := range specials {
				s := strings.Repeat("a", at) + sp.in + strings.Repeat("b", n-at)
				want := `{"String":"` + strings.Repeat("a", at) + sp.out + strings.Repeat("b", n-at) + `"}`
				if got := string(String(s).AppendJSON(nil)); got != want {
					t.Fatalf("%q: wrote %s, want %s", s, got, want)
				}
			}
		}
	}
}

// Long strings are unescaped 64 bytes at a time (unescapeBlocks): every
// kind of escape and of multi-byte sequence, at every distance from a
// block's edge, comes out as the text it stands for, and a bad byte
// anywhere fails at its own offset.
func TestUnescapeLongStrings(t *testing.T) {
	pieces := []struct{ json, text string }{
		{`\"`, `"`}, {`\\`, `\`}, {`\/`, `/`}, {`\b`, "\b"}, {`\f`, "\f"},
		{`\n`, "\n"}, {`\r`, "\r"}, {`\t`, "\t"},
		{`\u0041`, "A"}, {`\u00e9`, "é"}, {`\u20AC`, "€"}, {`\u0000`, "\x00"},
		{`\ud83d\ude00`, "😀"}, {`\ud800x`, "\xed\xa0\x80x"}, {`\udc00`, "\xed\xb0\x80"}, // lone halves, as WTF-8
		{"é", "é"}, {"€", "€"}, {"😀", "😀"}, {"\x7f", "\x7f"},
		// Bytes a borrow from the special before them could mark.
		{`\"#`, `"#`}, {`\\]`, `\]`}, {`#`, `#`}, {`]`, `]`}, {" ", " "},
	}
	r := rand.New(rand.NewPCG(7, 8))
	plain := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "abcxyz019 ,:[]{}#!~"[r.IntN(19)]
		}
		return string(b)
	}
	for range 4000 {
		var parts []string // the string's JSON text, piece by piece
		var text strings.Builder
		for text.Len() < 40+r.IntN(400) {
			if r.IntN(3) == 0 {
				p := plain(1 + r.IntN(40))
				parts = append(parts, p)
				text.WriteString(p)
				continue
			}
			p := pieces[r.IntN(len(pieces))]
			parts = append(parts, p.json)
			text.WriteString(p.text)
		}
		js := strings.Join(parts, "")
		pad := strings.Repeat(" ", r.IntN(64)) // moves the string across the blocks
		in := pad + `{"Object":{"` + js + `":{"String":"` + js + `"}}}`
		v, err := ParseJSON([]byte(in))
		require.NoError(t, err, "%s", in)
		checkTranscode(t, []byte(in), v, err)
		require.Equal(t, text.String(), v.Members[0].Key)
		require.Equal(t, text.String(), v.Members[0].Value.Str)

		// One bad piece, between two of the same string's.
		bad := []struct{ json, err string }{
			{"\x01", "unescaped control character in string"},
			{"\x1f", "unescaped control character in string"},
			{`\x`, "invalid escape in string"},
			{`\u12G4`, "invalid \\u escape"},
			{"\xff", "invalid UTF-8 in string"},
			{"\xe2\x82", "invalid UTF-8 in string"},
			{"\xed\xa0\x80", "invalid UTF-8 in string"}, // a surrogate written raw
		}[r.IntN(7)]
		at := r.IntN(len(parts) + 1)
		prefix := pad + `{"String":"` + strings.Join(parts[:at], "")
		in = prefix + bad.json + strings.Join(parts[at:], "") + `"}`
		_, err = ParseJSON([]byte(in))
		require.ErrorContains(t, err, fmt.Sprintf("%s at offset %d", bad.err, len(prefix)), "%q", in)
		checkTranscode(t, []byte(in), Value{}, err)
	}
}

// Long strings are escaped 64 bytes at a time (appendEscapedBlocks):
// every kind of byte that needs a look, at every distance from a block's
// edge, is written as AppendJSON writes it alone, and reads back.
func TestAppendJSONLongStrings(t *testing.T) {
	pieces := []struct{ text, json string }{
		{`"`, `\"`}, {`\`, `\\`}, {"\n", `\n`}, {"\r", `\r`}, {"\t", `\t`},
		{"\b", `\u0008`}, {"\x00", `\u0000`}, {"\x1f", `\u001f`}, {"\x7f", "\x7f"},
		{"é", "é"}, {"€", "€"}, {"😀", "😀"},
		{"\xed\xa0\x80", `\ud800`}, // a lone surrogate, as WTF-8
		{"\xff", `\ufffd`}, {"\xe2\x82", `\ufffd\ufffd`},
		{`"#`, `\"#`}, {` `, ` `}, {`]`, `]`},
	}
	r := rand.New(rand.NewPCG(9, 10))
	for range 4000 {
		var text, want strings.Builder
		want.WriteString(`{"String":"`)
		for text.Len() < 40+r.IntN(400) {
			if r.IntN(3) == 0 {
				p := strings.Repeat("abcxyz019 ,:[]{}#!~"[r.IntN(19):][:1], 1+r.IntN(40))
				text.WriteString(p)
				want.WriteString(p)
				continue
			}
			p := pieces[r.IntN(len(pieces))]
			text.WriteString(p.text)
			want.WriteString(p.json)
		}
		want.WriteString(`"}`)
		pad := strings.Repeat("x", r.IntN(64)) // what dst holds already
		got := String(text.String()).AppendJSON([]byte(pad))
		require.Equal(t, want.String(), string(got[len(pad):]), "%q", text.String())
	}
}
