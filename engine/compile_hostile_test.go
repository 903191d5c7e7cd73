package engine

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// Hostile source: every recursive production of the grammar nested far past
// MaxSourceNesting, chains of every binary operator and postfix form, and
// large flat programs, each up to the 1 MiB request limit. Each compiles or
// fails with Parse: and never takes the process down (a Go stack overflow
// here would kill the test binary). The measured time is logged; the bound
// only catches a grind (10x the 9 s the slowest 4 MiB source needed on a
// busy 2-core machine).

// compileBound catches a compile that grinds.
const compileBound = 90 * time.Second

// nest builds open^n + core + close^n, as long as fits in size bytes.
func nest(open, core, close string, size int) string {
	n := (size - len(core)) / (len(open) + len(close))
	return strings.Repeat(open, n) + core + strings.Repeat(close, n)
}

// chain builds head + link^n, as long as fits in size bytes.
func chain(head, link string, size int) string {
	return head + strings.Repeat(link, (size-len(head))/len(link))
}

// nestings are the recursive productions of the grammar, as open + core +
// close, nested by repeating open and close.
var nestings = []struct{ name, open, core, close string }{
	{"parentheses", "(", "1", ")"},
	{"array literals", "[", "", "]"},
	{"object literals", "({a:", "1", "})"},
	{"nested object values", "x={a:", "1", "}"},
	{"blocks", "{", "", "}"},
	{"calls", "f(", "", ")"},
	{"bracket members", "a[", "0", "]"},
	{"templates", "`${", "1", "}`"},
	{"tagged templates", "f`${", "1", "}`"},
	{"spread", "[...", "[]", "]"},
	{"not", "!", "1", ""},
	{"negation", "-", "1", ""},
	{"typeof", "typeof ", "1", ""},
	{"void", "void ", "1", ""},
	{"delete", "delete ", "a", ""},
	{"await", "async function f(){", "", "}"},
	{"prefix increment", "++", "a", ""},
	{"new", "new ", "A", ""},
	{"arrows", "a=>", "1", ""},
	{"async arrows", "async a=>", "1", ""},
	{"arrow parameters", "(a=(", "1", ")=>1)"},
	{"conditional", "a?b:", "c", ""},
	{"conditional consequent", "a?(", "1", "):c"},
	{"assignment", "a=", "1", ""},
	{"compound assignment", "a+=", "1", ""},
	{"exponent", "2**", "2", ""},
	{"if", "if(a)", ";", ""},
	{"else if", "if(a);else ", ";", ""},
	{"while", "while(a)", ";", ""},
	{"for", "for(;;)", "break;", ""},
	{"labels", "a:", ";", ""},
	{"try", "try{", "", "}finally{}"},
	{"functions", "function f(){", "", "}"},
	{"function expressions", "(function(){", "", "})"},
	{"classes", "class A{m(){", "", "}}"},
	{"class heritage", "class A extends (", "B", "){}"},
	{"switch", "switch(a){case 1:", "", "}"},
	{"array patterns", "[", "a", "]=b"},
	{"object patterns", "({a:", "x", "}=b)"},
	{"binding patterns", "let [", "a", "]=b"},
	{"default parameters", "function f(a=", "1", "){}"},
	{"generators", "function*g(){yield ", "1", "}"},
	{"comma in parentheses", "(1,", "1", ")"},
	{"optional calls", "a?.(", "", ")"},
}

// chains are the left-deep forms the parser builds in loops: head + link^n.
var chains = []struct{ name, head, link string }{
	{"addition", "1", "+1"},
	{"string concatenation", "'a'", "+'a'"},
	{"multiplication", "1", "*1"},
	{"shift", "1", "<<1"},
	{"relational", "1", "<1"},
	{"instanceof", "a", " instanceof a"},
	{"equality", "1", "==1"},
	{"bitwise and", "1", "&1"},
	{"bitwise xor", "1", "^1"},
	{"bitwise or", "1", "|1"},
	{"logical and", "1", "&&1"},
	{"logical or", "1", "||1"},
	{"coalesce", "1", "??1"},
	{"members", "a", ".b"},
	{"optional members", "a", "?.b"},
	{"calls", "f", "()"},
	{"index", "a", "[0]"},
	{"tagged", "f", "``"},
	{"postfix after members", "a", ".b()"},
}

type hostileSource struct {
	name string
	src  string
	ok   bool // compiles (otherwise: fails with Parse:)
}

func hostileSources(size int) []hostileSource {
	out := []hostileSource{{"await chain", "(async()=>{" + strings.Repeat("await ", size/8) + "1})", false}}
	for _, d := range nestings {
		out = append(out, hostileSource{d.name, nest(d.open, d.core, d.close, size), false})
	}
	for _, c := range chains {
		out = append(out, hostileSource{c.name + " chain", chain(c.head, c.link, size), false})
	}
	flat := []struct{ name, head, item string }{
		{"statements", "", "a;"},
		{"sequence", "0", ",1"},
		{"function declarations", "", "function f(){}"},
		{"arrow declarations", "", "var f=()=>0;"},
		{"object properties", "", "({a:1});"},
		{"array elements", "", "[1,2,3];"},
		{"lexical declarations", "", "{let a=1}"},
		{"if statements", "", "if(a){b}else{c}"},
		{"regular expressions", "", "/[(]/g;"},
		{"comments with brackets", "", "//((((\n"},
		{"strings with brackets", "", "'(((('\n"},
		{"template literals", "", "`${a}`;"},
		{"sequential arrows", "", "a=>0;"},
		{"closures", "", "(()=>()=>0);"},
	}
	for _, f := range flat {
		out = append(out, hostileSource{"flat " + f.name, chain(f.head, f.item, size), true})
	}
	wide := []struct{ name, open, sep, item, close string }{
		{"one array literal", "[", ",", "1", "]"},
		{"one object literal", "({", ",", "a:1", "})"},
		{"one call", "f(", ",", "1", ")"},
		{"one switch", "switch(a){", "", "case 1:", "}"},
	}
	for _, w := range wide {
		n := (size - len(w.open) - len(w.close)) / (len(w.sep) + len(w.item))
		items := strings.Repeat(w.item+w.sep, n)
		items = strings.TrimSuffix(items, w.sep)
		out = append(out, hostileSource{"wide " + w.name, w.open + items + w.close, true})
	}
	// Parameter names must differ in strict-mode code: a0,a1,...
	var params strings.Builder
	params.WriteString("function f(")
	for i := 0; params.Len()+len(strconv.Itoa(i))+5 < size; i++ {
		if i > 0 {
			params.WriteString(",")
		}
		params.WriteString("a" + strconv.Itoa(i))
	}
	out = append(out,
		hostileSource{"wide one parameter list", params.String() + "){}", true},
		// Each name checked against all the others would be quadratic.
		hostileSource{"wide one parameter list, all the same", "function f(" + strings.TrimSuffix(strings.Repeat("a,", (size-15)/2), ",") + "){}", false},
	)
	out = append(out,
		hostileSource{"issue example: 500,000 negations", strings.Repeat("!", 500000) + "1", false},
		hostileSource{"20,000 nested arrows", strings.Repeat("()=>", 20000) + "1", false},
		hostileSource{"brackets inside a template", "`" + nest("${[", "1", "]}", size-2) + "`", false},
		hostileSource{"brackets after a regular expression", "/a/;" + nest("[", "", "]", size-4), false},
		hostileSource{"one long string", "'" + strings.Repeat("a", size-2) + "'", true},
		hostileSource{"one long comment", "/*" + strings.Repeat("(", size-4) + "*/", true},
	)
	return out
}

func TestHostileSourceCompiles(t *testing.T) {
	size := MaxSourceBytes
	if raceEnabled {
		// The race detector slows the compiler about tenfold; parsing is
		// linear, so a sixteenth of the size shows the same.
		size /= 16
	}
	// The default run: a quarter of that, every source still nesting or
	// chaining far past MaxSourceNesting.
	size = longtest.Pick(size/4, size)
	var worst time.Duration
	for i, c := range hostileSources(size) {
		if !longtest.Sampled(i) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			require.LessOrEqual(t, len(c.src), MaxSourceBytes)
			began := time.Now()
			_, err := Compile(c.src)
			d := time.Since(began)
			worst = max(worst, d)
			t.Logf("%d bytes in %v: %v", len(c.src), d.Round(time.Millisecond), err)
			if c.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.True(t, strings.HasPrefix(err.Error(), "Parse: "), err.Error())
			}
			assert.Less(t, d, compileBound)
		})
	}
	t.Logf("slowest compile: %v", worst.Round(time.Millisecond))
}

// Every chain and nesting just under the limit compiles quickly: the
// compiler's own work must be linear too (constant folding of a && b once
// took 2^n steps for n links).
func TestChainsUnderTheLimitCompile(t *testing.T) {
	n := MaxSourceNesting - 10
	// The default run takes every other chain and nesting, the long suites all.
	for i, c := range chains {
		if !longtest.SampledOneIn(i, 2) {
			continue
		}
		for _, head := range []string{c.head, "x"} {
			src := head + strings.Repeat(c.link, n)
			began := time.Now()
			_, err := Compile(src)
			d := time.Since(began)
			if err != nil {
				assert.True(t, strings.HasPrefix(err.Error(), "Parse: "), "%s: %v", c.name, err)
			}
			assert.Less(t, d, compileBound, "%s x %d", c.name, n)
		}
	}
	for i, c := range nestings {
		if !longtest.SampledOneIn(i, 2) {
			continue
		}
		src := strings.Repeat(c.open, n/2) + c.core + strings.Repeat(c.close, n/2)
		began := time.Now()
		_, err := Compile(src)
		if err != nil {
			assert.True(t, strings.HasPrefix(err.Error(), "Parse: "), "%s: %v", c.name, err)
		}
		assert.Less(t, time.Since(began), compileBound, "%s x %d", c.name, n/2)
	}
}

// Nesting up to the limit compiles and runs, for the constructs a program
// plausibly nests; one level more is a Parse error naming the limit.
func TestNestingAtTheLimit(t *testing.T) {
	depth := MaxSourceNesting - 5 // the statement and the assignment around it take a few levels
	for _, c := range []struct{ open, core, close string }{
		{"(", "1", ")"}, {"[", "1", "]"}, {"{a:", "1", "}"},
	} {
		src := "var x; x=" + strings.Repeat(c.open, depth) + c.core + strings.Repeat(c.close, depth) + "; 7"
		t.Run(fmt.Sprintf("%s x %d", c.open, depth), func(t *testing.T) {
			step, _ := runAll(t, src, nil, nil, echo)
			require.NoError(t, step.Err)
			require.Equal(t, num(7), step.Value)
		})
	}
	_, err := Compile(strings.Repeat("[", MaxSourceNesting) + strings.Repeat("]", MaxSourceNesting))
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("Parse: source nesting exceeds %d levels", MaxSourceNesting))
}

// The same hostile sources as TypeScript: each is erased and compiles, or
// fails with Parse: (most before esbuild sees them), and none takes the
// process down or grinds. At a sixteenth of the size: esbuild's time on
// some flat sources grows with the square of their length (350,000
// redeclarations of one var take it minutes), which the memory budget,
// not this bound, keeps in check.
func TestHostileTypeScriptSource(t *testing.T) {
	size := MaxSourceBytes / 16
	if raceEnabled {
		// Under the race detector a flat comma sequence of 64 KB takes
		// minutes (its time grows with the square of its length).
		size /= 16
	}
	// The default run: a quarter of that (4 KiB under the race detector):
	// each source is still erased and compiled, or refused, as a whole.
	size = longtest.Pick(size/4, size)
	var worst time.Duration
	for i, c := range hostileSources(size) {
		if !longtest.Sampled(i) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			began := time.Now()
			_, err := CompileLanguage(c.src, TypeScript, CompileOptions{})
			d := time.Since(began)
			worst = max(worst, d)
			t.Logf("%d bytes in %v: %v", len(c.src), d.Round(time.Millisecond), err)
			if err != nil {
				assert.True(t, strings.HasPrefix(err.Error(), "Parse: "), err.Error())
			}
			assert.Less(t, d, compileBound)
		})
	}
	t.Logf("slowest compile: %v", worst.Round(time.Millisecond))
}
