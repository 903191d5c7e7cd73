package engine

import (
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a cached program weighs (Program.Size) and what a compile may take
// at its peak (CompilePeak) are estimates from the program and the source
// alone; these tests hold them against the heap, measured, for the source
// shapes that take the most per byte and per token, and others. An
// estimate may count more than the heap shows, never less.

// repeatTo repeats item up to n bytes.
func repeatTo(item string, n int) string { return strings.Repeat(item, n/len(item)) }

// listOf is open + item... + close, up to n bytes, without a trailing comma.
func listOf(open, item, close string, n int) string {
	return open + strings.TrimSuffix(repeatTo(item, n-len(open)-len(close)), ",") + close
}

// numbered is head + item(0) + item(1) + ... + tail, up to n bytes.
func numbered(head string, item func(i int) string, tail string, n int) string {
	var b strings.Builder
	b.WriteString(head)
	for i := 0; ; i++ {
		s := item(i)
		if b.Len()+len(s)+len(tail) > n {
			break
		}
		b.WriteString(s)
	}
	return b.String() + tail
}

// memoryShapes are the sources the estimates are held against: the ones
// that take the most per byte (arrow functions, each a function), flat
// statements, literals of every kind, deep nesting, many small functions,
// many distinct names, and text that compiles to almost nothing.
var memoryShapes = []struct {
	name string
	make func(n int) string
}{
	{"arrow functions in a sequence", func(n int) string { return "0," + strings.TrimSuffix(repeatTo("()=>0,", n-2), ",") }},
	{"arrow function statements", func(n int) string { return repeatTo("a=>0;", n) }},
	{"closures", func(n int) string { return repeatTo("(()=>()=>0);", n) }},
	{"methods", func(n int) string { return listOf("({", "m(){},", "})", n) }},
	{"statements", func(n int) string { return repeatTo("a;", n) }},
	{"assignments", func(n int) string { return repeatTo("a=1;", n) }},
	{"object literals", func(n int) string { return repeatTo("({a:1});", n) }},
	{"one object literal", func(n int) string { return listOf("({", "a:1,", "})", n) }},
	{"one array literal", func(n int) string { return listOf("[", "1,", "]", n) }},
	{"nested arrays", func(n int) string { return repeatTo("[[[[[[1]]]]]];", n) }},
	{"template literals", func(n int) string { return repeatTo("`a${a}b${b}c`;", n) }},
	{"tagged templates", func(n int) string { return repeatTo("f`a${b}`;", n) }},
	{"regular expressions", func(n int) string { return repeatTo("/a/;", n) }},
	{"block scopes", func(n int) string { return repeatTo("{let a=1}", n) }},
	{"deeply nested arrows", func(n int) string {
		return repeatTo(strings.Repeat("(()=>", 400)+"0"+strings.Repeat(")", 400)+";", n)
	}},
	{"deeply nested functions", func(n int) string {
		return repeatTo(strings.Repeat("function f(){", 400)+strings.Repeat("}", 400), n)
	}},
	{"many small functions", func(n int) string {
		return numbered("", func(i int) string { return "function f" + strconv.Itoa(i) + "(){return " + strconv.Itoa(i) + "}" }, "", n)
	}},
	{"many identifiers", func(n int) string {
		return numbered("", func(i int) string { return "a" + strconv.Itoa(i) + ";" }, "", n)
	}},
	{"many declarations", func(n int) string {
		return numbered("", func(i int) string { return "var v" + strconv.Itoa(i) + "=" + strconv.Itoa(i) + ";" }, "", n)
	}},
	{"many property names", func(n int) string {
		return numbered("({", func(i int) string { return "k" + strconv.Itoa(i) + ":0," }, "})", n)
	}},
	{"top-level await", func(n int) string { return repeatTo("await a;", n) }},
	{"a long string literal", func(n int) string { return "'" + strings.Repeat("a", n-2) + "'" }},
	{"a long non-ASCII string literal", func(n int) string { return "'" + strings.Repeat("é", (n-2)/2) + "'" }},
	{"a long comment", func(n int) string { return "/*" + strings.Repeat("x", n-4) + "*/" }},
}

// memoryShapeBytes: large enough that each program weighs megabytes, small
// enough that all of them compile in seconds.
const memoryShapeBytes = 256 << 10

// measureEnv names the test a process of this test binary was started to
// run alone.
const measureEnv = "MUSTARD_ENGINE_MEASURE"

// measureAlone runs the calling test in a new process of this test binary,
// where nothing else allocates while it measures the heap (other tests'
// goroutines would), and reports whether this is that process: the test
// measures only then.
func measureAlone(t *testing.T) bool {
	t.Helper()
	if raceEnabled {
		t.Skip("the race detector changes what the heap holds")
	}
	if os.Getenv(measureEnv) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), measureEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	t.Logf("in a process of its own:\n%s", out)
	if err != nil {
		t.Fatalf("%s failed in a process of its own: %v", t.Name(), err)
	}
	return false
}

// measuredHeap is the heap held by live objects, after a collection.
func measuredHeap() uint64 {
	runtime.GC()
	return heapBytes()
}

func TestProgramSizeCoversHeap(t *testing.T) {
	if !measureAlone(t) {
		return
	}
	for _, c := range memoryShapes {
		src := c.make(memoryShapeBytes)
		before := measuredHeap()
		p, err := Compile(src)
		require.NoError(t, err, c.name)
		grown := measuredHeap() - min(before, measuredHeap())
		size := p.Size()
		runtime.KeepAlive(p)
		t.Logf("%-32s heap %7.2f MiB, Size %7.2f MiB (%.2fx)", c.name, mib(grown), mib(size), float64(size)/float64(grown))
		// The collector's own bookkeeping moves a little: allowed for.
		assert.GreaterOrEqual(t, size+size/50+64<<10, grown, "%s: Size under the heap the program holds", c.name)
		if grown > 1<<20 {
			assert.Less(t, size, 2*grown, "%s: Size far over the heap the program holds", c.name)
		}
	}
}

func TestCompilePeakCoversHeap(t *testing.T) {
	if !measureAlone(t) {
		return
	}
	// The collector runs often, so that the heap sampled is mostly live.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	for _, c := range memoryShapes {
		src := c.make(memoryShapeBytes)
		base := measuredHeap()
		var peak atomic.Uint64
		done := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			tick := time.NewTicker(100 * time.Microsecond)
			defer tick.Stop()
			for {
				if h := heapBytes(); h > peak.Load() {
					peak.Store(h)
				}
				select {
				case <-done:
					return
				case <-tick.C:
				}
			}
		}()
		var estimate uint64
		p, err := CompileWith(src, CompileOptions{Reserve: func(total uint64) bool {
			estimate = max(estimate, total)
			return true
		}})
		close(done)
		<-sampled
		require.NoError(t, err, c.name)
		runtime.KeepAlive(p)
		grown := peak.Load() - min(base, peak.Load())
		t.Logf("%-32s peak %7.2f MiB, estimate %7.2f MiB (%.2fx)", c.name, mib(grown), mib(estimate), float64(estimate)/float64(grown))
		assert.GreaterOrEqual(t, estimate, grown, "%s: the compile peak estimate is under the heap measured", c.name)
		assert.GreaterOrEqual(t, estimate, p.Size(), "%s: the program outweighs its compile's peak", c.name)
	}
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

// A compile asks for memory as it goes; refused, it stops with
// ErrCompileMemory at once, also for a source it would retry wrapped for
// top-level await, and for program bytes of every format version.
func TestCompileMemoryRefused(t *testing.T) {
	src := repeatTo("await a;", 64<<10)
	var asked []uint64
	limit := CompilePeak(len(src), 20000)
	_, err := CompileWith(src, CompileOptions{Reserve: func(total uint64) bool {
		asked = append(asked, total)
		return total <= limit
	}})
	require.Equal(t, ErrCompileMemory, err)
	require.Equal(t, "Limit: source too large to compile within the memory budget", err.Error())
	require.Equal(t, CompilePeak(len(src), compileCheckTokens), asked[0], "the source and the first tokens first")
	for i := 1; i < len(asked); i++ {
		require.Greater(t, asked[i], asked[i-1], "totals only grow")
	}
	require.Greater(t, asked[len(asked)-1], limit)
	require.LessOrEqual(t, asked[len(asked)-2], limit)

	// Nothing at all: refused before the source is encoded.
	_, err = CompileWith("1 + 1", CompileOptions{Reserve: func(uint64) bool { return false }})
	require.Equal(t, ErrCompileMemory, err)

	// Enough: it compiles, to the program Compile makes.
	p, err := CompileWith(src, CompileOptions{Reserve: func(uint64) bool { return true }})
	require.NoError(t, err)
	q, err := Compile(src)
	require.NoError(t, err)
	require.Equal(t, q.ID, p.ID)
	require.Equal(t, q.Size(), p.Size(), "Size depends on the program alone")

	// Program bytes, of the current format and an older one.
	for _, version := range []uint64{programVersion, programVersionStrict} {
		old, err := compileVersion("let s = 0; for (const x of [1, 2]) s += x; s;"+repeatTo("s;", 64<<10), version)
		require.NoError(t, err)
		_, err = LoadProgramWith(old.Bytes, CompileOptions{Reserve: func(total uint64) bool { return total <= CompilePeak(len(old.Bytes), 20000) }})
		require.Equal(t, ErrCompileMemory, err, "version %d", version)
		loaded, err := LoadProgramWith(old.Bytes, CompileOptions{Reserve: func(uint64) bool { return true }})
		require.NoError(t, err)
		require.Equal(t, old.ID, loaded.ID)
	}
}
