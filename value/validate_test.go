package value

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidate(t *testing.T) {
	long := make([]Value, MaxArrayLength+1)
	tests := []struct {
		name string
		v    Value
		want string // "" if valid
	}{
		{"undefined", Undefined(), ""},
		{"string", String("a\xed\xa0\x80"), ""},
		{"hole in array", Array(Hole()), ""},
		{"hole in nested array", Object(M("a", Array(Array(Hole())))), ""},
		{"max depth", nestValue(MaxDepth, false), ""},
		{"max depth objects", nestValue(MaxDepth, true), ""},
		{"max length", Array(long[:MaxArrayLength]...), ""},
		{"hole at top", Hole(), "Hole is only valid as an element of an Array"},
		{"hole as member", Object(M("a", Hole())), "Hole is only valid"},
		{"hole deep in member", Array(Object(M("a", Hole()))), "Hole is only valid"},
		{"too deep", nestValue(MaxDepth+1, false), "structured host boundary nesting limit exceeded"},
		{"too deep objects", nestValue(MaxDepth+1, true), "structured host boundary nesting limit exceeded"},
		{"far too deep", nestValue(100_000, false), "structured host boundary nesting limit exceeded"},
		{"too long", Array(long...), "arrays longer than 1000000 elements"},
		{"unknown kind", Value{Kind: 42}, "unknown kind 42"},
		{"unknown kind nested", Array(Value{Kind: 8}), "unknown kind 8"},
		{"invalid string", String("\xff"), "string is not well-formed UTF-8"},
		{"split surrogate pair", String("\xed\xa0\xbd\xed\xb8\x80"), "string is not well-formed UTF-8"},
		{"invalid key", Object(M("\xc3", Null())), "object key is not well-formed UTF-8"},
		{"duplicate key", Object(M("a", Null()), M("b", Null()), M("a", Null())), `duplicate object key "a"`},
		{"duplicate key in large object", Object(append(manyMembers(40).Members, M("kkk", Null()))...), `duplicate object key "kkk"`},
		{"many distinct keys", manyMembers(1000), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.v.Validate()
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assertHostError(t, err)
		})
	}
}

func TestSampleValuesAreValid(t *testing.T) {
	for _, tc := range sampleValues() {
		assert.NoError(t, tc.v.Validate(), tc.name)
	}
}

func TestKeySet(t *testing.T) {
	var ms []Member
	var ks keySet
	for i := range 100 {
		k := string(rune('A' + i))
		require.True(t, ks.add(ms, k), k)
		ms = append(ms, M(k, Null()))
		for j := 0; j <= i; j += 7 {
			require.False(t, ks.add(ms, ms[j].Key), "%d %d", i, j)
		}
	}
}
