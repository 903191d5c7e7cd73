package value

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUTF16RoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		units []uint16
		wtf8  string
	}{
		{"empty", nil, ""},
		{"ascii", []uint16{'h', 'i', 0, 0x7F}, "hi\x00\x7f"},
		{"two-byte", []uint16{0xE9, 0x7FF}, "é\u07ff"},
		{"three-byte", []uint16{0x20AC, 0xFFFF, 0xD7FF, 0xE000}, "€\uffff\ud7ff\ue000"},
		{"U+FFFD itself", []uint16{0xFFFD}, "\uFFFD"},
		{"emoji pair", []uint16{0xD83D, 0xDE00}, "😀"},
		{"lowest pair", []uint16{0xD800, 0xDC00}, "\U00010000"},
		{"highest pair", []uint16{0xDBFF, 0xDFFF}, "\U0010FFFF"},
		{"lone high", []uint16{0xD800}, "\xed\xa0\x80"},
		{"lone high max", []uint16{0xDBFF}, "\xed\xaf\xbf"},
		{"lone low", []uint16{0xDC00}, "\xed\xb0\x80"},
		{"lone low max", []uint16{0xDFFF}, "\xed\xbf\xbf"},
		{"lone high at end", []uint16{'a', 0xD83D}, "a\xed\xa0\xbd"},
		{"lone high then text", []uint16{0xD83D, 'a'}, "\xed\xa0\xbda"},
		{"low then high is two lone units", []uint16{0xDE00, 0xD83D}, "\xed\xb8\x80\xed\xa0\xbd"},
		{"high high low", []uint16{0xD800, 0xD83D, 0xDE00}, "\xed\xa0\x80😀"},
		{"high low low", []uint16{0xD83D, 0xDE00, 0xDE00}, "😀\xed\xb8\x80"},
		{"mixed", []uint16{'x', 0xE9, 0xD83D, 0xDE00, 0xDC00, '!'}, "xé😀\xed\xb0\x80!"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.wtf8, FromUTF16(tc.units))
			got := ToUTF16(tc.wtf8)
			if len(tc.units) == 0 {
				assert.Empty(t, got)
			} else {
				assert.Equal(t, tc.units, got)
			}
			assert.True(t, ValidWTF8(tc.wtf8))
		})
	}
}

func TestFromUTF16PairNeverSplit(t *testing.T) {
	// Every surrogate pair must become one 4-byte sequence.
	for hi := uint16(0xD800); hi < 0xDC00; hi += 0x3F {
		for lo := uint16(0xDC00); lo <= 0xDFFF && lo >= 0xDC00; lo += 0x3F {
			s := FromUTF16([]uint16{hi, lo})
			require.Len(t, s, 4)
			require.True(t, utf8.ValidString(s))
			r, _ := utf8.DecodeRuneInString(s)
			require.Equal(t, 0x10000+(rune(hi-0xD800)<<10|rune(lo-0xDC00)), r)
		}
	}
}

func TestUTF16EveryUnit(t *testing.T) {
	for u := 0; u <= 0xFFFF; u++ {
		units := []uint16{'a', uint16(u), 'b'}
		s := FromUTF16(units)
		require.True(t, ValidWTF8(s), "unit %#04x", u)
		require.Equal(t, units, ToUTF16(s), "unit %#04x", u)
	}
}

func TestToUTF16Invalid(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []uint16
	}{
		{"stray continuation", "a\x80b", []uint16{'a', 0xFFFD, 'b'}},
		{"0xff", "\xff", []uint16{0xFFFD}},
		{"truncated 3-byte", "\xe2\x82", []uint16{0xFFFD, 0xFFFD}},
		{"truncated surrogate", "\xed\xa0", []uint16{0xFFFD, 0xFFFD}},
		{"overlong", "\xc0\xaf", []uint16{0xFFFD, 0xFFFD}},
		{"beyond U+10FFFF", "\xf4\x90\x80\x80", []uint16{0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD}},
		// Not WTF-8, but the units it spells are kept.
		{"surrogate pair as two 3-byte sequences", "\xed\xa0\xbd\xed\xb8\x80", []uint16{0xD83D, 0xDE00}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ToUTF16(tc.in))
		})
	}
}

func TestValidWTF8(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"", true},
		{"plain", true},
		{"é€😀", true},
		{"\xed\xa0\x80", true},
		{"\xed\xbf\xbf", true},
		{"\xed\xb0\x80\xed\xa0\x80", true}, // low then high
		{"\xed\xa0\x80x\xed\xb0\x80", true},
		{"\xed\xa0\x80\xed\xa0\x80", true},
		{"\xed\xa0\x80\xed\xb0\x80", false}, // a pair must use the 4-byte form
		{"\xed\xa0", false},
		{"\xed\xa0\x80\xff", false},
		{"\xff", false},
		{"\xc0\x80", false},
		{"\xf4\x90\x80\x80", false},
		{"\xf0\x9f\x98", false},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, ValidWTF8(tc.in), "%q", tc.in)
	}
}

func TestIsASCII(t *testing.T) {
	assert.True(t, IsASCII(""))
	assert.True(t, IsASCII("hello\x00\x7f"))
	assert.False(t, IsASCII("héllo"))
	assert.False(t, IsASCII("\x80"))
	assert.False(t, IsASCII("\xed\xa0\x80"))
}
