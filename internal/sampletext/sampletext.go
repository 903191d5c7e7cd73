// Package sampletext makes the tool results that tests and benchmarks feed
// guests: text shaped like real answers, deterministic for a seed.
package sampletext

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

var words = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"}

// JSONLike is about size bytes of pseudo-random JSON-like text (keys,
// numbers, words, booleans), like a web page or a query result: nothing in
// it repeats, and it compresses as such text does (to about 40% with zstd).
func JSONLike(r *rand.Rand, size int) string {
	var b strings.Builder
	b.Grow(size + 64)
	b.WriteString("{")
	for b.Len() < size-40 {
		fmt.Fprintf(&b, `"%s_%d":[%d,"%s%x",%t],`, words[r.IntN(len(words))], r.IntN(1e6), r.Int64N(1e12), words[r.IntN(len(words))], r.Uint32(), r.IntN(2) == 0)
	}
	b.WriteString(`"end":0}`)
	return b.String()
}
