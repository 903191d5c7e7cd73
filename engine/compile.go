package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/fxamacker/cbor/v2"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/ast"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/parser"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
)

// The program artifact format: ["mustard-program", version, source], or
// for a TypeScript program ["mustard-program", 3, source, "typescript"]
// (its types erased at every load, then run as version 3; a JavaScript
// program's artifact never has the fourth element).
// The version says how the source runs, so a program runs the same way in
// every sidecar that accepts it (its snapshots replay it from the source):
//
//   - version 3, what Compile writes: strict-mode code, metered by the
//     interpreter (every instruction executed is counted; prepare.go), the
//     guest's text untouched;
//   - version 2, what sidecars before that wrote: strict-mode code, metered
//     by calls inserted into its text (instrument.go), exactly as they ran
//     it, so its stored snapshots still resume;
//   - version 1, older still: the same, as sloppy-mode code.
//
// Any other version fails closed.
const (
	programMagic         = "mustard-program"
	programVersion       = 3
	programVersionStrict = 2
	programVersionSloppy = 1
)

// MaxSourceBytes bounds guest source. A request is limited to 1 MiB, but a
// source can come staged (the stage_values extension).
const MaxSourceBytes = 4 << 20

// MaxSourceNesting bounds how deeply guest source nests: the parser counts
// one level per nested expression, statement, binding pattern or prefix
// operator, and one per link of a chain (a+b+..., a.b..., f()()...). The
// parser and the compiler recurse per level, so this keeps them far from the
// Go stack limit, whatever the construct.
const MaxSourceNesting = 1000

// parseOptions bound the parser's work on guest source (see
// internal/goja/PATCHES.md): nesting, and tokens scanned per byte, which
// keeps parsing linear in the source's length. Source maps are never read:
// the parser would open the file a guest comment names.
var parseOptions = parseBounds(MaxSourceNesting)

// currentParseOptions parse format version 3 programs: an arrow function's
// text keeps the parentheses around its expression body (a goja fix that
// older programs' functions did not have).
var currentParseOptions = append(parseBounds(MaxSourceNesting), parser.WithArrowSourceFix)

// maxTokensPerByte: a token takes at least one byte, and the arrow-function
// lookahead re-scans a parenthesised list once.
const maxTokensPerByte = 4

// instrumentedParseOptions: metering calls add nesting around what they
// wrap, so the instrumented text gets more room than the guest's own.
var instrumentedParseOptions = parseBounds(4 * MaxSourceNesting)

func parseBounds(depth int) []parser.Option {
	return []parser.Option{
		parser.WithDisableSourceMaps,
		parser.WithMaxDepth(depth),
		parser.WithMaxTokensPerByte(maxTokensPerByte),
	}
}

// Program is a validated guest program ready to run in any number of
// executions at once.
type Program struct {
	ID       string   // lowercase hex SHA-256 of Bytes
	Bytes    []byte   // the program artifact
	Source   string   // the guest's own text
	Language Language // what Source is written in
	Version  uint64   // the artifact's format version
	compiled *goja.Program
	lines    lineMap

	unmetered bool   // runs without the instruction count (metering benchmarks)
	size      uint64 // Size
}

type programArtifact struct {
	_       struct{} `cbor:",toarray"`
	Magic   string
	Version uint64
	Source  string
}

// languageArtifact is the artifact of a program not in JavaScript.
type languageArtifact struct {
	_        struct{} `cbor:",toarray"`
	Magic    string
	Version  uint64
	Source   string
	Language string
}

var (
	artifactEnc cbor.EncMode
	artifactDec cbor.DecMode
)

func init() {
	var err error
	if artifactEnc, err = cbor.CoreDetEncOptions().EncMode(); err != nil {
		panic(err)
	}
	if artifactDec, err = (cbor.DecOptions{MaxArrayElements: 16, MaxNestedLevels: 4}).DecMode(); err != nil {
		panic(err)
	}
}

// Compile validates guest source and compiles it as strict-mode code. The
// artifact is deterministic for the same source and sidecar version.
func Compile(source string) (*Program, error) {
	return CompileWith(source, CompileOptions{})
}

// CompileWith is Compile under o's bounds.
func CompileWith(source string, o CompileOptions) (*Program, error) {
	return compileVersionWith(source, programVersion, o)
}

// CompileLanguage compiles source written in lang under o's bounds. A
// TypeScript program has its type syntax erased, then compiles as the
// JavaScript that leaves; its errors point into the TypeScript source.
func CompileLanguage(source string, lang Language, o CompileOptions) (*Program, error) {
	switch lang {
	case JavaScript, "":
		return CompileWith(source, o)
	case TypeScript:
	default:
		return nil, &Error{Kind: KindParse, Message: fmt.Sprintf("unknown language %q", string(lang))}
	}
	bound := newCompileMemory(o, len(source))
	if !bound.begin() {
		return nil, ErrCompileMemory
	}
	b, err := artifactEnc.Marshal(languageArtifact{Magic: programMagic, Version: programVersion, Source: source, Language: string(lang)})
	if err != nil {
		return nil, &Error{Kind: KindSerialization, Message: "program could not be encoded"}
	}
	return buildLanguage(source, lang, b, programVersion, bound, true)
}

// compileVersion compiles source into an artifact of the given format
// version (tests make older programs with it, as older sidecars did).
func compileVersion(source string, version uint64) (*Program, error) {
	return compileVersionWith(source, version, CompileOptions{})
}

func compileVersionWith(source string, version uint64, o CompileOptions) (*Program, error) {
	bound := newCompileMemory(o, len(source))
	if !bound.begin() {
		return nil, ErrCompileMemory
	}
	b, err := artifactEnc.Marshal(programArtifact{Magic: programMagic, Version: version, Source: source})
	if err != nil {
		return nil, &Error{Kind: KindSerialization, Message: "program could not be encoded"}
	}
	return buildLanguage(source, JavaScript, b, version, bound, true)
}

// Strict reports whether the program runs as strict-mode code: false only
// for a format version 1 program.
func (p *Program) Strict() bool { return p.Version != programVersionSloppy }

// SnapshotVersion is the snapshot format version that journals the
// program's executions: the format's meaning of the meter readings is the
// program's.
func (p *Program) SnapshotVersion() uint64 {
	if p.counted() {
		return snapshot.Version
	}
	return snapshot.VersionInserted
}

// Startable reports whether a fresh execution may begin from the program:
// whether it is of the current format version. A program of format
// version 1 or 2 runs only to resume a snapshot that journals it.
func (p *Program) Startable() bool { return p.Version == programVersion }

// counted reports whether the interpreter meters the program (version 3),
// rather than calls inserted into its text.
func (p *Program) counted() bool { return p.Version == programVersion }

// LoadProgram decodes and re-validates program bytes, which are untrusted.
func LoadProgram(b []byte) (*Program, error) {
	return LoadProgramWith(b, CompileOptions{})
}

// ErrRetiredProgramFormat refuses program bytes of format version 1 or 2
// where an execution would begin from them: those formats are metered by
// calls inserted into the text, which charge less than the interpreter's
// count, so they run only to resume the snapshots their executions wrote
// (whose journals recorded that metering).
var ErrRetiredProgramFormat = &Error{Kind: KindSerialization, Message: "program bytes of format version 1 or 2 run only to resume their snapshots; compile the source again"}

// LoadProgramWith is LoadProgram under o's bounds. It reads every format
// version; a program of format version 1 or 2 is for resuming a snapshot
// that journals it (LoadProgramToStart is for fresh executions).
func LoadProgramWith(b []byte, o CompileOptions) (*Program, error) {
	return loadProgram(b, o, false)
}

// LoadProgramToStart is LoadProgramWith for program bytes a fresh
// execution is to begin from: only the current format version is
// accepted; bytes of an older one fail with ErrRetiredProgramFormat
// before their source is compiled.
func LoadProgramToStart(b []byte, o CompileOptions) (*Program, error) {
	return loadProgram(b, o, true)
}

func loadProgram(b []byte, o CompileOptions, fresh bool) (*Program, error) {
	// The artifact is the source and a few bytes around it.
	bound := newCompileMemory(o, len(b))
	if !bound.begin() {
		return nil, ErrCompileMemory
	}
	var a programArtifact
	var la languageArtifact
	lang := JavaScript
	var canonical any = &a
	if err := artifactDec.Unmarshal(b, &a); err != nil {
		if err := artifactDec.Unmarshal(b, &la); err != nil || la.Language != string(TypeScript) {
			return nil, &Error{Kind: KindSerialization, Message: "program bytes are not a mustard-sidecar program"}
		}
		a = programArtifact{Magic: la.Magic, Version: la.Version, Source: la.Source}
		lang, canonical = TypeScript, &la
	}
	if a.Magic != programMagic {
		return nil, &Error{Kind: KindSerialization, Message: "program bytes are not a mustard-sidecar program"}
	}
	if a.Version < programVersionSloppy || a.Version > programVersion {
		return nil, &Error{Kind: KindSerialization, Message: fmt.Sprintf("unsupported program format version %d; expected %d to %d", a.Version, programVersionSloppy, programVersion)}
	}
	if lang != JavaScript && a.Version != programVersion {
		return nil, &Error{Kind: KindSerialization, Message: fmt.Sprintf("unsupported program format version %d for %s; expected %d", a.Version, lang, programVersion)}
	}
	// Re-encoding must give the same bytes, so one program has one id.
	canon, err := artifactEnc.Marshal(canonical)
	if err != nil || string(canon) != string(b) {
		return nil, &Error{Kind: KindSerialization, Message: "program bytes are not in canonical form"}
	}
	if fresh && a.Version != programVersion {
		return nil, ErrRetiredProgramFormat
	}
	return buildLanguage(a.Source, lang, b, a.Version, bound, false)
}

// buildLanguage builds a program from its source. compiling is a compile
// request's (the source is new here), not program bytes loaded: a check
// added to compilation since (the refused direct eval) refuses new
// sources only, so that programs compiled before still load and resume.
func buildLanguage(source string, lang Language, artifact []byte, version uint64, bound *compileMemory, compiling bool) (p *Program, err error) {
	defer func() {
		// Parser and compiler defects on hostile source must not take the
		// process down.
		if recover() != nil {
			p, err = nil, errNotPrepared
		}
	}()
	if len(source) > MaxSourceBytes {
		return nil, &Error{Kind: KindParse, Message: "source exceeds maximum size"}
	}
	if !utf8Valid(source) {
		return nil, &Error{Kind: KindParse, Message: "source is not valid UTF-8"}
	}
	var compiled *goja.Program
	var lines lineMap
	switch {
	case lang == TypeScript:
		compiled, lines, err = prepareTypeScript(source, bound, compiling)
	case version == programVersion:
		compiled, lines, err = prepare(source, bound, compiling)
	default:
		compiled, lines, err = prepareInstrumented(source, version == programVersionStrict, instrument, bound)
	}
	if bound.failed() {
		return nil, ErrCompileMemory
	}
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(artifact)
	p = &Program{
		ID:       hex.EncodeToString(sum[:]),
		Bytes:    artifact,
		Source:   source,
		Language: lang,
		Version:  version,
		compiled: compiled,
		lines:    lines,
	}
	p.size = programSize(p)
	return p, nil
}

// instrumentFunc rewrites guest source for metering (format versions 1
// and 2); benchmarks swap it to measure what that metering costs.
type instrumentFunc func(source string, strict bool, bound *compileMemory) (string, []insertion, []span, error)

// prepareInstrumented compiles a program of format version 1 or 2: its
// source instrumented with metering calls, compiled as hook calls.
func prepareInstrumented(source string, strict bool, instrument instrumentFunc, bound *compileMemory) (*goja.Program, lineMap, error) {
	text, ins, spans, err := instrument(source, strict, bound)
	if err != nil {
		return nil, lineMap{}, err
	}
	prg, perr := goja.Parse("", text, bound.parseOptions(instrumentedParseOptions)...)
	if perr != nil {
		// The instrumented text failed although the original parsed: an
		// instrumentation defect, reported without internals.
		return nil, lineMap{}, errNotPrepared
	}
	lines := newLineMap(source, ins, spans)
	// Strictness covers the whole instrumented text: the guest's code, the
	// metering calls and the top-level-await wrapper.
	compiled, cerr := goja.CompileASTWithHooks(prg, strict, meterHooks...)
	if cerr != nil {
		return nil, lineMap{}, compileError(cerr, lines)
	}
	return compiled, lines, nil
}

// compileError renders an early error the compiler found (a redeclared
// binding, or one of strict mode's: a delete of a name, a duplicate
// parameter, an assignment to eval or arguments, ...) as a Parse error at
// its position in the guest's own source.
func compileError(err error, lines lineMap) error {
	var ce *goja.CompilerError
	switch e := err.(type) {
	case *goja.CompilerSyntaxError:
		ce = &e.CompilerError
	case *goja.CompilerReferenceError:
		ce = &e.CompilerError
	}
	if ce == nil || ce.File == nil {
		return &Error{Kind: KindParse, Message: sanitizeCompileError(err.Error())}
	}
	pos := ce.File.Position(ce.Offset)
	line, col := lines.original(pos.Line, pos.Column)
	return &Error{Kind: KindParse, Message: fmt.Sprintf("%s (%d:%d)", ce.Message, line, col)}
}

// Top-level await: a classic script cannot await, so such a program runs
// as the body of an async arrow function (which, like a script, has no
// arguments object and sees the global this) whose result is the
// completion value.
const (
	tlaPrefix = "(async()=>{var " + completionName + ";"
	tlaSuffix = "\nreturn " + completionName + ";})()"
)

var errNotPrepared = &Error{Kind: KindValidation, Message: "program could not be prepared for metering"}

func instrument(source string, strict bool, bound *compileMemory) (string, []insertion, []span, error) {
	prg, err := parser.ParseFile(nil, "", source, 0, bound.parseOptions(parseOptions)...)
	if err == nil {
		in := newInstrumenter(source)
		in.walk(reflect.ValueOf(prg))
		if err := in.validate(strict, 0); err != nil {
			return "", nil, nil, err
		}
		text, ins, ok := in.apply("")
		if !ok {
			return "", nil, nil, errNotPrepared
		}
		return text, ins, in.spans, nil
	}
	if strings.Contains(source, "await") && !bound.failed() {
		if text, ins, spans, ok, verr := instrumentTopLevelAwait(source, strict, bound); ok || verr != nil {
			return text, ins, spans, verr
		}
	}
	return "", nil, nil, parseError(err)
}

// errDirectEval refuses a direct call of eval when a program is compiled:
// the guest has no eval (the realm deletes it, and strict-mode code cannot
// bind the name), so the call could only fail, and would fail only once
// the program had run (and its host calls had been made) up to it.
const errDirectEval = "forbidden ambient global `eval`: guest code cannot evaluate source text"

// validate reports what the walk found that the program may not contain:
// reserved identifiers, and with statements, which could shadow the meters
// with an object's properties. Strict-mode code cannot contain a with
// statement or a legacy octal escape at all: those are Parse errors, at
// their position in the guest's source (in.src from offset base on).
func (in *instrumenter) validate(strict bool, base int) error {
	if len(in.errs) > 0 {
		return reservedError(in.errs)
	}
	errorAt := func(kind ErrorKind, at int, msg string) error {
		line, col := position(in.src[base:], at-base)
		return &Error{Kind: kind, Message: fmt.Sprintf("%s (%d:%d)", msg, line, col)}
	}
	switch {
	case in.refuseEval && in.evalAt >= 0:
		return errorAt(KindValidation, in.evalAt, errDirectEval)
	case strict && in.with:
		return errorAt(KindParse, in.withAt, "Strict mode code may not include a with statement")
	case in.with:
		return &Error{Kind: KindValidation, Message: "with statements are not supported"}
	case strict && in.escapeMsg != "":
		return errorAt(KindParse, in.escapeAt, in.escapeMsg)
	}
	return nil
}

func instrumentTopLevelAwait(source string, strict bool, bound *compileMemory) (string, []insertion, []span, bool, error) {
	wrapped := tlaPrefix + source + tlaSuffix
	prg, err := parser.ParseFile(nil, "", wrapped, 0, bound.parseOptions(parseOptions)...)
	if err != nil {
		return "", nil, nil, false, nil
	}
	start, end := len(tlaPrefix), len(tlaPrefix)+len(source)
	in := newInstrumenter(wrapped)
	in.walk(reflect.ValueOf(prg))
	// The reserved names in the wrapper are ours; only the guest's count.
	in.errs = in.errs[:0]
	in.checkReserved(reflect.ValueOf(prg), start, end)
	if err := in.validate(strict, start); err != nil {
		return "", nil, nil, false, err
	}
	fn := prg.Body[0].(*ast.ExpressionStatement).Expression.(*ast.CallExpression).Callee.(*ast.ArrowFunctionLiteral)
	var topLevel []ast.Statement
	collectTopLevel(fn.Body.(*ast.BlockStatement).List, &topLevel)
	for _, st := range topLevel {
		switch st := st.(type) {
		case *ast.ReturnStatement:
			if at := off(st.Return); at >= start && at < end {
				line, col := position(source, at-start)
				return "", nil, nil, false, &Error{Kind: KindParse, Message: fmt.Sprintf("Illegal return statement (%d:%d)", line, col)}
			}
		case *ast.ExpressionStatement:
			if off(st.Idx0()) < start {
				continue
			}
			// The last expression statement run outside any function is the
			// completion value.
			in.addAt(levelCompletion, off(st.Expression.Idx0()), completionName+"=(", false)
			in.addAt(levelCompletion, off(st.Expression.Idx1()), ")", true)
		}
	}
	// Re-base the insertions onto the guest's own text; the wrapper is an
	// insertion at each end.
	var ins []insertion
	for _, x := range in.ins {
		if x.at < start || x.at > end {
			continue
		}
		x.at -= start
		ins = append(ins, x)
	}
	in.ins = append(ins,
		insertion{at: 0, text: tlaPrefix, level: levelWrapper},
		insertion{at: len(source), text: tlaSuffix, close: true, level: levelWrapper})
	var spans []span
	for _, sp := range in.spans {
		if sp.start >= start {
			spans = append(spans, span{sp.start - start, sp.end - start})
		}
	}
	in.src = source
	text, sorted, ok := in.apply("")
	if !ok {
		return "", nil, nil, false, errNotPrepared
	}
	return text, sorted, spans, true, nil
}

// collectTopLevel gathers the statements that run outside any function:
// those of blocks, branches, loops, labels, try and switch bodies. A
// finally block's expression statements are left out: they do not change
// the completion value.
func collectTopLevel(list []ast.Statement, out *[]ast.Statement) {
	collectStatements(list, out, true)
}

func collectStatements(list []ast.Statement, out *[]ast.Statement, completes bool) {
	collect := func(l []ast.Statement) { collectStatements(l, out, completes) }
	for _, st := range list {
		if _, isExpr := st.(*ast.ExpressionStatement); completes || !isExpr {
			*out = append(*out, st)
		}
		switch st := st.(type) {
		case *ast.BlockStatement:
			collect(st.List)
		case *ast.IfStatement:
			collect([]ast.Statement{st.Consequent})
			if st.Alternate != nil {
				collect([]ast.Statement{st.Alternate})
			}
		case *ast.LabelledStatement:
			collect([]ast.Statement{st.Statement})
		case *ast.ForStatement:
			collect([]ast.Statement{st.Body})
		case *ast.ForInStatement:
			collect([]ast.Statement{st.Body})
		case *ast.ForOfStatement:
			collect([]ast.Statement{st.Body})
		case *ast.WhileStatement:
			collect([]ast.Statement{st.Body})
		case *ast.DoWhileStatement:
			collect([]ast.Statement{st.Body})
		case *ast.TryStatement:
			collect(st.Body.List)
			if st.Catch != nil {
				collect(st.Catch.Body.List)
			}
			if st.Finally != nil {
				collectStatements(st.Finally.List, out, false)
			}
		case *ast.SwitchStatement:
			for _, c := range st.Body {
				collect(c.Consequent)
			}
		}
	}
}

// position converts a byte offset to a 1-based line and column.
func position(src string, at int) (int, int) {
	line, start := 1, 0
	for i := 0; i < at && i < len(src); i++ {
		if src[i] == '\n' {
			line++
			start = i + 1
		}
	}
	return line, at - start + 1
}

// checkReserved records reserved identifiers inside [start, end).
func (in *instrumenter) checkReserved(v reflect.Value, start, end int) {
	sub := &instrumenter{src: in.src, seen: map[visitKey]bool{}}
	sub.walkIdents(v, func(id *ast.Identifier) {
		at := off(id.Idx)
		if at >= start && at < end && strings.HasPrefix(string(id.Name), ReservedPrefix) {
			in.errs = append(in.errs, string(id.Name))
		}
	})
}

func (in *instrumenter) walkIdents(v reflect.Value, f func(*ast.Identifier)) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if !v.IsNil() {
			in.walkIdents(v.Elem(), f)
		}
	case reflect.Struct:
		t := v.Type()
		info := astFieldsOf(t)
		if info.skip {
			return
		}
		if v.CanAddr() {
			key := visitKey{t, v.Addr().Pointer()}
			if in.seen[key] {
				return
			}
			in.seen[key] = true
			if id, ok := v.Addr().Interface().(*ast.Identifier); ok {
				f(id)
			}
		}
		for _, i := range info.fields {
			in.walkIdents(v.Field(i), f)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			in.walkIdents(v.Index(i), f)
		}
	}
}

func reservedError(names []string) error {
	sort.Strings(names)
	return &Error{Kind: KindValidation, Message: fmt.Sprintf("identifier %q uses the reserved prefix %s", names[0], ReservedPrefix)}
}

// parseError renders parser errors as "message (line:column)".
func parseError(err error) error {
	var list parser.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		e := list[0]
		return &Error{Kind: KindParse, Message: fmt.Sprintf("%s (%d:%d)", e.Message, e.Position.Line, e.Position.Column)}
	}
	var one *parser.Error
	if errors.As(err, &one) {
		return &Error{Kind: KindParse, Message: fmt.Sprintf("%s (%d:%d)", one.Message, one.Position.Line, one.Position.Column)}
	}
	return &Error{Kind: KindParse, Message: "source could not be parsed"}
}

func sanitizeCompileError(msg string) string {
	// goja's compiler errors look like "SyntaxError: ... at <file>:line:col";
	// keep the message, which names only guest constructs.
	msg = strings.TrimPrefix(msg, "SyntaxError: ")
	if i := strings.Index(msg, " at "); i >= 0 {
		msg = msg[:i]
	}
	return msg
}
