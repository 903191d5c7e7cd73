package engine

import "strings"

// tsScan is a light lexical pass over TypeScript source, run before the
// source reaches esbuild. It finds what esbuild accepts but a program may
// not contain (decorators, import and export declarations), the places
// where a top-level statement may start (to keep the completion value; see
// keepCompletion), and bounds how deeply the source nests: esbuild's
// parser and visitor recurse once per level, with no bound of their own,
// and nested scopes cost it time that grows faster than their number, so
// hostile source must never reach it unbounded.
//
// It knows comments, strings, template literals (with their
// substitutions), regular expression literals (told from division by the
// token before, as every JavaScript tokenizer does) and brackets; nothing
// of the grammar beyond that.
type tsScan struct {
	src    string
	levels []tsLevel

	prev       tsClass // the previous token's class
	prevWord   string  // the previous token, when a word
	prevHeader bool    // the previous token closed an if/for/while/with header
	tokens     int     // tokens scanned

	// Nesting estimate: the sum of every open level's weight (see level).
	nest      int
	scopes    int // open braces and arrows in open segments
	scopeWork int // the sum, over every scope opened, of its depth past scopeFree
	nestAt    int // where the estimate first crossed its bound, or -1
	nestLimit int // the bound crossed: maxTSNesting or maxTSScopes

	decorator int // offset of the first decorator's @, or -1
	module    int // offset of the first import or export declaration, or -1

	starts []int // offsets of tokens that may start a top-level statement
	semis  []int // offsets of top-level semicolons
}

// maxTSNesting bounds the nesting estimate of TypeScript source: a little
// above what the JavaScript parser accepts (MaxSourceNesting), which the
// erased program must pass anyway. maxTSScopes bounds nested blocks and
// functions (the JavaScript parser accepts about 500 nested functions
// with block bodies). Nested scopes cost esbuild time that grows faster
// than the square of their depth (a nest 100 deep about 15 ms, 400 deep
// about 450 ms), so the depths past scopeFree of every scope opened add
// up, within maxTSScopeWork: the nests of a source then cost esbuild a
// second or two (less than its own time on code nested scopeFree deep,
// which only the source's size bounds), while ordinary programs, whose
// scopes nest a few levels deep, never come near it.
const (
	maxTSNesting   = MaxSourceNesting + MaxSourceNesting/5
	maxTSScopes    = 600
	scopeFree      = 10
	maxTSScopeWork = 150_000
)

type tsClass uint8

const (
	tsNone    tsClass = iota // start of source
	tsOperand                // a name, literal or closing bracket: "/" after it divides
	tsKeyword                // a keyword after which an expression starts
	tsPunct                  // an operator or opening bracket
	tsDot                    // "." or "?.": the next word is a property name
)

// tsLevel is an open bracket. Its weight in the nesting estimate is one,
// plus one per token of the current segment (since the bracket opened or
// the last "," or ";" in it) that makes esbuild recurse (prefix operators,
// arrows, conditionals, assignments, statement keywords, ...), plus one per
// twenty other tokens of the segment (chains: a.b.c, a+b+c, f()()...).
type tsLevel struct {
	open   byte // '(', '[', '{', or '$' for a template substitution
	header bool // the parenthesis of an if/for/while/with header
	chain  int
	links  int
	arrows int
	commas int // commas since the bracket opened or the last ";"

	weight int // as counted in tsScan.nest
}

// scanTS scans source. It never fails: what it cannot make sense of is
// left for esbuild to report.
func scanTS(src string) *tsScan {
	s := &tsScan{src: src, nestAt: -1, decorator: -1, module: -1}
	s.levels = append(s.levels, tsLevel{open: 0})
	s.nest = 1
	s.run()
	return s
}

func (s *tsScan) top() *tsLevel { return &s.levels[len(s.levels)-1] }

// depth is the bracket depth; 0 at top level.
func (s *tsScan) depth() int { return len(s.levels) - 1 }

// reweigh updates the estimate after the top level changed.
func (s *tsScan) reweigh(at int) {
	l := s.top()
	w := 1 + l.chain + l.links/20 + l.commas/50
	s.nest += w - l.weight
	l.weight = w
	if s.nestAt < 0 {
		switch {
		case s.nest > maxTSNesting:
			s.nestAt, s.nestLimit = at, MaxSourceNesting
		case s.scopes > maxTSScopes || s.scopeWork > maxTSScopeWork:
			s.nestAt, s.nestLimit = at, maxTSScopes
		}
	}
}

// resetSegment starts a new segment in the top level; a statement's end
// also forgets its commas.
func (s *tsScan) resetSegment(at int, statement bool) {
	l := s.top()
	s.scopes -= l.arrows
	l.chain, l.links, l.arrows = 0, 0, 0
	if statement {
		l.commas = 0
	}
	s.reweigh(at)
}

func (s *tsScan) push(open byte, at int, header bool) {
	s.levels = append(s.levels, tsLevel{open: open, header: header})
	if open == '{' {
		s.openScope()
	}
	s.reweigh(at)
}

// openScope counts a scope opened: a brace, or an arrow function's
// expression body.
func (s *tsScan) openScope() {
	s.scopes++
	s.scopeWork += max(0, s.scopes-scopeFree)
}

// pop closes the top level, if it is not the outermost.
func (s *tsScan) pop() (tsLevel, bool) {
	if len(s.levels) == 1 {
		return tsLevel{}, false
	}
	l := *s.top()
	s.nest -= l.weight
	s.scopes -= l.arrows
	if l.open == '{' {
		s.scopes--
	}
	s.levels = s.levels[:len(s.levels)-1]
	return l, true
}

// token records one token of class c at offset at. prone says it makes
// esbuild recurse.
func (s *tsScan) token(at int, c tsClass, word string, prone bool) {
	s.tokens++
	l := s.top()
	switch {
	case prone:
		l.chain++
	case c == tsPunct || c == tsDot || word == "`":
		// Operators, and template literals: a`..``..` is a chain of
		// tagged templates.
		l.links++
	}
	s.reweigh(at)
	s.prev, s.prevWord, s.prevHeader = c, word, false
}

// recursive keywords make esbuild's parser recurse into what follows.
var tsRecursiveWords = map[string]bool{
	"typeof": true, "void": true, "delete": true, "await": true, "new": true,
	"yield": true, "if": true, "else": true, "for": true, "while": true,
	"do": true, "with": true, "function": true, "class": true, "async": true,
	"keyof": true, "infer": true, "extends": true, "unique": true,
	"readonly": true, "asserts": true, "is": true, "abstract": true,
}

// tsExprKeywords are followed by an expression, so "/" after them starts
// a regular expression.
var tsExprKeywords = map[string]bool{
	"return": true, "typeof": true, "instanceof": true, "in": true, "of": true,
	"new": true, "delete": true, "void": true, "throw": true, "case": true,
	"do": true, "else": true, "yield": true, "await": true, "extends": true,
}

// tsContinueWords continue an expression or statement on a new line.
var tsContinueWords = map[string]bool{
	"in": true, "instanceof": true, "of": true, "as": true, "satisfies": true,
	"extends": true, "implements": true, "else": true, "catch": true,
	"finally": true, "while": true, "keyof": true, "is": true,
}

func (s *tsScan) run() {
	src := s.src
	i := 0
	newline := false // a line break since the previous token
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n' || c == '\r':
			newline = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			i++
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' && src[i] != '\r' {
				i++
			}
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return
			}
			if strings.ContainsAny(src[i+2:i+2+end], "\n\r") {
				newline = true
			}
			i += end + 4
			continue
		case c >= 0x80:
			// U+2028, U+2029 end lines; U+00A0, U+FEFF and the other
			// spaces are blank; anything else is part of a word.
			if strings.HasPrefix(src[i:], "\u2028") || strings.HasPrefix(src[i:], "\u2029") {
				newline = true
				i += 3
				continue
			}
			if strings.HasPrefix(src[i:], "\u00a0") {
				i += len("\u00a0")
				continue
			}
			if strings.HasPrefix(src[i:], "\ufeff") {
				i += len("\ufeff")
				continue
			}
		}
		start := i
		// A token that may start a top-level statement: at top level,
		// first in the source, after a ";" or "}", or on a new line.
		if s.depth() == 0 && (s.prev == tsNone || newline || (s.prev == tsPunct && s.prevWord == ";") || (s.prev == tsOperand && s.prevWord == "}")) {
			s.starts = append(s.starts, start)
		}
		// A line break between an operand and a word ends a statement (the
		// words that continue one aside): a new segment.
		if newline && s.prev == tsOperand && !s.prevHeader && (isWordStart(c) || isDigit(c) || c == '"' || c == '\'' || c == '`') {
			if w := wordAt(src, i); !tsContinueWords[w] {
				s.resetSegment(start, true)
			}
		}
		newline = false
		switch {
		case isWordStart(c):
			w := wordAt(src, i)
			i += len(w)
			if s.prev == tsDot {
				s.token(start, tsOperand, w, false)
				continue
			}
			if (w == "import" || w == "export") && s.depth() == 0 && s.module < 0 {
				next := skipBlank(src, i)
				if w == "export" || next >= len(src) || (src[next] != '(' && src[next] != '.') {
					s.module = start
				}
			}
			class := tsOperand
			if tsExprKeywords[w] {
				class = tsKeyword
			}
			s.token(start, class, w, tsRecursiveWords[w])
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			for i < len(src) && (isWordByte(src[i]) || src[i] == '.' ||
				((src[i] == '+' || src[i] == '-') && (src[i-1] == 'e' || src[i-1] == 'E') && !strings.HasPrefix(src[start:], "0x") && !strings.HasPrefix(src[start:], "0X"))) {
				i++
			}
			s.token(start, tsOperand, "", false)
		case c == '"' || c == '\'':
			i = skipString(src, i)
			s.token(start, tsOperand, "", false)
		case c == '`':
			s.token(start, tsOperand, "`", false)
			if i = s.template(i + 1); i < 0 {
				return
			}
		case c == '/' && (s.prev != tsOperand || s.prevHeader):
			i = skipRegexp(src, i)
			s.token(start, tsOperand, "", false)
		case c == '@':
			if s.decorator < 0 {
				s.decorator = start
			}
			i++
			s.token(start, tsPunct, "@", true)
		case c == '(' || c == '[' || c == '{':
			header := c == '(' && (s.prevWord == "if" || s.prevWord == "for" || s.prevWord == "while" || s.prevWord == "with") && s.prev != tsDot
			s.token(start, tsPunct, string(c), false)
			s.push(c, start, header)
			i++
		case c == ')' || c == ']' || c == '}':
			i++
			if c == '}' && s.top().open == '$' {
				s.pop()
				if i = s.template(i); i < 0 {
					return
				}
				continue
			}
			l, _ := s.pop()
			s.prev, s.prevWord, s.prevHeader = tsOperand, string(c), l.header
		case c == ';' || c == ',':
			i++
			if c == ';' && s.depth() == 0 {
				s.semis = append(s.semis, start)
			}
			s.token(start, tsPunct, string(c), false)
			// "else" continues the statement a ";" ends: an else-if chain
			// nests.
			// A comma expression is a chain to esbuild (a, b, c nests as
			// ((a, b), c)), a list of elements or arguments is not: commas
			// weigh a fiftieth of a level, whatever they separate.
			if c == ',' {
				s.top().commas++
				s.resetSegment(start, false)
			} else if wordAt(src, skipBlank(src, i)) != "else" {
				s.resetSegment(start, true)
			}
		default:
			op := punctAt(src, i)
			i += len(op)
			switch op {
			case "?.":
				s.token(start, tsDot, op, false)
			case ".":
				s.token(start, tsDot, op, false)
			case "=>":
				// A block body counts as the block it is.
				if next := skipBlank(src, i); next >= len(src) || src[next] != '{' {
					s.top().arrows++
					s.openScope()
				}
				s.token(start, tsPunct, op, true)
			case "-", "+", "<":
				// Binary after an operand (a left-deep chain); prefix, or a
				// type's arguments, otherwise.
				s.token(start, tsPunct, op, s.prev != tsOperand)
			case "?", "!", "~", "++", "--", ":", "=", "+=", "-=", "*=",
				"/=", "%=", "**=", "<<=", ">>=", ">>>=", "&=", "|=", "^=", "&&=", "||=", "??=", "...":
				s.token(start, tsPunct, op, true)
			default:
				s.token(start, tsPunct, op, false)
			}
		}
	}
}

// template scans a template literal's text from i (just after "`" or the
// "}" closing a substitution): to its end, after which it returns the
// offset, or into a substitution, which it opens, returning where its
// tokens start. -1: unterminated.
func (s *tsScan) template(i int) int {
	src := s.src
	for i < len(src) {
		switch src[i] {
		case '\\':
			i += 2
		case '`':
			s.prev, s.prevWord, s.prevHeader = tsOperand, "`", false
			return i + 1
		case '$':
			if i+1 < len(src) && src[i+1] == '{' {
				s.prev, s.prevWord, s.prevHeader = tsPunct, "${", false
				s.push('$', i, false)
				return i + 2
			}
			i++
		default:
			i++
		}
	}
	return -1
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWordStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c == '#' || c == '\\' || c >= 0x80
}

func isWordByte(c byte) bool { return isWordStart(c) || isDigit(c) }

// wordAt is the word (identifier or keyword) at i, or "".
func wordAt(src string, i int) string {
	if i >= len(src) || !isWordStart(src[i]) {
		return ""
	}
	j := i + 1
	for j < len(src) && isWordByte(src[j]) {
		if src[j] >= 0x80 && (strings.HasPrefix(src[j:], "\u2028") || strings.HasPrefix(src[j:], "\u2029") ||
			strings.HasPrefix(src[j:], "\u00a0") || strings.HasPrefix(src[j:], "\ufeff")) {
			break
		}
		j++
	}
	return src[i:j]
}

// skipBlank skips blanks and comments from i.
func skipBlank(src string, i int) int {
	for i < len(src) {
		switch {
		case src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r':
			i++
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return len(src)
			}
			i += end + 4
		default:
			return i
		}
	}
	return i
}

// skipString skips a string literal starting at i; an unterminated one
// ends at the line's end.
func skipString(src string, i int) int {
	q := src[i]
	i++
	for i < len(src) {
		switch src[i] {
		case '\\':
			i += 2
			continue
		case q:
			return i + 1
		case '\n', '\r':
			return i
		}
		i++
	}
	return len(src)
}

// skipRegexp skips a regular expression literal starting at i; an
// unterminated one ends at the line's end.
func skipRegexp(src string, i int) int {
	i++
	class := false
	for i < len(src) {
		switch src[i] {
		case '\\':
			i += 2
			continue
		case '[':
			class = true
		case ']':
			class = false
		case '/':
			if !class {
				i++
				for i < len(src) && isWordByte(src[i]) {
					i++
				}
				return i
			}
		case '\n', '\r':
			return i
		}
		i++
	}
	return len(src)
}

var tsPuncts = []string{
	">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
	"=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=",
	"*=", "/=", "%=", "&=", "|=", "^=", "**", "<<", ">>",
}

// punctAt is the operator at i: the longest that matches, or one byte.
func punctAt(src string, i int) string {
	for _, p := range tsPuncts {
		if strings.HasPrefix(src[i:], p) {
			if p == "?." && i+2 < len(src) && isDigit(src[i+2]) {
				continue // a ? .5 : b
			}
			return p
		}
	}
	return src[i : i+1]
}
