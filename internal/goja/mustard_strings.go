package goja

import (
	"math"
	"strings"
)

// Helpers for what the string, RegExp, JSON and URI built-ins report to the
// Meter (a mustard-sidecar addition; see PATCHES.md). Like the Meter's own
// helpers they do nothing without a Meter, except poll's cheap interrupt
// check.

const (
	// maxReportBytes caps a computed size: a request too large to compute
	// (or to fit an int) is reported as this, never as a wrapped-around
	// small or negative number.
	maxReportBytes = math.MaxInt / 2

	// produceBytesPerUnit: copying bytes into a new result is cheaper than
	// visiting a character, so a copy of n bytes is n/produceBytesPerUnit
	// units of work (the rate the Meter's copying helper uses). With the
	// allocation and the collection of the result, a copy costs 0.3 to 1.3
	// ns a byte (concatenation, pad, slices of non-ASCII text, error
	// messages), so 16 bytes a unit keep an instruction's worth under a
	// microsecond.
	produceBytesPerUnit = 16

	// matchBytes is the memory of one match in a list of matches: a
	// regexpResult and its start and end.
	matchBytes = 64
)

// mulBytes is a*b for counts a, b >= 0, clamped to maxReportBytes.
func mulBytes(a, b int64) int {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > maxReportBytes/b {
		return maxReportBytes
	}
	return int(a * b)
}

// addBytes is a+b for sizes in [0, maxReportBytes], clamped.
func addBytes(a, b int) int {
	if a > maxReportBytes-b {
		return maxReportBytes
	}
	return a + b
}

// unitBytes is the size of a string of n UTF-16 units: one byte a unit
// if it is ASCII, else two a unit plus the BOM.
func unitBytes(n int64, ascii bool) int {
	if n <= 0 {
		return 0
	}
	if ascii {
		return mulBytes(n, 1)
	}
	return addBytes(mulBytes(n, 2), 2)
}

// isASCIIKind reports whether s is stored one byte a unit, without
// scanning an imported string that was not scanned yet (false then: the
// conservative answer).
func isASCIIKind(s String) bool {
	switch s := s.(type) {
	case asciiString:
		return true
	case *importedString:
		return s.scanned && s.u == nil
	}
	return false
}

// substringBytes is what s.Substring of n units allocates: a copy, but
// for an ASCII string's whole or one character (asciiPiece).
func substringBytes(s String, n int) int {
	if isASCIIKind(s) {
		return asciiPieceBytes(s, n)
	}
	return unitBytes(int64(n), false)
}

// produce reports a result of n bytes about to be copied together: its
// memory, and the copy as work.
func (r *Runtime) produce(n int) {
	if r.meter != nil && n > 0 {
		r.allocBytes(n) // first: a result too large for the limit is refused as such
		r.work(r.copyUnits(n) + 1)
	}
}

// transform reports a result of n UTF-16 units about to be built a
// character at a time (case mapping, escaping, splitting into
// characters): one unit of work a character, and its memory.
func (r *Runtime) transform(n int64, ascii bool) {
	if r.meter != nil && n > 0 {
		r.allocBytes(unitBytes(n, ascii))
		r.work(mulBytes(n, 1))
	}
}

// Work a UTF-16 unit of non-ASCII text costs the library calls that
// transform or compare it, from a unit's worst time (measured on 2 vCPUs),
// so that a unit of work stays under about 12 ns of the engine's time (the
// slowest classes measured, docs/limits.md), with a quarter to spare.
const (
	caseMapUnits   = 5  // toUpperCase, toLowerCase: up to 45 ns a unit
	normalizeUnits = 28 // normalize: up to 240 ns (NFKC of U+01C5; NFD of precomposed Latin or Hangul)
	collateUnits   = 24 // localeCompare, per unit of either string: up to 230 ns (precomposed Latin)
	collateASCII   = 3  // localeCompare of ASCII: 22 ns a unit
)

// transformAt is transform for a transformation costing units a unit of
// non-ASCII text (ASCII text: one).
func (r *Runtime) transformAt(n int64, ascii bool, units int64) {
	if r.meter != nil && n > 0 {
		if ascii {
			units = 1
		}
		r.allocBytes(unitBytes(n, ascii))
		r.work(mulBytes(n, units))
	}
}

// collateWork is the work of comparing s in localeCompare.
func collateWork(s String) int {
	if isASCIIKind(s) {
		return mulBytes(int64(s.Length()), collateASCII)
	}
	return mulBytes(int64(s.Length()), collateUnits)
}

// grew reports the growth of a buffer now n bytes long past *reported, the
// size reported so far.
func (r *Runtime) grew(reported *int, n int) {
	if n > *reported {
		r.allocBytes(n - *reported)
		*reported = n
	}
}

// poll lets an Interrupt stop a long native loop whose work was reported
// already: a check every workEvery iterations.
func (r *Runtime) poll(i int) {
	if i&(workEvery-1) == workEvery-1 {
		r.vm.checkInterrupt()
	}
}

// searched reports a search that began at start and stopped at end (the
// end of its match, or of the input): at least one unit a call.
func (r *Runtime) searched(start, end int) {
	r.work(max(end-start, 1))
}

// regexpScanUnits: a regular expression costs several times more per
// character scanned than a substring search (Go's regexp runs at tens of
// nanoseconds a byte where strings.Index runs at one).
const regexpScanUnits = 8

// matched reports the span [start, end) a regular expression scanned.
func (r *Runtime) matched(start, end int) {
	if r.meter != nil {
		r.work(mulBytes(int64(max(end-start, 1)), regexpScanUnits))
	}
}

// foundEnd is where a search for a needle of n units stopped in a string
// of length units: the end of the match at idx, or the end of the string.
func foundEnd(idx, n, length int) int {
	if idx >= 0 {
		return idx + n
	}
	return length
}

// scanEnd is where a RegExp search stopped: the end of its match, or the
// end of the input.
func scanEnd(res regexpResult, length int) int {
	if len(res.indexes) > 1 && res.indexes[1] >= 0 {
		return res.indexes[1]
	}
	return length
}

// resultBytes is the memory of one match in a list of matches.
func resultBytes(res regexpResult) int {
	return matchBytes + 8*len(res.indexes) + 16*len(res.groups)
}

// foundAll reports a list of matches found by one call that searched from
// start: its memory, and the span it scanned (to the end of the input
// unless it stopped at its limit).
func (r *Runtime) foundAll(res []regexpResult, start, limit, length int) []regexpResult {
	if r.meter != nil {
		n := 0
		for _, m := range res {
			n = addBytes(n, resultBytes(m))
		}
		r.alloc(n)
		end := length
		if limit > 0 && len(res) == limit {
			end = scanEnd(res[len(res)-1], length)
		}
		r.matched(start, end)
	}
	return res
}

// converted reports a string of n units about to be converted for a
// matcher (to runes, with a position map): n units of work and perUnit
// bytes a unit.
func (r *Runtime) converted(n, perUnit int) {
	if r.meter != nil && n > 0 {
		r.work(n)
		r.allocBytes(mulBytes(int64(n), int64(perUnit)))
	}
}

// regexpInstBytes is about what compiling a pattern takes per character
// of its source: one RE2 instruction (regexp/syntax.Inst) a character.
const regexpInstBytes = 40

// compiling reports a RegExp pattern of n units about to be compiled.
func (r *Runtime) compiling(n int) {
	if r.meter != nil && n > 0 {
		if r.bigMetered {
			// A character compiles to about one instruction of each
			// program (the backtracking one and the linear engine's), a
			// microsecond in all: charged as the instructions past one a
			// character are (chargeProgram). Programs of format version 1
			// or 2 keep a unit a character, as their journals recorded.
			r.work(mulBytes(int64(n), regexpInstUnits))
		} else {
			r.work(n)
		}
		r.allocBytes(mulBytes(int64(n), regexpInstBytes))
	}
}

// scanCopy reports a built-in that visits every character of s and
// returns about s again: a copy, unless s is ASCII (then the result is a
// substring of it, which shares its memory).
func (r *Runtime) scanCopy(s String) {
	if r.meter != nil {
		n := s.Length()
		r.work(n)
		if !isASCIIKind(s) {
			r.allocBytes(unitBytes(int64(n), false))
		}
	}
}

// expanded reports the part of a result larger than the reported bytes
// (case mapping and normalisation can lengthen a string).
func (r *Runtime) expanded(res String, reported int) String {
	if r.meter != nil {
		r.allocBytes(stringBytes(res) - reported)
	}
	return res
}

// What converting a string for a matcher takes a UTF-16 unit: a rune; a
// rune and a position; a position pair and up to 3 UTF-8 bytes.
const (
	runeBytes       = 4
	posMapBytes     = 12
	utf8PosMapBytes = 20
)

// findAllBatch is the first number of matches a bounded find-all asks for.
const findAllBatch = 1024

// findAllBounded runs a find-all of at most limit matches (-1: all) in
// growing batches: Go's regexp builds its whole list of matches inside one
// call, where nothing can stop it, so each batch's memory is reported
// before a larger one is asked for. The same search runs again from the
// start for each batch (batches grow 4x, so the scans add up to under
// 4/3 of one) and returns the same matches as one call would.
func (r *Runtime) findAllBounded(limit int, find func(n int) []regexpResult) []regexpResult {
	if !r.metered() || limit >= 0 && limit <= findAllBatch {
		return find(limit)
	}
	for n := findAllBatch; ; n *= 4 {
		if limit >= 0 && n >= limit || n > maxReportBytes/matchBytes {
			return find(limit)
		}
		res := find(n)
		if len(res) < n {
			return res
		}
		// This batch's memory: past the limit it stops here, and the next
		// batch, 4x larger, is asked for only while it is not.
		r.allocBytes(mulBytes(int64(n), matchBytes))
	}
}

// parseFloatPrefix is what parseFloatRegexp.FindStringSubmatch(s) gives
// (the whole match and its group, here the same: the longest prefix of s
// that is a sign, then Infinity or digits, a point, digits and an exponent
// with at least one digit, each optional), found in one pass: Go's regexp
// took 75 ns a character of a long digit string.
func parseFloatPrefix(s string) []string {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if strings.HasPrefix(s[i:], "Infinity") {
		i += len("Infinity")
	} else {
		digits := func(i int) int {
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
			return i
		}
		i = digits(i)
		if i < len(s) && s[i] == '.' {
			i = digits(i + 1)
		}
		if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
			j := i + 1
			if j < len(s) && (s[j] == '+' || s[j] == '-') {
				j++
			}
			if k := digits(j); k > j {
				i = k
			}
		}
	}
	return []string{s[:i], s[:i]}
}

// Number to text conversions that make their digits one at a time with
// big arithmetic (measured worst, 2 vCPUs): toString(radix) of a number
// with a fraction (1,076 digits for a denormal in radix 2, 57-80 ns each),
// toFixed, toExponential and toPrecision asked for more than
// precisionFreeDigits digits (95 ns each). With MustardMeterOperands on,
// they report these units a digit made; shorter conversions are covered by
// their instruction (they cost nothing before).
const (
	radixDigitUnits     = 8
	precisionDigitUnits = 8
	precisionFreeDigits = 21
)

func (r *Runtime) numberDigits(n, units int) {
	if r.bigMetered && r.meter != nil {
		r.work(n * units)
	}
}

// precisionDigits is s, a conversion asked for prec digits, charged.
func (r *Runtime) precisionDigits(s string, prec int) String {
	if prec > precisionFreeDigits {
		r.numberDigits(len(s), precisionDigitUnits)
	}
	return asciiString(s)
}
