package parser

import (
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/ast"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/file"
)

// An arrow function's source text (Function.prototype.toString) ends at
// its expression body's last node, so the parentheses around a body such
// as `x => ({ x })` are cut off: "x => ({ x }" (a mustard-sidecar fix;
// see PATCHES.md). With WithArrowSourceFix the text ends where the body's
// last token does. It is an option, so that programs parsed before the fix
// keep the text they had.

// WithArrowSourceFix makes an arrow function's source text end with the
// parentheses around its expression body.
func WithArrowSourceFix(o *options) { o.arrowSource = true }

// arrowEnd returns where an arrow function whose body was just parsed ends.
func (self *_parser) arrowEnd(body ast.ConciseBody) file.Idx {
	if _, ok := body.(*ast.ExpressionBody); ok && self.opts.arrowSource && self.prevEnd > body.Idx1() {
		return self.prevEnd
	}
	return body.Idx1()
}
