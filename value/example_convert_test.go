package value_test

import (
	"fmt"
	"log"
	"math"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Go values become StructuredValues and back; JavaScript's undefined and
// array holes are value.Undefined() and value.Hole(), and NaN, ±Infinity
// and −0 are float64 values.
func ExampleFromGo() {
	v, err := value.FromGo(map[string]any{
		"list":    []any{1, value.Hole(), value.Undefined(), nil},
		"special": []float64{math.NaN(), math.Inf(-1), math.Copysign(0, -1)},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v)

	var back struct {
		List    []any     `json:"list"`
		Special []float64 `json:"special"`
	}
	if err := value.Decode(v, &back); err != nil {
		log.Fatal(err)
	}
	hole := back.List[1].(value.Value)
	undefined := back.List[2].(value.Value)
	fmt.Println(back.List[0], hole.Kind == value.KindHole, undefined.Kind == value.KindUndefined, back.List[3])
	fmt.Println(back.Special[:2], math.Signbit(back.Special[2]))
	// Output:
	// {"Object":{"list":{"Array":[{"Number":{"Finite":1.0}},"Hole","Undefined","Null"]},"special":{"Array":[{"Number":"NaN"},{"Number":"NegInfinity"},{"Number":"NegZero"}]}}}
	// 1 true true <nil>
	// [NaN -Inf] true
}
