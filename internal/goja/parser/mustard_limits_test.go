package parser

import (
	"strings"
	"testing"
)

func TestMaxDepth(t *testing.T) {
	for _, c := range []struct {
		name string
		src  func(n int) string
	}{
		{"brackets", func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }},
		{"prefix operators", func(n int) string { return strings.Repeat("!", n) + "1" }},
		{"addition chain", func(n int) string { return "1" + strings.Repeat("+1", n) }},
		{"member chain", func(n int) string { return "a" + strings.Repeat(".b", n) }},
		{"blocks", func(n int) string { return strings.Repeat("{", n) + strings.Repeat("}", n) }},
		{"templates", func(n int) string { return strings.Repeat("`${", n) + "1" + strings.Repeat("}`", n) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := ParseFile(nil, "", c.src(50), 0, WithMaxDepth(100)); err != nil {
				t.Fatalf("50 levels under a limit of 100: %v", err)
			}
			_, err := ParseFile(nil, "", c.src(200000), 0, WithMaxDepth(100))
			if err == nil || !strings.Contains(err.Error(), "source nesting exceeds 100 levels") {
				t.Fatalf("200,000 levels: %v", err)
			}
			// Without the option the parser is as upstream.
			if _, err := ParseFile(nil, "", c.src(500), 0); err != nil {
				t.Fatalf("no limit: %v", err)
			}
		})
	}
}

func TestMaxTokensPerByte(t *testing.T) {
	defer func(a int) { tokenAllowance = a }(tokenAllowance)
	tokenAllowance = 0
	if _, err := ParseFile(nil, "", strings.Repeat("a; ", 1000), 0, WithMaxTokensPerByte(1)); err != nil {
		t.Fatalf("one token per byte is within 1/byte: %v", err)
	}
	// An arrow function whose parameter list first parsed as an expression
	// is scanned again from its mark: more tokens than bytes.
	src := strings.Repeat("(a=1)=>1;", 1000)
	if _, err := ParseFile(nil, "", src, 0, WithMaxTokensPerByte(2)); err != nil {
		t.Fatalf("within 2/byte: %v", err)
	}
	_, err := ParseFile(nil, "", src, 0, WithMaxTokensPerByte(1))
	if err == nil || !strings.Contains(err.Error(), "source is too complex to parse") {
		t.Fatalf("past 1/byte: %v", err)
	}
}

func TestTokenCheck(t *testing.T) {
	src := strings.Repeat("a; ", 10000) // 20,000 tokens
	var seen []int
	if _, err := ParseFile(nil, "", src, 0, WithTokenCheck(1000, func(n int) bool {
		seen = append(seen, n)
		return true
	})); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 20 || seen[0] != 1000 || seen[19] != 20000 {
		t.Fatalf("checked at %v, want every 1,000 tokens up to 20,000", seen)
	}
	_, err := ParseFile(nil, "", src, 0, WithTokenCheck(1000, func(n int) bool { return n < 5000 }))
	if err == nil || !strings.Contains(err.Error(), TooLargeMessage) {
		t.Fatalf("a check that says no: %v", err)
	}
}
