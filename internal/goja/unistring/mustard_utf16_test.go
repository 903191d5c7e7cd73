package unistring

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// scanRef is Scan as upstream wrote it: two range loops.
func scanRef(s string) []uint16 {
	if ASCIIPrefix(s) == len(s) {
		return nil
	}
	return append([]uint16{BOM}, utf16.Encode([]rune(s))...)
}

// checkScan compares Scan and UTF16Len on s with the range loops'.
func checkScan(t *testing.T, s string) {
	t.Helper()
	want := scanRef(s)
	if got := Scan(s); !slices.Equal(got, want) {
		t.Fatalf("Scan(%q) = %x, want %x", s, got, want)
	}
	if got, want := UTF16Len(s), len(utf16.Encode([]rune(s))); got != want {
		t.Fatalf("UTF16Len(%q) = %d, want %d", s, got, want)
	}
	if _, valid := UTF16LenValid(s); valid != utf8.ValidString(s) {
		t.Fatalf("UTF16LenValid(%q): valid %v", s, valid)
	}
}

// Every two bytes, and every three beginning with a three-byte lead,
// decode as a range loop decodes them, well-formed or not, alone and
// followed by ASCII that the word loop takes.
func TestScanDecodesEveryShortSequence(t *testing.T) {
	for a := range 256 {
		for b := range 256 {
			s := string([]byte{byte(a), byte(b)})
			checkScan(t, s)
			checkScan(t, s+"abcdefgh")
			if a >= 0xE0 && a <= 0xEF {
				for _, c := range []byte{0x00, 0x7F, 0x80, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF} {
					checkScan(t, s+string(c))
					checkScan(t, "x"+s+string(c)+"yz")
				}
			}
		}
	}
}

// Long strings of every kind of piece, ill-formed ones included, at
// random distances from the words' edges, convert as the range loops do.
func TestScanMixedText(t *testing.T) {
	pieces := []string{
		"a", "lorem ipsum ", "\x00", "\x7f", "é", "ß", "€", "日本語", "😀", "\U0010FFFF", "\uFFFF", "\u0800",
		"\xe0\xa0\x80", "\xed\x9f\xbf", "\xee\x80\x80",
		// ill-formed: overlong, surrogates, truncated, lone continuations, out of range
		"\xc0\x80", "\xc1\xbf", "\xe0\x9f\xbf", "\xed\xa0\x80", "\xed\xbf\xbf", "\xc3", "\xe2\x82", "\xf0\x9f\x98",
		"\x80", "\xbf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xff", "\xfe",
	}
	r := rand.New(rand.NewPCG(7, 16))
	for range 3000 {
		var b strings.Builder
		b.WriteString(strings.Repeat("p", r.IntN(20)))
		for range r.IntN(60) {
			b.WriteString(pieces[r.IntN(len(pieces))])
			if r.IntN(3) == 0 {
				b.WriteString(strings.Repeat("w", r.IntN(18)))
			}
		}
		checkScan(t, b.String())
	}
}

// BenchmarkScan converts 50 KB of text with accents, of Japanese, and of
// mostly ASCII with a rare accent.
func BenchmarkScan(b *testing.B) {
	base := strings.Repeat("lorem ipsum \"dolor\" sit <amet>, consectetur\n", 1200)
	for _, c := range []struct{ name, s string }{
		{"accents", strings.ReplaceAll(base, "e", "é")},
		{"japanese", strings.Repeat("日本語のテキスト、", 2000)},
		{"rare", base[:len(base)/2] + "é" + base[len(base)/2:]},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				Scan(c.s)
			}
		})
	}
}
