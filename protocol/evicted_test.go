package protocol

import (
	"fmt"
	"testing"
)

// The evicted-id set remembers the latest maxEvictedIDs ids and forgets
// the oldest first.
func TestEvictedIDsBounded(t *testing.T) {
	var e evictedIDs
	for i := range maxEvictedIDs + 10 {
		e.add(fmt.Sprint(i))
		e.add(fmt.Sprint(i)) // again: no second slot
	}
	if len(e.set) != maxEvictedIDs || len(e.ring) != maxEvictedIDs {
		t.Fatalf("holds %d ids in %d slots", len(e.set), len(e.ring))
	}
	for i := range 10 {
		if e.has(fmt.Sprint(i)) {
			t.Fatalf("still holds %d", i)
		}
	}
	for i := 10; i < maxEvictedIDs+10; i++ {
		if !e.has(fmt.Sprint(i)) {
			t.Fatalf("forgot %d", i)
		}
	}
}
