package engine

import (
	"reflect"
	"sort"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/ast"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/file"
)

// Reserved global names used by instrumented code (program format versions
// 1 and 2). The source of such a program may not use any identifier that
// starts with ReservedPrefix, so it cannot shadow them. Version 3 programs
// are metered by the interpreter and may use any name.
const (
	ReservedPrefix = "__mustard"
	meterName      = "__mustard_m"
	allocName      = "__mustard_a"
	jobMeterName   = "__mustard_j"
	completionName = "__mustard_cv"
)

// meterHooks are the meter calls as the compiler sees them: each is
// compiled as a hook call (goja.CompileASTWithHooks), which runs the meter's
// Go function without a JavaScript call.
var meterHooks = []goja.Hook{{Name: meterName, Args: 0}, {Name: jobMeterName, Args: 0}, {Name: allocName, Args: 1}}

// meterCall is inserted at every function entry and loop iteration.
const meterCall = meterName + "();"

// insertion is text added to the guest source at a byte offset of the
// original text. Insertions never contain line breaks, so line numbers are
// unchanged and only columns need mapping back.
type insertion struct {
	at    int // byte offset in the original source
	text  string
	close bool // closers sort before openers at the same offset
	level int  // nesting class at one offset: wrapper, statement, completion, expression
	seq   int
}

// Insertion levels: at one offset, a lower level encloses a higher one.
const (
	levelWrapper = iota
	levelStatement
	levelCompletion
	levelExpression
)

type visitKey struct {
	t reflect.Type
	p uintptr
}

// span is a function's source range, in original byte offsets.
type span struct{ start, end int }

type instrumenter struct {
	// checkOnly: the walk only checks the program (format version 3,
	// which the interpreter meters); nothing is inserted.
	checkOnly bool
	failed    bool // a position could not be determined
	with      bool // a with statement was seen, the first at withAt
	withAt    int
	// refuseEval: a direct call of eval fails validation (a compile's
	// check); evalAt is the first one's offset, -1 if none.
	refuseEval bool
	evalAt     int
	spans      []span
	seen       map[visitKey]bool
	src        string
	ins        []insertion
	seq        int
	errs       []string

	// The first legacy octal escape ("\01", "\8") in a string literal,
	// which strict-mode code may not contain, and what is wrong with it.
	escapeAt  int
	escapeMsg string
}

func newInstrumenter(src string) *instrumenter {
	return &instrumenter{src: src, seen: make(map[visitKey]bool, seenHint(src))}
}

func (in *instrumenter) add(at int, text string, close bool) {
	in.addAt(levelExpression, at, text, close)
}

func (in *instrumenter) addAt(level, at int, text string, close bool) {
	in.seq++
	in.ins = append(in.ins, insertion{at: at, text: text, close: close, level: level, seq: in.seq})
}

// off converts a parser index (1-based) to a byte offset.
func off(i file.Idx) int { return int(i) - 1 }

// bodyStart returns the offset just after the opening brace of a block and
// after any directive prologue ("use strict"), which must stay first.
func (in *instrumenter) bodyStart(b *ast.BlockStatement) int {
	at := off(b.LeftBrace) + 1
	for _, s := range b.List {
		es, ok := s.(*ast.ExpressionStatement)
		if !ok {
			break
		}
		if _, ok := es.Expression.(*ast.StringLiteral); !ok {
			break
		}
		at = in.statementEnd(s)
	}
	return at
}

// statementEnd returns the end offset of a statement including a trailing
// semicolon, which the parser leaves out of some statements' ranges.
func (in *instrumenter) statementEnd(s ast.Statement) int {
	end := off(s.Idx1())
	if _, isBlock := s.(*ast.BlockStatement); isBlock {
		return end
	}
	// Parentheses around an expression statement's expression lie outside
	// its range too: close as many as statementStart opened.
	open := 0
	if es, ok := s.(*ast.ExpressionStatement); ok {
		open = strings.Count(in.src[in.statementStart(s):off(es.Expression.Idx0())], "(")
	}
	i := end
	for i < len(in.src) {
		switch c := in.src[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c == ')' && open > 0:
			open--
			i++
			end = i
			continue
		case c == ';' && open == 0:
			return i + 1
		}
		break
	}
	return end
}

// statementStart returns a statement's start offset. goja's parser never
// sets IfStatement.If, and an expression statement's range starts inside
// any parentheses around its expression, so both are found by scanning back
// from the expression over parentheses and spaces.
func (in *instrumenter) statementStart(s ast.Statement) int {
	var from int
	switch s := s.(type) {
	case *ast.IfStatement:
		if s.If != 0 {
			return off(s.If)
		}
		from = off(s.Test.Idx0())
	case *ast.ExpressionStatement:
		from = off(s.Expression.Idx0())
	default:
		return off(s.Idx0())
	}
	i := from
	for i > 0 {
		c := in.src[i-1]
		if c == '(' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			i--
			continue
		}
		break
	}
	if _, isIf := s.(*ast.IfStatement); !isIf {
		// Back to the first opening parenthesis, not the spaces before it.
		for i < from && in.src[i] != '(' {
			i++
		}
		return i
	}
	if i >= 2 && in.src[i-2:i] == "if" {
		return i - 2
	}
	in.failed = true
	return 0
}

// meterLoopBody charges one tick per loop iteration.
func (in *instrumenter) meterLoopBody(body ast.Statement) {
	in.meterLoopBodyWith(body, meterCall)
}

// meterLoopBodyWith inserts call at the start of every iteration.
func (in *instrumenter) meterLoopBodyWith(body ast.Statement, call string) {
	if b, ok := body.(*ast.BlockStatement); ok {
		in.add(off(b.LeftBrace)+1, call, false)
		return
	}
	in.addAt(levelStatement, in.statementStart(body), "{"+call, false)
	in.addAt(levelStatement, in.statementEnd(body), "}", true)
}

// visit checks and instruments one node; walk calls it for every node in
// the tree.
func (in *instrumenter) visit(n ast.Node) {
	in.check(n)
	if !in.checkOnly {
		in.insertMeters(n)
	}
}

// check records what validation needs to know of a node: function ranges,
// with statements, legacy escapes and (for instrumented programs) reserved
// names.
func (in *instrumenter) check(n ast.Node) {
	switch n := n.(type) {
	case *ast.FunctionLiteral:
		in.spans = append(in.spans, span{off(n.Idx0()), off(n.Idx1())})
	case *ast.ArrowFunctionLiteral:
		in.spans = append(in.spans, span{off(n.Idx0()), off(n.Idx1())})
	case *ast.CallExpression:
		if id, ok := n.Callee.(*ast.Identifier); ok && id.Name == "eval" && in.refuseEval && in.evalAt < 0 {
			in.evalAt = off(id.Idx)
		}
	case *ast.WithStatement:
		if !in.with {
			in.with, in.withAt = true, off(n.With)
		}
	case *ast.StringLiteral:
		if in.escapeMsg == "" {
			if i, msg := legacyEscape(n.Literal); msg != "" {
				in.escapeAt, in.escapeMsg = off(n.Idx)+i, msg
			}
		}
	case *ast.Identifier:
		if !in.checkOnly && strings.HasPrefix(string(n.Name), ReservedPrefix) {
			in.errs = append(in.errs, string(n.Name))
		}
	}
}

// insertMeters inserts the metering calls of format versions 1 and 2.
func (in *instrumenter) insertMeters(n ast.Node) {
	switch n := n.(type) {
	case *ast.FunctionLiteral:
		if n.Body != nil {
			in.add(in.bodyStart(n.Body), meterCall, false)
		}
	case *ast.ArrowFunctionLiteral:
		switch b := n.Body.(type) {
		case *ast.BlockStatement:
			in.add(in.bodyStart(b), meterCall, false)
		case *ast.ExpressionBody:
			in.add(off(b.Expression.Idx0()), "("+meterName+"(),", false)
			in.add(off(b.Expression.Idx1()), ")", true)
		}
	case *ast.ObjectLiteral, *ast.ArrayLiteral, *ast.NewExpression:
		in.counted(n)
	case *ast.YieldExpression:
		// Resuming a generator costs about as much as a promise job.
		if n.Argument != nil {
			in.add(off(n.Argument.Idx0()), "("+jobMeterName+"(),", false)
			in.add(off(n.Argument.Idx1()), ")", true)
		} else {
			in.add(off(n.Yield)+len("yield"), " ("+jobMeterName+"(),undefined)", false)
		}
	case *ast.AwaitExpression:
		// Each await schedules a promise job, which costs far more than a
		// loop iteration.
		in.add(off(n.Argument.Idx0()), "("+jobMeterName+"(),", false)
		in.add(off(n.Argument.Idx1()), ")", true)
	case *ast.ClassStaticBlock:
		if n.Block != nil {
			in.add(off(n.Block.LeftBrace)+1, meterCall, false)
		}
	case *ast.ForStatement:
		in.meterLoopBody(n.Body)
	case *ast.ForInStatement:
		in.meterLoopBody(n.Body)
	case *ast.ForOfStatement:
		if n.Await {
			// Each iteration of for await awaits the iterator's result:
			// a promise job, as an await costs.
			in.meterLoopBodyWith(n.Body, jobMeterName+"();")
		} else {
			in.meterLoopBody(n.Body)
		}
	case *ast.WhileStatement:
		in.meterLoopBody(n.Body)
	case *ast.DoWhileStatement:
		in.meterLoopBody(n.Body)
	}
}

var (
	nodeType = reflect.TypeOf((*ast.Node)(nil)).Elem()
	fileType = reflect.TypeOf(file.File{})
)

// walk visits every ast.Node reachable from v. goja's ast package has no
// walker, so this follows struct fields by reflection; the tree depth is
// bounded by the pre-parse nesting check.
func (in *instrumenter) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if !v.IsNil() {
			in.walk(v.Elem())
		}
	case reflect.Struct:
		t := v.Type()
		info := astFieldsOf(t)
		if info.skip {
			return
		}
		// Nodes are pointers in goja's tree (or structs embedded by value in
		// one), so every node is reached here as an addressable struct.
		if v.CanAddr() {
			// The tree shares nodes (declaration lists repeat bindings), so
			// each node is instrumented once.
			key := visitKey{t, v.Addr().Pointer()}
			if in.seen[key] {
				return
			}
			in.seen[key] = true
			if info.node {
				in.visit(v.Addr().Interface().(ast.Node))
			}
		}
		for _, i := range info.fields {
			in.walk(v.Field(i))
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			in.walk(v.Index(i))
		}
	}
}

// apply returns the instrumented source and the insertions in order.
func (in *instrumenter) apply(prefix string) (string, []insertion, bool) {
	sort.SliceStable(in.ins, func(i, j int) bool {
		a, b := in.ins[i], in.ins[j]
		if a.at != b.at {
			return a.at < b.at
		}
		if a.close != b.close {
			return a.close
		}
		// Openers outermost first (lower level, then parents, which are
		// visited first); closers innermost first.
		if a.level != b.level {
			return a.level < b.level != a.close
		}
		if a.close {
			return a.seq > b.seq
		}
		return a.seq < b.seq
	})
	var sb strings.Builder
	sb.Grow(len(prefix) + len(in.src) + len(in.ins)*len(meterCall))
	sb.WriteString(prefix)
	last := 0
	for _, x := range in.ins {
		if x.at < last || x.at > len(in.src) {
			return "", nil, false
		}
		sb.WriteString(in.src[last:x.at])
		sb.WriteString(x.text)
		last = x.at
	}
	sb.WriteString(in.src[last:])
	return sb.String(), in.ins, !in.failed
}

// counted wraps an expression that allocates (object and array literals,
// new) in the allocation meter, which returns its argument. Function
// expressions are not wrapped: that would stop them taking their binding's
// name.
func (in *instrumenter) counted(n ast.Node) {
	end := off(n.Idx1())
	if ne, ok := n.(*ast.NewExpression); ok && ne.RightParenthesis > 0 {
		// goja ends `new X()` (no arguments) at the callee.
		end = off(ne.RightParenthesis) + 1
	}
	in.add(off(n.Idx0()), allocName+"(", false)
	in.add(end, ")", true)
}

// legacyEscape finds the first escape in a string literal's source text
// that strict-mode code may not contain (goja's parser accepts them in
// strict code too): a legacy octal escape (\1 to \7, or \0 followed by a
// digit) or \8 and \9. It returns the backslash's offset in raw and the
// SyntaxError's message, as V8 words it; "" when there is none.
func legacyEscape(raw string) (int, string) {
	for i := 0; i+1 < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		switch c := raw[i+1]; {
		case c == '0' && (i+2 >= len(raw) || raw[i+2] < '0' || raw[i+2] > '9'):
			// \0 alone is the NUL character.
		case c >= '0' && c <= '7':
			return i, "Octal escape sequences are not allowed in strict mode."
		case c == '8' || c == '9':
			return i, "\\8 and \\9 are not allowed in strict mode."
		}
		i++ // the escaped character is not a backslash
	}
	return 0, ""
}
