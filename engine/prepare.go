package engine

import (
	"errors"
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
func prepare(source string, bound *compileMemory, compiling bool) (*goja.Program, lineMap, error) {
	return prepareWith(source, bound, currentParseOptions, compiling)
}

// errNeedsTransform: the parser's TypeScript reading did not accept the
// source, which goes through the erasing transform instead.
var errNeedsTransform = errors.New("TypeScript source needs the erasing transform")

// prepareWith is prepare with the given parse options. With the
// parser's TypeScript reading, a source it does not parse fails with
// errNeedsTransform.
func prepareWith(source string, bound *compileMemory, opts []parser.Option, compiling bool) (*goja.Program, lineMap, error) {
	typeScript := len(opts) > len(currentParseOptions)
	text := source
	prg, err := parser.ParseFile(nil, "", text, 0, bound.parseOptions(opts)...)
	var completion *ast.ArrowFunctionLiteral
	if err != nil {
		// A script cannot await; a program that does runs as the body of
		// an async arrow function (which, like a script, has no arguments
		// object and sees the global this) returning the completion value
		// of its statements, as the script's would be.
		if bound.failed() {
			return nil, lineMap{}, parseError(err)
		}
		if !strings.Contains(source, "await") {
			if typeScript {
				return nil, lineMap{}, errNeedsTransform
			}
			return nil, lineMap{}, parseError(err)
		}
		text = tlaOpen + source + tlaClose
		wrapped, werr := parser.ParseFile(nil, "", text, 0, bound.parseOptions(opts)...)
		if werr != nil {
			if typeScript && !bound.failed() {
				return nil, lineMap{}, errNeedsTransform
			}
			return nil, lineMap{}, parseError(err)
		}
		prg = wrapped
		completion = prg.Body[0].(*ast.ExpressionStatement).Expression.(*ast.CallExpression).Callee.(*ast.ArrowFunctionLiteral)
	}
	base := 0 // where the guest's text starts in the parsed text
	if completion != nil {
		base = len(tlaOpen)
	}
	in := &instrumenter{src: text, seen: make(map[visitKey]bool, seenHint(text)), checkOnly: true, refuseEval: compiling, evalAt: -1}
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
func prepareTypeScript(source string, bound *compileMemory, compiling bool) (*goja.Program, lineMap, error) {
	// Most TypeScript is JavaScript with types added: the parser reads
	// the types and drops them, and the program is the source itself.
	// The rest (enum, namespace, parameter properties, decorators,
	// angle-bracket assertions, errors) is erased by esbuild.
	if !alwaysTransformTypeScript {
		before := bound.save()
		compiled, lines, err := prepareWith(source, bound, typeScriptParseOptions, compiling)
		if err != errNeedsTransform {
			return compiled, lines, err
		}
		bound.restore(before)
	}
	e, err := eraseTypes(source, bound)
	if err != nil {
		return nil, lineMap{}, err
	}
	compiled, lines, err := prepare(e.js, bound, compiling)
	if err != nil {
		return nil, lineMap{}, remapError(err, e.where)
	}
	lines.ts = e.where
	return compiled, lines, nil
}

// typeScriptParseOptions read TypeScript's types (see prepareTypeScript).
var typeScriptParseOptions = append(currentParseOptions[:len(currentParseOptions):len(currentParseOptions)], parser.WithTypeScript)

// alwaysTransformTypeScript sends every TypeScript source through the
// erasing transform; tests set it to compare the two ways.
var alwaysTransformTypeScript = false

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
