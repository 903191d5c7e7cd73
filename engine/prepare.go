package engine

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/ast"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/parser"
)

// prepare parses and compiles a program of format version 3: the guest's
// own text, parsed once, compiled as strict-mode code that the interpreter
// meters (goja.SetStepMeter counts every instruction executed; the
// compiler adds an allocation report at each object literal, array literal
// and new expression). Nothing is inserted into the text, so every
// function's source, name and position is the guest's own.
func prepare(source string, bound *compileMemory) (*goja.Program, lineMap, error) {
	text := source
	prg, err := parser.ParseFile(nil, "", text, 0, bound.parseOptions(currentParseOptions)...)
	var completion *ast.ArrowFunctionLiteral
	if err != nil {
		// A script cannot await; a program that does runs as the body of
		// an async arrow function (which, like a script, has no arguments
		// object and sees the global this) returning the completion value
		// of its statements, as the script's would be.
		if !strings.Contains(source, "await") || bound.failed() {
			return nil, lineMap{}, parseError(err)
		}
		text = tlaOpen + source + tlaClose
		wrapped, werr := parser.ParseFile(nil, "", text, 0, bound.parseOptions(currentParseOptions)...)
		if werr != nil {
			return nil, lineMap{}, parseError(err)
		}
		prg = wrapped
		completion = prg.Body[0].(*ast.ExpressionStatement).Expression.(*ast.CallExpression).Callee.(*ast.ArrowFunctionLiteral)
	}
	base := 0 // where the guest's text starts in the parsed text
	if completion != nil {
		base = len(tlaOpen)
	}
	in := &instrumenter{src: text, seen: map[visitKey]bool{}, checkOnly: true}
	in.walk(reflect.ValueOf(prg))
	if err := in.validate(true, base); err != nil {
		return nil, lineMap{}, err
	}
	var ins []insertion
	spans := in.spans
	if completion != nil {
		if err := checkTopLevelReturns(completion, source, base); err != nil {
			return nil, lineMap{}, err
		}
		// Positions map back onto the guest's text: the wrapper is an
		// insertion at each end, and not a function of the guest's.
		ins = []insertion{{at: 0, text: tlaOpen, level: levelWrapper}, {at: len(source), text: tlaClose, close: true, level: levelWrapper}}
		spans = nil
		for _, sp := range in.spans {
			if sp.start >= base {
				spans = append(spans, span{sp.start - base, sp.end - base})
			}
		}
	}
	lines := newLineMap(source, ins, spans)
	compiled, cerr := goja.MustardCompile(prg, true, goja.MustardCompileOptions{Metered: true, Completion: completion})
	if cerr != nil {
		return nil, lineMap{}, compileError(cerr, lines)
	}
	return compiled, lines, nil
}

// prepareTypeScript erases a TypeScript program's types and prepares the
// JavaScript that leaves as any version 3 program; positions in its
// errors and tracebacks are the TypeScript source's.
func prepareTypeScript(source string, bound *compileMemory) (*goja.Program, lineMap, error) {
	e, err := eraseTypes(source, bound)
	if err != nil {
		return nil, lineMap{}, err
	}
	compiled, lines, err := prepare(e.js, bound)
	if err != nil {
		return nil, lineMap{}, remapError(err, e.where)
	}
	lines.ts = e.where
	return compiled, lines, nil
}

// The top-level-await wrapper of a version 3 program.
const (
	tlaOpen  = "(async()=>{"
	tlaClose = "\n})()"
)

// checkTopLevelReturns refuses a return statement outside any function in
// a program run as the body of the wrapper fn: a script may not return.
// The guest's text starts at offset base of the wrapped text.
func checkTopLevelReturns(fn *ast.ArrowFunctionLiteral, source string, base int) error {
	var topLevel []ast.Statement
	collectTopLevel(fn.Body.(*ast.BlockStatement).List, &topLevel)
	for _, st := range topLevel {
		if r, ok := st.(*ast.ReturnStatement); ok {
			if at := off(r.Return) - base; at >= 0 && at < len(source) {
				line, col := position(source, at)
				return &Error{Kind: KindParse, Message: fmt.Sprintf("Illegal return statement (%d:%d)", line, col)}
			}
		}
	}
	return nil
}
