package engine

import (
	"strings"
	"testing"
	"time"
)

// FuzzCompile compiles sources built from the fuzzer's bytes: a recipe of
// grammar productions (nestings and chains), each repeated up to thousands
// of times and nested inside one another, up to the 1 MiB request limit,
// and the bytes themselves as source. Every source compiles or fails with
// Parse:/Validation:, and never takes the process down (a Go stack
// overflow here would kill the fuzzer). Long runs:
// go test ./engine -run '^$' -fuzz FuzzCompile -fuzztime 5m
func FuzzCompile(f *testing.F) {
	f.Add([]byte{0, 200, 7, 255, 30, 3})
	f.Add([]byte("x = [[[1]]]; f(`${a}`)"))
	f.Add([]byte{byte(len(nestings)), 250, 3, 40, 3, 40, 12, 255})
	f.Fuzz(func(t *testing.T, recipe []byte) {
		for _, src := range []string{cook(recipe), string(recipe)} {
			began := time.Now()
			_, err := Compile(src)
			if d := time.Since(began); d > compileBound {
				t.Fatalf("%d bytes took %v", len(src), d)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "Parse: ") && !strings.HasPrefix(err.Error(), "Validation: ") {
				t.Fatalf("%q: %v", trunc(src), err)
			}
		}
	})
}

// cook turns a recipe into source: each pair of bytes picks a production
// and how many times to repeat it (the count byte squared, so a few bytes
// reach hundreds of thousands); nestings wrap everything cooked so far.
func cook(recipe []byte) string {
	var b strings.Builder
	inner := "1"
	for i := 0; i+1 < len(recipe); i += 2 {
		pick, n := int(recipe[i]), int(recipe[i+1])*int(recipe[i+1])+1
		if pick%2 == 0 {
			p := nestings[(pick/2)%len(nestings)]
			per := len(p.open) + len(p.close)
			n = min(n, (MaxSourceBytes-len(inner))/max(per, 1))
			inner = strings.Repeat(p.open, n) + p.core + inner + strings.Repeat(p.close, n)
		} else {
			c := chains[(pick/2)%len(chains)]
			n = min(n, (MaxSourceBytes-len(inner))/len(c.link))
			inner = c.head + strings.Repeat(c.link, n) + ";" + inner
		}
		if len(inner) >= MaxSourceBytes {
			break
		}
	}
	b.WriteString(inner)
	s := b.String()
	if len(s) > MaxSourceBytes {
		s = s[:MaxSourceBytes]
	}
	return s
}

func trunc(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// FuzzCompileTypeScript is FuzzCompile for TypeScript programs: esbuild's
// parser recurses without a bound of its own, so the same hostile
// nestings must fail before they reach it, never take the process down.
// Long runs: go test ./engine -run '^$' -fuzz FuzzCompileTypeScript -fuzztime 5m
func FuzzCompileTypeScript(f *testing.F) {
	f.Add([]byte{0, 200, 7, 255, 30, 3})
	f.Add([]byte("let x: Array<number> = [[[1]]] as any; f(`${a!}`)"))
	f.Add([]byte{byte(len(nestings)), 250, 3, 40, 3, 40, 12, 255})
	f.Fuzz(func(t *testing.T, recipe []byte) {
		for _, src := range []string{cook(recipe), string(recipe)} {
			began := time.Now()
			_, err := CompileLanguage(src, TypeScript, CompileOptions{})
			if d := time.Since(began); d > compileBound {
				t.Fatalf("%d bytes took %v", len(src), d)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "Parse: ") && !strings.HasPrefix(err.Error(), "Validation: ") {
				t.Fatalf("%q: %v", trunc(src), err)
			}
		}
	})
}
