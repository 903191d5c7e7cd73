package parser

import "testing"

// What WithTypeScript reads, and what it leaves to the full transform.

func TestTypeScriptReading(t *testing.T) {
	ok := []string{
		"const n: number = 3; n + 1",
		"let x!: number; x = 1",
		"function f<T>(a: T, b?: number, ...rest: string[]): T { return a }",
		"function f(this: Window, a: number): void {}",
		"function g(a: string): void;\nfunction g(a: number): void;\nfunction g(a: any) { return a }",
		"const f = (a: number, b: string): boolean => a > 0",
		"const f = async (a: number): Promise<void> => { await a }",
		"const f = ({ a, b }: { a: number; b?: string } = {a: 1}) => a",
		"interface A<T> extends B<T>, C { a: number; b?: string; m(x: T): void; [k: string]: any; readonly r: T[] }",
		"type A<T> = T extends string ? 'a' : T extends number ? `n${T}` : never\nconst z = 1",
		"type M = { readonly [K in keyof T as `get${K}`]?: () => T[K] }",
		"type F = (a: number) => void; type C = new () => object; type U = | A | B & C",
		"declare const x: number; declare function f(a: number): string; declare let y: string, z: number;",
		"abstract class A<T> extends B<T> implements I, J<T> { private x: number = 1; protected abstract m(): void; static readonly s?: string; declare d: number; constructor() { super() } get v(): number { return 1 } m2<U>(a: U): U { return a } [k: string]: any; }",
		"const m = new Map<string, number[]>(); m.get('a')!.push(1)",
		"const v = x as unknown as Record<string, Array<Array<number>>>",
		"const c = [1, 2] as const; const s = { a: 1 } satisfies Record<string, number>",
		"f<string>('a'); a < b; a < b > c; g<A, B>()",
		"try { } catch (e: unknown) { }",
		"const o = { m<T>(a: T): T { return a }, get x(): number { return 1 } }",
		"let t: [a: string, b?: number, ...rest: boolean[]] = ['x']",
		"let p: (typeof x)[number]; let q: keyof typeof obj; let r: unique symbol",
		"function isS(x: unknown): x is string { return typeof x === 'string' }",
		"function assert(x: unknown): asserts x is string {}",
		"let a: Array<Array<number>>= []",
		"let fn: <T>(x: T) => T = (x) => x",
		"class K { x?: number; y!: string; 'z': number = 1; get: number = 1 }",
		"const r = a ? (b) : c",
		"const r = a ? b : (c): number => 1",
		"type X = {\n a: string\n b: number\n}\nlet q = 1",
		"let v = obj!\nfoo()",
		"let v = [1] as const\nfoo()",
		"let w: Array<number>\nfoo()",
		"for (let i: number = 0; i < 3; i++) {}",
		"const f = (x: number) => (y: number): number => x + y",
		"type T1 = A extends infer U extends string ? U : never",
		"let z = (a as any).b",
		"type = 5; declare = 3; abstract = 2",
	}
	for _, src := range ok {
		_, err := ParseFile(nil, "", src, 0, WithTypeScript)
		if err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
	bad := []string{
		"enum E { A }",
		"namespace N { }",
		"class A { constructor(private x: number) {} }",
		"let x = <number>y",
		"const f = <T,>(x: T) => x",
		"@dec class A {}",
		"const r = a ? (b): number => 1 : c",
		"let x: = 1",
		"declare namespace N {}",
	}
	for _, src := range bad {
		_, err := ParseFile(nil, "", src, 0, WithTypeScript)
		if err == nil {
			t.Errorf("%q: accepted", src)
		}
	}
}

// Class fields named get, set and async are fields, in JavaScript too.
func TestClassFieldsNamedLikeAccessors(t *testing.T) {
	for _, src := range []string{
		"class K { get = 1; set = 2; async = 3 }",
		"class K { static get = 1 }",
	} {
		if _, err := ParseFile(nil, "", src, 0); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
}
