package parser

import (
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/ast"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/file"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/token"
)

// TypeScript's type syntax, read and dropped (a mustard-sidecar addition to
// goja; see PATCHES.md).
//
// With WithTypeScript the parser accepts the TypeScript whose JavaScript is
// the source with its types deleted: annotations, type parameters and
// arguments, `as`, `satisfies` and `!` assertions, type aliases,
// interfaces, `declare`d names, overload signatures, abstract and declared
// class members, access modifiers, `implements`. It reads each type by
// TypeScript's grammar and builds nothing for it, so the AST is the erased
// program's and every position is the source's own.
//
// TypeScript that emits code (enum, namespace, parameter properties,
// decorators), angle-bracket assertions, generic arrow functions, and the
// one ambiguity TypeScript resolves by a rule this parser does not follow
// (an arrow function with a return type in the true branch of a
// conditional) fail the parse: the embedder then erases the source with a
// full TypeScript transform instead. Everything here is off without the
// option.

// WithTypeScript makes the parser read TypeScript's type syntax.
func WithTypeScript(opts *options) { opts.typeScript = true }

// UnsupportedTypeScript is the message of a parse that met TypeScript this
// parser does not erase.
const UnsupportedTypeScript = "TypeScript syntax that needs the full transform"

func (self *_parser) ts() bool { return self.opts.typeScript }

// tsUnsupported ends the parse, whatever a lookahead would restore.
func (self *_parser) tsUnsupported() {
	panic(bailOut{UnsupportedTypeScript})
}

// tsOK reports whether no error was added since a mark.
func (self *_parser) tsOK(st *parserState) bool { return len(self.errors) == st.errorCount }

// newlineBefore reports whether a line break separates the current token
// from the one before it.
func (self *_parser) newlineBefore() bool {
	from, to := int(self.prevEnd)-self.base, int(self.idx)-self.base
	if from < 0 {
		from = 0
	}
	if to > len(self.str) {
		to = len(self.str)
	}
	return from < to && strings.ContainsAny(self.str[from:to], "\n\r\u2028\u2029")
}

// tsNext consumes a token that may end a type: a line break after it
// allows an automatic semicolon, as after an identifier.
func (self *_parser) tsNext() {
	self.insertSemicolon = true
	self.next()
}

func (self *_parser) isWord(w string) bool {
	return self.token == token.IDENTIFIER && self.literal == w
}

// tsPeek is the token after the current one, its literal, and whether a
// line break precedes it.
func (self *_parser) tsPeek() (tok token.Token, literal string, newline bool) {
	var st parserState
	self.mark(&st)
	self.next()
	tok, literal, newline = self.token, self.literal, self.newlineBefore()
	self.restore(&st)
	return
}

func (self *_parser) tsExpect(tok token.Token) bool {
	if self.token != tok {
		self.errorUnexpectedToken(self.token)
		return false
	}
	self.tsNext()
	return true
}

// tsExpectGreater consumes a ">" closing type parameters or arguments,
// splitting the longer tokens the lexer made of it (">>", ">=", ...).
func (self *_parser) tsExpectGreater() bool {
	switch self.token {
	case token.GREATER:
		self.tsNext()
		return true
	case token.SHIFT_RIGHT, token.UNSIGNED_SHIFT_RIGHT, token.GREATER_OR_EQUAL,
		token.SHIFT_RIGHT_ASSIGN, token.UNSIGNED_SHIFT_RIGHT_ASSIGN:
		self.offset = int(self.idx) - self.base + 1
		self.read()
		self.tsNext()
		return true
	}
	self.errorUnexpectedToken(self.token)
	return false
}

// --- Types ---

// tsType reads a type.
func (self *_parser) tsType() { self.tsTypeWith(true) }

func (self *_parser) tsTypeWith(conditional bool) {
	defer self.unwind(self.depth)
	self.enter()
	outer := self.tsNoConditional
	self.tsNoConditional = !conditional
	defer func() { self.tsNoConditional = outer }()
	if self.tsFunctionType() {
		return
	}
	errs := len(self.errors)
	self.tsUnion()
	if conditional && len(self.errors) == errs && self.token == token.EXTENDS && !self.newlineBefore() {
		self.tsNext()
		self.tsTypeWith(false)
		if self.tsExpect(token.QUESTION_MARK) {
			self.tsType()
			if self.tsExpect(token.COLON) {
				self.tsType()
			}
		}
	}
}

// tsFunctionType reads a function or constructor type, if one starts here.
func (self *_parser) tsFunctionType() bool {
	switch {
	case self.token == token.LESS:
		self.tsTypeParameters()
		self.tsSignatureRest(true)
		return true
	case self.token == token.NEW:
		self.tsNext()
		if self.token == token.LESS {
			self.tsTypeParameters()
		}
		self.tsSignatureRest(true)
		return true
	case self.isWord("abstract"):
		if tok, _, _ := self.tsPeek(); tok == token.NEW {
			self.tsNext()
			return self.tsFunctionType()
		}
	case self.token == token.LEFT_PARENTHESIS:
		var st parserState
		self.mark(&st)
		self.tsParameterList()
		if self.tsOK(&st) && self.token == token.ARROW {
			self.tsNext()
			self.tsReturnType()
			return true
		}
		self.restore(&st)
	}
	return false
}

// tsSignatureRest reads a parameter list and the return type after it:
// after "=>" for a function type, after ":" (optional) for a signature.
func (self *_parser) tsSignatureRest(arrow bool) {
	if self.token != token.LEFT_PARENTHESIS {
		self.errorUnexpectedToken(self.token)
		return
	}
	self.tsParameterList()
	if arrow {
		if self.tsExpect(token.ARROW) {
			self.tsReturnType()
		}
		return
	}
	if self.token == token.COLON {
		self.tsNext()
		self.tsReturnType()
	}
}

// tsReturnType reads a return type, which may be a type predicate
// ("x is T", "asserts x", "asserts x is T").
func (self *_parser) tsReturnType() {
	if self.token == token.IDENTIFIER || self.token == token.THIS {
		tok, lit, newline := self.tsPeek()
		if self.isWord("asserts") && !newline && (tok == token.IDENTIFIER || tok == token.THIS) {
			self.tsNext()
			self.tsNext()
			if self.isWord("is") && !self.newlineBefore() {
				self.tsNext()
				self.tsType()
			}
			return
		}
		if tok == token.IDENTIFIER && lit == "is" && !newline {
			self.tsNext()
			self.tsNext()
			self.tsType()
			return
		}
	}
	self.tsType()
}

func (self *_parser) tsUnion() { self.tsJoined(token.OR, self.tsIntersection) }

func (self *_parser) tsIntersection() { self.tsJoined(token.AND, self.tsTypeOperator) }

// tsJoined reads parts joined by op ("|" or "&"), with an optional leading
// op.
func (self *_parser) tsJoined(op token.Token, part func()) {
	if self.token == op {
		self.tsNext()
	}
	errs := len(self.errors)
	part()
	for self.token == op && len(self.errors) == errs {
		self.tsNext()
		part()
	}
}

func (self *_parser) tsTypeOperator() {
	defer self.unwind(self.depth)
	self.enter()
	switch {
	case self.isWord("keyof") || self.isWord("unique") || self.isWord("readonly"):
		self.tsNext()
		self.tsTypeOperator()
	case self.isWord("infer"):
		self.tsNext()
		if !token.IsId(self.token) {
			self.errorUnexpectedToken(self.token)
			return
		}
		self.tsNext()
		if self.token == token.EXTENDS {
			// A constraint, unless the extends is a conditional type's.
			noConditional := self.tsNoConditional
			var st parserState
			self.mark(&st)
			self.tsNext()
			self.tsTypeWith(false)
			if !self.tsOK(&st) || self.token == token.QUESTION_MARK && !noConditional {
				self.restore(&st)
			}
		}
	default:
		self.tsPostfixType()
	}
}

func (self *_parser) tsPostfixType() {
	errs := len(self.errors)
	self.tsPrimaryType()
	for len(self.errors) == errs && self.token == token.LEFT_BRACKET && !self.newlineBefore() {
		self.tsNext()
		if self.token == token.RIGHT_BRACKET {
			self.tsNext()
			continue
		}
		self.tsType()
		self.tsExpect(token.RIGHT_BRACKET)
	}
}

func (self *_parser) tsPrimaryType() {
	defer self.unwind(self.depth)
	self.enter()
	switch self.token {
	case token.STRING, token.NUMBER, token.BOOLEAN, token.NULL, token.VOID, token.THIS:
		self.tsNext()
	case token.MINUS:
		self.next()
		if self.token != token.NUMBER {
			self.errorUnexpectedToken(self.token)
			return
		}
		self.tsNext()
	case token.TYPEOF:
		self.next()
		if self.token != token.THIS && !token.IsId(self.token) {
			self.errorUnexpectedToken(self.token)
			return
		}
		self.tsNext()
		self.tsEntityRest()
	case token.LEFT_BRACE:
		self.tsObjectType()
	case token.LEFT_BRACKET:
		self.tsTupleType()
	case token.LEFT_PARENTHESIS:
		self.tsNext()
		self.tsType()
		self.tsExpect(token.RIGHT_PARENTHESIS)
	case token.BACKTICK:
		self.tsTemplateType()
	default:
		if self.token == token.IDENTIFIER || self.isBindingId(self.token) {
			self.tsNext()
			self.tsEntityRest()
			return
		}
		self.errorUnexpectedToken(self.token)
	}
}

// tsEntityRest reads the rest of a dotted name and its type arguments.
func (self *_parser) tsEntityRest() {
	for self.token == token.PERIOD {
		self.next()
		if !token.IsId(self.token) {
			self.errorUnexpectedToken(self.token)
			return
		}
		self.tsNext()
	}
	if self.token == token.LESS && !self.newlineBefore() {
		self.tsTypeArguments()
	}
}

// tsTypeReference reads a name with its type arguments (in extends and
// implements clauses).
func (self *_parser) tsTypeReference() {
	if !token.IsId(self.token) {
		self.errorUnexpectedToken(self.token)
		return
	}
	self.tsNext()
	self.tsEntityRest()
}

// tsTypeArguments reads "<T, U>".
func (self *_parser) tsTypeArguments() {
	defer self.unwind(self.depth)
	self.enter()
	self.next() // <
	errs := len(self.errors)
	for {
		self.tsType()
		if self.token != token.COMMA || len(self.errors) != errs {
			break
		}
		self.next()
	}
	if len(self.errors) == errs {
		self.tsExpectGreater()
	}
}

// tsTypeParameters reads "<const T extends U = V, in out W>".
func (self *_parser) tsTypeParameters() {
	defer self.unwind(self.depth)
	self.enter()
	self.next() // <
	errs := len(self.errors)
	for len(self.errors) == errs {
		for self.token == token.CONST || self.token == token.IN || self.isWord("out") {
			if tok, _, _ := self.tsPeek(); !token.IsId(tok) {
				break
			}
			self.next()
		}
		if !token.IsId(self.token) {
			self.errorUnexpectedToken(self.token)
			return
		}
		self.tsNext()
		if self.token == token.EXTENDS {
			self.tsNext()
			self.tsType()
		}
		if self.token == token.ASSIGN {
			self.tsNext()
			self.tsType()
		}
		if self.token != token.COMMA {
			break
		}
		self.next()
		if self.token == token.GREATER {
			break // a trailing comma
		}
	}
	if len(self.errors) == errs {
		self.tsExpectGreater()
	}
}

// tsTupleType reads "[A, b?: B, ...C[]]".
func (self *_parser) tsTupleType() {
	self.next() // [
	errs := len(self.errors)
	for self.token != token.RIGHT_BRACKET && len(self.errors) == errs {
		if self.token == token.ELLIPSIS {
			self.next()
		}
		if token.IsId(self.token) {
			// A label: "name:" or "name?:".
			var st parserState
			self.mark(&st)
			self.next()
			if self.token == token.QUESTION_MARK {
				self.next()
			}
			if self.token == token.COLON {
				self.next()
			} else {
				self.restore(&st)
			}
		}
		self.tsType()
		if self.token == token.QUESTION_MARK {
			self.tsNext()
		}
		if self.token != token.COMMA {
			break
		}
		self.next()
	}
	if len(self.errors) == errs {
		self.tsExpect(token.RIGHT_BRACKET)
	}
}

// tsTemplateType reads a template literal type: text and types.
func (self *_parser) tsTemplateType() {
	for {
		_, _, finished, _, err := self.parseTemplateCharacters()
		if err != "" {
			self.error(self.offset, err)
			return
		}
		if finished {
			self.tsNext()
			return
		}
		self.next()
		errs := len(self.errors)
		self.tsType()
		if len(self.errors) != errs {
			return
		}
		if self.token != token.RIGHT_BRACE {
			self.errorUnexpectedToken(self.token)
			return
		}
	}
}

// tsObjectType reads an object type or a mapped type, at "{".
func (self *_parser) tsObjectType() {
	defer self.unwind(self.depth)
	self.enter()
	self.next() // {
	if self.tsMappedTypeAhead() {
		self.tsMappedType()
		return
	}
	errs := len(self.errors)
	for self.token != token.RIGHT_BRACE && len(self.errors) == errs {
		self.tsTypeMember()
		if len(self.errors) != errs {
			return
		}
		switch {
		case self.token == token.SEMICOLON || self.token == token.COMMA:
			self.next()
		case self.token == token.RIGHT_BRACE || self.newlineBefore():
		default:
			self.errorUnexpectedToken(self.token)
			return
		}
	}
	self.tsExpect(token.RIGHT_BRACE)
}

// canFollowModifier reports whether the next token names a member, on the
// same line, so the current word is a modifier and not the member's name.
func (self *_parser) canFollowModifier() bool {
	tok, _, newline := self.tsPeek()
	if newline {
		return false
	}
	switch tok {
	case token.LEFT_BRACKET, token.LEFT_BRACE, token.MULTIPLY, token.ELLIPSIS,
		token.PRIVATE_IDENTIFIER, token.STRING, token.NUMBER:
		return true
	}
	return token.IsId(tok)
}

func (self *_parser) tsTypeMember() {
	switch {
	case self.token == token.LEFT_PARENTHESIS || self.token == token.LESS:
		self.tsSignature()
		return
	case self.token == token.NEW:
		if tok, _, _ := self.tsPeek(); tok == token.LEFT_PARENTHESIS || tok == token.LESS {
			self.next()
			self.tsSignature()
			return
		}
	}
	if self.isWord("readonly") && self.canFollowModifier() {
		self.next()
	}
	if (self.isWord("get") || self.isWord("set")) && self.canFollowModifier() {
		self.next()
	}
	if self.token == token.LEFT_BRACKET && self.tsIndexSignatureAhead() {
		self.tsIndexSignature()
		return
	}
	switch {
	case self.token == token.LEFT_BRACKET:
		self.next()
		self.parseAssignmentExpression()
		if self.token != token.RIGHT_BRACKET {
			self.errorUnexpectedToken(self.token)
			return
		}
		self.tsNext()
	case token.IsId(self.token) || self.token == token.STRING || self.token == token.NUMBER:
		self.tsNext()
	default:
		self.errorUnexpectedToken(self.token)
		return
	}
	if self.token == token.QUESTION_MARK {
		self.tsNext()
	}
	switch self.token {
	case token.LEFT_PARENTHESIS, token.LESS:
		self.tsSignature()
	case token.COLON:
		self.tsNext()
		self.tsType()
	}
}

// tsSignature reads a call or method signature: type parameters,
// parameters and an optional return type.
func (self *_parser) tsSignature() {
	if self.token == token.LESS {
		self.tsTypeParameters()
	}
	self.tsSignatureRest(false)
}

// tsIndexSignatureAhead reports whether "[" starts an index signature
// ("[key: string]: T").
func (self *_parser) tsIndexSignatureAhead() bool {
	var st parserState
	self.mark(&st)
	defer self.restore(&st)
	self.next()
	if !token.IsId(self.token) {
		return false
	}
	self.next()
	return self.token == token.COLON
}

func (self *_parser) tsIndexSignature() {
	self.next() // [
	self.next() // the key's name
	self.next() // :
	self.tsType()
	if !self.tsExpect(token.RIGHT_BRACKET) {
		return
	}
	if self.token == token.COLON {
		self.tsNext()
		self.tsType()
	}
}

// tsMappedTypeAhead reports whether "{" opened a mapped type
// ("{ readonly [K in T]?: U }").
func (self *_parser) tsMappedTypeAhead() bool {
	var st parserState
	self.mark(&st)
	defer self.restore(&st)
	if self.token == token.PLUS || self.token == token.MINUS {
		self.next()
		if !self.isWord("readonly") {
			return false
		}
	}
	if self.isWord("readonly") {
		self.next()
	}
	if self.token != token.LEFT_BRACKET {
		return false
	}
	self.next()
	if !token.IsId(self.token) {
		return false
	}
	self.next()
	return self.token == token.IN
}

func (self *_parser) tsMappedType() {
	if self.token == token.PLUS || self.token == token.MINUS {
		self.next()
	}
	if self.isWord("readonly") {
		self.next()
	}
	self.next() // [
	self.next() // the key's name
	self.next() // in
	errs := len(self.errors)
	self.tsType()
	if self.isWord("as") {
		self.tsNext()
		self.tsType()
	}
	if len(self.errors) != errs || !self.tsExpect(token.RIGHT_BRACKET) {
		return
	}
	if self.token == token.PLUS || self.token == token.MINUS {
		self.next()
		if self.token != token.QUESTION_MARK {
			self.errorUnexpectedToken(self.token)
			return
		}
	}
	if self.token == token.QUESTION_MARK {
		self.next()
	}
	if self.token == token.COLON {
		self.tsNext()
		self.tsType()
	}
	if self.token == token.SEMICOLON || self.token == token.COMMA {
		self.next()
	}
	self.tsExpect(token.RIGHT_BRACE)
}

// --- Where types meet JavaScript ---

// tsParameterList is parseFunctionParameterList for TypeScript: each
// parameter may be optional and typed, and a leading "this" parameter is
// typed and dropped. It stops at the first error, so a lookahead that
// tries it on a parenthesised expression fails fast.
func (self *_parser) tsParameterList() *ast.ParameterList {
	opening := self.expect(token.LEFT_PARENTHESIS)
	if !self.scope.inFuncParams {
		self.scope.inFuncParams = true
		defer func() {
			self.scope.inFuncParams = false
		}()
	}
	errs := len(self.errors)
	var list []*ast.Binding
	var rest ast.Expression
	first := true
	for self.token != token.RIGHT_PARENTHESIS && self.token != token.EOF && len(self.errors) == errs {
		if first && self.token == token.THIS {
			if tok, _, _ := self.tsPeek(); tok == token.COLON {
				self.next()
				self.tsNext()
				self.tsType()
				if self.token != token.RIGHT_PARENTHESIS {
					self.expect(token.COMMA)
				}
				first = false
				continue
			}
		}
		first = false
		switch {
		case self.token == token.ELLIPSIS:
			self.next()
			rest = self.reinterpretAsDestructBindingTarget(self.parseAssignmentExpression())
			if self.token == token.COLON {
				self.tsNext()
				self.tsType()
			}
		case self.token == token.LEFT_BRACE || self.token == token.LEFT_BRACKET:
			self.parseVariableDeclaration(&list)
		case self.isBindingId(self.token):
			tok, _, newline := self.tsPeek()
			switch {
			case isTSParameterModifier(self.literal) && !newline &&
				(token.IsId(tok) || tok == token.LEFT_BRACE || tok == token.LEFT_BRACKET):
				// A parameter property (emits an assignment).
				self.tsUnsupported()
				return &ast.ParameterList{}
			case tok == token.COLON || tok == token.QUESTION_MARK || tok == token.COMMA ||
				tok == token.RIGHT_PARENTHESIS || tok == token.ASSIGN:
				self.parseVariableDeclaration(&list)
			default:
				self.errorUnexpectedToken(tok)
			}
		default:
			self.errorUnexpectedToken(self.token)
		}
		if rest != nil || len(self.errors) != errs {
			break
		}
		if self.token != token.RIGHT_PARENTHESIS {
			self.expect(token.COMMA)
		}
	}
	if len(self.errors) != errs {
		return &ast.ParameterList{Opening: opening}
	}
	closing := self.expect(token.RIGHT_PARENTHESIS)
	return &ast.ParameterList{
		Opening: opening,
		List:    list,
		Rest:    rest,
		Closing: closing,
	}
}

func isTSParameterModifier(w string) bool {
	switch w {
	case "public", "private", "protected", "readonly", "override":
		return true
	}
	return false
}

// tsBindingAnnotation reads what may follow a binding's target: "?" (a
// parameter), "!" (a definite assignment) and ": T".
func (self *_parser) tsBindingAnnotation() {
	switch {
	case self.token == token.QUESTION_MARK && self.scope.inFuncParams:
		self.next()
	case self.token == token.NOT && !self.scope.inFuncParams:
		self.next()
		if self.token != token.COLON {
			self.errorUnexpectedToken(self.token)
			return
		}
	}
	if self.token == token.COLON {
		self.tsNext()
		self.tsType()
	}
}

// tsArrow reads an arrow function whose head holds TypeScript (typed
// parameters, a return type), at "(" or "async (". It returns nil, having
// consumed nothing, where no arrow function starts.
func (self *_parser) tsArrow(start file.Idx, async bool) ast.Expression {
	var st parserState
	self.mark(&st)
	if async {
		self.next()
		if !self.scope.allowAwait {
			self.scope.allowAwait = true
			defer func() {
				self.scope.allowAwait = false
			}()
		}
	}
	params := self.tsParameterList()
	typed := false
	if self.tsOK(&st) && self.token == token.COLON {
		typed = true
		self.tsNext()
		self.tsReturnType()
	}
	if !self.tsOK(&st) || self.token != token.ARROW || self.newlineBefore() {
		self.restore(&st)
		return nil
	}
	if typed && self.tsConsequent > 0 {
		// "a ? (b): c => d : e": TypeScript decides by what follows the
		// whole arrow function.
		self.restore(&st)
		self.tsUnsupported()
		return nil
	}
	return self.parseArrowFunction(start, params, async)
}

// tsTypeArgumentsInExpression reads "<T>" after an expression when
// TypeScript would: the arguments parse, and what follows is a call, a
// template, or cannot start an expression.
func (self *_parser) tsTypeArgumentsInExpression() bool {
	var st parserState
	self.mark(&st)
	self.tsTypeArguments()
	if self.tsOK(&st) {
		switch self.token {
		case token.LEFT_PARENTHESIS, token.BACKTICK:
			return true
		case token.LESS, token.GREATER, token.PLUS, token.MINUS:
		default:
			if self.newlineBefore() || !startsExpression(self.token) {
				return true
			}
		}
	}
	self.restore(&st)
	return false
}

func startsExpression(tok token.Token) bool {
	switch tok {
	case token.NUMBER, token.STRING, token.BOOLEAN, token.NULL, token.THIS, token.SUPER,
		token.LEFT_PARENTHESIS, token.LEFT_BRACKET, token.LEFT_BRACE, token.FUNCTION,
		token.CLASS, token.NEW, token.SLASH, token.QUOTIENT_ASSIGN, token.NOT,
		token.BITWISE_NOT, token.PLUS, token.MINUS, token.INCREMENT, token.DECREMENT,
		token.TYPEOF, token.VOID, token.DELETE, token.LESS, token.BACKTICK,
		token.PRIVATE_IDENTIFIER, token.IDENTIFIER:
		return true
	}
	return tok > token.ESCAPED_RESERVED_WORD // let, static, async, await, yield, ...
}

// tsAssertions reads "as T", "as const" and "satisfies T" after an
// expression.
func (self *_parser) tsAssertions() {
	for (self.isWord("as") || self.isWord("satisfies")) && !self.newlineBefore() {
		as := self.literal == "as"
		self.tsNext()
		if as && self.token == token.CONST {
			self.tsNext()
			continue
		}
		errs := len(self.errors)
		self.tsType()
		if len(self.errors) != errs {
			return
		}
	}
}

// tsStatement reads a statement that is only types (a type alias, an
// interface, a declare), or an abstract class, at an identifier; nil when
// the identifier starts no such statement.
func (self *_parser) tsStatement() ast.Statement {
	start := self.idx
	tok, lit, newline := self.tsPeek()
	if newline {
		return nil
	}
	switch self.literal {
	case "type":
		if !self.isBindingId(tok) && tok != token.IDENTIFIER {
			return nil
		}
		self.next()
		self.next()
		if self.token == token.LESS {
			self.tsTypeParameters()
		}
		if !self.tsExpect(token.ASSIGN) {
			return &ast.BadStatement{From: start, To: self.idx}
		}
		self.tsType()
		self.semicolon()
	case "interface":
		if !token.IsId(tok) {
			return nil
		}
		self.next()
		self.next()
		if self.token == token.LESS {
			self.tsTypeParameters()
		}
		if self.token == token.EXTENDS {
			self.next()
			errs := len(self.errors)
			for len(self.errors) == errs {
				self.tsTypeReference()
				if self.token != token.COMMA {
					break
				}
				self.next()
			}
		}
		if self.token != token.LEFT_BRACE {
			self.errorUnexpectedToken(self.token)
			return &ast.BadStatement{From: start, To: self.idx}
		}
		self.tsObjectType()
	case "declare":
		switch {
		case tok == token.VAR || tok == token.LET || tok == token.CONST:
			self.next()
			self.next()
			if self.token == token.KEYWORD && self.literal == "enum" {
				self.tsUnsupported()
				return &ast.BadStatement{From: start, To: self.idx}
			}
			for {
				self.parseBindingTarget()
				self.tsBindingAnnotation()
				if self.token == token.ASSIGN {
					self.next()
					self.parseAssignmentExpression()
				}
				if self.token != token.COMMA {
					break
				}
				self.next()
			}
			self.semicolon()
		case tok == token.FUNCTION || tok == token.ASYNC:
			self.next()
			async := self.token == token.ASYNC
			if async {
				self.next()
			}
			if fn := self.parseFunction(true, async, start); fn.Body != nil {
				self.error(start, "a declared function has no body")
			}
		case tok == token.CLASS:
			self.next()
			self.parseClass(true)
		case tok == token.IDENTIFIER && (lit == "abstract" || lit == "type" || lit == "interface"):
			self.next()
			if s := self.tsStatement(); s == nil {
				self.errorUnexpectedToken(self.token)
			}
		default:
			return nil
		}
	case "abstract":
		if tok != token.CLASS {
			return nil
		}
		self.next()
		return &ast.ClassDeclaration{Class: self.parseClass(true)}
	case "namespace", "module", "global":
		if tok == token.IDENTIFIER || tok == token.STRING || tok == token.LEFT_BRACE {
			self.tsUnsupported()
			return &ast.BadStatement{From: start, To: self.idx}
		}
		return nil
	default:
		return nil
	}
	return &ast.EmptyStatement{Semicolon: start}
}

// tsClassModifiers consumes the modifiers before a class member and
// reports which matter: "static", and "declare" or "abstract" (the member
// is not emitted).
func (self *_parser) tsClassModifiers() (static, dropped bool) {
	for {
		switch {
		case self.token == token.STATIC:
			if tok, _, newline := self.tsPeek(); newline || tok == token.LEFT_BRACE || !self.canFollowModifier() {
				return
			}
			static = true
		case self.token == token.IDENTIFIER && isTSClassModifier(self.literal):
			if !self.canFollowModifier() {
				return
			}
			if self.literal == "declare" || self.literal == "abstract" {
				dropped = true
			}
		default:
			return
		}
		self.next()
	}
}

func isTSClassModifier(w string) bool {
	switch w {
	case "public", "private", "protected", "readonly", "override", "declare", "abstract":
		return true
	}
	return false
}

// tsClassHeritage reads a class's type parameters, extends clause (with
// type arguments) and implements clause, after its name.
func (self *_parser) tsClassHeritage(node *ast.ClassLiteral) {
	if self.token == token.LESS {
		self.tsTypeParameters()
	}
	if self.token == token.EXTENDS {
		self.next()
		node.SuperClass = self.parseLeftHandSideExpressionAllowCall()
		if self.token == token.LESS {
			self.tsTypeArguments()
		}
	}
	if self.isWord("implements") {
		self.next()
		errs := len(self.errors)
		for len(self.errors) == errs {
			self.tsTypeReference()
			if self.token != token.COMMA {
				break
			}
			self.next()
		}
	}
}

// tsNotAccessor reports whether the token after "get", "set" or "async"
// makes that word a member's name in TypeScript ("get: T", "set?: T").
func tsNotAccessor(tok token.Token) bool {
	switch tok {
	case token.COLON, token.QUESTION_MARK, token.NOT, token.LESS, token.ASSIGN, token.RIGHT_BRACE:
		return true
	}
	return false
}

// tsEnterNested starts a bracketed part of an expression or a function
// body, where an enclosing conditional's true branch no longer decides
// what an arrow function's return type means; tsLeaveNested ends it.
func (self *_parser) tsEnterNested() int {
	c := self.tsConsequent
	self.tsConsequent = 0
	return c
}

func (self *_parser) tsLeaveNested(c int) { self.tsConsequent = c }
