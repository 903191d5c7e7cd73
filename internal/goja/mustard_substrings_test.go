package goja

import (
	"strings"
	"testing"
	"unsafe"
)

// No piece of an ASCII string a guest can keep shares its source's memory:
// the heap walk counts a piece by its own length, so a shared one would
// hold its whole source uncounted.
func TestMustardASCIIPiecesOwnTheirMemory(t *testing.T) {
	// A Go string handed to the guest, so its memory is known here.
	big := "  " + strings.Repeat("ab,bb;", 1000) + "x" + strings.Repeat(" ", 5000)
	base := uintptr(unsafe.Pointer(unsafe.StringData(big)))
	shares := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		return len(s) > 0 && p >= base && p < base+uintptr(len(big))
	}
	cases := map[string]string{
		"slice":              `big.slice(2, 4)`,
		"slice most":         `big.slice(1)`,
		"substring":          `big.substring(2, 10)`,
		"substr":             `big.substr(3, 5)`,
		"charAt":             `big.charAt(2)`,
		"at":                 `big.at(-7)`,
		"index":              `big[3]`,
		"String object":      `new String(big)[4]`,
		"split":              `big.split(';')[1]`,
		"split chars":        `big.split('')[2]`,
		"split regexp":       `big.split(/;/)[1]`,
		"match":              `big.match(/b+/)[0]`,
		"match global":       `big.match(/ab,b/g)[7]`,
		"exec group":         `/(a)(b),/.exec(big)[2]`,
		"named group":        `/(?<x>bb);/.exec(big).groups.x`,
		"matchAll":           `[...big.matchAll(/(b+);/g)][3][1]`,
		"replace callback":   `{ let k; big.replace(/(ab),/, (m, g) => (k = g, '')); k }`,
		"replace string cb":  `{ let k; big.replace('bb;', m => (k = m, '')); k }`,
		"replaceAll cb":      `{ let k = []; big.replaceAll('ab', m => (k.push(m), '')); k[5] }`,
		"trim":               `big.trim()`,
		"trimStart":          `big.trimStart()`,
		"trimEnd":            `big.trimEnd().slice(-3)`,
		"iterator":           `[...big.slice(0, 8)][4]`,
		"destructuring":      `{ const [, , c] = big; c }`,
		"JSON.parse":         `JSON.parse('"' + big.slice(2, 40) + '"')`,
		"key":                `Object.keys({ [big.slice(2, 9)]: 1 })[0]`,
		"replace keeps rest": `big.replace(/^ */, '')`,
	}
	for name, expr := range cases {
		t.Run(name, func(t *testing.T) {
			r := New()
			if err := r.Set("big", big); err != nil {
				t.Fatal(err)
			}
			v, err := r.RunString(expr)
			if err != nil {
				t.Fatal(err)
			}
			s, ok := v.(asciiString)
			if !ok {
				t.Fatalf("%s is a %T, want an ASCII string", v, v)
			}
			if len(s) == 0 || len(s) >= len(big) {
				t.Fatalf("%.40q is not a piece of the source", s)
			}
			if shares(string(s)) {
				t.Errorf("%.40q shares the source's memory", s)
			}
		})
	}
}

// The whole string is itself, not a copy; a piece is a copy of its bytes.
func TestMustardASCIIPiece(t *testing.T) {
	s := asciiString("hello, world")
	if p := asciiPiece(s, 0, len(s)); unsafe.StringData(string(p)) != unsafe.StringData(string(s)) {
		t.Error("the whole string was copied")
	}
	for _, c := range [][2]int{{0, 0}, {3, 4}, {0, 5}, {7, 12}, {1, 11}} {
		p := asciiPiece(s, c[0], c[1])
		if string(p) != string(s[c[0]:c[1]]) {
			t.Errorf("piece %v is %q", c, p)
		}
		if len(p) > 0 && unsafe.StringData(string(p)) == unsafe.StringData(string(s[c[0]:])) {
			t.Errorf("piece %v shares its source", c)
		}
		if n := asciiPieceBytes(s, c[1]-c[0]); len(p) > 1 && n != len(p) || len(p) <= 1 && n != 0 {
			t.Errorf("piece %v reported %d bytes", c, n)
		}
	}
	if testing.AllocsPerRun(100, func() { _ = asciiPiece(s, 4, 5) }) != 0 {
		t.Error("a one-character piece allocates")
	}
}

// What copying pieces costs programs that cut many: 1,000 slices of 20
// characters, a split into 300 pieces, and 300 matches with a group.
func BenchmarkMustardASCIIPieces(b *testing.B) {
	for name, src := range map[string]string{
		"slice":  `var s = 'abcdefghij'.repeat(100), n = 0; for (var i = 0; i < 1000; i++) n += s.slice(i % 100, i % 100 + 20).length; n`,
		"split":  `'ab,cd,efg,'.repeat(100).split(',').length`,
		"groups": `var n = 0; for (const m of 'id=12; name=ab; '.repeat(150).matchAll(/(\w+)=(\w+)/g)) n += m[2].length; n`,
	} {
		b.Run(name, func(b *testing.B) {
			r := New()
			p := MustCompile("", src, false)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.RunProgram(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
