package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tsSource is a TypeScript program with what it runs under.
type tsSource struct {
	name   string
	src    string
	caps   []string
	entry  snapshot.Entry
	direct bool // the parser reads it (no transform)
}

// typeScriptSources are the TypeScript programs of the tests and the
// code-mode corpus.
func typeScriptSources(t *testing.T) []tsSource {
	var out []tsSource
	files, err := filepath.Glob("testdata/typescript/*.ts")
	require.NoError(t, err)
	more, err := filepath.Glob("../corpus/codemode/*.ts")
	require.NoError(t, err)
	files = append(append(files, more...), "../examples/codemode/triage.ts")
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		s := tsSource{name: f, src: string(src)}
		if meta, err := os.ReadFile(strings.TrimSuffix(f, ".ts") + ".json"); err == nil {
			var m struct {
				Entry        string   `json:"entry"`
				Capabilities []string `json:"capabilities"`
			}
			require.NoError(t, json.Unmarshal(meta, &m))
			s.caps = m.Capabilities
			if m.Entry == "call" {
				s.entry = snapshot.EntryCall
			}
		}
		out = append(out, s)
	}
	return out
}

// runRead runs p to its end with console collection, answering every
// call with its arguments, and describes each step.
func runRead(t *testing.T, p *Program, s tsSource) []string {
	t.Helper()
	pol, err := policy.New(s.caps, policy.DefaultLimits())
	require.NoError(t, err)
	h := snapshot.Header{Program: p.Bytes, Capabilities: pol.Capabilities, Seed: suiteSeed, ClockMillis: suiteClock,
		Entry: s.entry, Console: snapshot.ConsoleCollect}
	var out []string
	x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: pol.Limits})
	for round := 0; ; round++ {
		require.Less(t, round, 500, "runaway")
		out = append(out, describeShaped(step))
		if !step.Suspended() {
			return out
		}
		var as []Answer
		for _, c := range step.Calls {
			as = append(as, Answer{CallID: c.ID, Payload: echoArgs(c)})
		}
		x, step = x.ResumeWith(nil, as, pol.Limits)
	}
}

// TypeScript the parser reads runs exactly as the same source erased by
// esbuild: same calls, values, errors and console lines. Traceback
// positions are compared apart: the read program's are the source's own,
// where the transform's source map places a call after type arguments
// (f<T>(x)) at the "<", and the end of a top-level-await program a line
// early (TestTypeScriptReadPositions checks the read ones).
func TestTypeScriptReadRunsAsTransformed(t *testing.T) {
	sources := typeScriptSources(t)
	direct := 0
	for i := range sources {
		s := &sources[i]
		p, err := CompileLanguage(s.src, TypeScript, CompileOptions{})
		require.NoError(t, err, s.name)
		s.direct = p.lines.ts == nil
		if s.direct {
			direct++
		}
		want := runRead(t, p, *s)
		alwaysTransformTypeScript = true
		q, err := CompileLanguage(s.src, TypeScript, CompileOptions{})
		alwaysTransformTypeScript = false
		require.NoError(t, err, s.name)
		require.Equal(t, p.ID, q.ID, "the program's identity is its source")
		assert.Equal(t, framesUnplaced(want), framesUnplaced(runRead(t, q, *s)), s.name)
	}
	// The corpus is model-shaped TypeScript: nearly all of it is read
	// directly.
	assert.GreaterOrEqual(t, direct, len(sources)*3/4, "read directly: %d of %d", direct, len(sources))
}

var framePlace = regexp.MustCompile(`(?m)^(  at [^\n(]*) \(\d+:\d+\)`)

func framesUnplaced(steps []string) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = framePlace.ReplaceAllString(s, "$1")
	}
	return out
}

// Positions in a read program are the TypeScript source's own, as in
// JavaScript: a call at its "(", after any type arguments.
func TestTypeScriptReadPositions(t *testing.T) {
	src := "async function c<T>(f: () => T): Promise<T> { return f() }\nasync function main(): Promise<void> {\n  const v: number = await c<number>(() =>\n    boom());\n}\nawait main()\n"
	p := compileTS(t, src)
	require.Nil(t, p.lines.ts, "read, not transformed")
	got := runRead(t, p, tsSource{})
	assert.Equal(t, []string{"error Runtime: ReferenceError: boom is not defined\n  at <anonymous> (4:9)\n  at c (1:55)\n  at main (3:36)\n  at <script> (6:11)\n  at <script> (7:1) logs "}, got)
}

// Grammar the reader must get exactly right: each program runs read and
// transformed, to the same value.
func TestTypeScriptReadGrammar(t *testing.T) {
	programs := []string{
		// Type arguments against comparisons (TypeScript's rule).
		"const a = 1, b = 2, c = 3;\nfunction f<T>(x: T) { return [x] }\n[a < b, b > c, f<number>(4), (a < b) > (c as number)]",
		"const a = (x: number) => x * 10, b = 2;\n[a < b > (1 as number), (a as any) < b]",
		"function id<T>(x: T) { return x }\nconst h = id<string>;\n[typeof h, h('q')]",
		"const m = new Map<string, Array<Array<number>>>();\nm.set('k', [[1]]);\nconst n: Array<Array<number>>= m.get('k')!;\nn[0][0]",
		"const s = new Set<number>([1, 2]);\nconst q = Array.from<number>(s);\nq.length",
		// Automatic semicolons after types.
		"let v = [1, 2] as const\nlet w: Array<number>\nw = [3]\nconst z = v[0]!\n;[z, w[0]]",
		"type A = { x: number }\nconst o: A = { x: 1 }\n;(o.x)",
		"let k = 2 as number\n-1\nk",
		// Bindings, parameters, returns.
		"function f(this: { n: number }, a: number, b?: number, ...r: number[]): number { return this.n + a + (b ?? 0) + r.length }\nf.call({ n: 1 }, 2, undefined, 7, 8)",
		"const f = ({ a, b = 2 }: { a: number; b?: number } = { a: 1 }, [c]: number[] = [3]): number => a + b + c;\n[f(), f({ a: 5 }, [0])]",
		"let x!: number;\nx = 4;\nlet { p, q }: { p: number; q: string } = { p: 1, q: 'z' };\n[x, p, q]",
		"function isStr(x: unknown): x is string { return typeof x === 'string' }\nfunction check(x: unknown): asserts x is number { if (typeof x !== 'number') throw new TypeError('no') }\ncheck(1);\n[isStr('a'), isStr(1)]",
		"try { throw new Error('e') } catch (e: unknown) { (e as Error).message }",
		"for (let i: number = 0, j: number = 2; i < j; i++) {}\nlet out: string[] = [];\nfor (const k of ['a', 'b'] as string[]) out.push(k);\nout.join()",
		// Arrows.
		"const a = async (x: number): Promise<number> => x + 1;\nconst b = (x: number): { y: number } => ({ y: x });\nconst c = (x: number) => (y: number): number => x * y;\n[await a(1), b(2).y, c(3)(4)]",
		"const t = true, u = 5;\nconst r = t ? (u) : 0;\nconst s = t ? ((v: number): number => v)(u) : 1;\n[r, s]",
		"const xs = [3, 1, 2];\nxs.sort((p: number, q: number): number => p - q).map((v): string => String(v)).join('')",
		// Statements that are only types.
		"type P<T> = T extends string ? 'str' : T extends number ? `num${T}` : never;\ntype M<T> = { readonly [K in keyof T as `get${string & K}`]-?: () => T[K] };\ninterface I<T> extends Array<T> { extra?: T; (x: number): string; new (): I<T>; [k: string]: unknown }\ndeclare const ext: number;\ndeclare function ef(a: string): void;\ndeclare let dl: string, dm: number;\ndeclare class DC<T> { m(): T }\n'types only'",
		"let type = 1; const declare = 2, abstract = 3, namespace = 4, module = 5, is = 6, asserts = 7, keyof = 8, infer = 9;\ntype\n= 2;\n[type, declare, abstract, namespace, module, is, asserts, keyof, infer]",
		// Functions and overloads.
		"function f(a: string): string;\nfunction f(a: number): number;\nfunction f(a: any): any { return typeof a }\nasync function g(): Promise<void>;\nasync function g() {}\n[f(1), f('a'), typeof g]",
		// Classes.
		"abstract class Base<T> implements Iterable<T> {\n  protected abstract items(): T[];\n  abstract readonly kind: string;\n  declare tag: string;\n  static readonly count?: number;\n  private static hidden = 1;\n  public name: string = 'b';\n  x?: number;\n  y!: number;\n  [key: string]: unknown;\n  get size(): number { return this.items().length }\n  *[Symbol.iterator](): Iterator<T> { yield* this.items() }\n  m<U>(u: U): [T[], U] { return [this.items(), u] }\n  override toString(): string { return 'B' }\n}\nclass L extends Base<number> {\n  readonly kind = 'L';\n  protected items(): number[] { return [1, 2] }\n}\nconst l = new L();\n[l.size, [...l], l.m('u')[1], String(l), 'tag' in l, 'x' in l, Object.keys(l).sort().join()]",
		"class K { get: number = 1; set?: string; async: boolean = true; static = 2 }\nconst k = new K();\n[k.get, k.set, k.async, k.static]",
		"class A<T extends object = {}> { constructor(public_: T) { this.v = public_ } v: T }\nnew A<{ n: number }>({ n: 3 }).v.n",
		// Objects.
		"const o = { m<T>(x: T): T { return x }, get g(): number { return 2 }, set s(v: number) {}, async a(): Promise<number> { return 1 } };\n[o.m<string>('x'), o.g, await o.a()]",
		// Assertions.
		"const cfg = { r: 3, list: [1, 2] } satisfies { r: number; list: number[] };\nconst u = cfg as unknown as { r: number };\n[u.r, (cfg.list as readonly number[]).length, cfg!.r!]",
		"let arr: number[] | undefined = [1];\narr![0] = 5;\n(arr as number[])[0] + arr!.length",
		// Unions, tuples, function types in annotations.
		"let f: ((a: number) => void) | null = null;\nlet g: new () => object = Object;\nlet t: [a: string, b?: number, ...rest: boolean[]] = ['x'];\nlet w: (typeof t)[number];\nlet u: | 'a' | 'b' = 'a';\nlet i: unique symbol;\n[f, typeof g, t.length, u]",
		"type Fn = <T>(x: T) => T;\nconst idf: Fn = (x) => x;\nlet nested: Array<Record<string, Map<number, Set<string>>>> = [];\nidf(nested).length",
	}
	for _, src := range programs {
		p, err := CompileLanguage(src, TypeScript, CompileOptions{})
		require.NoError(t, err, src)
		assert.Nil(t, p.lines.ts, "read directly: %s", src)
		want := runRead(t, p, tsSource{})
		alwaysTransformTypeScript = true
		q, err := CompileLanguage(src, TypeScript, CompileOptions{})
		alwaysTransformTypeScript = false
		require.NoError(t, err, src)
		got := runRead(t, q, tsSource{})
		assert.Equal(t, framesUnplaced(want), framesUnplaced(got), src)
		assert.NotContains(t, want[len(want)-1], "error", src)
	}
}
