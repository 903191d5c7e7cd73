package protocol

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// stringPieces are the pieces of the strings appendString is tested on:
// every escape, multi-byte sequences, ill-formed bytes, WTF-8 surrogates,
// the two separators and their neighbours.
var stringPieces = []string{
	"a", "lorem ", `"`, `\`, "\n", "\r", "\t", "\x00", "\x1f", "\x7f", "é", "日本", "😀", "\ufffd",
	"\xed\xa0\x80", "\xed\xbf\xbf", "\xff", "\xc3", "\xe2\x82", "\xe2\x80", "\xf4\x90\x80\x80", "\xc0\x80",
	"\u2027", "\u2028", "\u2029", "\u202a", "–", "’",
}

// Both ways of writing a string give the same JSON, wherever its pieces
// fall against the blocks of the fast one, and the JSON reads back as
// the text (ill-formed bytes as U+FFFD, the separators as themselves).
func TestAppendStringWaysAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		var b strings.Builder
		for range r.IntN(80) {
			b.WriteString(stringPieces[r.IntN(len(stringPieces))])
			if r.IntN(4) == 0 {
				b.WriteString(strings.Repeat("x", r.IntN(70)))
			}
		}
		s := b.String()
		want := appendStringSeparators(nil, s)
		plain := strings.NewReplacer("\u2028", "x", "\u2029", "x").Replace(s)
		if got := appendString(nil, plain); string(got) != string(appendStringSeparators(nil, plain)) {
			t.Fatalf("%q: %s, byte by byte %s", plain, got, appendStringSeparators(nil, plain))
		}
		got := appendString(nil, s)
		if string(got) != string(want) {
			t.Fatalf("%q: %s, byte by byte %s", s, got, want)
		}
		if !utf8.Valid(got) || strings.Contains(string(got), "\u2028") || strings.Contains(string(got), "\u2029") {
			t.Fatalf("%q: written %q", s, got)
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q: %s does not read back: %v", s, got, err)
		}
	}
}

// BenchmarkAppendString writes 53 KB of console-like text, without and
// with a line separator in it.
func BenchmarkAppendString(b *testing.B) {
	text := strings.Repeat("lorem ipsum \"dolor\" sit <amet>, consectetur\n", 1200)
	for _, c := range []struct{ name, s string }{{"text", text}, {"separator", text + "\u2028"}} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 2*len(c.s))
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				buf = appendString(buf[:0], c.s)
			}
		})
	}
}
