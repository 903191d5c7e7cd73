package value

import (
	"bytes"
	"unsafe"

	"github.com/mustard-sidecar/mustard-sidecar/internal/detcbor"

	"encoding/hex"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	require.NoError(t, err)
	return b
}

func TestAppendCBOR(t *testing.T) {
	tests := []struct {
		name string
		v    Value
		want string // hex
	}{
		{"undefined", Undefined(), "f7"},
		{"null", Null(), "f6"},
		{"hole", Hole(), "e0"},
		{"false", Bool(false), "f4"},
		{"true", Bool(true), "f5"},
		{"zero", Number(0), "fb 0000000000000000"},
		{"negative zero", Number(negZero), "fb 8000000000000000"},
		{"one", Number(1), "fb 3ff0000000000000"},
		{"-1.5", Number(-1.5), "fb bff8000000000000"},
		{"NaN", Number(math.NaN()), "fb 7ff8000000000000"},
		{"NaN payload canonicalized", Number(math.Float64frombits(0xfff0000000000123)), "fb 7ff8000000000000"},
		{"Infinity", Number(math.Inf(1)), "fb 7ff0000000000000"},
		{"NegInfinity", Number(math.Inf(-1)), "fb fff0000000000000"},
		{"empty string", String(""), "40"},
		{"string", String("hi"), "42 6869"},
		{"lone surrogate bytes kept", String("\xed\xa0\x80"), "43 eda080"},
		{"string 23", String(strings.Repeat("a", 23)), "57" + strings.Repeat("61", 23)},
		{"string 24", String(strings.Repeat("a", 24)), "58 18" + strings.Repeat("61", 24)},
		{"string 256", String(strings.Repeat("a", 256)), "59 0100" + strings.Repeat("61", 256)},
		{"empty array", Array(), "80"},
		{"array", Array(Null(), Hole(), Bool(true)), "83 f6 e0 f5"},
		{"array 24", Array(make([]Value, 24)...), "98 18" + strings.Repeat("f7", 24)},
		{"empty object", Object(), "a0"},
		{"object in order", Object(M("b", Null()), M("a", Undefined())), "a2 4162 f6 4161 f7"},
		{"nested", Object(M("x", Array(Object()))), "a1 4178 81 a0"},
		{"unknown kind", Value{Kind: 99}, "ff"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := unhex(t, tc.want)
			assert.Equal(t, want, tc.v.AppendCBOR(nil))
			assert.Equal(t, append([]byte{1, 2}, want...), tc.v.AppendCBOR([]byte{1, 2}))
		})
	}
}

func TestAppendHead(t *testing.T) {
	tests := []struct {
		n    uint64
		want string
	}{
		{0, "40"},
		{23, "57"},
		{24, "58 18"},
		{255, "58 ff"},
		{256, "59 0100"},
		{65535, "59 ffff"},
		{65536, "5a 00010000"},
		{math.MaxUint32, "5a ffffffff"},
		{math.MaxUint32 + 1, "5b 0000000100000000"},
		{math.MaxUint64, "5b ffffffffffffffff"},
	}
	for _, tc := range tests {
		assert.Equal(t, unhex(t, tc.want), detcbor.AppendHead(nil, majorBytes, tc.n), "%d", tc.n)
	}
}

func TestCBORRoundTrip(t *testing.T) {
	for _, tc := range sampleValues() {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.v.AppendCBOR(nil)
			require.NoError(t, wellformedMode.Wellformed(b))
			got, rest, err := DecodeCBOR(b)
			require.NoError(t, err)
			assert.Empty(t, rest)
			assert.True(t, Equal(tc.v, got))
			assert.Equal(t, b, got.AppendCBOR(nil))

			// The bytes after a value are handed back.
			got, rest, err = DecodeCBOR(append(b, 0xf6, 0x01))
			require.NoError(t, err)
			assert.Equal(t, []byte{0xf6, 0x01}, rest)
			assert.True(t, Equal(tc.v, got))

			// Owned: the same value, from a buffer given away.
			got, rest, err = DecodeCBOROwned(bytes.Clone(b))
			require.NoError(t, err)
			assert.Empty(t, rest)
			assert.True(t, Equal(tc.v, got))

			var u Value
			require.NoError(t, u.UnmarshalCBOR(b))
			assert.True(t, Equal(tc.v, u))
			m, err := tc.v.MarshalCBOR()
			require.NoError(t, err)
			assert.Equal(t, b, m)
		})
	}
}

func TestDecodeCBORValues(t *testing.T) {
	got, _, err := DecodeCBOR(unhex(t, "fb 8000000000000000"))
	require.NoError(t, err)
	assert.True(t, math.Signbit(got.Num) && got.Num == 0)

	got, _, err = DecodeCBOR(unhex(t, "fb 7ff8000000000000"))
	require.NoError(t, err)
	assert.True(t, math.IsNaN(got.Num))

	got, _, err = DecodeCBOR(unhex(t, "82 e0 e0"))
	require.NoError(t, err)
	assert.True(t, Equal(Array(Hole(), Hole()), got))

	got, _, err = DecodeCBOR(unhex(t, "a2 4162 f6 4161 f7"))
	require.NoError(t, err)
	assert.True(t, Equal(Object(M("b", Null()), M("a", Undefined())), got))
}

func TestDecodeCBORErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string // hex
		want string
	}{
		{"empty", "", "unexpected end of data at byte 0"},
		{"unsigned int", "00", "unsupported item 0x00 at byte 0"},
		{"negative int", "20", "unsupported item 0x20"},
		{"text string", "6161", "unsupported item 0x61"},
		{"tag", "c0 f6", "unsupported item 0xc0"},
		{"self-describe tag", "d9d9f7 f6", "unsupported item 0xd9"},
		{"simple 1", "e1", "unsupported item 0xe1"},
		{"simple 19", "f3", "unsupported item 0xf3"},
		{"simple one-byte", "f8 20", "unsupported item 0xf8"},
		{"float16", "f9 3c00", "unsupported item 0xf9"},
		{"float32", "fa 3f800000", "unsupported item 0xfa"},
		{"break", "ff", "unsupported item 0xff"},
		{"reserved simple", "fc", "unsupported item 0xfc"},
		{"indefinite bytes", "5f 41 61 ff", "indefinite-length item at byte 0"},
		{"indefinite array", "9f f6 ff", "indefinite-length item"},
		{"indefinite map", "bf 4161 f6 ff", "indefinite-length item"},
		{"reserved length 28", "5c", "malformed item header"},
		{"reserved length 30", "9e", "malformed item header"},
		{"non-shortest 1", "58 17" + strings.Repeat("61", 23), "non-shortest length at byte 0"},
		{"non-shortest 2", "59 00ff", "non-shortest length"},
		{"non-shortest 4", "9a 0000ffff", "non-shortest length"},
		{"non-shortest 8", "bb 00000000ffffffff", "non-shortest length"},
		{"non-shortest zero", "98 00", "non-shortest length"},
		{"truncated head", "59 01", "unexpected end of data"},
		{"truncated float", "fb 3ff0", "unexpected end of data"},
		{"truncated string", "43 6161", "string length exceeds the data"},
		{"huge string", "5b 7fffffffffffffff 00", "string length exceeds the data"},
		{"max string", "5b ffffffffffffffff", "string length exceeds the data"},
		{"truncated array", "82 f6", "array length exceeds the data at byte 0"},
		{"truncated nested array", "82 81 f6", "unexpected end of data at byte 3"},
		{"array count exceeds data", "99 ffff f6", "array length exceeds the data"},
		{"huge map", "bb ffffffffffffffff", "object size exceeds the data"},
		{"map count exceeds data", "a2 4161 f6", "object size exceeds the data"},
		{"truncated map", "a2 4161 f6 4162", "unexpected end of data"},
		{"map key text", "a1 6161 f6", "object key is not a byte string at byte 1"},
		{"map key null", "a1 f6 f6", "object key is not a byte string"},
		{"map key array", "a1 80 f6", "object key is not a byte string"},
		{"duplicate key", "a2 4161 f6 4161 f7", `duplicate object key "a"`},
		{"duplicate empty key", "a2 40 f6 40 f7", `duplicate object key ""`},
		{"hole at top", "e0", "Hole is only valid as an element of an Array"},
		{"hole as member", "a1 4161 e0", "Hole is only valid as an element of an Array"},
		{"hole in nested member", "81 a1 4161 e0", "Hole is only valid"},
		{"invalid utf8", "41 ff", "string is not well-formed UTF-8 at byte 0"},
		{"invalid utf8 key", "a1 41 ff f6", "string is not well-formed UTF-8 at byte 1"},
		{"truncated utf8", "42 c3 61", "string is not well-formed UTF-8"},
		{"surrogate pair as two sequences", "46 eda0bd edb880", "string is not well-formed UTF-8"},
		{"non-canonical NaN", "fb 7ff8000000000001", "non-canonical NaN at byte 0"},
		{"negative NaN", "fb fff8000000000000", "non-canonical NaN"},
		{"signalling NaN", "fb 7ff0000000000001", "non-canonical NaN"},
		{"array too long", "9a 000f4241", "arrays longer than 1000000 elements"},
		{"array too long 8 bytes", "9b 0000000100000000", "arrays longer than 1000000 elements"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := unhex(t, tc.in)
			v, rest, err := DecodeCBOR(in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assertHostError(t, err)
			assert.Nil(t, rest)
			assert.True(t, Equal(Undefined(), v))
			_, rest, err = DecodeCBOROwned(bytes.Clone(in))
			require.Error(t, err)
			assert.Equal(t, err.Error(), func() string { _, _, e := DecodeCBOR(in); return e.Error() }())
			assert.Nil(t, rest)
			u := String("unchanged")
			require.Error(t, u.UnmarshalCBOR(in))
			assert.Equal(t, String("unchanged"), u)
		})
	}
}

func TestUnmarshalCBORTrailing(t *testing.T) {
	var v Value
	err := v.UnmarshalCBOR(unhex(t, "f6 f6"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unexpected data after the value at byte 1")
	assertHostError(t, err)
	require.NoError(t, v.UnmarshalCBOR(unhex(t, "f6")))
	assert.True(t, Equal(Null(), v))
}

func nestCBOR(depth int, object bool) []byte {
	var b []byte
	for range depth {
		if object {
			b = append(b, 0xa1, 0x41, 'k')
		} else {
			b = append(b, 0x81)
		}
	}
	return append(b, 0xf6)
}

func TestDecodeCBORDepth(t *testing.T) {
	for _, object := range []bool{false, true} {
		v, rest, err := DecodeCBOR(nestCBOR(MaxDepth, object))
		require.NoError(t, err)
		assert.Empty(t, rest)
		assert.True(t, Equal(nestValue(MaxDepth, object), v))

		_, _, err = DecodeCBOR(nestCBOR(MaxDepth+1, object))
		require.ErrorIs(t, err, ErrNestingLimit)
		assert.Contains(t, err.Error(), "structured host boundary nesting limit exceeded")
		assertHostError(t, err)

		_, _, err = DecodeCBOR(nestCBOR(1_000_000, object))
		require.ErrorIs(t, err, ErrNestingLimit)
	}
}

func TestDecodeCBORArrayLength(t *testing.T) {
	if testing.Short() {
		t.Skip("builds arrays of a million elements")
	}
	b := detcbor.AppendHead(nil, majorArray, MaxArrayLength)
	b = append(b, make([]byte, MaxArrayLength)...)
	for i := 5; i < len(b); i++ {
		b[i] = cborHole
	}
	v, rest, err := DecodeCBOR(b)
	require.NoError(t, err)
	assert.Empty(t, rest)
	assert.Len(t, v.Elems, MaxArrayLength)

	b = detcbor.AppendHead(nil, majorArray, MaxArrayLength+1)
	b = append(b, make([]byte, MaxArrayLength+1)...)
	_, _, err = DecodeCBOR(b)
	require.ErrorIs(t, err, ErrArrayTooLong)
	assertHostError(t, err)
}

// Nested arrays that each claim to be as long as the rest of the input must
// not make the decoder reserve memory for the claims.
func TestDecodeCBORInflatedCounts(t *testing.T) {
	var b []byte
	for range MaxDepth {
		b = detcbor.AppendHead(b, majorArray, 60_000)
	}
	b = append(b, make([]byte, 60_000)...) // not enough for any claim to hold
	for i := MaxDepth * 3; i < len(b); i++ {
		b[i] = cborNull
	}
	allocs := testing.AllocsPerRun(5, func() {
		_, _, err := DecodeCBOR(b)
		require.Error(t, err)
	})
	assert.Less(t, allocs, 100.0)
}

func TestMarshalCBORValidates(t *testing.T) {
	_, err := Hole().MarshalCBOR()
	require.Error(t, err)
	_, err = Object(M("a", Null()), M("a", Null())).MarshalCBOR()
	require.Error(t, err)
	_, err = String("\xff").MarshalCBOR()
	require.Error(t, err)
	// AppendCBOR writes it anyway.
	assert.Equal(t, []byte{0xe0}, Hole().AppendCBOR(nil))
}

func TestCBORInStruct(t *testing.T) {
	type record struct {
		Name  string  `cbor:"1,keyasint"`
		Value Value   `cbor:"2,keyasint"`
		Args  []Value `cbor:"3,keyasint"`
		Opt   *Value  `cbor:"4,keyasint,omitempty"`
	}
	in := record{
		Name:  "call",
		Value: Object(M("z", Array(Hole(), Number(negZero))), M("a", String("\xed\xb0\x80"))),
		Args:  []Value{Undefined(), Number(math.NaN()), Bool(true)},
	}
	b, err := cbor.Marshal(in)
	require.NoError(t, err)
	var out record
	require.NoError(t, cbor.Unmarshal(b, &out))
	assert.Equal(t, "call", out.Name)
	assert.True(t, Equal(in.Value, out.Value))
	require.Len(t, out.Args, 3)
	for i := range in.Args {
		assert.True(t, Equal(in.Args[i], out.Args[i]))
	}
	assert.Nil(t, out.Opt)

	_, err = cbor.Marshal(record{Value: Hole()})
	assert.Error(t, err)

	// A general decoder checks nesting before UnmarshalCBOR runs, so deep
	// values need its limit raised above the default of 32.
	deep := record{Value: nestValue(MaxDepth, true)}
	b, err = cbor.Marshal(deep)
	require.NoError(t, err)
	require.Error(t, cbor.Unmarshal(b, &out))
	require.NoError(t, wellformedMode.Unmarshal(b, &out))
	assert.True(t, Equal(deep.Value, out.Value))

	// A value the codec rejects makes the whole record fail.
	bad := []byte{0xa1, 0x02, 0x00} // {2: 0}
	err = cbor.Unmarshal(bad, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "invalid StructuredValue: unsupported item 0x00")
}

func TestDecodeCBORAllocations(t *testing.T) {
	b := realisticValue().AppendCBOR(nil)
	v, _, err := DecodeCBOR(b)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(50, func() {
		if _, _, err := DecodeCBOR(b); err != nil {
			t.Fatal(err)
		}
	})
	// One per string, key, array and object, plus the scratch stacks.
	var count func(Value) int
	count = func(v Value) int {
		n := 0
		switch v.Kind {
		case KindString:
			if v.Str != "" {
				n++
			}
		case KindArray:
			if len(v.Elems) > 0 {
				n++
			}
			for _, e := range v.Elems {
				n += count(e)
			}
		case KindObject:
			if len(v.Members) > 0 {
				n++
			}
			for _, m := range v.Members {
				n += 1 + count(m.Value)
			}
		}
		return n
	}
	assert.LessOrEqual(t, allocs, float64(count(v)+16))
}

func TestErrorsAreSentinels(t *testing.T) {
	assert.True(t, errors.Is(errNesting, ErrNestingLimit))
	assert.True(t, errors.Is(errArrayTooLong, ErrArrayTooLong))
	assert.Equal(t, "invalid StructuredValue: structured host boundary nesting limit exceeded", errNesting.Error())
}

// TestDecodeCBOROwnedSharesStrings: an owned decode's strings are the
// buffer's bytes, not copies, and an ordinary decode's are copies.
// DecodeCBOROwned shares the memory of a string that is most of the bytes
// (TestOwnedStringsShareOnlyWhenMostOfTheBytes has the rule); DecodeCBOR
// never does.
func TestDecodeCBOROwnedSharesStrings(t *testing.T) {
	b := Array(String(strings.Repeat("shared", 100)), Object(M("key", String("value")))).AppendCBOR(nil)
	owned, _, err := DecodeCBOROwned(b)
	require.NoError(t, err)
	copied, _, err := DecodeCBOR(b)
	require.NoError(t, err)
	within := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		start := uintptr(unsafe.Pointer(&b[0]))
		return p >= start && p < start+uintptr(len(b))
	}
	assert.True(t, within(owned.Elems[0].Str))
	assert.False(t, within(owned.Elems[1].Members[0].Value.Str))
	assert.False(t, within(copied.Elems[0].Str))
}

func TestCheckCBORAllocatesNothing(t *testing.T) {
	// A query result: many records of a few keys each.
	records := make([]Value, 200)
	for i := range records {
		records[i] = Object(Member{Key: "id", Value: String("item-" + strconv.Itoa(i))}, Member{Key: "score", Value: Number(float64(i))},
			Member{Key: "tags", Value: Array(String("alpha"), String("bravo"))}, Member{Key: "open", Value: Bool(i%2 == 0)})
	}
	enc := Object(Member{Key: "items", Value: Array(records...)}, Member{Key: "total", Value: Number(200)}).AppendCBOR(nil)
	if _, err := CheckCBOR(enc); err != nil { // fills the pooled stacks
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(20, func() {
		if _, err := CheckCBOR(enc); err != nil {
			panic(err)
		}
	}); n != 0 && !raceEnabled {
		t.Errorf("CheckCBOR allocates %v times", n)
	}
	if _, err := CheckCBOR(enc[:len(enc)-1]); err == nil {
		t.Error("CheckCBOR accepted a value cut short")
	}
}
