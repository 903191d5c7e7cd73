package server

import (
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/host"
)

func TestEntryOf(t *testing.T) {
	for _, c := range []struct {
		code string
		lang host.Language
		want host.Entry
	}{
		{"async ({ repo }) => { return repo }", host.JavaScript, host.EntryCall},
		{"async ({ repo }: { repo: string }): Promise<string> => { return repo }", host.TypeScript, host.EntryCall},
		{"(async function main(inputs) { return 1 })", host.JavaScript, host.EntryCall},
		{"// the answer\nasync function main(inputs: {n: number}) { return inputs.n }\n", host.TypeScript, host.EntryCall},
		{"() => 1;", host.JavaScript, host.EntryCall},
		{"(async () => 1)()", host.JavaScript, host.EntryScript},
		{"const x = await ns.f({}); x", host.TypeScript, host.EntryScript},
		{"function f() { return 1 }\nf()", host.JavaScript, host.EntryScript},
		{"1 +", host.JavaScript, host.EntryScript},
		{"type T = {a: number};\nconst t: T = {a: 1};\nt", host.TypeScript, host.EntryScript},
		{"interface I { a: number }\nasync (i: I) => i.a", host.TypeScript, host.EntryCall},
		{"enum E { A }\nasync (i: { e: E }) => i.e", host.TypeScript, host.EntryScript},
		{"async (x: number) => x", host.TypeScript, host.EntryCall},
	} {
		if got, _ := entryOf(c.code, c.lang); got != c.want {
			t.Errorf("entryOf(%q) = %q, want %q", c.code, got, c.want)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct{ config, want string }{
		{`{"mcpServers": {"a": {"command": 1}}}`, "mcpServers.command cannot be a JSON number"},
		{`{"mcpServers": `, "the JSON ends early"},
		{`{"mcpServers": {"a-b": {"command": "x"}}}`, `server name "a-b"`},
		{`{"mcpServers": {"a": {"command": "x", "url": "http://y"}}}`, "not both"},
		{`{"mcpServers": {"a": {}}}`, `give "command" (stdio) or "url"`},
		{`{}`, `no "mcpServers"`},
	} {
		_, err := ParseConfig([]byte(c.config))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "Go ") {
			t.Errorf("%s: %v, want %q", c.config, err, c.want)
		}
	}
	if _, err := ParseConfig([]byte(`{"mcpServers": {"gh": {"command": "x", "args": ["a"], "env": {"K": "v"}}, "docs": {"url": "http://x", "headers": {"A": "b"}}}}`)); err != nil {
		t.Error(err)
	}
}

// A lone function declaration is called: its name follows the code, which
// keeps its positions.
func TestEntryOfDeclaration(t *testing.T) {
	code := "// the answer\nasync function main(inputs: { n: number }) { return inputs.n }\n"
	entry, run := entryOf(code, host.TypeScript)
	if entry != host.EntryCall || run != code+"\n;main" {
		t.Fatalf("entryOf = %q, %q", entry, run)
	}
}
