package goja

import (
	"io"
	"math"
	"regexp"
	"regexp/syntax"
	"sort"
	"sync"
	"sync/atomic"
	"unicode/utf16"
)

// Linear-time regular expressions (a mustard-sidecar addition; see
// PATCHES.md).
//
// Upstream runs a pattern that RE2 accepts on Go's regexp only for a search
// from the start of the input (and, for a list of matches, only on an ASCII
// string, or a valid UTF-16 one with the u flag); a search from lastIndex,
// or a global search through a non-ASCII string, goes to the backtracking
// regexp2, where a pattern such as /(a+)+b/ takes exponential time. With
// Runtime.MustardSetLinearRegexp(true), every search of a pattern whose
// JavaScript meaning a leftmost-first automaton computes exactly runs on
// Go's regexp, from any position and on any string; the other patterns of
// those RE2 accepts run on regexp2 for every search, so that a pattern
// gives the same answers wherever a search starts.

// MustardSetLinearRegexp chooses, for searches from then on, whether
// patterns run on the linear-time engine wherever their meaning allows
// (see above). Off by default: upstream's choice of engine.
func (r *Runtime) MustardSetLinearRegexp(on bool) {
	r.linearRegexpMode = linearOff
	if on {
		r.linearRegexpMode = linearOn
	}
}

// The runtime's choice of engine for patterns RE2 accepts.
const (
	linearOff           = iota // upstream's
	linearOn                   // the linear engine where the meaning allows, else regexp2
	linearBacktrackOnly        // regexp2 for every search (the differential test's reference)
)

// linearFor is the linear program for p's searches, or nil with backtrack
// true when they run on regexp2 alone; both zero under upstream's choice.
func (p *regexpPattern) linearFor(r *Runtime) (l *linearProg, backtrack bool) {
	if r.linearRegexpMode == linearOff || p.linear == nil {
		return nil, false
	}
	if r.linearRegexpMode == linearOn {
		if l = p.linear.get(p.unicode, p.ignoreCase); l != nil {
			return l, false
		}
	}
	return nil, true
}

// linearSource is what compiling a pattern learned for the linear engine:
// set on patterns RE2 accepts, shared by the clones of a pattern.
type linearSource struct {
	re2   string // TransformRegExp's output, without flags
	flags string // the RE2 flags: m, s, i

	once sync.Once
	prog *linearProg // nil when the pattern's meaning needs backtracking
}

// linearProg is a pattern ready for the linear engine.
type linearProg struct {
	whole *regexp.Regexp // searches from the start of the input
	// from searches from a position: its input begins one character
	// before it, which gives ^, $, \b and \B their context; group 1 is
	// the match.
	from  *regexp.Regexp
	names []string
	// exact: the automaton's answers are JavaScript's (linearSafe). When
	// they are not, it still tells whether and where a match begins, and
	// regexp2 runs only from there.
	exact bool
	// size is about the number of the automaton's instructions: a search
	// costs up to that much per character (progSize).
	size int
	// extra is what a character read costs beyond regexpScanUnits: the
	// automaton steps through every instruction of its program for each
	// character in the worst case (about 5 ns an instruction, measured:
	// /[ab]{1,1000}c/, 2,002 instructions, takes 10.7 us a character).
	extra int
}

// regexpInstsPerUnit: a character costs a unit for every this many
// instructions of the program, which keeps a unit under a microsecond.
const regexpInstsPerUnit = 2

// linearStepFactor multiplies a large program's extra cost a character in
// current programs (linearFind).
const linearStepFactor = 4

// programExtra is the extra cost a character of the compiled src has.
func programExtra(src string) int {
	tree, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return 0
	}
	prog, err := syntax.Compile(tree.Simplify())
	if err != nil {
		return 0
	}
	return max(len(prog.Inst)/regexpInstsPerUnit-regexpScanUnits, 0)
}

// A pattern's program. Go's regexp builds its automaton with counted
// repeats expanded, so a short pattern can make a huge program
// ('x{1000}'.repeat(3000)+'y': 21,001 characters, three million
// instructions, about a second and 700 MB to build, in one call nothing
// can interrupt). Compiling a pattern charges its characters (compiling);
// the instructions of its program past one a character are charged as
// well, as work and as memory, before the program is built
// (compileRegexp's charge, from parser.RegexpInsts, which reads the
// pattern's syntax tree only). Only a counted repeat (x{n,m}) makes a
// program larger than about two instructions a character of its pattern
// (a star, the largest of the others, is two around its body), so a
// pattern without one is not read again: the characters' charge covers
// it.
//
// Measured (2-core VM; patterns of 60,000 to 3,000,000 instructions):
// compiling takes about 300 ns and allocates about 240 bytes an
// instruction (140 at its peak), and the linear engine's two programs of
// the same pattern (compileLinear, on the first search) 700 ns and 720
// bytes more. So an instruction is charged 64 units (an interpreter
// instruction's worth, about a microsecond) and 256 bytes: the default
// heap limit (8 MiB) takes a program of about 32,000 instructions at most.
const (
	regexpInstUnits        = 64
	regexpProgramInstBytes = 256
)

// chargeProgram is the charge a compile of a pattern of n units calls
// with the size of its program, before building it (nil without a
// Meter): the instructions past one a character, as memory, then as work;
// and with extra instructions charged in full and extra work (what
// rewriting property escapes added: expandedBytesPerInst bytes an
// instruction, and expandedWork).
func (r *Runtime) chargeProgram(n int) func(insts, extra, work int64) {
	if r.meter == nil {
		return nil
	}
	return func(insts, extra, work int64) {
		if work > 0 {
			r.work(int(min(work, math.MaxInt32)))
		}
		if extra += max(insts-int64(n), 0); extra > 0 {
			r.allocBytes(mulBytes(extra, regexpProgramInstBytes))
			r.work(mulBytes(extra, regexpInstUnits))
		}
	}
}

// get compiles the linear program once; unicode and ignoreCase are the
// pattern's flags.
func (l *linearSource) get(unicode, ignoreCase bool) *linearProg {
	l.once.Do(func() { l.prog = compileLinear(l.re2, l.flags, unicode, ignoreCase) })
	return l.prog
}

func compileLinear(re2, flags string, unicode, ignoreCase bool) *linearProg {
	goFlags := ""
	for _, f := range flags {
		if f != 'i' || unicode { // without u, case folding is JavaScript's, done below
			goFlags += string(f)
		}
	}
	src := re2
	if goFlags != "" {
		src = "(?" + goFlags + ":" + re2 + ")"
	}
	tree, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil
	}
	exact := linearSafe(tree, unicode && ignoreCase)
	if ignoreCase && !unicode {
		if tree = foldJS(tree); tree == nil {
			return nil
		}
		src = tree.String()
	}
	whole, err := regexp.Compile(src)
	if err != nil {
		return nil
	}
	fromSrc := `\A(?s:.)(?s:.*?)(` + src + `)`
	from, err := regexp.Compile(fromSrc)
	if err != nil {
		return nil
	}
	return &linearProg{whole: whole, from: from, names: whole.SubexpNames(), exact: exact, size: progSize(tree) + 8, extra: programExtra(fromSrc)}
}

// progSize is about the number of instructions re compiles to (repeats
// expanded), at most maxProgSize.
func progSize(re *syntax.Regexp) int {
	n := 1
	switch re.Op {
	case syntax.OpLiteral:
		n = len(re.Rune)
	case syntax.OpRepeat:
		times := re.Max
		if times < 0 {
			times = re.Min + 1
		}
		n = max(times, 1) * progSize(re.Sub[0])
	default:
		for _, sub := range re.Sub {
			n += progSize(sub)
		}
	}
	return min(n, maxProgSize)
}

const maxProgSize = 1 << 30

// linearStringWork: a search whose input from its start, times the
// program's size, is at most this runs on the string at once (about a
// millisecond at most); a longer one reads the input a character at a
// time, checking for an interrupt at each (Go's regexp takes no other
// way to stop a search, and one through 4 MB with a large program runs for
// minutes). A variable, for tests.
var linearStringWork int64 = 1 << 20

// linearSafe reports whether a leftmost-first automaton gives tree's
// JavaScript answers: the match a backtracking matcher finds, and the
// captures ECMAScript defines. It does unless
//
//   - a loop's body can match the empty string: ECMAScript rejects an
//     iteration that matched empty and backtracks into the body, Perl and
//     RE2 stop the loop (/(a|)+/ on "aa": ["aa", "a"] in JavaScript);
//   - a capture inside a loop's body may not take part in an iteration:
//     ECMAScript resets the captures of the body at each iteration, RE2
//     keeps the last value it had (/((a)|b)+/ on "ab": group 2 is
//     undefined in JavaScript);
//   - with i and u, \b or \B: JavaScript's word characters then include
//     U+017F and U+212A, RE2's \b knows ASCII only.
//
// ^ and $ with the m flag break lines at \n only, as in regexp2; the
// matching of case without the u flag is rewritten to JavaScript's by
// foldJS.
func linearSafe(re *syntax.Regexp, unicodeFold bool) bool {
	switch re.Op {
	case syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		if unicodeFold {
			return false
		}
	case syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		if re.Op != syntax.OpRepeat || re.Max == -1 || re.Max > 1 {
			if nullable(re.Sub[0]) || optionalCapture(re.Sub[0], false) {
				return false
			}
		}
	}
	for _, sub := range re.Sub {
		if !linearSafe(sub, unicodeFold) {
			return false
		}
	}
	return true
}

// nullable reports whether re can match the empty string.
func nullable(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpStar, syntax.OpQuest:
		return true
	case syntax.OpLiteral:
		return len(re.Rune) == 0
	case syntax.OpCapture, syntax.OpPlus:
		return nullable(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min == 0 || nullable(re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !nullable(sub) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if nullable(sub) {
				return true
			}
		}
		return false
	}
	return false
}

// optionalCapture reports whether re has a capture that a match of re may
// leave unset (optional: re itself is on such a path).
func optionalCapture(re *syntax.Regexp, optional bool) bool {
	switch re.Op {
	case syntax.OpCapture:
		if optional {
			return true
		}
	case syntax.OpAlternate, syntax.OpStar, syntax.OpQuest:
		optional = true
	case syntax.OpRepeat:
		optional = optional || re.Min == 0
	}
	for _, sub := range re.Sub {
		if optionalCapture(sub, optional) {
			return true
		}
	}
	return false
}

// mustardFind runs a search of a pattern that RE2 accepts as the runtime
// chose: on the linear engine, or on regexp2 when the pattern's meaning
// needs it; ok is false under upstream's choice.
func (p *regexpPattern) mustardFind(r *Runtime, s String, start int) (res regexpResult, ok bool) {
	l, backtrack := p.linearFor(r)
	switch {
	case !backtrack && l == nil:
		return
	case start > s.Length():
		return regexpResult{}, true
	case l != nil:
		return p.linearFind(r, l, s, start), true
	}
	p.createRegexp2()
	return p.regexp2Wrapper.findSubmatchIndex(r, s, start, p.unicode, p.global || p.sticky), true
}

// linearFind is the first match at or after start: the automaton's, or
// regexp2's from where the automaton found that a match begins. A match
// exists at a position under ECMAScript's rules exactly when it does under
// RE2's (an iteration that matched empty can always be left out), so a
// search that fails, where backtracking takes exponential time, is linear
// for every pattern.
func (p *regexpPattern) linearFind(r *Runtime, l *linearProg, s String, start int) regexpResult {
	var res regexpResult
	if l.extra > 0 && r.metered() {
		// A large program: charged for every character it reads, as it
		// reads them, so that a long search stops at the budget instead of
		// being charged after it.
		cr := chargingReader{r: r, extra: l.extra}
		if r.bigMetered {
			// Measured on long searches with large programs, a step of
			// the automaton with captures takes 4 times the 5 ns the
			// rate assumes; programs of format version 1 or 2 keep it.
			cr.extra *= linearStepFactor
		}
		res = l.find(r, s, start, p.unicode, &cr)
		cr.settle()
	} else {
		res = l.find(r, s, start, p.unicode, nil)
	}
	if l.exact || res.indexes == nil {
		return res
	}
	p.createRegexp2()
	return p.regexp2Wrapper.findSubmatchIndex(r, s, res.indexes[0], p.unicode, p.global || p.sticky)
}

// mustardFindAll is findAllSubmatchIndex as the runtime chose (see
// mustardFind). On the linear engine the matches are those of successive
// searches, as RegExpBuiltinExec's callers make them: each from the end
// of the previous match, one character further after an empty one.
func (p *regexpPattern) mustardFindAll(r *Runtime, s String, start, limit int, sticky bool) (results []regexpResult, ok bool) {
	l, backtrack := p.linearFor(r)
	switch {
	case !backtrack && l == nil:
		return
	case start > s.Length():
		// No match, as RegExpBuiltinExec says (upstream's regexp2 path
		// reported one past the end of the input).
		return nil, true
	case l == nil:
		p.createRegexp2()
		results = p.regexp2Wrapper.findAllSubmatchIndex(r, s, start, limit, sticky, p.unicode)
		if limit >= 0 && len(results) > limit {
			// Upstream's search of a non-ASCII string with the u flag
			// ignores the limit: a replace without g replaced every match.
			results = results[:limit]
		}
		return results, true
	}
	n := s.Length()
	pos, scanned := start, start
	for limit != 0 && pos <= n {
		res := p.linearFind(r, l, s, pos)
		if res.indexes == nil {
			r.matched(scanned, n) // the rest of the input
			break
		}
		// Each match reports the span since the previous one.
		r.matched(scanned, res.indexes[1])
		scanned = max(scanned, res.indexes[1])
		r.alloc(resultBytes(res))
		r.poll(len(results))
		if sticky {
			if res.indexes[0] != start {
				break
			}
			start = res.indexes[1]
		}
		results = append(results, res)
		limit--
		if res.indexes[1] == res.indexes[0] {
			pos = advanceStringIndex(s, res.indexes[1], p.unicode)
		} else {
			pos = res.indexes[1]
		}
	}
	return results, true
}

// find is the first match at or after start, in UTF-16 units; unicode
// reads surrogate pairs as one character.
// cr, when not nil, reads the input and charges for it (linearFind).
func (l *linearProg) find(r *Runtime, s String, start int, unicode bool, cr *chargingReader) regexpResult {
	a, u := devirtualizeString(s)
	var idx []int
	base := 0
	long := cr != nil || int64(s.Length()-start)*int64(l.size) > linearStringWork
	switch {
	case start > s.Length():
	case u == nil && start == 0 && long:
		idx = l.whole.FindReaderSubmatchIndex(cr.wrap(&asciiReader{s: string(a), vm: r.vm}))
	case u == nil && start == 0:
		idx = l.whole.FindStringSubmatchIndex(string(a))
	case u == nil && long:
		base = start - 1
		idx = l.from.FindReaderSubmatchIndex(cr.wrap(&asciiReader{s: string(a[base:]), vm: r.vm}))
	case u == nil:
		base = start - 1
		idx = l.from.FindStringSubmatchIndex(string(a[base:]))
	case start == 0:
		idx = l.whole.FindReaderSubmatchIndex(cr.wrap(&unitReader{u: u[1:], full: unicode, vm: r.vm}))
	default:
		if unicode && start < len(u)-1 && isUTF16FirstSurrogate(u[start]) && isUTF16SecondSurrogate(u[start+1]) {
			// start splits a surrogate pair: the search begins with the
			// pair, as in V8.
			if start--; start == 0 {
				idx = l.whole.FindReaderSubmatchIndex(cr.wrap(&unitReader{u: u[1:], full: true, vm: r.vm}))
				break
			}
		}
		// The character before start is read as one unit: it only gives
		// the assertions their context, and a surrogate is neither a
		// word character nor a line terminator.
		base = start - 1
		idx = l.from.FindReaderSubmatchIndex(cr.wrap(&unitReader{u: u[1:], pos: start, full: unicode, ctx: rune(u[start]), hasCtx: true, vm: r.vm}))
	}
	if idx == nil {
		return regexpResult{}
	}
	if start != 0 {
		idx = idx[2:] // from's whole match begins at the character before start
	}
	for i, v := range idx {
		if v >= 0 {
			idx[i] = v + base
		}
	}
	return regexpResult{indexes: idx, groups: l.names}
}

// chargingReader charges a search for the characters it reads: every
// chargeEvery of them as it goes (which also lets an interrupt stop the
// search), the rest when it ends (settle).
type chargingReader struct {
	rd      io.RuneReader
	r       *Runtime
	extra   int
	pending int
}

const chargeEvery = 256

func (cr *chargingReader) ReadRune() (rune, int, error) {
	c, n, err := cr.rd.ReadRune()
	if err == nil {
		if cr.pending++; cr.pending == chargeEvery {
			cr.pending = 0
			cr.r.work(chargeEvery * cr.extra)
		}
	}
	return c, n, err
}

// wrap returns rd read through cr; a nil cr reads rd itself.
func (cr *chargingReader) wrap(rd io.RuneReader) io.RuneReader {
	if cr == nil {
		return rd
	}
	cr.rd = rd
	return cr
}

func (cr *chargingReader) settle() {
	cr.r.work(cr.pending * cr.extra)
	cr.pending = 0
}

// unitReader reads a UTF-16 string for Go's regexp, a rune at a time, with
// sizes in UTF-16 units, so that match positions are JavaScript's indexes.
// Without full, each unit is a rune; with it, a surrogate pair is one, and
// a lone surrogate is itself. hasCtx reads ctx first, as one unit. Each
// read checks vm for an interrupt: it ends the search with it.
type unitReader struct {
	u      []uint16
	pos    int
	full   bool
	ctx    rune
	hasCtx bool
	vm     *vm
}

func (rd *unitReader) ReadRune() (rune, int, error) {
	if atomic.LoadUint32(&rd.vm.interrupted) != 0 {
		rd.vm.checkInterrupt()
	}
	if rd.hasCtx {
		rd.hasCtx = false
		return rd.ctx, 1, nil
	}
	if rd.pos >= len(rd.u) {
		return 0, 0, io.EOF
	}
	c := rd.u[rd.pos]
	if rd.full && isUTF16FirstSurrogate(c) && rd.pos+1 < len(rd.u) && isUTF16SecondSurrogate(rd.u[rd.pos+1]) {
		rd.pos += 2
		return utf16.DecodeRune(rune(c), rune(rd.u[rd.pos-1])), 2, nil
	}
	rd.pos++
	return rune(c), 1, nil
}

// asciiReader reads an ASCII string for Go's regexp, checking vm for an
// interrupt at each character.
type asciiReader struct {
	s   string
	pos int
	vm  *vm
}

func (rd *asciiReader) ReadRune() (rune, int, error) {
	if atomic.LoadUint32(&rd.vm.interrupted) != 0 {
		rd.vm.checkInterrupt()
	}
	if rd.pos >= len(rd.s) {
		return 0, 0, io.EOF
	}
	rd.pos++
	return rune(rd.s[rd.pos-1]), 1, nil
}

// Case without the u flag. ECMAScript's Canonicalize maps a unit to its
// toUpperCase when that is one unit, unless a non-ASCII unit would map to
// an ASCII one; two units match when their canonical forms are equal.
// RE2's case folding follows Unicode's simple folding instead (so that
// "s" matches U+017F and "k" U+212A), so the pattern is parsed without it
// and each literal and class is widened to the units JavaScript matches.

// The sets of equivalent units come from a table generated from the
// toUpperCase goja uses (mustard_regexp_fold.go): computing them takes
// 65,536 case mappings, which cost a process's first such pattern about
// 65 ms. TestMustardJSFoldTable recomputes the table and compares.

// jsFoldClass is the sorted set i of two or more units with the same
// canonical form.
func jsFoldClass(i int) []uint16 {
	return jsFoldUnits[jsFoldStarts[i]:jsFoldStarts[i+1]]
}

// jsFoldClassOf is the index of the set holding c, if one does.
func jsFoldClassOf(c rune) (int, bool) {
	if c > 0xFFFF {
		return 0, false
	}
	i := sort.Search(len(jsFoldSorted), func(i int) bool { return rune(jsFoldSorted[i]) >= c })
	if i < len(jsFoldSorted) && rune(jsFoldSorted[i]) == c {
		return int(jsFoldSortedClass[i]), true
	}
	return 0, false
}

// foldJS rewrites a tree parsed without case folding to match case as
// JavaScript does without the u flag; nil if it cannot tell how (a class
// from a negation that splits a set of equivalent units).
func foldJS(re *syntax.Regexp) *syntax.Regexp {
	switch re.Op {
	case syntax.OpLiteral:
		subs := make([]*syntax.Regexp, 0, len(re.Rune))
		for _, c := range re.Rune {
			if i, ok := jsFoldClassOf(c); ok {
				subs = append(subs, &syntax.Regexp{Op: syntax.OpCharClass, Rune: rangesOf(jsFoldClass(i))})
			} else {
				subs = append(subs, &syntax.Regexp{Op: syntax.OpLiteral, Rune: []rune{c}})
			}
		}
		if len(subs) == 1 {
			return subs[0]
		}
		return &syntax.Regexp{Op: syntax.OpConcat, Sub: subs}
	case syntax.OpCharClass:
		return foldClass(re)
	}
	out := *re
	out.Sub = make([]*syntax.Regexp, len(re.Sub))
	for i, sub := range re.Sub {
		if out.Sub[i] = foldJS(sub); out.Sub[i] == nil {
			return nil
		}
	}
	return &out
}

// foldClass widens a class to the units equivalent to its members. The
// parsed class has lost whether it was written negated: a negation's set
// reaches U+10FFFF (without the u flag a class written positively holds
// units only), and JavaScript then matches the complement of the widened
// set written inside; that equals the parsed set when it holds each set of
// equivalent units whole or not at all, and otherwise foldClass fails.
func foldClass(re *syntax.Regexp) *syntax.Regexp {
	in := func(c rune) bool {
		i := sort.Search(len(re.Rune)/2, func(i int) bool { return re.Rune[2*i+1] >= c })
		return i < len(re.Rune)/2 && re.Rune[2*i] <= c
	}
	negated := len(re.Rune) > 0 && re.Rune[len(re.Rune)-1] == 0x10FFFF
	var add []rune
	for i := range len(jsFoldStarts) - 1 {
		members := jsFoldClass(i)
		n := 0
		for _, m := range members {
			if in(rune(m)) {
				n++
			}
		}
		if n == 0 || n == len(members) {
			continue
		}
		if negated {
			return nil
		}
		for _, m := range members {
			add = append(add, rune(m))
		}
	}
	if len(add) == 0 {
		return re
	}
	runes := append([]rune(nil), re.Rune...)
	for _, c := range add {
		runes = append(runes, c, c)
	}
	return &syntax.Regexp{Op: syntax.OpCharClass, Rune: normalizeRanges(runes)}
}

// rangesOf is a sorted set of units as class ranges.
func rangesOf(members []uint16) []rune {
	runes := make([]rune, 0, 2*len(members))
	for _, c := range members {
		runes = append(runes, rune(c), rune(c))
	}
	return normalizeRanges(runes)
}

// normalizeRanges sorts class ranges and merges those that overlap or
// touch.
func normalizeRanges(r []rune) []rune {
	type rng struct{ lo, hi rune }
	rs := make([]rng, 0, len(r)/2)
	for i := 0; i+1 < len(r); i += 2 {
		rs = append(rs, rng{r[i], r[i+1]})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].lo < rs[j].lo })
	out := make([]rune, 0, len(r))
	for _, x := range rs {
		if n := len(out); n > 0 && x.lo <= out[n-1]+1 {
			if x.hi > out[n-1] {
				out[n-1] = x.hi
			}
			continue
		}
		out = append(out, x.lo, x.hi)
	}
	return out
}
