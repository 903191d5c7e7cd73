package server

import (
	"github.com/evanw/esbuild/pkg/api"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/ast"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/parser"
)

// entryOf decides how code runs: EntryCall when the whole program is one
// function (an arrow function, a function expression or a lone function
// declaration, async or not), called with the inputs; EntryScript
// otherwise, whose completion value is the result. Code that does not
// parse runs as a script, for the sidecar to report its error with its
// position.
func entryOf(code string, lang host.Language) host.Entry {
	js := code
	if lang == host.TypeScript {
		res := api.Transform(code, api.TransformOptions{Loader: api.LoaderTS, Target: api.ESNext,
			LogLevel: api.LogLevelSilent})
		if len(res.Errors) > 0 {
			return host.EntryScript
		}
		js = string(res.Code)
	}
	prog, err := parser.ParseFile(nil, "", js, 0)
	if err != nil || prog == nil {
		return host.EntryScript
	}
	var body []ast.Statement
	for _, s := range prog.Body {
		if _, empty := s.(*ast.EmptyStatement); !empty {
			body = append(body, s)
		}
	}
	if len(body) != 1 {
		return host.EntryScript
	}
	switch s := body[0].(type) {
	case *ast.FunctionDeclaration:
		return host.EntryCall
	case *ast.ExpressionStatement:
		switch s.Expression.(type) {
		case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral:
			return host.EntryCall
		}
	}
	return host.EntryScript
}
