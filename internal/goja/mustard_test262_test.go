package goja

// The test262 subset: the directories of test262 that cover what the fork
// changes (PATCHES.md, "The test262 subset"). It runs with MUSTARD_TEST262=1
// only: the suite is not part of the repository but a module the Go module
// proxy serves, which the test obtains with `go mod download` (or reads
// from MUSTARD_TEST262_DIR, a test262 checkout of the same version). Every
// test that fails must be in testdata/test262-expected-failures.txt with
// its reason, and every test listed there must fail: a listed test that
// passes, a failing test outside the list and a listed test the suite does
// not have all fail the run. MUSTARD_TEST262_WRITE=FILE writes the
// failures observed (listed ones with their reasons, new ones with their
// error), the starting point of an updated list.

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	test262Module  = "github.com/tc39/test262"
	test262Version = "v0.0.0-20180703195958-e9a5a7f918c0"

	test262ExpectedFailures = "testdata/test262-expected-failures.txt"

	// test262PropertyEscapes holds a test per Unicode property value, each
	// of which builds and matches strings of every code point: seconds
	// apiece. The run takes one in test262PropertyEscapesSample of them
	// (the fork's own golden test checks every property against V8's
	// tables); MUSTARD_REGEXP_ALLPROPS=1 takes them all (the expected
	// failures cover the sample).
	test262PropertyEscapes       = "test/built-ins/RegExp/property-escapes/generated/"
	test262PropertyEscapesSample = 64

	// test262HangBound interrupts a test still running after this long: a
	// test takes milliseconds, so only a hang reaches it.
	test262HangBound = 2 * time.Minute
)

// test262Dirs are the directories run, under the suite's test directory.
var test262Dirs = []string{
	"built-ins/Promise",
	"built-ins/RegExp",
	"built-ins/BigInt",
	"built-ins/String",
	"built-ins/AsyncGeneratorPrototype",
	"built-ins/AsyncGeneratorFunction",
	"built-ins/AsyncIteratorPrototype",
	"built-ins/AsyncFromSyncIteratorPrototype",
	"language/statements/for-await-of",
	"language/statements/async-generator",
	"language/expressions/async-generator",
}

// test262IgnorableError is what $262.createRealm throws: a test that needs
// a second realm is skipped, as upstream's harness skips it.
var test262IgnorableError = newSymbol(asciiString("test262 ignorable"))

// test262Meta is the part of a test's YAML frontmatter the harness reads.
type test262Meta struct {
	flags, includes, features []string
	negativePhase             string
	negativeType              string
}

func (m *test262Meta) hasFlag(flag string) bool {
	for _, f := range m.flags {
		if f == flag {
			return true
		}
	}
	return false
}

// parseTest262Meta reads the frontmatter between /*--- and ---*/: the
// top-level keys flags, includes and features (flow lists, [a, b], which
// may span lines, or block lists of "- a" lines) and negative (its
// indented phase and type). Other keys, and the block scalars of
// description and info (indented, so never taken for keys), are passed
// over.
func parseTest262Meta(src string) (*test262Meta, error) {
	start := strings.Index(src, "/*---")
	end := strings.Index(src, "---*/")
	if start < 0 || end < start+5 {
		return nil, errors.New("no frontmatter")
	}
	lines := strings.Split(src[start+5:end], "\n")
	meta := &test262Meta{}
	indented := func(line string) bool {
		return line != "" && (line[0] == ' ' || line[0] == '\t')
	}
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t\r")
		if line == "" || indented(line) || line[0] == '#' {
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch key {
		case "flags", "includes", "features":
			var list []string
			if strings.HasPrefix(val, "[") {
				for !strings.Contains(val, "]") && i+1 < len(lines) {
					i++
					val += " " + strings.TrimSpace(lines[i])
				}
				if !strings.HasSuffix(val, "]") {
					return nil, fmt.Errorf("%s: unterminated list", key)
				}
				for _, item := range strings.Split(val[1:len(val)-1], ",") {
					if item = test262Unquote(item); item != "" {
						list = append(list, item)
					}
				}
			} else if val == "" {
				for i+1 < len(lines) {
					item := strings.TrimSpace(lines[i+1])
					if !strings.HasPrefix(item, "- ") {
						break
					}
					i++
					list = append(list, test262Unquote(item[2:]))
				}
			} else {
				return nil, fmt.Errorf("%s: not a list: %q", key, val)
			}
			switch key {
			case "flags":
				meta.flags = list
			case "includes":
				meta.includes = list
			default:
				meta.features = list
			}
		case "negative":
			for i+1 < len(lines) && indented(lines[i+1]) {
				i++
				k, v, _ := strings.Cut(strings.TrimSpace(lines[i]), ":")
				switch strings.TrimSpace(k) {
				case "phase":
					meta.negativePhase = test262Unquote(v)
				case "type":
					meta.negativeType = test262Unquote(v)
				}
			}
			if meta.negativeType == "" || meta.negativePhase == "" {
				return nil, errors.New("negative: phase or type missing")
			}
		}
	}
	return meta, nil
}

func test262Unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		s = s[1 : len(s)-1]
	}
	return s
}

// test262Location finds the suite: MUSTARD_TEST262_DIR, or the module
// from the Go module proxy (go mod download puts it in the module cache,
// or finds it there).
func test262Location() (string, error) {
	if dir := os.Getenv("MUSTARD_TEST262_DIR"); dir != "" {
		return dir, nil
	}
	cmd := exec.Command("go", "mod", "download", "-json", test262Module+"@"+test262Version)
	cmd.Dir = os.TempDir() // outside any module: no go.mod to consult or change
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr == nil && info.Error != "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", test262Module, test262Version, info.Error)
	}
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		return "", fmt.Errorf("go mod download %s@%s: %v %s", test262Module, test262Version, err, stderr)
	}
	if info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: no directory in %q", test262Module, test262Version, out)
	}
	return info.Dir, nil
}

// readTest262Expected reads the expected failures: one test a line, its
// path under the suite then its reason ("category: text"); # starts a
// comment line.
func readTest262Expected(name string) (map[string]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	expected := make(map[string]string)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		test, reason, _ := strings.Cut(line, " ")
		reason = strings.TrimSpace(reason)
		if reason == "" {
			return nil, fmt.Errorf("%s:%d: %s has no reason", name, n, test)
		}
		if _, dup := expected[test]; dup {
			return nil, fmt.Errorf("%s:%d: %s listed twice", name, n, test)
		}
		expected[test] = reason
	}
	return expected, sc.Err()
}

type test262Ctx struct {
	base string

	mu       sync.Mutex
	programs map[string]*Program
	outcomes map[string]test262Outcome
}

type test262Outcome struct {
	dir     string
	failure string // "" when it passed
	skipped string // why it did not run
}

func (c *test262Ctx) harness(name string) (*Program, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.programs[name]; p != nil {
		return p, nil
	}
	b, err := os.ReadFile(filepath.Join(c.base, "harness", name))
	if err != nil {
		return nil, err
	}
	p, err := Compile(name, string(b), false)
	if err != nil {
		return nil, err
	}
	c.programs[name] = p
	return p, nil
}

func (c *test262Ctx) record(name string, o test262Outcome) {
	c.mu.Lock()
	c.outcomes[name] = o
	c.mu.Unlock()
}

// runFile runs one test in each mode its flags ask for (non-strict and
// strict by default) and says why it failed, or why it did not run.
func (c *test262Ctx) runFile(name string) (failure, skipped string) {
	b, err := os.ReadFile(filepath.Join(c.base, name))
	if err != nil {
		return err.Error(), ""
	}
	src := string(b)
	meta, err := parseTest262Meta(src)
	if err != nil {
		return "frontmatter: " + err.Error(), ""
	}
	if meta.hasFlag("module") {
		return "", "module code"
	}
	raw := meta.hasFlag("raw")
	if raw || !meta.hasFlag("onlyStrict") {
		if failure, skipped = c.runMode(name, src, meta); failure != "" || skipped != "" {
			return failure, skipped
		}
	}
	if !raw && !meta.hasFlag("noStrict") {
		if failure, skipped = c.runMode(name, "'use strict';\n"+src, meta); failure != "" {
			failure = "strict: " + failure
		}
	}
	return failure, skipped
}

func (c *test262Ctx) runMode(name, src string, meta *test262Meta) (failure, skipped string) {
	defer func() {
		if x := recover(); x != nil {
			failure = fmt.Sprintf("panic: %v", x)
		}
	}()
	vm := New()
	hang := time.AfterFunc(test262HangBound, func() { vm.Interrupt("test262: still running after " + test262HangBound.String()) })
	defer hang.Stop()

	_262 := vm.NewObject()
	_262.Set("detachArrayBuffer", func(call FunctionCall) Value {
		if ab, ok := call.Argument(0).Export().(ArrayBuffer); ok {
			ab.Detach()
			return _undefined
		}
		panic(vm.NewTypeError("detachArrayBuffer() is called with incompatible argument"))
	})
	_262.Set("createRealm", func(FunctionCall) Value { panic(test262IgnorableError) })
	_262.Set("evalScript", func(call FunctionCall) Value {
		v, err := vm.RunString(call.Argument(0).String())
		if err != nil {
			panic(err)
		}
		return v
	})
	_262.Set("global", vm.GlobalObject())
	vm.Set("$262", _262)

	var out []string
	async := meta.hasFlag("async")
	vm.Set("print", func(msg string) { out = append(out, msg) })

	err, early := c.runScript(vm, name, src, meta, async)
	if err != nil {
		if ex, ok := err.(*Exception); ok && ex.Value() == test262IgnorableError {
			return "", "needs a second realm ($262.createRealm)"
		}
		if meta.negativeType == "" {
			return test262FirstLine(err.Error()), ""
		}
		if (meta.negativePhase == "early" || meta.negativePhase == "parse") && !early {
			return fmt.Sprintf("%v happened at run time, expected in phase %s", test262FirstLine(err.Error()), meta.negativePhase), ""
		}
		if meta.negativePhase == "runtime" && early {
			return fmt.Sprintf("%v happened before run time", test262FirstLine(err.Error())), ""
		}
		var errType string
		switch err := err.(type) {
		case *Exception:
			o, ok := err.Value().(*Object)
			if !ok {
				return fmt.Sprintf("thrown value is not an object (%v)", err.Value()), ""
			}
			ctor, ok := o.Get("constructor").(*Object)
			if !ok {
				return fmt.Sprintf("thrown value has no constructor (%v)", o), ""
			}
			errType = ctor.Get("name").String()
		case *CompilerSyntaxError:
			errType = "SyntaxError"
		case *CompilerReferenceError:
			errType = "ReferenceError"
		default:
			return fmt.Sprintf("error is not a JS error: %v", err), ""
		}
		if errType != meta.negativeType {
			return fmt.Sprintf("threw %s, expected %s: %v", errType, meta.negativeType, test262FirstLine(err.Error())), ""
		}
		// The expected error: an async test among these is one that must
		// not compile, and prints nothing.
		async = false
	} else if meta.negativeType != "" {
		return fmt.Sprintf("no error, expected %s (phase %s)", meta.negativeType, meta.negativePhase), ""
	}

	if vm.vm.sp != 0 {
		return fmt.Sprintf("stack pointer left at %d", vm.vm.sp), ""
	}
	if l := len(vm.vm.iterStack); l > 0 {
		return fmt.Sprintf("iterator stack left with %d entries", l), ""
	}
	if async {
		for _, line := range out {
			if strings.HasPrefix(line, "Test262:AsyncTestFailure:") {
				return test262FirstLine(line), ""
			}
			if line == "Test262:AsyncTestComplete" {
				return "", ""
			}
		}
		return "Test262:AsyncTestComplete was not printed", ""
	}
	return "", ""
}

// runScript runs the harness (assert.js, sta.js, doneprintHandle.js for
// async tests, the includes), then the test; early says the error came
// before the test began to run.
func (c *test262Ctx) runScript(vm *Runtime, name, src string, meta *test262Meta, async bool) (err error, early bool) {
	includes := []string{"assert.js", "sta.js"}
	if async {
		includes = append(includes, "doneprintHandle.js")
	}
	for _, inc := range append(includes, meta.includes...) {
		p, err := c.harness(inc)
		if err != nil {
			return fmt.Errorf("harness %s: %v", inc, err), true
		}
		if _, err := vm.RunProgram(p); err != nil {
			return fmt.Errorf("harness %s: %v", inc, err), true
		}
	}
	p, err := Compile(name, src, false)
	if err != nil {
		return err, true
	}
	_, err = vm.RunProgram(p)
	return err, false
}

func test262FirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

func (c *test262Ctx) collect(dir string) ([]string, error) {
	var names []string
	root := filepath.Join(c.base, "test", filepath.FromSlash(dir))
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		base := d.Name()
		if d.IsDir() {
			if base != filepath.Base(root) && strings.HasPrefix(base, ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(base, ".js") && !strings.HasSuffix(base, "_FIXTURE.js") && !strings.HasPrefix(base, ".") {
			rel, err := filepath.Rel(c.base, p)
			if err != nil {
				return err
			}
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	return names, err
}

func TestTest262(t *testing.T) {
	if os.Getenv("MUSTARD_TEST262") != "1" {
		t.Skip("the test262 subset runs with MUSTARD_TEST262=1 (it downloads test262 " + test262Version + " through the Go module proxy)")
	}
	base, err := test262Location()
	if err != nil {
		t.Fatalf("test262 is not available: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "harness", "assert.js")); err != nil {
		t.Fatalf("test262 at %s has no harness: %v", base, err)
	}
	expectedFile := test262ExpectedFailures
	if f := os.Getenv("MUSTARD_TEST262_EXPECTED"); f != "" {
		expectedFile = f
	}
	expected, err := readTest262Expected(expectedFile)
	if err != nil {
		t.Fatal(err)
	}
	c := &test262Ctx{
		base:     base,
		programs: make(map[string]*Program),
		outcomes: make(map[string]test262Outcome),
	}
	start := time.Now()
	t.Run("test262", func(t *testing.T) {
		for _, dir := range test262Dirs {
			names, err := c.collect(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(names) == 0 {
				t.Fatalf("test262 has no tests under test/%s", dir)
			}
			escapes := 0
			for _, name := range names {
				dir, name := dir, name
				sampledOut := false
				if strings.HasPrefix(name, test262PropertyEscapes) && os.Getenv("MUSTARD_REGEXP_ALLPROPS") != "1" {
					sampledOut = escapes%test262PropertyEscapesSample != 0
					escapes++
				}
				t.Run(name, func(t *testing.T) {
					if sampledOut {
						c.record(name, test262Outcome{dir: dir, skipped: "sampled out"})
						t.Skip("one property escape test in " + fmt.Sprint(test262PropertyEscapesSample) + " runs (MUSTARD_REGEXP_ALLPROPS=1 runs them all)")
					}
					t.Parallel()
					failure, skipped := c.runFile(name)
					c.record(name, test262Outcome{dir: dir, failure: failure, skipped: skipped})
					reason, listed := expected[name]
					switch {
					case skipped != "":
						if listed {
							t.Errorf("listed as failing (%s), but not run: %s", reason, skipped)
						}
						t.Skip(skipped)
					case failure != "" && !listed:
						t.Errorf("fails, and is not in %s: %s", expectedFile, failure)
					case failure == "" && listed:
						t.Errorf("passes, but is listed in %s as failing (%s): remove it from the list", expectedFile, reason)
					case failure != "":
						t.Logf("fails as expected (%s): %s", reason, failure)
					}
				})
			}
		}
	})

	type counts struct{ run, passed, failed, listed, skipped int }
	perDir := make(map[string]*counts)
	var total counts
	for _, o := range c.outcomes {
		n := perDir[o.dir]
		if n == nil {
			n = &counts{}
			perDir[o.dir] = n
		}
		for _, n := range []*counts{n, &total} {
			switch {
			case o.skipped != "":
				n.skipped++
				continue
			case o.failure == "":
				n.passed++
			default:
				n.failed++
			}
			n.run++
		}
	}
	for name, reason := range expected {
		o, ok := c.outcomes[name]
		if !ok {
			if test262Narrowed() {
				continue // -run picked some of the tests
			}
			t.Errorf("%s lists %s (%s), which the subset does not have", expectedFile, name, reason)
			continue
		}
		if o.skipped == "" {
			perDir[o.dir].listed++
			total.listed++
		}
	}
	for _, dir := range test262Dirs {
		if n := perDir[dir]; n != nil {
			t.Logf("%-45s run %5d  passed %5d  failed %4d  listed %4d  skipped %3d", dir, n.run, n.passed, n.failed, n.listed, n.skipped)
		}
	}
	t.Logf("%-45s run %5d  passed %5d  failed %4d  listed %4d  skipped %3d  (%s, test262 %s)",
		"total", total.run, total.passed, total.failed, total.listed, total.skipped, time.Since(start).Round(time.Second), test262Version)

	if out := os.Getenv("MUSTARD_TEST262_WRITE"); out != "" {
		var lines []string
		for name, o := range c.outcomes {
			if o.failure == "" {
				continue
			}
			reason, ok := expected[name]
			if !ok {
				reason = "new: " + o.failure
			}
			lines = append(lines, name+" "+reason)
		}
		sort.Strings(lines)
		if err := os.WriteFile(out, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// test262Narrowed says whether -run names subtests, so that tests not run
// are not stale list entries.
func test262Narrowed() bool {
	f := flag.Lookup("test.run")
	return f != nil && strings.Contains(f.Value.String(), "/")
}
