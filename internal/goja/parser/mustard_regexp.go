package parser

import (
	"regexp/syntax"
	"strings"
)

// The size of a regular expression's program (a mustard-sidecar addition
// to goja; see PATCHES.md). A pattern that Go's regexp accepts compiles to
// an automaton with counted repeats expanded: 'x{1000}'.repeat(3000)+'y'
// is 21,001 characters and three million instructions, and compiling it
// takes about a second and 700 MB, in one call nothing can interrupt.
// RegexpInsts tells the size from the pattern's syntax tree alone, before
// anything is built, so that a compile can be charged for it (or refused)
// first.

// RegexpInsts is about the number of instructions Go's regexp compiles the
// RE2 pattern src to (regexp/syntax's own estimate, counted repeats
// expanded), or 0 when regexp/syntax rejects src: then compiling it fails
// as early, without building anything. Parsing src takes time linear in
// its length.
func RegexpInsts(src string) int64 {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return 0
	}
	return regexpInsts(re)
}

// maxRegexpInsts caps the estimate; regexp/syntax rejects a program of more
// than about 3.3 million instructions.
const maxRegexpInsts = 1 << 40

// regexpInsts follows regexp/syntax's calcSize, which is what its own bound
// on a program's size counts: a star or a capture is two instructions
// around its body, a plus or a question mark one, x{n,m} m copies of x and
// m-n splits.
func regexpInsts(re *syntax.Regexp) int64 {
	var n int64
	switch re.Op {
	case syntax.OpLiteral:
		n = int64(len(re.Rune))
	case syntax.OpCapture, syntax.OpStar:
		n = 2 + regexpInsts(re.Sub[0])
	case syntax.OpPlus, syntax.OpQuest:
		n = 1 + regexpInsts(re.Sub[0])
	case syntax.OpConcat, syntax.OpAlternate:
		for _, sub := range re.Sub {
			n = min(n+regexpInsts(sub), maxRegexpInsts)
		}
		if re.Op == syntax.OpAlternate {
			n += int64(len(re.Sub)) - 1
		}
	case syntax.OpRepeat:
		sub := regexpInsts(re.Sub[0])
		switch {
		case re.Max == -1 && re.Min == 0:
			n = 2 + sub
		case re.Max == -1:
			n = 1 + int64(re.Min)*sub
		default:
			n = int64(re.Max)*sub + int64(re.Max-re.Min)
		}
	}
	return min(max(n, 1), maxRegexpInsts)
}

// regexpLiteral counts what compiling a regular expression literal will
// build beyond its text: the instructions of its program past one per
// character of the pattern count as tokens, so the bounds on tokens
// (WithMaxTokensPerByte, WithTokenCheck) bound the compile of the pattern
// too, before the compiler builds it. A pattern RE2 does not take runs on
// the backtracking engine, whose program grows with the pattern's text.
// ExpandedBytesPerInst: rewriting a property escape (\p{L}: about 700
// ranges, 14 KB of \u{...} text, then about 6 KB of ranges in each
// engine's program) counts an instruction per this many bytes it adds to
// the pattern.
const ExpandedBytesPerInst = 64

func (self *_parser) regexpLiteral(pattern, flags string) {
	if self.opts.maxTokensPerByte == 0 && self.opts.tokenCheck == nil {
		return
	}
	if !strings.Contains(pattern, "{") {
		return // no counted repeat: at most about two instructions a character
	}
	if strings.Contains(flags, "u") { // property escapes, rewritten into their sets' ranges
		var grown int
		if pattern, grown, _ = ExpandPropertyEscapes(pattern); grown > 0 {
			self.scannedMany(int64(grown / ExpandedBytesPerInst))
		}
	}
	re2, err := TransformRegExp(pattern, strings.Contains(flags, "s"), strings.Contains(flags, "u"))
	if err != nil || !strings.Contains(re2, "{") {
		return
	}
	if extra := RegexpInsts(re2) - int64(len(pattern)); extra > 0 {
		self.scannedMany(extra)
	}
}
