package engine

import (
	"testing"
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// guestStringByUnits is guestString as it was before strings holding
// their Go text were taken as they are: the text if it is ASCII, else
// its UTF-16 units written as WTF-8.
func guestStringByUnits(s goja.String) string {
	str := s.String()
	for i := 0; i < len(str); i++ {
		if str[i] >= utf8.RuneSelf {
			u := make([]uint16, s.Length())
			for i := range u {
				u[i] = s.CharAt(i)
			}
			return value.FromUTF16(u)
		}
	}
	return str
}

// An export gives every kind of guest string the text and the size its
// units give, whether it takes the string's Go text or its units.
func TestExportedStringsAreTheirUnits(t *testing.T) {
	rt := goja.New()
	texts := []string{
		"plain ASCII, longer than sixteen bytes", "é", "café au lait, longer than sixteen bytes",
		"日本語のテキスト、長い文字列です", "😀 an emoji, longer than sixteen bytes",
		"\xff\xfe not UTF-8, longer than sixteen bytes", "\xed\xa0\x80 a lone surrogate as WTF-8, long",
	}
	var forms []func() goja.String
	for _, text := range texts {
		forms = append(forms, func() goja.String { return rt.ToValue(text).(goja.String) })
		if _, ok := rt.MustardStringUTF8(text); ok {
			forms = append(forms, func() goja.String { v, _ := rt.MustardStringUTF8(text); return v.(goja.String) })
		}
	}
	for _, src := range []string{
		`"abc".repeat(10)`, `"é".repeat(20)`, `String.fromCharCode(0xD800) + "abc".repeat(10)`,
		`"x" + String.fromCharCode(0xDC00, 0xD83D, 0xDE00)`, `JSON.stringify({ k: "ü".repeat(9) })`,
	} {
		forms = append(forms, func() goja.String {
			v, err := rt.RunString(src)
			if err != nil {
				t.Fatal(err)
			}
			return v.(goja.String)
		})
	}
	for _, form := range forms {
		twin := form()
		wantText, wantSize := guestStringByUnits(twin), uint64(twin.Length())
		if !goja.IsASCII(twin) {
			wantSize *= 3
		}
		s := form()
		if got := stringBytes(s); got != wantSize {
			t.Errorf("%q: size %d, want %d", wantText, got, wantSize)
		}
		if got := guestString(s); got != wantText {
			t.Errorf("exported %q, want %q", got, wantText)
		}
	}
}
