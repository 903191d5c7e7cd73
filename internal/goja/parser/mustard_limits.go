package parser

import (
	"fmt"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/ast"
)

// Bounds on the parser's own work, for hostile source (a mustard-sidecar
// addition to goja; see PATCHES.md). Both are off unless set by an option.
//
// The parser recurses once per nesting level of the grammar, and left-deep
// chains it builds in loops (a+b+c..., a.b.c..., f()()...) become AST
// nesting that the compiler then walks recursively: either can exhaust the
// Go stack, which kills the process. WithMaxDepth bounds both, counting one
// level per recursive production entered and a twentieth of one per link
// of such a chain.
//
// Re-parsing after an arrow-function lookahead can make the parser's work
// superlinear in the source. WithMaxTokensPerByte bounds the tokens it
// scans, re-scans included, to a multiple of the source's length.

// WithMaxDepth makes source nested deeper than n a syntax error
// ("source nesting exceeds n levels").
func WithMaxDepth(n int) Option {
	return func(o *options) { o.maxDepth = n }
}

// WithMaxTokensPerByte makes the parse fail ("source is too complex to
// parse") once it has scanned more than n tokens per byte of source, plus
// a fixed allowance for short sources.
func WithMaxTokensPerByte(n int) Option {
	return func(o *options) { o.maxTokensPerByte = n }
}

// WithTokenCheck calls check every `every` tokens scanned, with the
// number scanned so far (re-scans included); the parse fails ("source is
// too large to compile") when it returns false. An embedder uses it to
// bound what the parse and the compilation after it may take, in
// proportion to the tokens, as the parse goes.
func WithTokenCheck(every int, check func(tokens int) bool) Option {
	return func(o *options) {
		if every > 0 && check != nil {
			o.tokenEvery, o.tokenCheck = every, check
		}
	}
}

// TooLargeMessage is the message of a parse WithTokenCheck ended.
const TooLargeMessage = "source is too large to compile"

// tokenAllowance is added to the budget, so short sources never hit it.
var tokenAllowance = 1 << 16

// bailOut unwinds the parser when a bound is passed; parse recovers it.
type bailOut struct{ msg string }

// linksPerLevel: a link of a flat chain (a+b+c..., a.b.c..., f()()...)
// counts as a twentieth of a level, so that the chains programs write
// (a sum of 2,000 terms, a 1,500-term || chain) parse, while the AST the
// compiler walks recursively stays at most 20 times as deep as the bound.
const linksPerLevel = 20

// enter counts one level of nesting.
func (self *_parser) enter() { self.count(linksPerLevel) }

// link counts one link of a chain the parser builds in a loop.
func (self *_parser) link() { self.count(1) }

func (self *_parser) count(n int) {
	self.depth += n
	if self.opts.maxDepth > 0 && self.depth > self.opts.maxDepth*linksPerLevel {
		panic(bailOut{fmt.Sprintf("source nesting exceeds %d levels", self.opts.maxDepth)})
	}
}

// unwind restores the depth a production was entered at; deferred with the
// depth at entry, it gives back every level counted since.
func (self *_parser) unwind(depth int) { self.depth = depth }

// deeper parses one production a level deeper.
func (self *_parser) deeper(parse func() ast.Expression) ast.Expression {
	defer self.unwind(self.depth)
	self.enter()
	return parse()
}

// scanned counts one token.
func (self *_parser) scanned() {
	self.tokens++
	if self.opts.maxTokensPerByte > 0 && self.tokens > self.opts.maxTokensPerByte*self.length+tokenAllowance {
		panic(bailOut{"source is too complex to parse"})
	}
	if self.opts.tokenCheck != nil && self.tokens%self.opts.tokenEvery == 0 && !self.opts.tokenCheck(self.tokens) {
		panic(bailOut{TooLargeMessage})
	}
}

// scannedMany counts n tokens' worth of work at once (regexpLiteral),
// with the checks scanned makes: the token check is called if the count
// passes one or more multiples of its period.
func (self *_parser) scannedMany(n int64) {
	limit := int64(self.opts.maxTokensPerByte)*int64(self.length) + int64(tokenAllowance)
	if self.opts.maxTokensPerByte > 0 && int64(self.tokens)+n > limit {
		panic(bailOut{"source is too complex to parse"})
	}
	if n > int64(maxInt-self.tokens) {
		panic(bailOut{TooLargeMessage})
	}
	before := self.tokens
	self.tokens += int(n)
	if e := self.opts.tokenEvery; self.opts.tokenCheck != nil && self.tokens/e != before/e && !self.opts.tokenCheck(self.tokens) {
		panic(bailOut{TooLargeMessage})
	}
}

const maxInt = int(^uint(0) >> 1)
