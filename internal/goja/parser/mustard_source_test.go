package parser

import (
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/ast"
)

func TestArrowSourceKeepsParentheses(t *testing.T) {
	for src, want := range map[string]string{
		"(x => ({ x }))":           "x => ({ x })",
		"(x => (x))":               "x => (x)",
		"(x => ((x)) )":            "x => ((x))",
		"(x => x + 1)":             "x => x + 1",
		"(async () => (await 1))":  "async () => (await 1)",
		"((a, b) => { return a })": "(a, b) => { return a }",
		"(x => (x) /* c */)":       "x => (x)",
	} {
		prg, err := ParseFile(nil, "", src, 0, WithArrowSourceFix)
		if err != nil {
			t.Fatal(src, err)
		}
		fn := prg.Body[0].(*ast.ExpressionStatement).Expression.(*ast.ArrowFunctionLiteral)
		if fn.Source != want {
			t.Errorf("%s: source %q, want %q", src, fn.Source, want)
		}
	}
}

func TestArrowSourceUnchangedWithoutTheOption(t *testing.T) {
	prg, err := ParseFile(nil, "", "(x => ({ x }))", 0)
	if err != nil {
		t.Fatal(err)
	}
	if fn := prg.Body[0].(*ast.ExpressionStatement).Expression.(*ast.ArrowFunctionLiteral); fn.Source != "x => ({ x }" {
		t.Fatalf("source %q", fn.Source)
	}
}
