package parser

import (
	"regexp/syntax"
	"strings"
	"testing"
)

// RegexpInsts is close to the size of the program Go's regexp builds.
func TestRegexpInstsEstimatesProgram(t *testing.T) {
	for _, src := range []string{
		`abc`, `x{1000}`, `x{0,1000}`, `(?:ab|cd){2,500}`, `[a-z]{1,1000}@\d+`, `(a+)+b`, `(?i:hello)*`,
		`(?:x{100}){10}`, `(?s:.)*?(a|b|c|d){50}`, `^\s*(\w+)\s*=\s*(\w{3,40})$`,
	} {
		re, err := syntax.Parse(src, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := syntax.Compile(re.Simplify())
		if err != nil {
			t.Fatal(err)
		}
		real, est := int64(len(prog.Inst)), RegexpInsts(src)
		// The program adds a capture around the whole, a match and a
		// fail: four instructions.
		if est < real/2-4 || est > 2*real {
			t.Errorf("%s: estimated %d instructions, the program has %d", src, est, real)
		}
	}
	if n := RegexpInsts(strings.Repeat("x{1000}", 3000) + "y"); n != 3000001 {
		t.Errorf("'x{1000}'.repeat(3000)+'y': %d", n)
	}
	if n := RegexpInsts(`(`); n != 0 {
		t.Errorf("an invalid pattern: %d", n)
	}
}

// A regular expression literal counts the program it compiles to against
// the parse's work bounds, before anything is built.
func TestRegexpLiteralCountsItsProgram(t *testing.T) {
	huge := "var r = /" + strings.Repeat("x{1000}", 3000) + "y/;"
	for _, flags := range []string{"", "u", "gi", "msy"} {
		src := strings.TrimSuffix(huge, ";") + flags + ";"
		_, err := ParseFile(nil, "", src, 0, WithMaxTokensPerByte(4))
		if err == nil || !strings.Contains(err.Error(), "source is too complex to parse") {
			t.Fatalf("flags %q: %v", flags, err)
		}
	}
	var seen int
	_, err := ParseFile(nil, "", huge, 0, WithTokenCheck(4096, func(n int) bool { seen = n; return n < 1e6 }))
	if err == nil || !strings.Contains(err.Error(), TooLargeMessage) || seen < 1e6 {
		t.Fatalf("%v after %d tokens", err, seen)
	}
	// Ordinary literals, and any without the bounds, parse as before.
	for _, src := range []string{"var r = /x{1000}y/, s = /[a-z]{1,1000}/g, u = /(?<=a)b/;", huge} {
		opts := []Option{WithMaxTokensPerByte(4)}
		if src == huge {
			opts = nil
		}
		if _, err := ParseFile(nil, "", src, 0, opts...); err != nil {
			t.Errorf("%.40s: %v", src, err)
		}
	}
}

// A property escape is rewritten into its set's ranges (\p{L}: about 14
// KB of pattern), which a literal counts as tokens.
func TestRegexpLiteralCountsPropertyEscapes(t *testing.T) {
	src := "var r = /" + strings.Repeat(`\p{L}`, 2000) + "/u;"
	_, err := ParseFile(nil, "", src, 0, WithMaxTokensPerByte(4))
	if err == nil || !strings.Contains(err.Error(), "source is too complex to parse") {
		t.Fatalf("%v", err)
	}
	// Without u, \p{L} is text; and a few escapes parse.
	for _, src := range []string{"var r = /" + strings.Repeat(`\p{L}`, 2000) + "/;", `var r = /\p{L}+\P{Lu}[\p{sc=Greek}\d]/u;`} {
		if _, err := ParseFile(nil, "", src, 0, WithMaxTokensPerByte(4)); err != nil {
			t.Errorf("%.40s: %v", src, err)
		}
	}
}

func TestExpandPropertyEscapes(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{`a\p{ASCII}b`, `a[\u{0}-\u{7f}]b`},
		{`[\P{ASCII}x]`, `[\u{80}-\u{10ffff}x]`},
		{`\\p{ASCII}`, `\\p{ASCII}`},
		{`[\p{Any}]\P{Any}`, `[\u{0}-\u{10ffff}][]`},
		{`\p{Nope}`, `\p{Nope}`},
	} {
		if got, _, _ := ExpandPropertyEscapes(c.in); got != c.out {
			t.Errorf("%s: %s, want %s", c.in, got, c.out)
		}
	}
}
