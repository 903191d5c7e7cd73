package host

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

func wireText(t *testing.T, v value.Value) string {
	t.Helper()
	return string(v.AppendJSON(nil))
}

func TestValueOfSpecialValues(t *testing.T) {
	v, err := ValueOf([]any{Undefined{}, nil, Hole{}, math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, "s", true})
	require.NoError(t, err)
	require.Equal(t, `{"Array":["Undefined","Null","Hole",{"Number":"NaN"},{"Number":"Infinity"},{"Number":"NegInfinity"},{"Number":"NegZero"},{"Number":{"Finite":0.0}},{"String":"s"},{"Bool":true}]}`, wireText(t, v))

	var back any
	require.NoError(t, Decode(v, &back))
	got := back.([]any)
	require.Equal(t, Undefined{}, got[0])
	require.Nil(t, got[1])
	require.Equal(t, Hole{}, got[2])
	require.True(t, math.IsNaN(got[3].(float64)))
	require.True(t, math.IsInf(got[4].(float64), 1))
	require.True(t, math.IsInf(got[5].(float64), -1))
	require.True(t, math.Signbit(got[6].(float64)), "-0 keeps its sign")
	require.False(t, math.Signbit(got[7].(float64)))

	_, err = ValueOf(Hole{})
	require.ErrorContains(t, err, "Hole is only valid as an element of an Array")
}

// The deprecated forms keep their meaning, also through package value.
func TestDeprecatedUndefinedAndHoleCrossValue(t *testing.T) {
	v, err := value.FromGo([]any{Undefined{}, Hole{}, value.Undefined(), value.Hole()})
	require.NoError(t, err)
	require.Equal(t, `{"Array":["Undefined","Hole","Undefined","Hole"]}`, wireText(t, v))

	var back any
	require.NoError(t, value.Decode(v, &back))
	require.Equal(t, []any{value.Undefined(), value.Hole(), value.Undefined(), value.Hole()}, back)

	var legacy []any
	require.NoError(t, Decode(v, &legacy))
	require.Equal(t, []any{Undefined{}, Hole{}, Undefined{}, Hole{}}, legacy)

	var typed struct {
		U Undefined `json:"u"`
	}
	require.NoError(t, value.Decode(value.Object(value.M("u", value.Undefined())), &typed))
	err = Decode(value.Object(value.M("u", value.Null())), &typed)
	require.EqualError(t, err, "value.u: cannot decode Null into Go host.Undefined")
	var de *DecodeError
	require.ErrorAs(t, err, &de)

	b, err := ToPlainJSON(MustValueOf(map[string]any{"a": 1}))
	require.NoError(t, err)
	require.Equal(t, `{"a":1}`, string(b))
	p, err := FromPlainJSON(b)
	require.NoError(t, err)
	require.True(t, value.Equal(p, MustValueOf(map[string]any{"a": 1})))
}
