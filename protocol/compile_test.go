package protocol_test

import (
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// A source compiled before is served from the cache with the same id and
// bytes; another source, or one whose program was evicted, is compiled.
func TestCompileIsCachedBySource(t *testing.T) {
	for _, jsonl := range []bool{false, true} {
		c := newSess(t, jsonl, protocol.Options{MaxPrograms: 2})
		compile := func(src string) reply {
			r := c.call("compile", nil, "", "source", src)
			if !r.ok() {
				t.Fatalf("compile %q: %s", src, r.err())
			}
			return r
		}
		program := func(r reply) string { return r.str("program_id") + string(r.bytes) + r.str("program_base64") }
		first := compile("fetch_data(1)")
		again := compile("fetch_data(1)")
		if len(program(first)) <= 64 || program(first) != program(again) {
			t.Fatal("a cached compile differs")
		}
		if n := c.s.Stats().Compiles; n != 1 {
			t.Fatalf("%d compiles for one source", n)
		}
		compile("fetch_data(2)")
		compile("fetch_data(3)") // evicts fetch_data(1)'s program
		if r := compile("fetch_data(1)"); program(r) != program(first) {
			t.Fatal("recompiling gives another program")
		}
		if n := c.s.Stats().Compiles; n != 4 {
			t.Fatalf("%d compiles, want 4", n)
		}
		// A failed compile is not cached and still fails.
		for range 2 {
			if r := c.call("compile", nil, "", "source", "let let"); r.ok() {
				t.Fatal("bad source compiled")
			}
		}
	}
}
