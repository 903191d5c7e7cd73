package protocol_test

import (
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// compile's language: TypeScript programs run as the JavaScript their
// types erase to, with their own program_id, from their bytes in a fresh
// session too.
func TestCompileTypeScript(t *testing.T) {
	src := "interface Issue { title: string }\n" +
		"declare const github: { get_issue(n: number): Issue };\n" +
		"enum Mode { Short = 1, Long }\n" +
		"const issue = get_issue(Mode.Long) as Issue;\n" +
		"issue.title!.length satisfies number"
	for _, jsonl := range []bool{false, true} {
		c := newSess(t, jsonl, protocol.Options{})
		ts := c.must(c.call("compile", nil, "", "source", src, "language", "typescript"))
		again := c.must(c.call("compile", nil, "", "source", src, "language", "typescript"))
		if again.str("program_id") != ts.str("program_id") || c.s.Stats().Compiles != 1 {
			t.Fatal("a TypeScript compile is not served from the cache")
		}
		// The same text as JavaScript does not parse; a text valid in
		// both gives two programs.
		if r := c.call("compile", nil, "", "source", src); r.ok() || !strings.HasPrefix(r.err(), "Parse: ") {
			t.Fatalf("TypeScript compiled as JavaScript: %s", r.raw)
		}
		both := "const n = 1; n + 1"
		js := c.must(c.call("compile", nil, "", "source", both))
		jsDefault := c.must(c.call("compile", nil, "", "source", both, "language", "javascript"))
		tsBoth := c.must(c.call("compile", nil, "", "source", both, "language", "typescript"))
		if js.str("program_id") != jsDefault.str("program_id") || js.str("program_id") == tsBoth.str("program_id") {
			t.Fatal("program_id does not cover the language")
		}
		if c.call("compile", nil, "", "source", both, "language", nil).str("program_id") != js.str("program_id") {
			t.Fatal("a null language is not JavaScript")
		}

		// Run it: one call, then its answer.
		opts := map[string]any{"capabilities": []string{"get_issue"}}
		r := c.must(c.call("start", nil, "", "program_id", ts.str("program_id"), "options", opts))
		if r.step()["capability"] != "get_issue" {
			t.Fatalf("start: %s", r.raw)
		}
		answer := map[string]any{"type": "value", "value": map[string]any{"Object": map[string]any{"title": map[string]any{"String": "abcd"}}}}
		done := c.must(c.call("resume", r.bytes, "snapshot_base64", "policy", rawPolicy(r.str("snapshot_id"), "get_issue"), "payload", answer))
		want := `{"Number":{"Finite":4.0}}`
		if got := mustJSONString(t, done.step()["value"]); got != want {
			t.Fatalf("completed with %s, want %s", got, want)
		}

		// A fresh session, from the program bytes: the same program, and
		// the snapshot resumes cold to the same result.
		fresh := newSess(t, jsonl, protocol.Options{})
		progBytes := ts.bytes
		if jsonl {
			progBytes = mustBase64(t, ts.str("program_base64"))
		}
		r2 := fresh.must(fresh.call("start", progBytes, "program_base64", "program_id", ts.str("program_id"), "options", opts))
		if r2.str("snapshot_id") != r.str("snapshot_id") {
			t.Fatal("a cold start from the program bytes gives another snapshot")
		}
		cold := newSess(t, jsonl, protocol.Options{})
		done2 := cold.must(cold.call("resume", r.bytes, "snapshot_base64", "policy", rawPolicy(r.str("snapshot_id"), "get_issue"), "payload", answer))
		if got := mustJSONString(t, done2.step()["value"]); got != want {
			t.Fatalf("cold resume completed with %s, want %s", got, want)
		}
	}
}

func TestCompileTypeScriptErrors(t *testing.T) {
	c := newSess(t, true, protocol.Options{})
	for _, tc := range []struct{ src, lang, want, code string }{
		{"let a = 1;\nlet b: = 2;", "typescript", "Parse: Unexpected \"=\" (2:8)", "parse"},
		{"@dec class A {}", "typescript", "Parse: decorators are not supported (1:1)", "parse"},
		{"export const a = 1;", "typescript", "Parse: import and export declarations are not supported: a program is a script (1:1)", "parse"},
		{"1", "TypeScript", "unknown language `TypeScript`", "unknown_language"},
		{"1", "", "unknown language ``", "unknown_language"},
	} {
		r := c.call("compile", nil, "", "source", tc.src, "language", tc.lang)
		if r.ok() || r.err() != tc.want || r.hdr["error_code"] != tc.code {
			t.Errorf("%q as %q: %s", tc.src, tc.lang, r.raw)
		}
	}
	r := c.call("compile", nil, "", "source", "1", "language", 5)
	if r.ok() || r.err() != "language must be a string" {
		t.Errorf("language 5: %s", r.raw)
	}
	// A runtime error's traceback is in TypeScript coordinates.
	p := c.must(c.call("compile", nil, "", "source", "type N = number;\nconst f = (x: N): N => { throw new Error('no ' + x) };\nf(1 as N)", "language", "typescript"))
	s := c.call("start", nil, "", "program_id", p.str("program_id"), "options", map[string]any{})
	if s.ok() || !strings.HasSuffix(s.err(), "Runtime: Error: no 1\n  at f (2:32)\n  at <script> (3:2)") {
		t.Errorf("traceback: %s", s.raw)
	}
}
