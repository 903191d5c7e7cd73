package diffrun

import (
	"path/filepath"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// The checked-in corpus is well formed and its per-file counts add up.
func TestCorpus(t *testing.T) {
	c, err := LoadCorpus(filepath.Join("testdata", "programs.json"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Reference.Commit == "" || c.Reference.Package == "" {
		t.Errorf("the corpus does not say which reference it comes from: %+v", c.Reference)
	}
	kept := 0
	byFile := map[string]int{}
	for _, f := range c.Files {
		skipped := 0
		for _, n := range f.Skipped {
			skipped += n
		}
		if f.Kept+f.Duplicates+skipped != f.Found {
			t.Errorf("%s: %d found, but %d kept + %d duplicates + %d skipped", f.File, f.Found, f.Kept, f.Duplicates, skipped)
		}
		kept += f.Kept
		byFile[f.File] = f.Kept
	}
	if kept != len(c.Programs) {
		t.Errorf("the files keep %d programs, the corpus has %d", kept, len(c.Programs))
	}
	if len(c.Programs) < 500 {
		t.Errorf("only %d programs", len(c.Programs))
	}
	ids := map[string]bool{}
	for _, p := range c.Programs {
		if p.ID == "" || ids[p.ID] {
			t.Errorf("program id %q missing or repeated", p.ID)
		}
		ids[p.ID] = true
		if p.File == "" || p.Origin == "" {
			t.Errorf("%s: no file or origin", p.ID)
		}
		for i, a := range p.Answers {
			n := 0
			if a.Value != nil {
				n++
			}
			if a.Error != nil {
				n++
			}
			if a.Cancel {
				n++
			}
			if n != 1 {
				t.Errorf("%s: answer %d is not exactly one of value, error, cancel", p.ID, i+1)
			}
		}
	}
}

func TestAnswerer(t *testing.T) {
	ten := value.Number(10)
	p := &Program{Answers: []Answer{
		{Capability: "get", Value: &ten},
		{Capability: "put", Error: &CallError{Name: "ToolError", Message: "no"}},
		{Capability: "", Cancel: true},
	}}
	a := NewAnswerer(p)
	if v, ok := a.Answer("get", nil).Value(); !ok || !value.Equal(v, ten) {
		t.Errorf("first answer: %v", v)
	}
	// Not the recorded capability: the first argument comes back, and the
	// recorded answer waits.
	if v, ok := a.Answer("get", []value.Value{value.String("x")}).Value(); !ok || v.Str != "x" {
		t.Errorf("echo: %v", v)
	}
	if e, ok := a.Answer("put", nil).Thrown(); !ok || e.Name != "ToolError" {
		t.Errorf("error answer: %+v", e)
	}
	if !a.Answer("anything", nil).Cancelled() {
		t.Error("an answer without a capability answers any call")
	}
	if v, ok := a.Answer("get", nil).Value(); !ok || v.Kind != value.KindUndefined {
		t.Errorf("past the answers, no arguments: %v", v)
	}
}

func TestClassify(t *testing.T) {
	val := func(v value.Value) Outcome { return Outcome{Result: Result{Value: &v}} }
	fail := func(kind, msg string) Outcome {
		return Outcome{Result: Result{Error: &ErrorResult{Kind: kind, Message: msg}}}
	}
	call := func(o Outcome, cap string, args ...value.Value) Outcome {
		o.Calls = append(o.Calls, Call{Capability: cap, Args: args})
		return o
	}
	cases := []struct {
		src       string
		ref, ours Outcome
		want      string
	}{
		{"1", val(value.Number(1)), val(value.Number(1)), Agree},
		{"x", fail("Runtime", "TypeError: a"), fail("Runtime", "TypeError: b"), Agree},
		{"String(f)", val(value.String("function f() {}")), val(value.String("function f() {__mustard_m();}")), ClassMeterVisible},
		{"for await (const v of xs) {}", val(value.Number(1)), fail("Parse", "Unexpected token"), ClassForAwait},
		{"s.match('a')", val(value.Array(value.String("a"))), fail("Serialization", "result arrays with extra properties cannot cross"), ClassArrayExports},
		{"new Map()", fail("Runtime", "Map values cannot cross"), fail("Serialization", "Map values cannot cross"), ClassBoundaryKinds},
		{"big()", fail("Limit", "instruction budget exhausted"), fail("Serialization", "x"), ClassLimitCopyOut},
		{"o?.(...v)", val(value.Array(value.Undefined())), fail("Runtime", "internal error"), ClassOptionalSpread},
		{"x = 5; x", fail("Runtime", "ReferenceError: x is not defined"), val(value.Number(5)), ClassStrict},
		{"s.search(/^(a+)+$/)", val(value.Number(-1)), fail("Limit", "instruction budget exhausted"), ClassRegex},
		{"var x = 1", fail("Validation", "only let and const are supported"), val(value.Number(1)), ClassRefSubset},
		{"'x'.normalize()", fail("Runtime", "TypeError: String.prototype.normalize is not supported"), val(value.String("x")), ClassRefSubset},
		{"f()", call(val(value.Null()), "a", value.Number(1)), call(val(value.Null()), "b"), ClassCallsDiffer},
		{"1", val(value.Number(1)), val(value.Number(2)), ClassValue},
		{"1", fail("Runtime", "x"), fail("Limit", "y"), ClassErrorKind},
		{"1", fail("Runtime", "x"), val(value.Number(2)), ClassRefErrors},
		{"1", val(value.Number(2)), fail("Runtime", "x"), ClassOursErrors},
	}
	for _, c := range cases {
		p := &Program{ID: c.src, Source: c.src}
		if got := Compare(p, c.ref, c.ours).Class; got != c.want {
			t.Errorf("%q: class %q, want %q", c.src, got, c.want)
		}
	}
	// Same calls in another order: the reference's order of async callbacks.
	a := call(call(val(value.Null()), "get", value.Number(1)), "get", value.Number(2))
	b := call(call(val(value.Null()), "get", value.Number(2)), "get", value.Number(1))
	if got := Compare(&Program{Source: "xs.map(async x => get(x))"}, a, b).Class; got != ClassAsyncOrder {
		t.Errorf("reordered calls: class %q", got)
	}
}

func TestFirstDifference(t *testing.T) {
	a := value.Object(value.M("a", value.Array(value.Number(1), value.String("x"))))
	b := value.Object(value.M("a", value.Array(value.Number(1), value.String("y"))))
	at, x, y := firstDifference("", a, b)
	if at != ".a[1]" || x.Str != "x" || y.Str != "y" {
		t.Errorf("firstDifference: %q %v %v", at, x, y)
	}
}
