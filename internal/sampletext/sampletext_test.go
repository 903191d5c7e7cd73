package sampletext

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestRecordsSizeAndSeed(t *testing.T) {
	for _, size := range []int{100, 5_000, 50_000} {
		v := Records(rand.New(rand.NewPCG(1, 2)), size)
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		// recordLen counts what encoding/json writes, so the text ends
		// within one record past size.
		if len(b) < size || len(b) > size+150 {
			t.Errorf("Records(%d) is %d bytes of JSON", size, len(b))
		}
		if again := Records(rand.New(rand.NewPCG(1, 2)), size); !reflect.DeepEqual(v, again) {
			t.Errorf("Records(%d) differs for the same seed", size)
		}
		if n := len(v["items"].([]any)); v["total"] != n {
			t.Errorf("total %v for %d items", v["total"], n)
		}
	}
}

func TestJSONLikeSize(t *testing.T) {
	s := JSONLike(rand.New(rand.NewPCG(1, 2)), 50_000)
	if len(s) < 49_900 || len(s) > 50_100 || !json.Valid([]byte(s)) {
		t.Errorf("JSONLike(50000): %d bytes, valid %v", len(s), json.Valid([]byte(s)))
	}
}
