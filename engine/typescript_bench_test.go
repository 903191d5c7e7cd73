package engine

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The compile cost of a TypeScript program against the same program in
// JavaScript, read by the parser and through esbuild: a one-line program, a gallery-sized one (the expenses
// workload, typed), and about 100 KB (that one 31 times over, each copy
// its own function).
func BenchmarkCompileLanguage(b *testing.B) {
	read := func(path string) string {
		s, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		return string(s)
	}
	large := func(src string) string {
		var sb strings.Builder
		for i := range 31 {
			// Each copy declares its own main, and its declarations are
			// in a block of their own.
			body := strings.Replace(src, "main", fmt.Sprintf("main%d", i), -1)
			sb.WriteString("{\n" + body + "\n}\n")
		}
		return sb.String()
	}
	// The JavaScript is the bench workload itself; the TypeScript, its
	// typed twin (bench's workload test checks they agree).
	jsGallery, tsGallery := read("../bench/workloads/expenses.js"), read("testdata/typescript/expenses.ts")
	// A TypeScript program's declarations of its globals stay at top level.
	tsDecls, tsBody, _ := strings.Cut(tsGallery, "async function main")
	cases := []struct {
		name, js, ts string
	}{
		{"small", "const n = 3; n + 1", "const n: number = 3; n + 1"},
		{"gallery", jsGallery, tsGallery},
		{"100KB", large(jsGallery), tsDecls + large("async function main"+tsBody)},
	}
	for _, c := range cases {
		// typescript-esbuild: the same TypeScript through the erasing
		// transform, as a source with an enum or a namespace goes.
		for _, name := range []string{"javascript", "typescript", "typescript-esbuild"} {
			src, lang := c.js, JavaScript
			if name != "javascript" {
				src, lang = c.ts, TypeScript
			}
			transform := name == "typescript-esbuild"
			b.Run(fmt.Sprintf("%s/%s", c.name, name), func(b *testing.B) {
				alwaysTransformTypeScript = transform
				defer func() { alwaysTransformTypeScript = false }()
				b.SetBytes(int64(len(src)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := CompileLanguage(src, lang, CompileOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
