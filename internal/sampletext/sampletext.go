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

// Records is a query result of about size bytes as JSON: an object whose
// "items" are records of an id, a title, a score, two tags and a flag,
// and whose "total" counts them. Tool answers are more often such objects
// than text, and a guest reaches into them: each record becomes objects,
// arrays and strings of the guest's own.
func Records(r *rand.Rand, size int) map[string]any {
	var items []any
	n := len(`{"items":[],"total":000000}`)
	for n < size {
		it := map[string]any{
			"id":    fmt.Sprintf("item-%d", r.IntN(1e6)),
			"title": fmt.Sprintf("%s %s %x", words[r.IntN(len(words))], words[r.IntN(len(words))], r.Uint32()),
			"score": float64(r.IntN(1e4)) / 100,
			"tags":  []any{words[r.IntN(len(words))], words[r.IntN(len(words))]},
			"open":  r.IntN(2) == 0,
		}
		items = append(items, it)
		n += recordLen(it) + 1 // and a comma
	}
	return map[string]any{"items": items, "total": len(items)}
}

// recordLen is the length of one record of Records as compact JSON.
func recordLen(it map[string]any) int {
	tags := it["tags"].([]any)
	return len(fmt.Sprintf(`{"id":%q,"open":%t,"score":%v,"tags":[%q,%q],"title":%q}`,
		it["id"], it["open"], it["score"], tags[0], tags[1], it["title"]))
}
