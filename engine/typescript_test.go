package engine

import (
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func compileTS(t *testing.T, src string) *Program {
	t.Helper()
	p, err := CompileLanguage(src, TypeScript, CompileOptions{})
	require.NoError(t, err)
	return p
}

// runTS runs a TypeScript program to its end, answering every call with
// answer.
func runTS(t *testing.T, p *Program, caps []string, answer func(string, []value.Value) Payload) Step {
	t.Helper()
	pol, err := policy.New(caps, policy.DefaultLimits())
	require.NoError(t, err)
	h := snapshot.Header{Program: p.Bytes, Capabilities: pol.Capabilities, Seed: 7, ClockMillis: 1_700_000_000_000}
	x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: pol.Limits})
	for step.Suspended() {
		x, step = x.Resume(answer(step.Capability, step.Args), pol.Limits)
	}
	return step
}

func tsValue(t *testing.T, src string) value.Value {
	t.Helper()
	step := runTS(t, compileTS(t, src), nil, echo)
	require.NoError(t, step.Err)
	require.True(t, step.Done)
	return step.Value
}

func TestTypeScriptPrograms(t *testing.T) {
	cases := []struct {
		name, src string
		want      value.Value
	}{
		{"annotation", "const n: number = 3; n + 1", num(4)},
		{"interface", "interface P { x: number; y?: string }\nconst p: P = { x: 2 };\np.x * 10", num(20)},
		{"type alias", "type Pair<T> = [T, T];\nconst q: Pair<string> = ['a', 'b'];\nq.join('-')", value.String("a-b")},
		{"generics", "function id<T>(x: T): T { return x }\nconst f = <T,>(a: T[]): T | undefined => a[0];\nid<number>(1) + (f([5, 6]) ?? 0) + (1 < 2 ? 1 : 0)", num(7)},
		{"as cast", "const v = JSON.parse('{\"a\":1}') as { a: number };\nconst w = (v as unknown) as Record<string, number>;\nw.a + <number>v.a", num(2)},
		{"satisfies", "const cfg = { retries: 3 } satisfies { retries: number };\ncfg.retries", num(3)},
		{"optional chaining", "type T = { a?: { b?: number } };\nconst o: T = {};\n[o.a?.b ?? 9, o?.a?.b]", value.Array(num(9), value.Undefined())},
		{"non-null", "const m = new Map<string, number>([['k', 4]]);\nm.get('k')! + 1", num(5)},
		{"enum", "enum Color { Red, Green = 5, Blue }\nenum S { A = 'a' }\n[Color.Red, Color.Blue, Color[5], S.A]", value.Array(num(0), num(6), value.String("Green"), value.String("a"))},
		{"enum member last", "enum Status { Pending, Done }\nStatus.Done", num(1)},
		{"const enum", "const enum K { X = 2 }\nK.X * 2", num(4)},
		{"namespace", "namespace Geo { export const tau = 6; export function half() { return tau / 2 } }\nGeo.half()", num(3)},
		{"parameter properties", "class Pt { constructor(public x: number, private readonly y: number = 2) {} sum() { return this.x + this.y } }\nconst p = new Pt(1);\n[p.sum(), Object.keys(p).join()]", value.Array(num(3), value.String("x,y"))},
		{"abstract class", "abstract class Shape { abstract area(): number; describe() { return 'area ' + this.area() } }\nclass Sq extends Shape { constructor(private s: number) { super() } area() { return this.s ** 2 } }\nnew Sq(3).describe()", value.String("area 9")},
		{"overloads", "function f(a: string): string;\nfunction f(a: number): number;\nfunction f(a: any) { return typeof a }\nf(1) + f('x')", value.String("numberstring")},
		{"declare", "declare const github: { get_issue(n: number): Promise<{ title: string }> };\ndeclare function log(x: unknown): void;\ndeclare let later: number;\n'ok'", value.String("ok")},
		{"private fields and accessors", "class C { #n = 1; static s: number = 2; get n(): number { return this.#n } }\nnew C().n + C.s", num(3)},
		{"top-level await", "const r: number = await Promise.resolve(41);\nr + 1", num(42)},
		{"folded constant last", "let x: number = 1;\nx = x + 1;\n-1", num(-1)},
		{"folded string last", "let x = 5;\n'a' + 'b'", value.String("ab")},
		{"undefined last", "let x = 5;\nx;\nundefined", value.Undefined()},
		{"folded before types", "let x = 5;\nx;\nvoid 0;\ninterface Z {}\ntype Q = 1;", value.Undefined()},
		{"names kept", "function f() {}\nconst g = function () {};\nconst h = () => 1;\nclass K {}\n[f.name, g.name, h.name, K.name]", value.Array(value.String("f"), value.String("g"), value.String("h"), value.String("K"))},
		{"unicode", "const é: string = 'ü';\né + `${'😀'}`", value.String("ü😀")},
		{"type-only expression last", "let a = [1, 2] as const;\na.length", num(2)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := tsValue(t, c.src)
			assert.True(t, value.Equal(c.want, got), "got %+v", got)
		})
	}
}

// A final arrow function stays the completion value, as in the same
// program written in JavaScript.
func TestTypeScriptFinalArrowCompletes(t *testing.T) {
	step := runTS(t, compileTS(t, "const k: number = 2;\nasync (): Promise<number> => { return k }"), nil, echo)
	jstep, _ := runAll(t, "const k = 2;\nasync () => { return k }", nil, nil, echo)
	assert.Equal(t, jstep.Err, step.Err)
	assert.True(t, value.Equal(jstep.Value, step.Value), "got %+v, want %+v", step.Value, jstep.Value)
	e, err := eraseTypes("const k: number = 2;\nasync (): Promise<number> => { return k }", nil)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(e.js, "async () => {\n  return k;\n};\n"), e.js)
}

// A TypeScript program keeps modern syntax as written: nothing is
// down-levelled.
func TestTypeScriptLeavesSyntaxAsWritten(t *testing.T) {
	src := "class A { #p = 1; static { } async *g() { yield await this.#p } }\nconst o: any = null;\nconst r = o?.x ?? 2;\nlet z = 1; z ||= 3; z &&= 4;\nconst big = 10n;\n`${r}` + big"
	e, err := eraseTypes(src, nil)
	require.NoError(t, err)
	for _, want := range []string{"#p = 1", "static {", "async *g()", "yield await this.#p", "o?.x ?? 2", "z ||= 3", "z &&= 4", "10n"} {
		assert.Contains(t, e.js, want)
	}
	assert.NotContains(t, e.js, "__")
}

func TestTypeScriptRefusals(t *testing.T) {
	cases := []struct{ src, want string }{
		{"@sealed\nclass A {}", "Parse: decorators are not supported (1:1)"},
		{"class A {\n  @log m() {}\n}", "Parse: decorators are not supported (2:3)"},
		{"class A {\n  constructor(@inject x: number) {}\n}", "Parse: decorators are not supported (2:15)"},
		{"import { x } from 'y';\nx", "Parse: import and export declarations are not supported: a program is a script (1:1)"},
		{"import type { T } from './types';\nlet a: T;", "Parse: import and export declarations are not supported: a program is a script (1:1)"},
		{"const a = 1;\nexport { a }", "Parse: import and export declarations are not supported: a program is a script (2:1)"},
		{"export interface X {}\n1", "Parse: import and export declarations are not supported: a program is a script (1:1)"},
		{"let x = 1\nlet y: = 2", "Parse: Unexpected \"=\" (2:8)"},
		{"let s = 'é'; let y: number = ;", "Parse: Unexpected \";\" (1:31)"},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			_, err := CompileLanguage(c.src, TypeScript, CompileOptions{})
			require.Error(t, err)
			assert.Equal(t, c.want, err.Error())
		})
	}
	// Not declarations: a property named import, a namespace's exports,
	// a decorator's @ in a string, comment or regular expression.
	for _, src := range []string{
		"const o = { import: 1, export: 2 };\no.import + o.export",
		"namespace N { export const a = 1 }\nN.a",
		"/** @param x */\nconst s = '@a' + `@b` + /@c/.source;\ns",
		"let s = 'x';\nif (s) /@d/.test(s);\ns",
	} {
		_, err := CompileLanguage(src, TypeScript, CompileOptions{})
		assert.NoError(t, err, src)
	}
}

func TestTypeScriptErrorsPointIntoTheSource(t *testing.T) {
	// An error the engine finds in the erased program.
	_, err := CompileLanguage("interface I { a: number }\nconst v: I = { a: 1 };\nwith (v) {}", TypeScript, CompileOptions{})
	require.Error(t, err)
	assert.Equal(t, "Parse: Strict mode code may not include a with statement (3:1)", err.Error())

	_, err = CompileLanguage("type T = number;\nfunction f(a: T, a: T) { return a }", TypeScript, CompileOptions{})
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "Parse: "), err.Error())
	assert.Contains(t, err.Error(), "(2:")

	_, err = CompileLanguage("const x: number = 1;\nreturn x", TypeScript, CompileOptions{})
	require.Error(t, err)
	assert.Equal(t, "Parse: Illegal return statement (2:1)", err.Error())
}

func TestTypeScriptTraceback(t *testing.T) {
	src := "interface Opts { strict: boolean }\n" +
		"function check(o: Opts): never {\n" +
		"  throw new TypeError('bad: ' + (o.strict as boolean));\n" +
		"}\n" +
		"const opts: Opts = { strict: true };\n" +
		"check(opts);"
	step := runTS(t, compileTS(t, src), nil, echo)
	require.Error(t, step.Err)
	js := "function check(o) {\n  throw new TypeError('bad: ' + (o.strict));\n}\nconst opts = { strict: true };\ncheck(opts);"
	jstep, _ := runAll(t, js, nil, nil, echo)
	require.Error(t, jstep.Err)
	assert.Equal(t, "Runtime: TypeError: bad: true\n  at check (3:9)\n  at <script> (6:6)", step.Err.Error())
	assert.Equal(t, "Runtime: TypeError: bad: true\n  at check (2:9)\n  at <script> (5:6)", jstep.Err.Error())
}

func TestTypeScriptPositionsCountLikeJavaScript(t *testing.T) {
	// Columns are bytes from 1, lines end at \n, \r\n, \r, U+2028/9,
	// as for a JavaScript program.
	for _, c := range []struct{ ts, js string }{
		{"let a: string = 'é';\r\nlet b: number = 2;\r\n  throw new Error('x' + a + b)", "let a = 'é';\r\nlet b = 2;\r\n  throw new Error('x' + a + b)"},
		{"const s: string = '😀';\nfunction f(): void { throw new RangeError(s) }\nf()", "const s = '😀';\nfunction f() { throw new RangeError(s) }\nf()"},
	} {
		step := runTS(t, compileTS(t, c.ts), nil, echo)
		jstep, _ := runAll(t, c.js, nil, nil, echo)
		require.Error(t, step.Err)
		require.Error(t, jstep.Err)
		tsLines := strings.Split(step.Err.Error(), "\n")
		jsLines := strings.Split(jstep.Err.Error(), "\n")
		require.Equal(t, len(jsLines), len(tsLines))
		assert.Equal(t, jsLines[0], tsLines[0])
		// Same lines; the TS columns are shifted only by the annotations.
		for i := 1; i < len(jsLines); i++ {
			assert.Equal(t, strings.Split(jsLines[i], ":")[0], strings.Split(tsLines[i], ":")[0], step.Err.Error())
		}
	}
	_, err := CompileLanguage("let a = 'é';\r\nlet b: = 2;", TypeScript, CompileOptions{})
	require.Error(t, err)
	assert.Equal(t, "Parse: Unexpected \"=\" (2:8)", err.Error())
}

func TestTypeScriptProgramIdentity(t *testing.T) {
	src := "const n = 1;\nn + 1"
	js, err := Compile(src)
	require.NoError(t, err)
	ts := compileTS(t, src)
	assert.NotEqual(t, js.ID, ts.ID)
	assert.Equal(t, TypeScript, ts.Language)
	assert.Equal(t, JavaScript, js.Language)
	assert.Equal(t, src, ts.Source)
	again := compileTS(t, src)
	assert.Equal(t, ts.Bytes, again.Bytes)

	// The bytes are the program: loaded anew, the same TypeScript program.
	loaded, err := LoadProgram(ts.Bytes)
	require.NoError(t, err)
	assert.Equal(t, ts.ID, loaded.ID)
	assert.Equal(t, TypeScript, loaded.Language)
	jl, err := LoadProgram(js.Bytes)
	require.NoError(t, err)
	assert.Equal(t, JavaScript, jl.Language)

	// Not canonical, an unknown language, or an older format: refused.
	for _, bad := range []languageArtifact{
		{Magic: programMagic, Version: programVersion, Source: src, Language: "javascript"},
		{Magic: programMagic, Version: programVersion, Source: src, Language: "coffeescript"},
		{Magic: programMagic, Version: programVersionStrict, Source: src, Language: "typescript"},
	} {
		b, err := artifactEnc.Marshal(bad)
		require.NoError(t, err)
		_, err = LoadProgram(b)
		assert.Error(t, err, bad.Language)
	}
	_, err = CompileLanguage(src, Language("coffeescript"), CompileOptions{})
	assert.Error(t, err)
}

// A TypeScript program's snapshot resumes cold, from the program bytes
// and the snapshot alone, to the same result as the hot run.
func TestTypeScriptColdResume(t *testing.T) {
	src := "declare function fetch_data(n: number): number;\ninterface R { total: number }\nconst r: R = { total: 0 };\nfor (let i = 0; i < 3; i++) r.total += fetch_data(i) as number;\nr.total"
	p := compileTS(t, src)
	pol, err := policy.New([]string{"fetch_data"}, policy.DefaultLimits())
	require.NoError(t, err)
	h := snapshot.Header{Program: p.Bytes, Capabilities: pol.Capabilities, Seed: 3, ClockMillis: 5}
	x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: pol.Limits})
	var snaps [][]byte
	var answers []Payload
	for step.Suspended() {
		raw := step.Snapshot
		snaps = append(snaps, raw)
		ans := Payload{Outcome: snapshot.Outcome{Value: num(10)}}
		answers = append(answers, ans)
		x, step = x.Resume(ans, pol.Limits)
	}
	require.NoError(t, step.Err)
	assert.True(t, value.Equal(num(30), step.Value))
	require.Len(t, snaps, 3)
	for i, raw := range snaps {
		s, err := snapshot.Load(raw, nil)
		require.NoError(t, err)
		cold, err := LoadProgram(s.Header.Program)
		require.NoError(t, err)
		require.Equal(t, p.ID, cold.ID)
		cx, cstep := testRuntime.Start(Config{Program: cold, Header: s.Header, Limits: pol.Limits, Journal: s, Raw: raw,
			Answers: []Answer{{CallID: s.Last().Focus, Payload: answers[i]}}})
		for j := i + 1; cstep.Suspended(); j++ {
			cx, cstep = cx.Resume(answers[j], pol.Limits)
		}
		require.NoError(t, cstep.Err)
		assert.True(t, value.Equal(step.Value, cstep.Value), "resume at %d", i)
	}
}

// Deep nesting is refused before esbuild sees it: its parser would
// exhaust the stack, and nested functions cost it more than linear time.
// Read by the parser itself, TypeScript nests as deep as JavaScript.
func TestTypeScriptNestingBound(t *testing.T) {
	// The default run takes the sources at a fraction of their length
	// (each still nests far past the bound, or is as long as an ordinary
	// program gets); the long suites at their full length.
	n := func(short, long int) int { return longtest.Pick(short, long) }
	deep := []string{
		"x = " + strings.Repeat("!", n(50_000, 1_000_000)) + "1",
		"x = " + strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000),
		"x = " + strings.Repeat("a=>", 2000) + "1",
		"x = " + strings.Repeat("a=>{return ", 700) + "1" + strings.Repeat("}", 700),
		"x = " + strings.Repeat("a?b:", 5000) + "1",
		"x = f" + strings.Repeat("(1)", 200_000),
		"x = f" + strings.Repeat(".a", 200_000),
		"if(a);" + strings.Repeat("else if(a);", 5000),
		strings.Repeat("if(a)\n", 5000) + ";",
		"let x: " + strings.Repeat("A<", 50_000) + "1" + strings.Repeat(">", 50_000),
		"x = `" + strings.Repeat("${`", 5000) + strings.Repeat("`}", 5000) + "`",
		// Many nests, each within the bounds: their scopes add up.
		strings.Repeat("x = "+strings.Repeat("a=>{return ", 40)+"1"+strings.Repeat("}", 40)+";\n", n(600, 1000)),
	}
	for _, src := range deep {
		// Read by the parser, or refused for its nesting.
		if _, err := CompileLanguage(src, TypeScript, CompileOptions{}); err != nil {
			assert.Contains(t, err.Error(), "Parse: source nesting exceeds", "%.20s", src)
		}
	}
	transformAlways(t)
	for _, src := range deep {
		_, err := CompileLanguage(src, TypeScript, CompileOptions{})
		require.Error(t, err, "%.20s", src)
		assert.Contains(t, err.Error(), "Parse: source nesting exceeds", "%.20s", src)
	}
	// What the JavaScript parser accepts nests no deeper than the bound.
	for _, src := range []string{
		"x = " + strings.Repeat("(", 990) + "1" + strings.Repeat(")", 990),
		"x = " + strings.Repeat("a=>{return ", n(200, 400)) + "1" + strings.Repeat("}", n(200, 400)),
		// Chains longer than the nesting bound are not nesting.
		"x = f" + strings.Repeat(".a", n(3000, 15_000)),
		"x = 0" + strings.Repeat("+a", n(3000, 15_000)),
		strings.Repeat("var a1 = 1\nvar b = a1 + 2\nif (b) { a1 = b } else { a1 = -b }\nb = a1 ? -a1 : !a1\n", n(300, 3000)),
	} {
		_, err := CompileLanguage(src, TypeScript, CompileOptions{})
		assert.NoError(t, err, "%.20s", src)
	}
}

func TestTypeScriptErasedDeclarations(t *testing.T) {
	src := "declare global { interface Window { x: number } }\n" +
		"declare namespace NS { const a: number }\n" +
		"declare class DC { m(): void }\n" +
		"declare function df(): void;\n" +
		"class Base { m(this: Base, n: number): number { return n } }\n" +
		"class D extends Base implements Iterable<number> { x!: number; readonly y: number = 1; protected z?: string; override m(this: D, n: number) { return n + this.y }\n  *[Symbol.iterator]() { yield 1 } }\n" +
		"typeof NS === 'undefined' && typeof DC === 'undefined' && typeof df === 'undefined' ? new D().m(1) : 'declared'"
	assert.True(t, value.Equal(num(2), tsValue(t, src)))
	for _, bad := range []string{"import fs = require('fs');\nfs", "const a = 1;\nexport = a;"} {
		_, err := CompileLanguage(bad, TypeScript, CompileOptions{})
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "import and export declarations are not supported", bad)
	}
	// A namespace alias is an import declaration too.
	_, err := CompileLanguage("namespace A { export const b = 1 }\nimport B = A.b;\nB", TypeScript, CompileOptions{})
	require.Error(t, err)
}

// Whatever the source, erasing it fails cleanly or compiles: no panic
// (which build would turn into "could not be prepared"), no hang.
func TestTypeScriptScannerOnArbitrarySource(t *testing.T) {
	pieces := []string{"a", "1", " ", "\n", "\r", "(", ")", "{", "}", "[", "]", "`", "${", "'", "\"", "/", "/*", "*/", "//", "\\",
		"=>", "?", ":", ";", ",", ".", "?.", "<", ">", "@", "import", "export", "if", "else", "return", "type", "interface",
		"declare", "enum", "x: number", "as", "!", "-", "+", "é", "\u2028", "#p", "class", "=", "async", "await"}
	seed := uint32(1)
	next := func() int {
		seed = seed*1664525 + 1013904223
		return int(seed >> 8)
	}
	for range 3000 {
		var b strings.Builder
		for n := next() % 40; n >= 0; n-- {
			b.WriteString(pieces[next()%len(pieces)])
		}
		src := b.String()
		_, err := CompileLanguage(src, TypeScript, CompileOptions{})
		if err != nil {
			require.NotEqual(t, errNotPrepared.Error(), err.Error(), "%q", src)
			require.Regexp(t, `^(Parse|Validation): `, err.Error(), "%q", src)
		}
	}
}

func TestTypeScriptTopLevelAwaitPositions(t *testing.T) {
	// The engine's error, as for the same JavaScript.
	_, err := CompileLanguage("const x: number = await Promise.resolve(1);\nwith (x) {}", TypeScript, CompileOptions{})
	require.Error(t, err)
	assert.Equal(t, "Parse: Strict mode code may not include a with statement (2:1)", err.Error())
	// Through esbuild, its own error (it takes a program with top-level
	// await for a module), at the TypeScript position.
	_, err = CompileLanguage("const x: number = await Promise.resolve(1);\nwith (x) {}\nenum E { A }", TypeScript, CompileOptions{})
	require.Error(t, err)
	assert.Equal(t, "Parse: With statements cannot be used in an ECMAScript module (2:1)", err.Error())
	// The engine's (esbuild keeps what it has no reason to change): as
	// for the same JavaScript, the error of the unwrapped parse, at the
	// TypeScript position.
	_, jerr := Compile("const x = await Promise.resolve(1);\nclass A {\n  accessor y = 1;\n}")
	require.Error(t, jerr)
	assert.Equal(t, "Parse: Unexpected identifier (1:17)", jerr.Error())
	_, err = CompileLanguage("const x: number = await Promise.resolve(1);\nclass A {\n  accessor y: number = 1;\n}", TypeScript, CompileOptions{})
	require.Error(t, err)
	assert.Equal(t, "Parse: Unexpected identifier (1:25)", err.Error())
	_, err = CompileLanguage("const x: number = 1;\nclass A {\n  accessor y: number = 1;\n}", TypeScript, CompileOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "(3:")

	src := "type N = number;\nconst x: N = await Promise.resolve(1);\nfunction f(n: N): N {\n  throw new RangeError('n=' + n);\n}\nf(x)"
	step := runTS(t, compileTS(t, src), nil, echo)
	require.Error(t, step.Err)
	assert.Equal(t, "Runtime: RangeError: n=1\n  at f (4:9)\n  at <script> (6:2)", step.Err.Error())
}

// transformAlways sends TypeScript through the erasing transform for the
// rest of the test.
func transformAlways(t *testing.T) {
	alwaysTransformTypeScript = true
	t.Cleanup(func() { alwaysTransformTypeScript = false })
}
