package regexp2

import "testing"

// A class whose ranges cover everything but a gap, then more: the class
// stays the union of what it lists (canonicalize inverts it only once it
// is whole).
func TestClassInvertedOnlyWhenWhole(t *testing.T) {
	for _, c := range []struct {
		pattern string
		in, out []string
	}{
		{`^[\u{0}-\u{1000}\u{2000}-\u{10ffff}\d]$`, []string{"0", " ", "\x00", "a", "\u2000"}, []string{"\u1500"}},
		{`^[\u{1}-\u{10ffff}\d]$`, []string{"0", "a"}, []string{"\x00"}},
		{`^[\u{0}-\u{10fffe}x]$`, []string{"x", "\x00"}, []string{"\U0010ffff"}},
		{`^[\u{0}-\u{40}\u{60}-\u{10ffff}A-C]$`, []string{"A", "C", "@", "`"}, []string{"D", "_"}},
		{`^[^\u{0}-\u{40}\u{60}-\u{10ffff}A-C]$`, []string{"D", "_"}, []string{"A", "@"}},
	} {
		re := MustCompile(c.pattern, ECMAScript|Unicode)
		for _, s := range c.in {
			if m, _ := re.MatchString(s); !m {
				t.Errorf("%s does not match %q", c.pattern, s)
			}
		}
		for _, s := range c.out {
			if m, _ := re.MatchString(s); m {
				t.Errorf("%s matches %q", c.pattern, s)
			}
		}
	}
}
