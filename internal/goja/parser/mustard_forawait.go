package parser

import (
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/ast"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/file"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/token"
)

// for await and async generator methods (a mustard-sidecar addition to
// goja; see PATCHES.md). Upstream parses `async function*` already; these
// are the two productions it lacks.

// mustardForAwait consumes the `await` of `for await (`, which is only
// allowed where await expressions are: in async functions (and so in
// async generators and async arrow functions).
func (self *_parser) mustardForAwait() bool {
	if self.token != token.AWAIT || !self.scope.allowAwait || !self.scope.inAsync {
		return false
	}
	self.next()
	return true
}

// mustardForAwaitNotOf reports `for await` with a for-in or C-style head,
// which the grammar does not have.
func (self *_parser) mustardForAwaitNotOf(idx file.Idx) ast.Statement {
	self.error(idx, "for await is only valid with for-of")
	self.nextStatement()
	return &ast.BadStatement{From: idx, To: self.idx}
}

// mustardAsyncGeneratorMethod consumes the `*` of an object literal's
// `async *name() {}`.
func (self *_parser) mustardAsyncGeneratorMethod() bool {
	if self.token != token.MULTIPLY {
		return false
	}
	self.next()
	return true
}

// mustardForAwaitAsyncOf parses the `async` of `for await (async of ...)`
// as the identifier it is there (`for (async of ...)` is not allowed, and
// the expression parser would take `async of` for the start of an async
// arrow function). It returns nil, having consumed nothing, otherwise.
func (self *_parser) mustardForAwaitAsyncOf(isAwait bool) ast.Expression {
	if !isAwait || self.token != token.ASYNC {
		return nil
	}
	var state parserState
	self.mark(&state)
	idx := self.idx
	self.next()
	if self.token == token.IDENTIFIER && self.literal == "of" {
		return &ast.Identifier{Name: "async", Idx: idx}
	}
	self.restore(&state)
	return nil
}
