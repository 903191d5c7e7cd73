package server

import (
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
	} {
		if got := entryOf(c.code, c.lang); got != c.want {
			t.Errorf("entryOf(%q) = %q, want %q", c.code, got, c.want)
		}
	}
}
