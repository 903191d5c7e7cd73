package engine

import "github.com/mustard-sidecar/mustard-sidecar/internal/goja/parser"

// The memory a compiled program keeps, and what compiling one takes at its
// peak, estimated from the program and the source alone (deterministic):
// a host process weighs cached programs with Size and bounds a compile
// with CompileOptions.Reserve (docs/limits.md, "The memory budget").

// footprintScale calibrates goja's count of a compiled program's Go
// values (MustardFootprint) to the heap they take: the allocator rounds
// every object up to its size class, and slices keep spare room. The raw
// count was 0.94 to 1.2 of the heap growth of compiling and keeping a
// program, over 24 source shapes; scaled by 5/4, and with the text the
// program keeps, Size is 0.98 (a long comment: text alone) to 1.5 times
// the growth (TestProgramSizeCoversHeap).
const (
	footprintScaleNum = 5
	footprintScaleDen = 4
)

// programOverhead is the fixed part of a cached program: the Program, its
// goja program header, the line table's headers.
const programOverhead = 1 << 10

// Size estimates the bytes the program keeps live: the compiled code
// (calibrated, above), the source and the program artifact (which holds a
// copy of it), the line table, and the line offsets goja builds for
// tracebacks (8 bytes a line, room for twice that).
func (p *Program) Size() uint64 { return p.size }

func programSize(p *Program) uint64 {
	n := uint64(programOverhead)
	compiledText := len(p.Source)
	if p.compiled != nil {
		compiledText = p.compiled.MustardSourceLength()
		n += p.compiled.MustardFootprint() * footprintScaleNum / footprintScaleDen
	}
	n += uint64(len(p.Source)) + uint64(cap(p.Bytes))
	// goja keeps its own copy of the text it compiled (the source, or
	// the source instrumented or wrapped for top-level await).
	n += uint64(compiledText)
	n += uint64(cap(p.lines.starts))*8 + uint64(cap(p.lines.functions))*16
	for _, ins := range p.lines.byLine {
		n += 64 + uint64(cap(ins))*24
	}
	n += 16 * uint64(len(p.lines.starts))
	n += p.lines.ts.size()
	return n
}

// CompileOptions bound what compiling a program may take.
type CompileOptions struct {
	// Reserve, if not nil, is asked for memory as the compile goes, with
	// the total that the compile's peak is estimated at so far
	// (CompilePeak): before anything else, for the source and the first
	// compileCheckTokens tokens, then every compileCheckTokens tokens the
	// parser scans, for those and the next ones. The totals only grow. When it returns false the compile stops at once and fails
	// with ErrCompileMemory. The caller releases what it granted once the
	// compile returns: the program it made is then weighed by Size.
	Reserve func(total uint64) bool
}

// ErrCompileMemory is a compile that CompileOptions.Reserve refused: the
// source would take more memory to compile than the process allows it.
var ErrCompileMemory = &Error{Kind: KindLimit, Message: "source too large to compile within the memory budget"}

// The peak of a compile. Parsing, the checks on the syntax tree and
// compiling it hold the tree, the compiler's tables and the program being
// built at once; all three grow with the tokens of the source, and the
// text is copied a few times (the source, the parser's copy, the
// artifact). Measured with the heap sampled every 200 µs and the collector
// at GOGC=10 (TestCompilePeakCoversHeap, 24 shapes, and 54 shapes of
// 1 MiB by hand): at most 202 bytes a token (`a=>0;` repeated: 4 tokens,
// and each arrow a function), 120 for plain statements, and 5 bytes a
// byte of text. The estimate takes 256 a token and 6 a byte, plus a fixed
// part: 1.3 to 4.6 times the peak measured.
const (
	compilePeakPerToken = 256
	compilePeakPerByte  = 6
	compilePeakFixed    = 256 << 10
	compileCheckTokens  = 4096
)

// CompilePeak estimates the most memory compiling a source of n bytes and
// the given number of tokens takes at once.
func CompilePeak(n, tokens int) uint64 {
	return compilePeakFixed + compilePeakPerByte*uint64(n) + compilePeakPerToken*uint64(tokens)
}

// compileMemory asks CompileOptions.Reserve for memory as a compile goes.
// Every parse of the compile (a program may be parsed twice: wrapped for
// top-level await, or instrumented) counts on top of the ones before.
type compileMemory struct {
	reserve func(uint64) bool
	bytes   int  // the source's length
	done    int  // tokens scanned by finished parses
	last    int  // tokens scanned by the parse under way, as last reported
	refused bool // Reserve said no
}

func newCompileMemory(o CompileOptions, n int) *compileMemory {
	if o.Reserve == nil {
		return nil
	}
	return &compileMemory{reserve: o.Reserve, bytes: n}
}

// begin asks for the source's own part, before anything is decoded or
// parsed.
func (b *compileMemory) begin() bool {
	return b == nil || b.ask(0)
}

// ask asks for what the tokens scanned so far take, and the next
// compileCheckTokens, which the parser scans before it asks again.
func (b *compileMemory) ask(tokens int) bool {
	if b.refused || !b.reserve(CompilePeak(b.bytes, b.done+tokens+compileCheckTokens)) {
		b.refused = true
		return false
	}
	return true
}

// parseOptions returns opts with the token check of a new parse.
func (b *compileMemory) parseOptions(opts []parser.Option) []parser.Option {
	if b == nil {
		return opts
	}
	b.done += b.last
	b.last = 0
	return append(opts[:len(opts):len(opts)], parser.WithTokenCheck(compileCheckTokens, func(tokens int) bool {
		b.last = tokens
		return b.ask(tokens)
	}))
}

// charge counts tokens scanned outside the JavaScript parser (esbuild's,
// erasing TypeScript) and asks for them.
func (b *compileMemory) charge(tokens int) bool {
	if b == nil {
		return true
	}
	b.done += tokens
	return b.ask(0)
}

// save and restore undo the charges of a parse whose result is dropped.
func (b *compileMemory) save() [2]int {
	if b == nil {
		return [2]int{}
	}
	return [2]int{b.done, b.last}
}

func (b *compileMemory) restore(s [2]int) {
	if b != nil {
		b.done, b.last = s[0], s[1]
	}
}

// failed reports whether the compile stopped because Reserve said no.
func (b *compileMemory) failed() bool { return b != nil && b.refused }
