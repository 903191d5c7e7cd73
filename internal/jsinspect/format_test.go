package jsinspect

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
)

type goldenCase struct {
	name string
	body string
}

func loadCases(t testing.TB) []goldenCase {
	data, err := os.ReadFile("testdata/cases.txt")
	if err != nil {
		t.Fatal(err)
	}
	random, err := os.ReadFile("testdata/random.txt")
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, random...)
	var cases []goldenCase
	for _, line := range strings.Split(string(data), "\n") {
		if name, ok := strings.CutPrefix(line, "=== "); ok {
			cases = append(cases, goldenCase{name: strings.TrimSpace(name)})
		} else if len(cases) > 0 && !strings.HasPrefix(line, "# ") {
			cases[len(cases)-1].body += line + "\n"
		}
	}
	return cases
}

// argsOf runs a case's body in a fresh runtime.
func argsOf(t testing.TB, rt *goja.Runtime, body string) []goja.Value {
	v, err := rt.RunString("(function(){" + body + "\n})()")
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	var args []goja.Value
	o := v.(*goja.Object)
	n := o.Get("length").ToInteger()
	for i := int64(0); i < n; i++ {
		args = append(args, o.Get(itoa(i)))
	}
	return args
}

func itoa(i int64) string { return goja.New().ToValue(i).String() }

var frameLine = regexp.MustCompile(`^\s+at `)

// stripFrames drops stack frame lines, which differ between engines,
// keeping the brace a value's properties open with at the end of the line
// before (gen.mjs treats Node's output the same way).
func stripFrames(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if frameLine.MatchString(l) {
			if (strings.HasSuffix(l, " {") || strings.HasSuffix(l, " [")) && len(out) > 0 {
				out[len(out)-1] += l[len(l)-2:]
			}
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// knownDifferences are cases where Node runs guest code (a getter) that
// this package never runs: the output shown instead.
var knownDifferences = map[string]string{
	// Node calls the Symbol.toStringTag getter on the prototype.
	"to-string-tag-class": "T {}",
	// Engine differences in the value itself, not in its formatting:
	// goja's sloppy functions have no own arguments and caller
	// properties, and its parseInt rounds a 30-digit string differently.
	"o-function":   "<ref *1> [Function: foo] {\n  [length]: 2,\n  [name]: 'foo',\n  [prototype]: { [constructor]: [Circular *1] }\n}",
	"i-big-string": "1.2345678901234566e+29",
}

func TestGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		Node  string            `json:"node"`
		Cases map[string]string `json:"cases"`
	}
	if err := json.Unmarshal(data, &exp); err != nil {
		t.Fatal(err)
	}
	cases := loadCases(t)
	if len(cases) != len(exp.Cases) {
		t.Fatalf("%d cases, %d expected outputs: run node gen.mjs in testdata", len(cases), len(exp.Cases))
	}
	failed := 0
	for _, c := range cases {
		want, ok := exp.Cases[c.name]
		if !ok {
			t.Errorf("%s: no expected output", c.name)
			continue
		}
		if d, ok := knownDifferences[c.name]; ok {
			want = d
		}
		rt := goja.New()
		args := argsOf(t, rt, c.body)
		res, err := Format(rt, args, Options{})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			failed++
			continue
		}
		if got := stripFrames(res.Text); got != want {
			t.Errorf("%s:\n got: %q\nwant: %q", c.name, got, want)
			failed++
		}
	}
	t.Logf("%d cases, %d failed (Node %s)", len(cases), failed, exp.Node)
}
