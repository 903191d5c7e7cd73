package parser

import (
	"unicode/utf16"
	"unicode/utf8"
)

// CheckRegExp reads a JavaScript pattern the way V8's regular expression
// parser does and returns the first error V8 would report, in V8's words
// ("Unterminated group", "Range out of order in character class", ...),
// or "" for a pattern V8 accepts. unicode is the u flag. Without it the
// pattern is read as UTF-16 code units (Annex B's grammar: \p{L} is the
// text p{L}, a lone ] or { is a character, ...); with it, as code points.
//
// Both of goja's engines (Go's regexp after TransformRegExp, and regexp2)
// run only patterns that passed this check, so which errors a guest sees,
// and their text, do not depend on which engine would have run the
// pattern: RegExpErrorMessage makes V8's message of it.
func CheckRegExp(pattern string, unicode bool) string {
	if !utf8.ValidString(pattern) {
		return reInvalidCharacter // not a JavaScript string: an embedder's bytes
	}
	c := reChecker{unicode: unicode}
	if unicode {
		c.in = []rune(pattern)
	} else {
		c.in = make([]rune, 0, len(pattern))
		for _, r := range pattern {
			if r > 0xFFFF {
				a, b := utf16.EncodeRune(r)
				c.in = append(c.in, a, b)
			} else {
				c.in = append(c.in, r)
			}
		}
	}
	c.parseDisjunction()
	return c.err
}

// RegExpErrorMessage is V8's message for a pattern's syntax error.
func RegExpErrorMessage(pattern, flags, reason string) string {
	return "Invalid regular expression: /" + pattern + "/" + flags + ": " + reason
}

// V8's reasons (src/regexp/regexp-error.h).
const (
	reUnterminatedGroup        = "Unterminated group"
	reUnmatchedParen           = "Unmatched ')'"
	reEscapeAtEnd              = "\\ at end of pattern"
	reInvalidPropertyName      = "Invalid property name"
	reInvalidEscape            = "Invalid escape"
	reInvalidDecimalEscape     = "Invalid decimal escape"
	reInvalidUnicodeEscape     = "Invalid Unicode escape"
	reNothingToRepeat          = "Nothing to repeat"
	reLoneQuantifierBrackets   = "Lone quantifier brackets"
	reRangeOutOfOrder          = "numbers out of order in {} quantifier"
	reIncompleteQuantifier     = "Incomplete quantifier"
	reInvalidQuantifier        = "Invalid quantifier"
	reInvalidGroup             = "Invalid group"
	reTooManyCaptures          = "Too many captures"
	reInvalidCaptureGroupName  = "Invalid capture group name"
	reDuplicateCaptureName     = "Duplicate capture group name"
	reInvalidNamedReference    = "Invalid named reference"
	reInvalidNamedCaptureRef   = "Invalid named capture referenced"
	reInvalidClassEscape       = "Invalid class escape"
	reInvalidClassPropertyName = "Invalid property name in character class"
	reInvalidCharacterClass    = "Invalid character class"
	reUnterminatedClass        = "Unterminated character class"
	reOutOfOrderClass          = "Range out of order in character class"

	reInvalidCharacter = "Invalid character"

	// ReasonTooLarge is V8's reason for a pattern too large to compile.
	ReasonTooLarge = "Regular expression too large"
)

const (
	reEnd         = rune(1 << 21) // past the end of the pattern
	reMaxCaptures = 1 << 16
	reInfinity    = 1<<31 - 1
)

type reGroupKind int

const (
	reInitial reGroupKind = iota
	reCapture
	reLookahead
	reLookbehind
	reGrouping
)

type reGroup struct {
	kind  reGroupKind
	name  string
	named bool
}

type reChecker struct {
	in      []rune
	pos     int
	unicode bool
	err     string

	capturesStarted int
	captureCount    int // valid once scanned
	scanned         bool
	hasNamed        bool
	names           map[string]bool
	refs            []string
}

func (c *reChecker) cur() rune {
	if c.pos < len(c.in) {
		return c.in[c.pos]
	}
	return reEnd
}

func (c *reChecker) next() rune {
	if c.pos+1 < len(c.in) {
		return c.in[c.pos+1]
	}
	return reEnd
}

func (c *reChecker) hasMore() bool { return c.pos < len(c.in) }

func (c *reChecker) fail(reason string) {
	if c.err == "" {
		c.err = reason
	}
	c.pos = len(c.in)
}

func (c *reChecker) failed() bool { return c.err != "" }

func isDecimal(r rune) bool { return r >= '0' && r <= '9' }

func hexValue(r rune) int {
	switch {
	case r >= '0' && r <= '9':
		return int(r - '0')
	case r >= 'a' && r <= 'f':
		return int(r-'a') + 10
	case r >= 'A' && r <= 'F':
		return int(r-'A') + 10
	}
	return -1
}

func isSyntaxCharacterOrSlash(r rune) bool {
	switch r {
	case '^', '$', '\\', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '/':
		return true
	}
	return false
}

func (c *reChecker) parseDisjunction() {
	stack := []reGroup{{kind: reInitial}}
	for {
		lookaround := reInitial // the atom just closed, if a lookaround
		switch ch := c.cur(); ch {
		case reEnd:
			if c.failed() {
				return
			}
			if len(stack) > 1 {
				c.fail(reUnterminatedGroup)
				return
			}
			for _, name := range c.refs {
				if !c.names[name] {
					c.fail(reInvalidNamedCaptureRef)
					return
				}
			}
			return
		case ')':
			if len(stack) == 1 {
				c.fail(reUnmatchedParen)
				return
			}
			c.pos++
			g := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if g.kind == reCapture && g.named {
				if c.names[g.name] {
					c.fail(reDuplicateCaptureName)
					return
				}
				if c.names == nil {
					c.names = map[string]bool{}
				}
				c.names[g.name] = true
			}
			if g.kind == reLookahead || g.kind == reLookbehind {
				lookaround = g.kind
			}
		case '|':
			c.pos++
			continue
		case '*', '+', '?':
			c.fail(reNothingToRepeat)
			return
		case '^', '$':
			c.pos++
			continue
		case '.':
			c.pos++
		case '(':
			g, ok := c.parseOpenParenthesis()
			if !ok {
				return
			}
			stack = append(stack, g)
			continue
		case '[':
			c.parseCharacterClass()
			if c.failed() {
				return
			}
		case '\\':
			switch next := c.next(); next {
			case reEnd:
				c.fail(reEscapeAtEnd)
				return
			case '1', '2', '3', '4', '5', '6', '7', '8', '9':
				if c.parseBackReferenceIndex() {
					break
				}
				if c.unicode {
					c.fail(reInvalidEscape)
					return
				}
				if next == '8' || next == '9' {
					c.pos += 2
					break
				}
				c.pos++
				c.parseOctalLiteral()
			case '0':
				c.pos++
				if c.unicode && isDecimal(c.next()) {
					c.fail(reInvalidDecimalEscape)
					return
				}
				c.parseOctalLiteral()
			case 'b', 'B':
				c.pos += 2
				continue
			case 'd', 'D', 's', 'S', 'w', 'W', 'p', 'P':
				if !c.tryCharacterClassEscape(next, false) {
					c.pos += 2 // \p and \P without u: p and P
				}
				if c.failed() {
					return
				}
			case 'k':
				if c.unicode || c.hasNamedCaptures(false) {
					c.pos += 2
					if c.cur() != '<' {
						c.fail(reInvalidNamedReference)
						return
					}
					c.pos++
					name, ok := c.parseGroupName()
					if !ok {
						return
					}
					c.refs = append(c.refs, name)
					break
				}
				c.parseCharacterEscape(false)
			default:
				c.parseCharacterEscape(false)
			}
			if c.failed() {
				return
			}
		case '{':
			if _, _, ok := c.parseIntervalQuantifier(); ok {
				c.fail(reNothingToRepeat)
				return
			}
			if c.unicode {
				c.fail(reLoneQuantifierBrackets)
				return
			}
			c.pos++
		case '}', ']':
			if c.unicode {
				c.fail(reLoneQuantifierBrackets)
				return
			}
			c.pos++
		default:
			c.pos++
		}

		// A quantifier, if any, of the atom just read.
		switch c.cur() {
		case '*', '+', '?':
			c.pos++
		case '{':
			min, max, ok := c.parseIntervalQuantifier()
			if ok {
				if max < min {
					c.fail(reRangeOutOfOrder)
					return
				}
				break
			}
			if c.unicode {
				c.fail(reIncompleteQuantifier)
				return
			}
			continue
		default:
			continue
		}
		if c.cur() == '?' {
			c.pos++
		}
		if lookaround == reLookbehind || (lookaround == reLookahead && c.unicode) {
			c.fail(reInvalidQuantifier)
			return
		}
	}
}

func (c *reChecker) parseOpenParenthesis() (reGroup, bool) {
	g := reGroup{kind: reCapture}
	c.pos++
	if c.cur() == '?' {
		switch c.next() {
		case ':':
			c.pos += 2
			g.kind = reGrouping
		case '=', '!':
			c.pos += 2
			g.kind = reLookahead
		case '<':
			c.pos++
			if n := c.next(); n == '=' || n == '!' {
				c.pos += 2
				g.kind = reLookbehind
				break
			}
			g.named = true
			c.hasNamed = true
			c.pos++
		default:
			c.fail(reInvalidGroup)
			return g, false
		}
	}
	if g.kind == reCapture {
		if c.capturesStarted >= reMaxCaptures {
			c.fail(reTooManyCaptures)
			return g, false
		}
		c.capturesStarted++
		if g.named {
			name, ok := c.parseGroupName()
			if !ok {
				return g, false
			}
			g.name = name
		}
	}
	return g, true
}

// scanForCaptures counts the capturing groups of the whole pattern (the
// ones before the current position and the ones after it), and notes
// whether any is named.
func (c *reChecker) scanForCaptures(inClass bool) {
	saved := c.pos
	count := c.capturesStarted
	if inClass {
		for c.cur() != reEnd {
			ch := c.cur()
			c.pos++
			if ch == '\\' {
				c.pos++
			} else if ch == ']' {
				break
			}
		}
	}
	for c.cur() != reEnd {
		n := c.cur()
		c.pos++
		switch n {
		case '\\':
			c.pos++
		case '[':
			nest := 0
			for c.cur() != reEnd {
				ch := c.cur()
				c.pos++
				if ch == '\\' {
					c.pos++
				} else if ch == '[' {
					nest++
				} else if ch == ']' {
					if nest == 0 {
						break
					}
					nest--
				}
			}
		case '(':
			if c.cur() == '?' {
				c.pos++
				if c.cur() != '<' {
					break
				}
				c.pos++
				if ch := c.cur(); ch == '=' || ch == '!' {
					break
				}
				c.hasNamed = true
			}
			count++
		}
	}
	c.captureCount = count
	c.scanned = true
	c.pos = saved
}

func (c *reChecker) hasNamedCaptures(inClass bool) bool {
	if c.hasNamed || c.scanned {
		return c.hasNamed
	}
	c.scanForCaptures(inClass)
	return c.hasNamed
}

func (c *reChecker) parseBackReferenceIndex() bool {
	start := c.pos
	value := int(c.next() - '0')
	c.pos += 2
	for isDecimal(c.cur()) {
		value = 10*value + int(c.cur()-'0')
		if value > reMaxCaptures {
			c.pos = start
			return false
		}
		c.pos++
	}
	if value > c.capturesStarted {
		if !c.scanned {
			c.scanForCaptures(false)
		}
		if value > c.captureCount {
			c.pos = start
			return false
		}
	}
	return true
}

// parseGroupName reads a group name from the current position through
// its '>' (RegExpIdentifierName: code points and \u escapes, with or
// without the u flag).
func (c *reChecker) parseGroupName() (string, bool) {
	var name []rune
	for first := true; ; first = false {
		ch := c.cur()
		if ch == '\\' && c.next() == 'u' {
			c.pos += 2
			v, ok := c.parseUnicodeEscape(true)
			if !ok {
				c.fail(reInvalidUnicodeEscape)
				return "", false
			}
			ch = v
		} else if ch != reEnd {
			if utf16.IsSurrogate(ch) && ch < 0xDC00 && c.pos+1 < len(c.in) && c.in[c.pos+1] >= 0xDC00 && c.in[c.pos+1] <= 0xDFFF {
				ch = utf16.DecodeRune(ch, c.in[c.pos+1])
				c.pos++
			}
			c.pos++
		}
		if ch == '\\' {
			c.fail(reInvalidCaptureGroupName)
			return "", false
		}
		if first {
			if !isIDStart(ch) {
				c.fail(reInvalidCaptureGroupName)
				return "", false
			}
		} else if ch == '>' {
			break
		} else if !isIDPart(ch) {
			c.fail(reInvalidCaptureGroupName)
			return "", false
		}
		name = append(name, ch)
	}
	return string(name), true
}

func isIDStart(r rune) bool {
	if r == '$' || r == '_' {
		return true
	}
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}
	return r != reEnd && uniPropInSet("ID_Start", r)
}

func isIDPart(r rune) bool {
	if r == '$' || r == '_' || r == 0x200C || r == 0x200D {
		return true
	}
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return r != reEnd && uniPropInSet("ID_Continue", r)
}

// parseIntervalQuantifier reads {n}, {n,} or {n,m} at the current
// position; on failure the position is unchanged.
func (c *reChecker) parseIntervalQuantifier() (min, max int, ok bool) {
	start := c.pos
	c.pos++
	if !isDecimal(c.cur()) {
		c.pos = start
		return 0, 0, false
	}
	readNumber := func() int {
		n := 0
		for isDecimal(c.cur()) {
			d := int(c.cur() - '0')
			if n > (reInfinity-d)/10 {
				for isDecimal(c.cur()) {
					c.pos++
				}
				return reInfinity
			}
			n = 10*n + d
			c.pos++
		}
		return n
	}
	min = readNumber()
	switch c.cur() {
	case '}':
		max = min
		c.pos++
	case ',':
		c.pos++
		if c.cur() == '}' {
			max = reInfinity
			c.pos++
			break
		}
		max = readNumber()
		if c.cur() != '}' {
			c.pos = start
			return 0, 0, false
		}
		c.pos++
	default:
		c.pos = start
		return 0, 0, false
	}
	return min, max, true
}

func (c *reChecker) parseOctalLiteral() rune {
	value := c.cur() - '0'
	c.pos++
	if ch := c.cur(); ch >= '0' && ch <= '7' {
		value = value*8 + ch - '0'
		c.pos++
		if ch := c.cur(); value < 32 && ch >= '0' && ch <= '7' {
			value = value*8 + ch - '0'
			c.pos++
		}
	}
	return value
}

func (c *reChecker) parseHexEscape(length int) (rune, bool) {
	start := c.pos
	var v rune
	for i := 0; i < length; i++ {
		d := hexValue(c.cur())
		if d < 0 {
			c.pos = start
			return 0, false
		}
		v = v*16 + rune(d)
		c.pos++
	}
	return v, true
}

// parseUnicodeEscape reads what follows \u: four hex digits (a surrogate
// pair of two escapes with the u flag), or {hex} with the u flag (or in a
// group name, forced).
func (c *reChecker) parseUnicodeEscape(forceUnicode bool) (rune, bool) {
	unicode := c.unicode || forceUnicode
	if c.cur() == '{' && unicode {
		start := c.pos
		c.pos++
		var v rune
		d := hexValue(c.cur())
		if d >= 0 {
			for d >= 0 {
				v = v*16 + rune(d)
				if v > 0x10FFFF {
					c.pos = start
					return 0, false
				}
				c.pos++
				d = hexValue(c.cur())
			}
			if c.cur() == '}' {
				c.pos++
				return v, true
			}
		}
		c.pos = start
		return 0, false
	}
	v, ok := c.parseHexEscape(4)
	if ok && unicode && v >= 0xD800 && v <= 0xDBFF && c.cur() == '\\' {
		start := c.pos
		if c.next() == 'u' {
			c.pos += 2
			if trail, ok := c.parseHexEscape(4); ok && trail >= 0xDC00 && trail <= 0xDFFF {
				return utf16.DecodeRune(v, trail), true
			}
		}
		c.pos = start
	}
	return v, ok
}

// parseCharacterEscape reads an escape (the current character is its
// backslash) that is not a class escape, and returns its character.
func (c *reChecker) parseCharacterEscape(inClass bool) rune {
	c.pos++
	ch := c.cur()
	switch ch {
	case 'f':
		c.pos++
		return '\f'
	case 'n':
		c.pos++
		return '\n'
	case 'r':
		c.pos++
		return '\r'
	case 't':
		c.pos++
		return '\t'
	case 'v':
		c.pos++
		return '\v'
	case 'c':
		control := c.next()
		if letter := control &^ ('A' ^ 'a'); letter >= 'A' && letter <= 'Z' {
			c.pos += 2
			return control & 0x1F
		}
		if c.unicode {
			c.fail(reInvalidUnicodeEscape)
			return 0
		}
		if inClass && (isDecimal(control) || control == '_') {
			c.pos += 2
			return control & 0x1F
		}
		return '\\' // the backslash is a character, c the next one
	case '0', '1', '2', '3', '4', '5', '6', '7':
		if ch == '0' && !isDecimal(c.next()) {
			c.pos++
			return 0
		}
		if c.unicode {
			c.fail(reInvalidClassEscape)
			return 0
		}
		return c.parseOctalLiteral()
	case 'x':
		c.pos++
		if v, ok := c.parseHexEscape(2); ok {
			return v
		}
		if c.unicode {
			c.fail(reInvalidEscape)
			return 0
		}
		return 'x'
	case 'u':
		c.pos++
		if v, ok := c.parseUnicodeEscape(false); ok {
			return v
		}
		if c.unicode {
			c.fail(reInvalidUnicodeEscape)
			return 0
		}
		return 'u'
	}
	if c.unicode {
		if !isSyntaxCharacterOrSlash(ch) {
			c.fail(reInvalidEscape)
			return 0
		}
		c.pos++
		return ch
	}
	c.pos++
	if ch == 'k' && c.hasNamedCaptures(inClass) {
		c.fail(reInvalidEscape)
		return 0
	}
	return ch
}

// tryCharacterClassEscape reads \d \D \s \S \w \W, and \p{...} \P{...}
// with the u flag; it reports false (and reads nothing) for \p and \P
// without it.
func (c *reChecker) tryCharacterClassEscape(next rune, inClass bool) bool {
	switch next {
	case 'd', 'D', 's', 'S', 'w', 'W':
		c.pos += 2
		return true
	case 'p', 'P':
		if !c.unicode {
			return false
		}
		c.pos += 2
		if !c.parsePropertyClassName() {
			if inClass {
				c.fail(reInvalidClassPropertyName)
			} else {
				c.fail(reInvalidPropertyName)
			}
		}
		return true
	}
	return false
}

func isPropertyChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_'
}

// parsePropertyClassName reads {name} or {name=value} and reports whether
// it names a property.
func (c *reChecker) parsePropertyClassName() bool {
	if c.cur() != '{' {
		return false
	}
	var name, value []rune
	hasValue := false
	for c.pos++; c.cur() != '}' && c.cur() != '='; c.pos++ {
		if !isPropertyChar(c.cur()) || c.pos+1 >= len(c.in) {
			return false
		}
		name = append(name, c.cur())
	}
	if c.cur() == '=' {
		hasValue = true
		for c.pos++; c.cur() != '}'; c.pos++ {
			if !isPropertyChar(c.cur()) || c.pos+1 >= len(c.in) {
				return false
			}
			value = append(value, c.cur())
		}
	}
	c.pos++
	_, ok := lookupUniProp(string(name), string(value), hasValue)
	return ok
}

func (c *reChecker) parseCharacterClass() {
	c.pos++
	if c.cur() == '^' {
		c.pos++
	}
	if c.cur() == ']' {
		c.pos++
		return
	}
	for c.hasMore() && c.cur() != ']' {
		char1, isClass1 := c.parseClassEscape()
		if c.failed() {
			return
		}
		if c.cur() != '-' {
			continue
		}
		c.pos++
		if !c.hasMore() {
			break
		}
		if c.cur() == ']' {
			break
		}
		char2, isClass2 := c.parseClassEscape()
		if c.failed() {
			return
		}
		if isClass1 || isClass2 {
			if c.unicode {
				c.fail(reInvalidCharacterClass)
				return
			}
			continue
		}
		if char1 > char2 {
			c.fail(reOutOfOrderClass)
			return
		}
	}
	if !c.hasMore() {
		c.fail(reUnterminatedClass)
		return
	}
	c.pos++
}

// parseClassEscape reads one class atom: its character, or true for a
// class escape (\d, \p{...}, ...).
func (c *reChecker) parseClassEscape() (rune, bool) {
	if c.cur() != '\\' {
		ch := c.cur()
		c.pos++
		return ch, false
	}
	switch next := c.next(); next {
	case 'b':
		c.pos += 2
		return '\b', false
	case '-':
		if c.unicode {
			c.pos += 2
			return '-', false
		}
	case reEnd:
		c.fail(reEscapeAtEnd)
		return 0, false
	}
	if c.tryCharacterClassEscape(c.next(), true) {
		return 0, true
	}
	return c.parseCharacterEscape(true), false
}
