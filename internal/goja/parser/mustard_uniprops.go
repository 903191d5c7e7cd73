package parser

//go:generate node mustard_uniprops_gen.mjs

import (
	"strconv"
	"strings"
	"sync"
)

// Unicode property escapes (\p{...}, \P{...} with the u flag), as
// ECMAScript defines them: a General_Category value (\p{L}, \p{Letter},
// \p{gc=Lu}, \p{General_Category=Uppercase_Letter}), a Script or
// Script_Extensions value (\p{sc=Greek}, \p{Script_Extensions=Grek}), or
// a binary property (\p{Alphabetic}, \p{ASCII}, \p{Any}, \p{Assigned},
// \p{Emoji}, \p{ID_Start}, ...), each by every alias ECMAScript accepts
// and no other spelling (no loose matching). The sets are Node's
// (mustard_uniprops_gen.mjs asks Node, code point by code point), so they
// follow Node's Unicode version rather than Go's.
//
// Neither engine reads \p itself: ExpandPropertyEscapes rewrites each
// escape into the code point ranges of its set before the pattern is
// translated for RE2 or handed to regexp2, so both engines match the same
// sets.

// uniRange is a set's range of code points, both ends included.
type uniRange struct{ lo, hi rune }

// uniSets are the sets decoded so far: each is decoded on its first use
// (decoding all 367 at once cost a process's first \p about 2 ms).
var uniSets struct {
	once sync.Once
	sets []struct {
		once   sync.Once
		ranges []uniRange
	}
}

// uniSet is the set i of the blob.
func uniSet(i int) []uniRange {
	uniSets.once.Do(func() {
		uniSets.sets = make([]struct {
			once   sync.Once
			ranges []uniRange
		}, len(uniPropOffsets)-1)
	})
	s := &uniSets.sets[i]
	s.once.Do(func() { s.ranges = decodeUniSet(uniPropBlob[uniPropOffsets[i]:uniPropOffsets[i+1]]) })
	return s.ranges
}

// decodeUniSet reads a set's ranges: their count, then each range's
// distance from the end of the one before and its length, as unsigned
// LEB128 numbers.
func decodeUniSet(b string) []uniRange {
	read := func() rune {
		var x rune
		var shift uint
		for {
			c := b[0]
			b = b[1:]
			x |= rune(c&0x7f) << shift
			if c < 0x80 {
				return x
			}
			shift += 7
		}
	}
	ranges := make([]uniRange, read())
	prev := rune(0)
	for k := range ranges {
		lo := prev + read()
		hi := lo + read()
		ranges[k] = uniRange{lo, hi}
		prev = hi
	}
	return ranges
}

// lookupUniProp finds the set of \p{name} (value is "" without '='), as
// V8 does: without '=', a General_Category value, else Any, ASCII or
// Assigned, else a binary property; with '=', a value of
// General_Category, Script or Script_Extensions.
func lookupUniProp(name string, value string, hasValue bool) (int, bool) {
	if !hasValue {
		i, ok := uniPropLone[name]
		return int(i), ok
	}
	var m map[string]uint16
	switch uniPropKinds[name] {
	case "gc":
		m = uniPropGc
	case "sc":
		m = uniPropSc
	case "scx":
		m = uniPropScx
	default:
		return 0, false
	}
	i, ok := m[value]
	return int(i), ok
}

// UnicodeProperty reports whether body (the text between the braces of
// \p{...}) names a property ECMAScript accepts.
func UnicodeProperty(body string) bool {
	_, ok := propertyOf(body)
	return ok
}

func propertyOf(body string) (int, bool) {
	name, value, hasValue := strings.Cut(body, "=")
	return lookupUniProp(name, value, hasValue)
}

// uniPropInSet reports whether c is in the named binary property's set
// (for the identifier tests of group names).
func uniPropInSet(name string, c rune) bool {
	i, ok := uniPropLone[name]
	if !ok {
		return false
	}
	set := uniSet(int(i))
	lo, hi := 0, len(set)
	for lo < hi {
		m := (lo + hi) / 2
		switch {
		case c < set[m].lo:
			hi = m
		case c > set[m].hi:
			lo = m + 1
		default:
			return true
		}
	}
	return false
}

// ExpandPropertyEscapes rewrites every \p{...} and \P{...} of a pattern
// with the u flag, which must have passed CheckRegExp, into the code
// point ranges of its set written as \u{...} escapes: a class of its own
// outside a class, the ranges alone inside one. Without an escape to
// rewrite it returns the pattern itself. grown is the number of bytes
// the rewrite added; folded the number of characters of the inserted
// sets that case folding visits (Go's regexp folds a class character by
// character between FoldMin and FoldMax).
func ExpandPropertyEscapes(pattern string) (expanded string, grown, folded int) {
	if !strings.Contains(pattern, `\p{`) && !strings.Contains(pattern, `\P{`) {
		return pattern, 0, 0
	}
	var b strings.Builder
	inClass := false
	last := 0
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '[':
			inClass = true
		case ']':
			inClass = false
		case '\\':
			if i+2 < len(pattern) && (pattern[i+1] == 'p' || pattern[i+1] == 'P') && pattern[i+2] == '{' {
				end := strings.IndexByte(pattern[i+3:], '}')
				if end < 0 {
					break
				}
				body := pattern[i+3 : i+3+end]
				set, ok := propertyOf(body)
				if !ok {
					break
				}
				b.WriteString(pattern[last:i])
				folded += writeUniSet(&b, uniSet(set), pattern[i+1] == 'P', inClass)
				i += 3 + end
				last = i + 1
				continue
			}
			i++ // the escaped character (an ASCII one, or the first byte of another)
		}
	}
	if last == 0 {
		return pattern, 0, 0
	}
	b.WriteString(pattern[last:])
	out := b.String()
	return out, len(out) - len(pattern), folded
}

// The characters Go's regexp folds (regexp/syntax's minFold and maxFold).
const (
	FoldMin = 0x41
	FoldMax = 0x1E943
)

// writeUniSet writes a set's ranges and returns how many of its
// characters lie between FoldMin and FoldMax.
func writeUniSet(b *strings.Builder, set []uniRange, negate, inClass bool) (folded int) {
	if !inClass {
		b.WriteByte('[')
	}
	write := func(lo, hi rune) {
		if l, h := max(lo, FoldMin), min(hi, FoldMax); l <= h {
			folded += int(h-l) + 1
		}
		writeCodePoint(b, lo)
		if hi != lo {
			b.WriteByte('-')
			writeCodePoint(b, hi)
		}
	}
	if negate {
		next := rune(0)
		for _, r := range set {
			if r.lo > next {
				write(next, r.lo-1)
			}
			next = r.hi + 1
		}
		if next <= 0x10FFFF {
			write(next, 0x10FFFF)
		}
	} else {
		for _, r := range set {
			write(r.lo, r.hi)
		}
	}
	if !inClass {
		b.WriteByte(']')
	}
	return folded
}

func writeCodePoint(b *strings.Builder, c rune) {
	b.WriteString(`\u{`)
	b.WriteString(strconv.FormatInt(int64(c), 16))
	b.WriteByte('}')
}
