package value

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

type level int

type quotedFields struct {
	ID      int64       `json:"id,string"`
	Big     uint64      `json:"big,string"`
	Ratio   float64     `json:"ratio,string"`
	Small   float32     `json:"small,string"`
	On      bool        `json:"on,string"`
	Name    string      `json:"name,string"`
	Level   level       `json:"level,string"`
	Ptr     *int        `json:"ptr,string"`
	NilPtr  *int        `json:"nil_ptr,string"`
	Num     json.Number `json:"num,string"`
	List    []int       `json:"list,string"` // not a kind the option applies to
	Any     any         `json:"any,string"`  // nor this
	Plain   json.Number `json:"plain"`       // a Number
	Empty   json.Number `json:"empty"`       // "" is 0
	Omitted int         `json:",string,omitempty"`
}

// Must hold: ValueOf gives what encoding/json writes, read back as
// JSON.parse reads it (FromPlainJSON), for json.Number and the string
// option; where encoding/json refuses a value, so does ValueOf.
func TestFromGoMatchesEncodingJSON(t *testing.T) {
	seven := 7
	for _, x := range []any{
		json.Number("12"), json.Number("-0.5e-3"), json.Number("1e400"), json.Number(""),
		[]json.Number{"1", "2.5", "-0"},
		map[string]json.Number{"a": "3", "b": "9007199254740993"},
		quotedFields{ID: 1<<62 + 1, Big: math.MaxUint64, Ratio: 1e-7, Small: 0.1, On: true,
			Name: `a "quoted" <name> & é`, Level: 3, Ptr: &seven, Num: "42.0", List: []int{1, 2},
			Any: 5, Plain: "6.5e1"},
		quotedFields{Ratio: math.Copysign(0, -1), Small: 1e21, Name: ""},
		quotedFields{Ratio: 123456789e15},
		struct {
			B *bool `json:",string"`
		}{},
	} {
		b, err := json.Marshal(x)
		require.NoError(t, err)
		want, err := FromPlainJSON(b)
		require.NoError(t, err)
		got, err := FromGo(x)
		require.NoError(t, err, "%s", b)
		require.Equal(t, wireText(t, want), wireText(t, got), "%s", b)
	}

	for _, x := range []any{
		json.Number("abc"), json.Number("1 "), json.Number(" 1"), json.Number(`"1"`), json.Number("01"),
		json.Number("1."), json.Number("+1"), json.Number("NaN"),
		quotedFields{Num: "x"},
		quotedFields{Ratio: math.NaN()},
		quotedFields{Ratio: math.Inf(1)},
	} {
		_, jerr := json.Marshal(x)
		require.Error(t, jerr, "%#v", x)
		_, err := FromGo(x)
		require.Error(t, err, "%#v", x)
	}
	_, err := FromGo(json.Number("abc"))
	require.EqualError(t, err, `json.Number "abc" is not a JSON number`)
}

// Must hold: Decode reads back what ValueOf wrote for the string option
// and json.Number, and takes what encoding/json's Unmarshal takes.
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	seven := 7
	in := quotedFields{ID: 1<<62 + 1, Big: math.MaxUint64, Ratio: 1e-7, Small: 0.1, On: true,
		Name: `a "quoted" <name>`, Level: 3, Ptr: &seven, Num: "42.0", List: []int{1, 2}, Plain: "65", Empty: "0"}
	v, err := FromGo(in)
	require.NoError(t, err)
	var back quotedFields
	require.NoError(t, Decode(v, &back))
	require.Equal(t, in, back)

	b, err := json.Marshal(in)
	require.NoError(t, err)
	var viaJSON quotedFields
	require.NoError(t, json.Unmarshal(b, &viaJSON))
	require.Equal(t, viaJSON, back)

	var n json.Number
	require.NoError(t, Decode(MustFromGo(1e21), &n))
	require.Equal(t, json.Number("1e+21"), n, "as JSON.stringify writes it")
	require.Error(t, Decode(MustFromGo(math.NaN()), &n))
	require.Error(t, Decode(MustFromGo("x"), &n))

	var q quotedFields
	err = Decode(MustFromGo(map[string]any{"id": 5}), &q)
	require.EqualError(t, err, "value.id: a `json:\",string\"` field takes a String, not Number 5")
	require.Error(t, json.Unmarshal([]byte(`{"id":5}`), &q), "encoding/json refuses it too")
	err = Decode(MustFromGo(map[string]any{"id": "five"}), &q)
	require.EqualError(t, err, `value.id: String "five" is not the JSON text of a Go int64`)
}
