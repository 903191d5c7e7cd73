package goja

import (
	"errors"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/parser"
	"github.com/mustard-sidecar/mustard-sidecar/internal/regexp2/syntax"
)

// RegExp errors in V8's words. A pattern's syntax is checked once, as
// V8's parser reads it (parser.CheckRegExp), before either engine sees
// it, so a SyntaxError says what V8 says:
// "Invalid regular expression: /<source>/<flags>: <reason>", the flags
// in V8's order (dgimsuvy) for the constructor and as written for a
// literal, whose bad flags are "Invalid regular expression flags". Neither
// engine's own text (Go's regexp, regexp2) reaches a guest: a pattern
// that passed the check and that regexp2 still refuses (a limit of its
// own) gets V8's reason for the closest case.

// regexpFlagsError is the constructor's error for flags it does not take.
type regexpFlagsError struct{ flags string }

func (e *regexpFlagsError) Error() string {
	return "Invalid flags supplied to RegExp constructor '" + e.flags + "'"
}

// regexpSyntaxError is a pattern's syntax error.
type regexpSyntaxError struct{ source, flags, reason string }

func (e *regexpSyntaxError) Error() string {
	return parser.RegExpErrorMessage(e.source, e.flags, e.reason)
}

// canonicalRegexpFlags is the flags as V8 writes them in a message.
func canonicalRegexpFlags(global, ignoreCase, multiline, dotAll, unicode, sticky bool) string {
	var b []byte
	for _, f := range []struct {
		on bool
		c  byte
	}{{global, 'g'}, {ignoreCase, 'i'}, {multiline, 'm'}, {dotAll, 's'}, {unicode, 'u'}, {sticky, 'y'}} {
		if f.on {
			b = append(b, f.c)
		}
	}
	return string(b)
}

// literalRegexpError is the text of a regular expression literal's error:
// its flags as written.
func literalRegexpError(err error, flags string) string {
	var fe *regexpFlagsError
	if errors.As(err, &fe) {
		return "Invalid regular expression flags"
	}
	var se *regexpSyntaxError
	if errors.As(err, &se) {
		return parser.RegExpErrorMessage(se.source, flags, se.reason)
	}
	return err.Error()
}

// regexp2SyntaxError is the error of a pattern that passed the check and
// that regexp2 refuses: V8's reason for the closest case.
func regexp2SyntaxError(source, flags string, err error) error {
	reason := parser.ReasonTooLarge
	var se *syntax.Error
	if errors.As(err, &se) {
		switch se.Code {
		case syntax.ErrMissingParen:
			reason = "Unterminated group"
		case syntax.ErrUnexpectedParen:
			reason = "Unmatched ')'"
		case syntax.ErrReversedCharRange, syntax.ErrInvalidCharRange:
			reason = "Range out of order in character class"
		case syntax.ErrUnterminatedBracket:
			reason = "Unterminated character class"
		case syntax.ErrInvalidRepeatOp, syntax.ErrMissingRepeatArgument:
			reason = "Nothing to repeat"
		case syntax.ErrIllegalEndEscape:
			reason = "\\ at end of pattern"
		case syntax.ErrMalformedSlashP, syntax.ErrIncompleteSlashP, syntax.ErrUnknownSlashP:
			reason = "Invalid property name"
		case syntax.ErrInvalidGroupName, syntax.ErrInvalidECMAGroupName:
			reason = "Invalid capture group name"
		case syntax.ErrDuplicateGroupName:
			reason = "Duplicate capture group name"
		case syntax.ErrUndefinedNameRef, syntax.ErrMalformedNameRef:
			reason = "Invalid named capture referenced"
		case syntax.ErrUnrecognizedGrouping:
			reason = "Invalid group"
		case syntax.ErrUnrecognizedEscape, syntax.ErrTooFewHex, syntax.ErrInvalidHex,
			syntax.ErrMissingControl, syntax.ErrUnrecognizedControl:
			reason = "Invalid escape"
		case syntax.ErrBadClassInCharRange, syntax.ErrShorthandClassInCharRange:
			reason = "Invalid character class"
		}
	}
	return &regexpSyntaxError{source: source, flags: flags, reason: reason}
}

// expandedBytesPerInst is parser.ExpandedBytesPerInst.
const expandedBytesPerInst = parser.ExpandedBytesPerInst

// expandedWork is the work of compiling what rewriting property escapes
// added, past the instructions it is charged (expandedBytesPerInst): the
// ranges' text is translated, parsed and compiled by each engine (70-130
// ns a byte, measured on \p{L} on a busy 2-core VM: 8 units more a
// byte), and with the i flag Go's regexp folds the inserted classes
// character by character between parser.FoldMin and parser.FoldMax
// (60-190 ns a character: 12 units).
func expandedWork(grown, folded int, ignoreCase bool) int64 {
	w := 8 * int64(grown)
	if ignoreCase {
		w += 12 * int64(folded)
	}
	return w
}
