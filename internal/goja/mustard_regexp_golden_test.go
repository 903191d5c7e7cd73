package goja

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/parser"
)

// The golden files are Node's answers (testdata/mustard_regexp_golden.mjs
// writes them); these tests need no Node.

type regexpErrorCase struct {
	P       string `json:"p"`
	F       string `json:"f"`
	Msg     string `json:"msg"`
	Literal bool   `json:"literal"`
}

// regexpErrorText compiles a pattern as the guest would (the constructor,
// or a literal) and returns its SyntaxError's message, or "".
func regexpErrorText(t *testing.T, c regexpErrorCase) string {
	t.Helper()
	if c.Literal {
		// The parser's errors, as the engine renders them (their message),
		// then the compiler's.
		if _, err := parser.ParseFile(nil, "", "/"+c.P+"/"+c.F, 0); err != nil {
			if list, ok := err.(parser.ErrorList); ok && len(list) > 0 {
				return list[0].Message
			}
			return "unexpected error: " + err.Error()
		}
		_, err := Compile("", "/"+c.P+"/"+c.F, false)
		if err == nil {
			return ""
		}
		switch e := err.(type) {
		case *CompilerSyntaxError:
			return e.Message
		default:
			return "unexpected error: " + err.Error()
		}
	}
	vm := New()
	vm.Set("p", c.P)
	vm.Set("f", c.F)
	v, err := vm.RunString(`try { new RegExp(p, f); '' } catch (e) { e instanceof SyntaxError ? e.message : 'not a SyntaxError: ' + e }`)
	if err != nil {
		return "unexpected error: " + err.Error()
	}
	return v.String()
}

// regexpErrorInternals are words of the engines' own texts and Go's (V8's
// own "RegExp constructor" is not one of them).
var regexpErrorInternals = []string{
	"regexp", "re2", "RE2", "regexp2", "error parsing", "goja", "syntax.", "Error{", "%!", "<nil>", "panic",
	"missing closing", "invalid nested", "invalid character class range", "unrecognized", "unterminated []",
	"in `", "(*", "func(", ".go",
}

func TestRegExpErrorsInV8Words(t *testing.T) {
	b, err := os.ReadFile("testdata/mustard_regexp_errors.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []regexpErrorCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	rejected, exact := 0, 0
	for _, c := range cases {
		got := regexpErrorText(t, c)
		if c.Msg == "" {
			if got != "" {
				t.Errorf("%s /%s/%s: Node accepts it, got %q", kind(c), c.P, c.F, got)
			}
			continue
		}
		rejected++
		if got == c.Msg {
			exact++
		}
		if got == "" {
			t.Errorf("%s /%s/%s: accepted, Node says %q", kind(c), c.P, c.F, c.Msg)
			continue
		}
		// The reason, with the guest's own pattern left out.
		reason := got
		prefix := "Invalid regular expression: /" + c.P + "/"
		switch {
		case strings.HasPrefix(got, prefix):
			reason = got[len(prefix):]
			if i := strings.Index(reason, ": "); i >= 0 {
				reason = reason[i+2:]
			} else {
				t.Errorf("%s /%s/%s: %q has no reason after the flags", kind(c), c.P, c.F, got)
			}
		case (got == "Invalid regular expression flags" || got == "Invalid regular expression: missing /") && c.Literal:
		case strings.HasPrefix(got, "Invalid flags supplied to RegExp constructor '") && !c.Literal:
		default:
			t.Errorf("%s /%s/%s: %q is not in V8's format (Node: %q)", kind(c), c.P, c.F, got, c.Msg)
		}
		for _, w := range regexpErrorInternals {
			if strings.Contains(reason, w) {
				t.Errorf("%s /%s/%s: %q carries %q", kind(c), c.P, c.F, got, w)
			}
		}
		if got != c.Msg {
			t.Errorf("%s /%s/%s:\n got %q\nNode %q", kind(c), c.P, c.F, got, c.Msg)
		}
	}
	t.Logf("%d cases, %d rejected by Node, %d of them with Node's exact message", len(cases), rejected, exact)
}

func kind(c regexpErrorCase) string {
	if c.Literal {
		return "literal"
	}
	return "new RegExp"
}

// TestRegExpPropertyEscapesMatchNode runs every property name Node
// accepts, in and out of classes and negated, on both engines (the
// pattern as it is, which Go's regexp runs, and behind an empty
// lookahead, which only regexp2 runs), against code points at the edges
// of its set; names Node refuses; and whole expressions.
func TestRegExpPropertyEscapesMatchNode(t *testing.T) {
	b, err := os.ReadFile("testdata/mustard_regexp_uniprops.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Props []struct {
			P string `json:"p"`
			F string `json:"f"`
			S []int  `json:"s"`
			M string `json:"m"`
		} `json:"props"`
		Refused []regexpErrorCase `json:"refused"`
		Exprs   []struct {
			Src string `json:"src"`
			Out string `json:"out"`
		} `json:"exprs"`
	}
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}

	// Every case with MUSTARD_REGEXP_ALLPROPS=1 (.ci/run sets it: about
	// ten seconds), every fourth otherwise.
	every := 4
	if os.Getenv("MUSTARD_REGEXP_ALLPROPS") != "" {
		every = 1
	}
	vm := New()
	vm.Set("golden", string(b))
	vm.Set("every", every)
	v, err := vm.RunString(`
	const props = JSON.parse(golden).props.filter((_, i) => i % every === 0);
	const out = [];
	for (const c of props) {
		for (const [engine, src] of [['RE2', c.p], ['regexp2', '(?=)' + c.p]]) {
			const re = new RegExp(src, c.f);
			let m = '';
			for (const cp of c.s) m += re.test(String.fromCodePoint(cp)) ? '1' : '0';
			if (m !== c.m) out.push(engine + ' /' + src + '/' + c.f + ' on ' + JSON.stringify(c.s) + ': ' + m + ', Node ' + c.m);
		}
	}
	out`)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range v.Export().([]any) {
		t.Error(s)
	}
	t.Logf("%d property patterns of %d, each on both engines", (len(golden.Props)+every-1)/every, len(golden.Props))

	for _, c := range golden.Refused {
		if got := regexpErrorText(t, c); got != c.Msg {
			t.Errorf("/%s/%s: got %q, Node %q", c.P, c.F, got, c.Msg)
		}
	}

	for _, e := range golden.Exprs {
		if why, ok := regexpDepartures[e.Src]; ok {
			t.Logf("%s: a departure (%s)", e.Src, why)
			continue
		}
		// A literal's error is an early error: the program's SyntaxError.
		if _, err := Compile("", e.Src, false); err != nil {
			got := "unexpected error: " + err.Error()
			if se, ok := err.(*CompilerSyntaxError); ok {
				got = "SyntaxError: " + se.Message
			}
			if got != e.Out {
				t.Errorf("%s:\n got %s\nNode %s", e.Src, got, e.Out)
			}
			continue
		}
		vm := New()
		v, err := vm.RunString(`(function () { try { const v = (` + e.Src + `); return v === undefined ? 'undefined' : JSON.stringify(v) } catch (e) { return e.name + ': ' + e.message } })()`)
		if err != nil {
			t.Errorf("%s: %v", e.Src, err)
			continue
		}
		if got := v.String(); got != e.Out {
			t.Errorf("%s:\n got %s\nNode %s", e.Src, got, e.Out)
		}
	}
}

// regexpDepartures are the golden expressions whose answer departs from
// Node's, as docs/guest-language.md says.
var regexpDepartures = map[string]string{
	`/^\p{RGI_Emoji}$/v`: "the v flag is not supported",
}
