package goja

import "testing"

// A string that carries a lone surrogate comes out of a method that changes
// nothing (or only cases or trims what is around it) with the surrogate
// intact, as in V8.
func TestLoneSurrogatesSurviveStringMethods(t *testing.T) {
	r := New()
	for src, want := range map[string]string{
		`'a\ud800b'.normalize()`:          `"a\ud800b"`,
		`'é\ud800é'.normalize('NFD')`:     "\"e\u0301\\ud800e\u0301\"",
		`'a\udc00b'.toUpperCase()`:        `"A\udc00B"`,
		`'ÀB\ud800'.toLowerCase()`:        `"àb\ud800"`,
		`'ß\ud800'.toUpperCase()`:         `"SS\ud800"`,
		`' \ud800 '.trim()`:               `"\ud800"`,
		`'\u00a0x\udfff\u2028'.trimEnd()`: "\"\u00a0x\\udfff\"",
		`' \ud800x'.trimStart()`:          `"\ud800x"`,
		`'\ud83d\ude00 '.trim()`:          `"😀"`,
		`'  ab  '.trim()`:                 `"ab"`,
		`'\ufeff\u3000ab\ufeff'.trim()`:   `"ab"`, // U+FEFF is white space, above the surrogates
		`'\ufeffa\ufeff'.trimStart()`:     "\"a\ufeff\"",
		`'é😀'.toUpperCase()`:              `"É😀"`,
	} {
		v, err := r.RunString(`JSON.stringify(` + src + `)`)
		if err != nil || v.String() != want {
			t.Errorf("%s: %v %v, want %s", src, v, err, want)
		}
	}
}
