package server

import (
	"github.com/evanw/esbuild/pkg/api"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/ast"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/parser"
)

// entryOf decides how code runs, and returns the code to run: EntryCall
// when the whole program is one function (an arrow function, a function
// expression or a lone function declaration, async or not), called with
// the inputs; EntryScript otherwise, whose completion value is the
// result. A lone declaration evaluates to nothing, so its name is added
// after the code (on a line of its own: every position in the code stays
// where it was). Code that does not parse runs as a script, for the
// sidecar to report its error with its position.
func entryOf(code string, lang host.Language) (host.Entry, string) {
	prog := parse(code, lang)
	if prog == nil {
		return host.EntryScript, code
	}
	var body []ast.Statement
	for _, s := range prog.Body {
		if _, empty := s.(*ast.EmptyStatement); !empty {
			body = append(body, s)
		}
	}
	if len(body) != 1 {
		return host.EntryScript, code
	}
	switch s := body[0].(type) {
	case *ast.FunctionDeclaration:
		if s.Function.Name != nil {
			return host.EntryCall, code + "\n;" + string(s.Function.Name.Name)
		}
	case *ast.ExpressionStatement:
		switch s.Expression.(type) {
		case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral:
			return host.EntryCall, code
		}
	}
	return host.EntryScript, code
}

// parse parses code as the sidecar would: TypeScript read by the parser
// (its types dropped), or erased by esbuild where the parser leaves it;
// nil when it does not parse.
func parse(code string, lang host.Language) *ast.Program {
	if lang != host.TypeScript {
		prog, _ := parser.ParseFile(nil, "", code, 0)
		return prog
	}
	if prog, err := parser.ParseFile(nil, "", code, 0, parser.WithTypeScript); err == nil {
		return prog
	}
	res := api.Transform(code, api.TransformOptions{Loader: api.LoaderTS, Target: api.ESNext,
		LogLevel: api.LogLevelSilent})
	if len(res.Errors) > 0 {
		return nil
	}
	prog, _ := parser.ParseFile(nil, "", string(res.Code), 0)
	return prog
}
