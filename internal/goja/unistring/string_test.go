package unistring

import ( // mustard(unistring-ascii)
	"strings"
	"testing"
)

func TestString_AsUtf16(t *testing.T) {
	const str = "más"
	s := NewFromString(str)

	if b := s.AsUtf16(); len(b) != 4 || b[0] != BOM {
		t.Fatal(b)
	}

	if s.String() != str {
		t.Fatal(s)
	} // mustard(unistring-ascii)
}

// Scan finds a non-ASCII character wherever it falls against the eight
// bytes it reads at a time, and returns nil only for ASCII.
func TestScanEveryPosition(t *testing.T) {
	for n := 0; n < 24; n++ {
		ascii := strings.Repeat("a", n)
		if Scan(ascii) != nil {
			t.Fatalf("%d ASCII bytes scanned as unicode", n)
		}
		for at := 0; at <= n; at++ {
			s := ascii[:at] + "é" + ascii[at:]
			u := Scan(s)
			if len(u) != n+2 || u[0] != BOM || u[at+1] != 'é' {
				t.Fatalf("é at %d of %d: %v", at, n, u)
			}
		}
	}
}

// ASCIIPrefix stops at the first non-ASCII byte wherever it falls against
// the 32 and the eight bytes it reads at a time. // mustard(unistring-ascii)
func TestASCIIPrefixEveryPosition(t *testing.T) {
	for n := 0; n < 80; n++ {
		ascii := strings.Repeat("a", n)
		if got := ASCIIPrefix(ascii); got != n {
			t.Fatalf("%d ASCII bytes: prefix %d", n, got)
		}
		for at := 0; at <= n; at++ {
			if got := ASCIIPrefix(ascii[:at] + "é" + ascii[at:]); got != at {
				t.Fatalf("é at %d of %d: prefix %d", at, n, got)
			}
		}
	}
}
