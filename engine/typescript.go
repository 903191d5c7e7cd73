package engine

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/evanw/esbuild/pkg/api"
)

// Language is the language a program's source is written in.
type Language string

const (
	JavaScript Language = "javascript"
	TypeScript Language = "typescript"
)

// ParseLanguage reads a compile request's language; false for a name the
// sidecar does not know.
func ParseLanguage(s string) (Language, bool) {
	switch Language(s) {
	case JavaScript, TypeScript:
		return Language(s), true
	}
	return "", false
}

// eraseOptions erase TypeScript's type syntax and nothing else: every
// JavaScript construct is left as written (target esnext lowers nothing),
// no bundling, no minification (names stay as written, so no helper is
// needed to keep them), no module wrapper, no comments kept, the text
// kept in UTF-8, and a source map that maps the result back. Constructs
// that emit code (enum, namespace, parameter properties) come out as
// TypeScript compiles them for ES2022 and later (class fields defined).
var eraseOptions = api.TransformOptions{
	Loader:         api.LoaderTS,
	Target:         api.ESNext,
	Format:         api.FormatDefault,
	Sourcemap:      api.SourceMapExternal,
	SourcesContent: api.SourcesContentExclude,
	LegalComments:  api.LegalCommentsNone,
	Charset:        api.CharsetUTF8,
	LogLevel:       api.LogLevelSilent,
	Sourcefile:     "program.ts",
}

// erased is a TypeScript program with its types erased: the JavaScript
// that runs, and the map from its positions to the TypeScript source's.
type erased struct {
	js    string
	where *tsMap
}

// eraseTypes turns TypeScript source into the JavaScript program that
// runs. Errors are Parse errors at their place in the TypeScript source.
func eraseTypes(source string, bound *compileMemory) (*erased, error) {
	scan := scanTS(source)
	if scan.nestAt >= 0 {
		return nil, tsParseError(source, scan.nestAt, fmt.Sprintf("source nesting exceeds %d levels", scan.nestLimit))
	}
	// esbuild's memory follows the tokens, as the JavaScript parser's does.
	if !bound.charge(scan.tokens) {
		return nil, ErrCompileMemory
	}
	r := api.Transform(source, eraseOptions)
	if len(r.Errors) > 0 {
		// esbuild refuses some decorators (on parameters, say) itself,
		// speaking of its options.
		if scan.decorator >= 0 && strings.Contains(strings.ToLower(r.Errors[0].Text), "decorator") {
			return nil, tsParseError(source, scan.decorator, "decorators are not supported")
		}
		return nil, esbuildError(source, r.Errors[0])
	}
	// What esbuild accepts but a program may not hold: it is a script,
	// run as written (JavaScript decorators would reach the engine as
	// written; the engine has none).
	if scan.module >= 0 {
		return nil, tsParseError(source, scan.module, "import and export declarations are not supported: a program is a script")
	}
	if scan.decorator >= 0 && strings.Contains(string(r.Code), "@") {
		return nil, tsParseError(source, scan.decorator, "decorators are not supported")
	}
	js, m, err := keepCompletion(source, scan, string(r.Code), string(r.Map))
	if err != nil {
		return nil, err
	}
	return &erased{js: js, where: m}, nil
}

// keepCompletion restores a final expression statement esbuild dropped.
// esbuild folds constant expressions (-1, "a" + "b", void 0, undefined,
// !0, typeof 1, ...) and drops an expression statement folded to a bare
// constant, since it does nothing; but the last one a script runs is its
// completion value. When nothing of the source from a top-level
// statement's start on reached the output, the statement is erased again
// as the expression "(0, <statement>)", whose value esbuild keeps; the
// result is used only when it is the first output plus that one
// constant, which proves the statement was an expression folded away.
func keepCompletion(source string, scan *tsScan, code, smap string) (string, *tsMap, error) {
	m, err := decodeTSMap(code, smap, source, nil)
	if err != nil {
		return "", nil, err
	}
	tries := 0
	for k := len(scan.starts) - 1; k >= 0 && tries < 3; k-- {
		p := scan.starts[k]
		if p <= m.lastSource {
			break // the output holds this statement or a later one
		}
		e := len(source)
		if j := sort.SearchInts(scan.semis, p); j < len(scan.semis) {
			e = scan.semis[j]
		}
		if e == p || startsDeclaration(source[p:e]) {
			continue // an empty statement, or a declaration
		}
		tries++
		ed := &tsEdit{at: p, end: e}
		wrapped := source[:p] + tsWrapOpen + source[p:e] + tsWrapClose + source[e:]
		r := api.Transform(wrapped, eraseOptions)
		if len(r.Errors) > 0 || !strings.HasPrefix(string(r.Code), code) || !foldedConstant.MatchString(string(r.Code)[len(code):]) {
			continue
		}
		m2, err := decodeTSMap(string(r.Code), string(r.Map), wrapped, ed)
		if err != nil {
			return "", nil, err
		}
		return string(r.Code), m2, nil
	}
	return code, m, nil
}

// startsDeclaration reports whether a statement is a declaration that
// erases to nothing (interface, type alias, declare), never an
// expression.
func startsDeclaration(stmt string) bool {
	w := wordAt(stmt, 0)
	return (w == "interface" || w == "declare" || w == "type") && wordAt(stmt, skipBlank(stmt, len(w))) != ""
}

const (
	tsWrapOpen  = ";(0,"
	tsWrapClose = "\n)"
)

// foldedConstant is what a wrapped constant statement prints as: empty
// statements, then "0, <constant>;".
var foldedConstant = regexp.MustCompile(`^(?:;\n)*0, (?:-?(?:[0-9][0-9a-zA-Z_.+-]*|Infinity)|NaN|true|false|null|void 0|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|` + "`(?:[^`$\\\\]|\\\\.)*`" + `);\n$`)

// tsEdit is the wrapping keepCompletion made to the source: tsWrapOpen
// inserted at offset at, tsWrapClose at offset end.
type tsEdit struct{ at, end int }

// original maps an offset in the wrapped source to the source's own.
func (e *tsEdit) original(off int) int {
	o, c := len(tsWrapOpen), len(tsWrapClose)
	switch {
	case e == nil || off < e.at:
		return off
	case off < e.at+o:
		return e.at
	case off < e.end+o:
		return off - o
	case off < e.end+o+c:
		return e.end
	}
	return off - o - c
}

// tsMap maps positions in the erased JavaScript to the TypeScript source.
type tsMap struct {
	lines      [][]tsSegment // per line of the JavaScript, by column
	starts     []int         // line start offsets of the TypeScript source
	srcLen     int
	lastSource int // the greatest source offset the output maps to; -1: none
}

// tsSegment: from byte column col (0-based) of its JavaScript line on, the
// text comes from byte offset src of the TypeScript source.
type tsSegment struct{ col, src int32 }

// newlineStarts are the offsets at which src's lines start, counted as
// the engine's tracebacks count them (at \n).
func newlineStarts(src string) []int {
	starts := []int{0}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineStarts are the offsets at which src's lines start, line breaks being
// JavaScript's (\n, \r\n, \r, U+2028, U+2029), as source maps count them.
func lineStarts(src string) []int {
	starts := []int{0}
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(src) && src[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		case 0xe2:
			if strings.HasPrefix(src[i:], "\u2028") || strings.HasPrefix(src[i:], "\u2029") {
				i += 2
				starts = append(starts, i+1)
			}
		}
	}
	return starts
}

// decodeTSMap reads esbuild's source map ("mappings", base64 VLQ, columns
// in UTF-16 units) into byte positions: columns of code, offsets into
// source (the wrapped source when ed is not nil, mapped back through it).
func decodeTSMap(code, smap, source string, ed *tsEdit) (*tsMap, error) {
	const key = `"mappings": "`
	mappings := ""
	if i := strings.Index(smap, key); i >= 0 {
		rest := smap[i+len(key):]
		end := strings.IndexByte(rest, '"')
		if end < 0 {
			return nil, errNotPrepared
		}
		mappings = rest[:end]
	} else if code != "" {
		return nil, errNotPrepared
	}
	orig := source
	if ed != nil {
		orig = source[:ed.at] + source[ed.at+len(tsWrapOpen):ed.end+len(tsWrapOpen)] + source[ed.end+len(tsWrapOpen)+len(tsWrapClose):]
	}
	m := &tsMap{starts: newlineStarts(orig), srcLen: len(orig), lastSource: -1}
	src := newUnitCursor(source)
	gen := newUnitCursor(code)
	m.lines = make([][]tsSegment, len(gen.starts))
	var genLine, genCol, srcLine, srcCol int
	field := 0
	flush := func() {
		if field >= 4 && genLine < len(gen.starts) && srcLine < len(src.starts) {
			off := ed.original(src.starts[srcLine] + src.bytes(srcLine, srcCol))
			m.lines[genLine] = append(m.lines[genLine], tsSegment{col: int32(gen.bytes(genLine, genCol)), src: int32(off)})
			m.lastSource = max(m.lastSource, off)
		}
		field = 0
	}
	for j := 0; j < len(mappings); {
		switch mappings[j] {
		case ';':
			flush()
			genLine++
			genCol = 0
			j++
			continue
		case ',':
			flush()
			j++
			continue
		}
		v, n, ok := vlq(mappings[j:])
		if !ok {
			return nil, errNotPrepared
		}
		j += n
		switch field {
		case 0:
			genCol += v
		case 2:
			srcLine += v
		case 3:
			srcCol += v
		}
		field++
	}
	flush()
	for _, segs := range m.lines {
		sort.SliceStable(segs, func(a, b int) bool { return segs[a].col < segs[b].col })
	}
	return m, nil
}

// unitCursor converts source map columns (UTF-16 units from a line's
// start) into byte columns of a text, going on from the last conversion
// when it is on the same line and no further left, so that the many
// columns of one long line cost one pass over it.
type unitCursor struct {
	text   string
	starts []int
	ascii  bool
	line   int // the line of the last conversion
	units  int // its column in UTF-16 units
	off    int // its byte offset in text
}

func newUnitCursor(text string) *unitCursor {
	ascii := true
	for i := 0; i < len(text) && ascii; i++ {
		ascii = text[i] < utf8.RuneSelf
	}
	return &unitCursor{text: text, starts: lineStarts(text), ascii: ascii, line: -1}
}

// bytes is the byte column of UTF-16 column units on line (0-based).
func (c *unitCursor) bytes(line, units int) int {
	end := len(c.text)
	if line+1 < len(c.starts) {
		end = c.starts[line+1]
	}
	start := c.starts[line]
	if c.ascii {
		return min(units, end-start)
	}
	if line != c.line || units < c.units {
		c.line, c.units, c.off = line, 0, start
	}
	for c.units < units && c.off < end {
		r, n := utf8.DecodeRuneInString(c.text[c.off:])
		c.units += max(utf16.RuneLen(r), 1)
		c.off += n
	}
	return c.off - start
}

const vlqChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// vlq decodes one base64 VLQ value.
func vlq(s string) (v, n int, ok bool) {
	shift := 0
	for n < len(s) && shift < 32 {
		d := strings.IndexByte(vlqChars, s[n])
		if d < 0 {
			return 0, 0, false
		}
		n++
		v |= (d & 31) << shift
		shift += 5
		if d&32 == 0 {
			if v&1 != 0 {
				return -(v >> 1), n, true
			}
			return v >> 1, n, true
		}
	}
	return 0, 0, false
}

// source maps a 1-based line and byte column of the JavaScript to the
// TypeScript source's: from the nearest mapped token at or before it on
// its line, moved on by the columns between them, within the source line.
func (m *tsMap) source(line, col int) (int, int) {
	if m == nil {
		return line, col
	}
	off := -1
	if line >= 1 && line <= len(m.lines) {
		segs := m.lines[line-1]
		k := sort.Search(len(segs), func(i int) bool { return int(segs[i].col) > col-1 }) - 1
		switch {
		case k >= 0:
			off = int(segs[k].src)
			l, _ := m.position(off)
			end := m.srcLen
			if l < len(m.starts) {
				end = m.starts[l] - 1
			}
			off = min(off+col-1-int(segs[k].col), max(end, off))
		case len(segs) > 0:
			off = int(segs[0].src)
		}
	}
	if off < 0 {
		// A line with nothing mapped: the nearest mapped place before.
		for l := min(line, len(m.lines)) - 1; l >= 0 && off < 0; l-- {
			if segs := m.lines[l]; len(segs) > 0 {
				off = int(segs[len(segs)-1].src)
			}
		}
		if off < 0 {
			off = 0
		}
	}
	return m.position(off)
}

// position is the 1-based line and byte column of a source offset.
func (m *tsMap) position(off int) (int, int) {
	line := sort.Search(len(m.starts), func(i int) bool { return m.starts[i] > off })
	return line, off - m.starts[line-1] + 1
}

func (m *tsMap) size() uint64 {
	if m == nil {
		return 0
	}
	n := uint64(len(m.starts))*8 + uint64(len(m.lines))*24 + 64
	for _, segs := range m.lines {
		n += uint64(cap(segs)) * 8
	}
	return n
}

// tsParseError is a Parse error at a byte offset of TypeScript source.
func tsParseError(source string, at int, msg string) error {
	m := &tsMap{starts: newlineStarts(source), srcLen: len(source)}
	line, col := m.position(at)
	return &Error{Kind: KindParse, Message: fmt.Sprintf("%s (%d:%d)", msg, line, col)}
}

// esbuildError renders esbuild's first error as a Parse error at its
// place in the source.
func esbuildError(source string, e api.Message) error {
	msg := strings.TrimSuffix(e.Text, ".")
	if e.Location == nil {
		return &Error{Kind: KindParse, Message: msg}
	}
	// esbuild counts lines and byte columns as the engine does for
	// JavaScript parse errors.
	line, col := max(e.Location.Line, 1), e.Location.Column+1
	return &Error{Kind: KindParse, Message: fmt.Sprintf("%s (%d:%d)", msg, line, col)}
}

// positioned matches the "(line:column)" that ends a positioned Parse
// error's message.
var positioned = regexp.MustCompile(`^(.*) \(([0-9]+):([0-9]+)\)$`)

// remapError moves the position of a Parse or Validation error found in the erased
// JavaScript to the TypeScript source.
func remapError(err error, m *tsMap) error {
	e, ok := err.(*Error)
	if !ok || (e.Kind != KindParse && e.Kind != KindValidation) {
		return err
	}
	sub := positioned.FindStringSubmatch(e.Message)
	if sub == nil {
		return err
	}
	line, _ := strconv.Atoi(sub[2])
	col, _ := strconv.Atoi(sub[3])
	line, col = m.source(line, col)
	return &Error{Kind: e.Kind, Message: fmt.Sprintf("%s (%d:%d)", sub[1], line, col)}
}
