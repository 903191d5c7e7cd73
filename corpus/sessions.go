package corpus

import (
	"encoding/base64"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
)

// StructuredValue helpers for requests.

// Num is a finite StructuredValue number.
func Num(f float64) Obj { return Obj{{"Number", Obj{{"Finite", f}}}} }

// Str is a StructuredValue string.
func Str(s string) Obj { return Obj{{"String", s}} }

// ValuePayload answers a capability call with v.
func ValuePayload(v any) Obj { return Obj{{"type", "value"}, {"value", v}} }

// Options is a start's options.
func Options(inputs Obj, capabilities []string, limits Obj) Obj {
	if inputs == nil {
		inputs = Obj{}
	}
	if capabilities == nil {
		capabilities = []string{}
	}
	if limits == nil {
		limits = Obj{}
	}
	return Obj{{"inputs", inputs}, {"capabilities", capabilities}, {"limits", limits}}
}

// cap1 is the capability list most sessions grant.
var cap1 = []string{"fetch_data"}

// Sessions are the recorded transcripts, in file name order.
var Sessions = []Session{
	{Name: "batch_calls", About: "host_calls batch: every outstanding call in one step, answers to any subset in any order, and the refusals that change nothing.", ReplayBinary: true, Run: batchCalls},
	{Name: "binary_frames", About: "The binary transport: raw bytes travel as frame payloads; a compile payload and base64 fields are refused.", Binary: true, Run: binaryFrames},
	{Name: "cold_resume", About: "Resume in brand-new processes from snapshot bytes and the full policy (raw form); replays are byte-identical to the first run.", ReplayBinary: true, Run: coldResume},
	{Name: "errors_envelope", About: "Per-request failures of the envelope and of compile: version, method, mistyped fields, Parse and Validation errors. The session goes on after each.", ReplayBinary: true, Run: errorsEnvelope},
	{Name: "errors_resume", About: "Every resume resolution, authentication and policy error, in the order the contract checks them.", Run: errorsResume},
	{Name: "errors_start", About: "Every start program-resolution and options error.", Run: errorsStart},
	{Name: "extensions", About: "This sidecar's additions that answer deterministically: ping, stats, closed structures, wall_time_ms in policies, cancel of requests not in flight.", Run: extensions},
	{Name: "fatal_binary", About: "Binary input that ends the session: truncated frames, oversized frames, headers without id or method.", Binary: true, Run: fatalBinary},
	{Name: "fatal_jsonl", About: "JSONL input that ends the session: lines that are not JSON objects or lack a readable id and method. Blank lines are ignored.", Run: fatalJSONL},
	{Name: "hello_world", About: "Compile and start programs that complete without suspending; the three ways a start names its program.", ReplayBinary: true, Run: helloWorld},
	{Name: "hostile", About: "Hostile guests: endless loops, recursion, deep nesting, dynamic code, boundary violations and exhausted limits, all failing closed.", ReplayBinary: true, Run: hostile},
	{Name: "profile", About: "profile:true adds execution figures to successful starts and resumes (timings normalized to 0).", ReplayBinary: true, Run: profileSession},
	{Name: "sealed_snapshots", About: "Sealed snapshots: a start with a seal key, cached and raw resumes that name it, delta delivery of sealed records, and the refusals for a missing, wrong or unexpected key.", ReplayBinary: true, Run: sealedSnapshots},
	{Name: "snapshot_transfer", About: "Snapshots in pieces: delta and none delivery, chunked snapshot fetch, staged uploads resumed by stage_id, and their failures.", ReplayBinary: true, Run: snapshotTransfer},
	{Name: "suspend_resume", About: "Suspend/resume chains on cached snapshot and policy ids: values, host errors, cancellation, Promise.all, replaying a consumed snapshot.", ReplayBinary: true, Run: suspendResume},
	{Name: "values", About: "StructuredValues crossing the boundary both ways: inputs, capability arguments, resume values and results; fixed Math.random and clock.", ReplayBinary: true, Run: values},
}

func compile(r *Rec, src string) (id, b64 string) {
	resp := r.OK(r.Req("compile", "source", src))
	return resp.Result()["program_id"].(string), B64(resp.Payload)
}

func helloWorld(r *Rec) {
	r.Spawn()
	r.Note("Compile returns the program id (SHA-256 of the program bytes) and the bytes.")
	id, prog := compile(r, `'hello, ' + 'world'`)
	r.Note("Start from the cached program id.")
	r.Completed(r.Req("start", "program_id", id, "options", Options(nil, nil, nil)), `{"String":"hello, world"}`)
	r.Note("Start from the program bytes alone: validated, cached and used.")
	r.Completed(r.Req("start", "program_base64", prog, "options", Options(nil, nil, nil)), `{"String":"hello, world"}`)
	r.Note("Bytes and id together: the id must match the bytes.")
	r.Completed(r.Req("start", "program_id", id, "program_base64", prog, "options", Obj{}), `{"String":"hello, world"}`)

	r.Note("The result is the script's completion value.")
	id, _ = compile(r, "const v = 1; v + 1;")
	r.Completed(r.Req("start", "program_id", id, "options", Options(nil, nil, nil)), `{"Number":{"Finite":2.0}}`)
	r.Note("A Promise completion value settles first; top-level await works.")
	id, _ = compile(r, "async function main() { return greeting + ', ' + name; }\nmain();")
	r.Completed(r.Req("start", "program_id", id, "options", Options(Obj{{"greeting", Str("hi")}, {"name", Str("guest")}}, nil, nil)), `{"String":"hi, guest"}`)
	id, _ = compile(r, "const n = await Promise.resolve(41);\nn + 1;")
	r.Completed(r.Req("start", "program_id", id, "options", Options(nil, nil, nil)), `{"Number":{"Finite":42.0}}`)
	r.Note("Nothing ambient: no require, process, console, timers or fetch.")
	id, _ = compile(r, "[typeof require, typeof process, typeof console, typeof setTimeout, typeof fetch, typeof globalThis.eval].join()")
	r.Completed(r.Req("start", "program_id", id, "options", Options(nil, nil, nil)), `{"String":"undefined,undefined,undefined,undefined,undefined,undefined"}`)
	r.Note("Ids are echoed verbatim, need not be unique, and span u64.")
	r.Completed(Obj{{"protocol_version", 2}, {"id", 0}, {"method", "start"}, {"program_id", id}, {"options", Obj{}}}, `{"String":"undefined,undefined,undefined,undefined,undefined,undefined"}`)
	r.Completed(`{"protocol_version":2,"id":18446744073709551615,"method":"start","program_id":"`+id+`","options":{}}`, `{"String":"undefined,undefined,undefined,undefined,undefined,undefined"}`)
	r.Completed(Obj{{"protocol_version", 2}, {"id", 0}, {"method", "start"}, {"program_id", id}, {"options", Obj{}}}, `{"String":"undefined,undefined,undefined,undefined,undefined,undefined"}`)
	r.Exit(0)
}

func values(r *Rec) {
	r.Spawn()
	r.Note("Every StructuredValue kind as an input, echoed back as the result; object key order is kept.")
	id, _ := compile(r, "[u, n, b, s, nan, inf, ninf, nzero, f, arr, obj]")
	inputs := Obj{
		{"u", "Undefined"}, {"n", "Null"}, {"b", Obj{{"Bool", true}}}, {"s", Str("héllo \u2028 \"quoted\" 🍀")},
		{"nan", Obj{{"Number", "NaN"}}}, {"inf", Obj{{"Number", "Infinity"}}}, {"ninf", Obj{{"Number", "NegInfinity"}}},
		{"nzero", Obj{{"Number", "NegZero"}}}, {"f", Num(-1.5e-300)},
		{"arr", Obj{{"Array", []any{Num(1), "Hole", Obj{{"Undefined", nil}}, Obj{{"Null", nil}}}}}},
		{"obj", Obj{{"Object", Obj{{"zeta", Num(1)}, {"alpha", Obj{{"Array", []any{}}}}, {"", Str("")}}}}},
	}
	r.OK(r.Req("start", "program_id", id, "options", Options(inputs, nil, nil)))
	r.Note("Guest values out: holes, -0, NaN, null-prototype objects, lone surrogates, insertion order.")
	id, _ = compile(r, "const o = Object.create(null); o.b = 1; o.a = [1, , 3]; o['\\ud800'] = '\\udc00x';\n[o, -0, NaN, 0.1 + 0.2, 2 ** 64, 'multi\\nline', [].concat(Array(2))]")
	r.OK(r.Req("start", "program_id", id, "options", Options(nil, nil, nil)))
	r.Note("Arguments to a capability and the resumed value cross the boundary too.")
	id, _ = compile(r, "const got = fetch_data({ list: [1, 'two', null, undefined, true], nested: { deep: [[[]]] } });\n({ got, type: typeof got });")
	s := r.Suspended(r.Req("start", "program_id", id, "options", Options(nil, cap1, nil)), "fetch_data")
	r.OK(r.Req("resume", "snapshot_id", s.SnapshotID(), "policy_id", s.PolicyID(), "auth", Auth(s.SnapshotID()),
		"payload", ValuePayload(Obj{{"Object", Obj{{"k", Obj{{"Array", []any{"Hole", Num(2)}}}}}}})))
	r.Note("Math.random is seeded per execution and Date is the clock read at start; both are fixed here by %s. The time zone is UTC.", EntropyEnv)
	id, _ = compile(r, "[Math.random(), Math.random(), Date.now(), new Date().toISOString(), new Date(2020, 0, 1).getTimezoneOffset()]")
	r.OK(r.Req("start", "program_id", id, "options", Options(nil, nil, nil)))
	r.Note("Two starts of the same program give the same figures under fixed entropy.")
	r.OK(r.Req("start", "program_id", id, "options", Options(nil, nil, nil)))
	r.Exit(0)
}

const chainSource = `async function main() {
  const trip = await fetch_data({ what: "trip", id: 7 });
  let weather;
  try {
    weather = await fetch_data({ what: "weather", city: trip.city });
  } catch (e) {
    weather = { failed: [e.name, e.message, e.code, e.details, e instanceof Error] };
  }
  const hotels = await Promise.all(trip.hotels.map((h) => fetch_data({ what: "hotel", id: h })));
  return { trip, weather, hotels };
}
main();`

func suspendResume(r *Rec) {
	r.Spawn()
	id, _ := compile(r, chainSource)
	r.Note("Start suspends on the first capability call: snapshot id and policy id, snapshot bytes in step.snapshot_base64.")
	s1 := r.Suspended(r.Req("start", "program_id", id, "options", Options(nil, cap1, nil)), "fetch_data")
	resume := func(s hosttest.Response, payload Obj) []any {
		return []any{"snapshot_id", s.SnapshotID(), "policy_id", s.PolicyID(), "auth", Auth(s.SnapshotID()), "payload", payload}
	}
	trip := ValuePayload(Obj{{"Object", Obj{{"city", Str("Lisbon")}, {"hotels", Obj{{"Array", []any{Num(1), Num(2)}}}}}}})
	r.Note("Cached form: snapshot_id + policy_id + auth. The answer becomes the call's return value.")
	s2 := r.Suspended(r.Req("resume", resume(s1, trip)...), "fetch_data")
	r.Note("An error payload throws a guest Error carrying name, message, code and details; the guest catches it.")
	hostErr := Obj{{"type", "error"}, {"error", Obj{{"name", "NotFound"}, {"message", "no weather for Lisbon"}, {"code", "E404"}, {"details", Obj{{"Object", Obj{{"retry", Obj{{"Bool", false}}}}}}}}}}
	s3 := r.Suspended(r.Req("resume", resume(s2, hostErr)...), "fetch_data")
	r.Note("Promise.all over two calls suspends once per call, in call order.")
	s4 := r.Suspended(r.Req("resume", resume(s3, ValuePayload(Str("hotel one")))...), "fetch_data")
	r.OK(r.Req("resume", resume(s4, ValuePayload(Str("hotel two")))...))
	r.Note("Resuming an already consumed snapshot replays it: the same next step and snapshot id as the first time.")
	r.Suspended(r.Req("resume", resume(s2, hostErr)...), "fetch_data")
	r.Note("A different answer to the same snapshot gives a different branch; the other snapshots are undisturbed.")
	r.Suspended(r.Req("resume", resume(s2, ValuePayload(Obj{{"Object", Obj{{"sunny", Obj{{"Bool", true}}}}}}))...), "fetch_data")
	r.Note("An error payload without name and message: Error with an empty message.")
	r.Suspended(r.Req("resume", resume(s2, Obj{{"type", "error"}, {"error", Obj{}}})...), "fetch_data")
	r.Note("Cancelled ends the execution; the guest cannot catch it.")
	r.Fail(r.Req("resume", resume(s2, Obj{{"type", "cancelled"}})...), "Limit: execution cancelled")
	r.Note("The cancelled snapshot can still be resumed.")
	r.Suspended(r.Req("resume", resume(s2, hostErr)...), "fetch_data")

	r.Note("Equal policies give equal policy ids: capabilities are sorted and de-duplicated, limits defaulted.")
	id2, _ := compile(r, "fetch_data(1) + other(2)")
	a := r.Suspended(r.Req("start", "program_id", id2, "options", Options(nil, []string{"other", "fetch_data", "other"}, Obj{{"instruction_budget", 1000000}})), "fetch_data")
	b := r.Suspended(r.Req("start", "program_id", id2, "options", Options(nil, []string{"fetch_data", "other"}, nil)), "fetch_data")
	if a.PolicyID() != b.PolicyID() {
		r.fatalf("equal policies gave policy ids %s and %s", a.PolicyID(), b.PolicyID())
	}
	r.Suspended(r.Req("resume", resume(a, ValuePayload(Num(1)))...), "other")
	r.Exit(0)
}

func coldResume(r *Rec) {
	r.Spawn()
	id, _ := compile(r, "let n = 0;\nfor (let i = 0; i < 100; i++) n += i;\nconst a = fetch_data(1);\nconst b = fetch_data(a + 1);\n[n, a, b, Math.random()];")
	s1 := r.Suspended(r.Req("start", "program_id", id, "options", Options(nil, cap1, nil)), "fetch_data")
	s2 := r.Suspended(r.Req("resume", "snapshot_id", s1.SnapshotID(), "policy_id", s1.PolicyID(), "auth", Auth(s1.SnapshotID()), "payload", ValuePayload(Num(10))), "fetch_data")
	r.Exit(0)

	r.Spawn()
	r.Note("A brand-new process knows no ids: send the snapshot bytes and the whole policy.")
	r.OK(r.Req("resume", "snapshot_base64", B64(s2.Payload), "policy", Policy(s2.SnapshotID(), cap1, Obj{}), "payload", ValuePayload(Num(20))))
	r.Note("The first snapshot, with snapshot_id also at top level: the replay reaches the very snapshot the first process produced.")
	again := r.Suspended(r.Req("resume", "snapshot_id", s1.SnapshotID(), "snapshot_base64", B64(s1.Payload), "policy", Policy(s1.SnapshotID(), cap1, Obj{}), "payload", ValuePayload(Num(10))), "fetch_data")
	if again.SnapshotID() != s2.SnapshotID() {
		r.fatalf("replay gave snapshot %s, first run %s", again.SnapshotID(), s2.SnapshotID())
	}
	r.Note("Raw bytes a host sent are cached: this process can now resume them by id.")
	r.OK(r.Req("resume", "snapshot_id", s1.SnapshotID(), "policy_id", s1.PolicyID(), "auth", Auth(s1.SnapshotID()), "payload", ValuePayload(Num(3))))
	r.Exit(0)

	r.Spawn()
	r.Note("policy and a matching policy_id together; explicit limits equal to the defaults give the same policy id.")
	limits := Obj{{"instruction_budget", 1000000}, {"heap_limit_bytes", 8388608}, {"allocation_budget", 250000}, {"call_depth_limit", 256}, {"max_outstanding_host_calls", 128}}
	r.OK(r.Req("resume", "snapshot_base64", B64(s2.Payload), "policy_id", s2.PolicyID(), "policy", Policy(s2.SnapshotID(), cap1, limits), "payload", ValuePayload(Num(20))))
	r.Note("Null limit fields mean the defaults.")
	r.OK(r.Req("resume", "snapshot_base64", B64(s2.Payload), "policy", Policy(s2.SnapshotID(), cap1, Obj{{"instruction_budget", nil}}), "payload", ValuePayload(Num(21))))
	r.Note("The policy's limits govern the resumed execution, not the start's: a budget the journal already exceeds fails at once.")
	r.Fail(r.Req("resume", "snapshot_base64", B64(s2.Payload), "policy", Policy(s2.SnapshotID(), cap1, Obj{{"instruction_budget", 10}}), "payload", ValuePayload(Num(20))), "Limit: instruction budget exhausted")
	r.Exit(0)
}

func profileSession(r *Rec) {
	r.Spawn()
	id, _ := compile(r, "let n = 0;\nfor (let i = 0; i < 10; i++) n += i;\nfetch_data(n) + n;")
	r.Note("profile:true on a suspended start.")
	s := r.Suspended(r.Req("start", "program_id", id, "profile", true, "options", Options(nil, cap1, nil)), "fetch_data")
	r.Note("profile:true on a completing resume.")
	r.OK(r.Req("resume", "snapshot_id", s.SnapshotID(), "policy_id", s.PolicyID(), "auth", Auth(s.SnapshotID()), "profile", true, "payload", ValuePayload(Num(1))))
	r.Note("profile:true on a start that completes at once.")
	id2, _ := compile(r, "1 + 1")
	r.OK(r.Req("start", "program_id", id2, "profile", true, "options", Obj{}))
	r.Note("profile:false, or a failure, has no profile.")
	r.OK(r.Req("start", "program_id", id2, "profile", false, "options", Obj{}))
	id3, _ := compile(r, "while (true) {}")
	r.Fail(r.Req("start", "program_id", id3, "profile", true, "options", Obj{}), "Limit: instruction budget exhausted")
	r.Exit(0)
}

func hostile(r *Rec) {
	r.Spawn()
	start := func(src string, limits Obj) Obj {
		id, _ := compile(r, src)
		return r.Req("start", "program_id", id, "options", Options(nil, cap1, limits))
	}
	r.Note("An endless loop runs out of instructions; guest try/catch cannot stop a limit.")
	r.Fail(start("while (true) {}", nil), "Limit: instruction budget exhausted")
	r.Fail(start("try { for (;;) {} } catch (e) {} 'escaped'", nil), "Limit: instruction budget exhausted")
	r.Note("Every instruction the interpreter executes is metered: a zero budget allows none, 1 + 1 takes two.")
	r.Fail(start("1 + 1", Obj{{"instruction_budget", 0}}), "Limit: instruction budget exhausted")
	r.OK(start("1 + 1", Obj{{"instruction_budget", 2}}))
	r.Fail(start("for (let i = 0; i < 1; i++) {}", Obj{{"instruction_budget", 2}}), "Limit: instruction budget exhausted")
	r.Note("Unbounded recursion hits the call depth limit.")
	r.Fail(start("function f(n) { return f(n + 1) + 1; }\nf(0);", nil), "Limit: call depth limit exceeded")
	r.Fail(start("function f(n) { return n && f(n - 1); }\nf(20);", Obj{{"call_depth_limit", 5}}), "Limit: call depth limit exceeded")
	r.Note("Allocation and heap limits.")
	r.Fail(start("const xs = []; for (let i = 0; i < 1000; i++) xs.push({ i });", Obj{{"allocation_budget", 100}}), "Limit: allocation budget exhausted")
	r.Fail(start("let s = 'x'; for (let i = 0; i < 40; i++) s = s + s; s.length", Obj{{"heap_limit_bytes", 1 << 20}}), "Limit: heap limit exceeded")
	r.Note("Calls made in async code count against max_outstanding_host_calls.")
	r.Fail(start("(async () => fetch_data(1))()", Obj{{"max_outstanding_host_calls", 0}}), "Limit: outstanding host-call limit exhausted")
	r.Note("Deeply nested source is refused before parsing.")
	r.Fail(r.Req("compile", "source", strings.Repeat("[", 1001)+strings.Repeat("]", 1001)), "Parse: source nesting exceeds 1000 levels")
	r.Note("A result nested deeper than 128 levels fails; a capability argument that deep throws a catchable TypeError.")
	r.Fail(start("let v = 1; for (let i = 0; i < 200; i++) v = [v];\nv;", nil), "structured host boundary nesting limit exceeded")
	r.OK(start("let v = 1; for (let i = 0; i < 200; i++) v = [v];\ntry { fetch_data(v) } catch (e) { e.name + ': ' + e.message }", nil))
	r.Note("No dynamic code: a direct call of eval is refused when the program compiles (eval is absent), every route to the Function constructor throws.")
	r.Fail(r.Req("compile", "source", "eval('1 + 1')"), "Validation: forbidden ambient global `eval`")
	r.Fail(r.Req("compile", "source", "const run = async (code) => eval(code);\nrun('1')"), "Validation: forbidden ambient global `eval`: guest code cannot evaluate source text (1:29)")
	r.Fail(start("Function('return 1')()", nil), "Runtime: TypeError")
	r.Fail(start("(function () {}).constructor('return 1')()", nil), "Runtime: TypeError")
	r.Fail(start("(async function () {}).constructor('return 1')()", nil), "Runtime: TypeError")
	r.Fail(start("(function* () {}).constructor('yield 1')().next()", nil), "Runtime: TypeError")
	r.Note("Nothing is inserted into guest code, so no name is reserved, and nothing a guest names reaches the meter.")
	r.Fail(start("const __mustard_m = () => {}; globalThis.__mustard_m = 1; let n = 0; for (;;) n++", Obj{{"instruction_budget", 1000}}), "Limit: instruction budget exhausted")
	r.Note("Values that cannot cross the boundary fail the request as results, with a Runtime error as in the reference.")
	for _, src := range []string{
		"(() => 1)", "Symbol('s')", "10n", "new Map([[1, 2]])", "new Set()", "new Date(0)", "/re/g",
		"new Error('e')", "new (class Point {})()", "new Number(1)", "new Proxy({}, {})",
		"({ get x() { return 1; } })", "const a = []; a.push(a); a;", "const s = {}; [s, s];",
		"({ [Symbol.iterator]: 1 })",
	} {
		r.Fail(start(src, nil), "Runtime: result ")
	}
	r.Note("As capability arguments they throw a TypeError the guest can catch.")
	r.OK(start("const out = [];\nfor (const v of [() => 1, Symbol('s'), 10n, new Map(), new Date(0), (() => { const s = {}; return [s, s]; })()]) {\n  try { fetch_data(v); out.push('passed'); } catch (e) { out.push(e.name + ': ' + e.message); }\n}\nout;", nil))
	r.Note("An ungranted capability is an undefined name.")
	r.Fail(start("other_tool(1)", nil), "Runtime: ReferenceError: other_tool is not defined")
	r.Note("Guest exceptions carry a traceback; rejections settle the result.")
	r.Fail(start("function inner() { throw new RangeError('bad ' + 1); }\nfunction outer() { inner(); }\nouter();", nil), "Runtime: RangeError: bad 1")
	r.Fail(start("async function main() { await null; throw new TypeError('late'); }\nmain();", nil), "Runtime: TypeError: late")
	r.Fail(start("throw 'a string';", nil), "Runtime: ")
	r.Note("Budgets are cumulative over start and every resume.")
	id, _ := compile(r, "let n = 0; for (let i = 0; i < 20000; i++) n += i;\nfetch_data(n);\nfor (let i = 0; i < 20000; i++) n += i;\nn;")
	s := r.Suspended(r.Req("start", "program_id", id, "options", Options(nil, cap1, Obj{{"instruction_budget", 500000}})), "fetch_data")
	r.Fail(r.Req("resume", "snapshot_id", s.SnapshotID(), "policy_id", s.PolicyID(), "auth", Auth(s.SnapshotID()), "payload", ValuePayload(Num(0))), "Limit: instruction budget exhausted")
	r.Note("A budget that runs out while the result is copied out of the guest is that limit too: building this object takes the whole budget, and listing its keys for the copy is metered.")
	build := "const v = {}; for (let i = 0; i < 20000; i++) v['k' + i] = i;\n"
	r.OK(start(build+"0;", Obj{{"instruction_budget", 306000}}))
	r.Fail(start(build+"v;", Obj{{"instruction_budget", 306000}}), "Limit: instruction budget exhausted")
	r.Exit(0)
}

func errorsEnvelope(r *Rec) {
	r.Spawn()
	r.Note("Wrong or missing protocol_version: ok:false, the response still says version 2.")
	r.Fail(`{"id":1,"method":"compile","source":"1"}`, "unsupported sidecar protocol version missing; expected 2")
	r.Fail(`{"protocol_version":1,"id":2,"method":"compile","source":"1"}`, "unsupported sidecar protocol version 1; expected 2")
	r.Fail(`{"protocol_version":3,"id":3,"method":"compile","source":"1"}`, "unsupported sidecar protocol version 3; expected 2")
	r.Fail(`{"protocol_version":"2","id":4,"method":"compile","source":"1"}`, "unsupported sidecar protocol version \"2\"; expected 2")
	r.Fail(`{"protocol_version":2.0,"id":5,"method":"compile","source":"1"}`, "unsupported sidecar protocol version 2.0; expected 2")
	r.Fail(`{"protocol_version":null,"id":6,"method":"compile","source":"1"}`, "unsupported sidecar protocol version")
	r.id = 6 // the hand-written requests above used ids 1 to 6
	r.Note("Unknown methods, including near misses.")
	r.Fail(r.Req("execute"), "unknown method")
	r.Fail(r.Req("Compile", "source", "1"), "unknown method")
	r.Fail(r.Req(""), "unknown method")
	r.Note("compile: missing and mistyped source, Parse errors.")
	r.Fail(r.Req("compile"), "compile requires source")
	r.Fail(r.Req("compile", "source", 42), "source must be a string")
	r.Fail(r.Req("compile", "source", "let x = ;"), "Parse: ")
	r.Fail(r.Req("compile", "source", "function f( {"), "Parse: ")
	r.Fail(r.Req("compile", "source", "let a = 1; let a = 2;"), "Parse: ")
	r.Note("Guest code is strict-mode code: what strict mode forbids fails at compile.")
	r.Fail(r.Req("compile", "source", "with ({ a: 1 }) { a; }"), "Parse: Strict mode code may not include a with statement (1:1)")
	r.Fail(r.Req("compile", "source", "const n = 010;"), "Parse: Octal literals are not allowed in strict mode")
	r.Fail(r.Req("compile", "source", "const s = 'a\\01';"), "Parse: Octal escape sequences are not allowed in strict mode.")
	r.Fail(r.Req("compile", "source", "let x = 1;\ndelete x;"), "Parse: Delete of an unqualified identifier in strict mode (2:8)")
	r.Fail(r.Req("compile", "source", "function f(a, a) { return a; }"), "Parse: Duplicate parameter name not allowed in this context")
	r.Fail(r.Req("compile", "source", "eval = 1;"), "Parse: Assignment to eval or arguments is not allowed in strict mode")
	id, _ := compile(r, "x")
	r.Note("start: mistyped options and fields.")
	r.Fail(r.Req("start", "program_id", id), "start requires options")
	r.Fail(r.Req("start", "program_id", id, "options", []any{}), "options must be an object")
	r.Fail(r.Req("start", "program_id", 7, "options", Obj{}), "program_id must be a string")
	r.Fail(r.Req("start", "program_id", id, "profile", "yes", "options", Obj{}), "profile must be a boolean")
	r.Fail(r.Req("start", "program_id", id, "options", Obj{{"capabilities", "fetch_data"}}), "options.capabilities must be an array of strings")
	r.Fail(r.Req("start", "program_id", id, "options", Obj{{"capabilities", []any{1}}}), "options.capabilities must be an array of strings")
	r.Fail(r.Req("start", "program_id", id, "options", Obj{{"limits", []any{}}}), "limits")
	r.Fail(r.Req("start", "program_id", id, "options", Obj{{"limits", Obj{{"instruction_budget", -1}}}}), "instruction_budget")
	r.Fail(r.Req("start", "program_id", id, "options", Obj{{"limits", Obj{{"heap_limit_bytes", "8MiB"}}}}), "heap_limit_bytes")
	r.Fail(r.Req("start", "program_id", id, "options", Obj{{"limits", Obj{{"call_depth_limit", 1.5}}}}), "call_depth_limit")
	r.Fail(r.Req("start", "program_id", id, "options", Obj{{"inputs", []any{}}}), "inputs")
	r.Fail(r.Req("start", "program_id", id, "options", Obj{{"inputs", Obj{{"x", 1}}}}), "invalid input")
	r.Fail(r.Req("start", "program_id", id, "options", Obj{{"inputs", Obj{{"x", "Hole"}}}}), "invalid input")
	r.Fail(r.Req("start", "program_id", id, "options", Obj{{"inputs", Obj{{"x", Obj{{"Number", Obj{{"Finite", "1"}}}}}}}}), "invalid input")
	r.Note("The session went on after every failure.")
	r.Completed(r.Req("start", "program_id", id, "options", Options(Obj{{"x", Str("still here")}}, nil, nil)), `{"String":"still here"}`)
	r.Exit(0)
}

func errorsStart(r *Rec) {
	r.Spawn()
	id, prog := compile(r, "'ok'")
	_, other := compile(r, "'other'")
	r.Note("Program resolution.")
	r.Fail(r.Req("start", "options", Obj{}), "start requires program bytes or program_id")
	unknown := strings.Repeat("ab", 32)
	r.Fail(r.Req("start", "program_id", unknown, "options", Obj{}), "unknown program_id `"+unknown+"`")
	r.Fail(r.Req("start", "program_id", id, "program_base64", other, "options", Obj{}), "program_id did not match program bytes")
	r.Fail(r.Req("start", "program_base64", "not base64!", "options", Obj{}), "program_base64 is not valid base64")
	r.Fail(r.Req("start", "program_base64", 12, "options", Obj{}), "program_base64 must be a string")
	r.Note("Bytes that are not a program of this sidecar version fail closed.")
	r.Fail(r.Req("start", "program_base64", B64([]byte("const x = 1; x")), "options", Obj{}), "Serialization: ")
	progBytes := mustB64(prog)
	bumped := append([]byte(nil), progBytes...)
	bumped[17] = 0x04 // the artifact's version field, after the magic
	r.Fail(r.Req("start", "program_base64", B64(bumped), "options", Obj{}), "Serialization: unsupported program format version 4")
	r.Fail(r.Req("start", "program_base64", B64(progBytes[:len(progBytes)-1]), "options", Obj{}), "Serialization: ")
	r.Fail(r.Req("start", "program_base64", B64(append(append([]byte(nil), progBytes...), 0)), "options", Obj{}), "Serialization: ")
	r.Note("Program bytes that decode but hold invalid source fail as at compile.")
	r.Fail(r.Req("start", "program_base64", B64(artifact(3, "let = ;")), "options", Obj{}), "Parse: ")
	r.Note("Program format versions 1 and 2, which older sidecars wrote (metered by calls inserted into the text), never start: they only resume the snapshots that journal them. The same source compiled today is strict.")
	sloppy := "tally = 1;\n[tally, typeof function () { return this; }()];"
	r.Fail(r.Req("start", "program_base64", B64(artifact(1, sloppy)), "options", Obj{}), "Serialization: program bytes of format version 1 or 2 run only to resume their snapshots")
	r.Fail(r.Req("start", "program_base64", B64(artifact(2, "let = ;")), "options", Obj{}), "Serialization: program bytes of format version 1 or 2 run only to resume their snapshots")
	sid, _ := compile(r, sloppy)
	r.Fail(r.Req("start", "program_id", sid, "options", Obj{}), "Runtime: ReferenceError: tally is not defined")
	r.Note("The valid bytes still work, and an id obtained in this process too.")
	r.Completed(r.Req("start", "program_base64", prog, "options", Obj{}), `{"String":"ok"}`)
	r.Completed(r.Req("start", "program_id", id, "options", Obj{}), `{"String":"ok"}`)
	r.Exit(0)
}

func errorsResume(r *Rec) {
	r.Spawn()
	id, _ := compile(r, "const a = fetch_data(1);\nconst b = fetch_data(a + 1);\na + b;")
	s := r.Suspended(r.Req("start", "program_id", id, "options", Options(nil, cap1, nil)), "fetch_data")
	sid, pid, snap := s.SnapshotID(), s.PolicyID(), B64(s.Payload)
	pay := ValuePayload(Num(5))
	unknown := strings.Repeat("cd", 32)
	// without and set derive a raw-form policy with one field dropped or changed.
	without := func(key string) Obj {
		var o Obj
		for _, kv := range Policy(sid, cap1, Obj{}) {
			if kv.Key != key {
				o = append(o, kv)
			}
		}
		return o
	}
	set := func(o Obj, key string, v any) Obj {
		out := append(Obj(nil), o...)
		for i := range out {
			if out[i].Key == key {
				out[i].Value = v
			}
		}
		return out
	}

	r.Note("The payload.")
	r.Fail(r.Req("resume", "snapshot_id", sid, "policy_id", pid, "auth", Auth(sid)), "resume requires payload")
	r.Fail(r.Req("resume", "snapshot_id", sid, "policy_id", pid, "auth", Auth(sid), "payload", Obj{{"type", "values"}}), "payload.type must be")
	r.Fail(r.Req("resume", "snapshot_id", sid, "policy_id", pid, "auth", Auth(sid), "payload", Obj{{"type", "value"}}), "payload.value is required")
	r.Fail(r.Req("resume", "snapshot_id", sid, "policy_id", pid, "auth", Auth(sid), "payload", ValuePayload(Obj{{"Number", "Huge"}})), "invalid payload.value")
	r.Fail(r.Req("resume", "snapshot_id", sid, "policy_id", pid, "auth", Auth(sid), "payload", Obj{{"type", "error"}, {"error", "boom"}}), "payload.error must be an object")
	r.Fail(r.Req("resume", "snapshot_id", sid, "policy_id", pid, "auth", Auth(sid), "payload", Obj{{"type", "error"}, {"error", Obj{{"name", 1}}}}), "payload.error.name must be a string")

	r.Note("1. Snapshot resolution.")
	r.Fail(r.Req("resume", "policy_id", pid, "auth", Auth(sid), "payload", pay), "resume requires snapshot bytes or snapshot_id")
	r.Fail(r.Req("resume", "snapshot_id", unknown, "policy_id", pid, "auth", Auth(unknown), "payload", pay), "unknown snapshot_id `"+unknown+"`")
	r.Fail(r.Req("resume", "snapshot_id", unknown, "snapshot_base64", snap, "policy", Policy(sid, cap1, Obj{}), "payload", pay), "snapshot_id did not match snapshot bytes")
	r.Note("policy.snapshot_id is the id the token signs: one that differs from the bytes' id rejects them, before any policy check.")
	r.Fail(r.Req("resume", "snapshot_base64", snap, "policy", Policy(unknown, cap1, Obj{}), "payload", pay), "raw snapshot restore rejected a tampered or unauthenticated snapshot")
	r.Fail(r.Req("resume", "snapshot_base64", snap, "policy", set(without("limits"), "snapshot_id", unknown), "payload", pay), "raw snapshot restore rejected a tampered or unauthenticated snapshot")
	r.Fail(r.Req("resume", "snapshot_base64", "%%%", "policy", Policy(sid, cap1, Obj{}), "payload", pay), "snapshot_base64 is not valid base64")
	r.Fail(r.Req("resume", "snapshot_id", 5, "policy_id", pid, "auth", Auth(sid), "payload", pay), "snapshot_id must be a string")

	r.Note("2. Policy resolution.")
	r.Fail(r.Req("resume", "snapshot_id", sid, "auth", Auth(sid), "payload", pay), "resume requires policy or policy_id")
	r.Fail(r.Req("resume", "snapshot_base64", snap, "policy", without("limits"), "payload", pay), "raw snapshot restore requires explicit limits")
	r.Fail(r.Req("resume", "snapshot_base64", snap, "policy_id", unknown, "policy", Policy(sid, cap1, Obj{}), "payload", pay), "policy_id did not match policy")
	r.Fail(r.Req("resume", "snapshot_id", sid, "policy_id", unknown, "auth", Auth(sid), "payload", pay), "unknown policy_id `"+unknown+"`")
	r.Fail(r.Req("resume", "snapshot_id", sid, "policy_id", pid, "payload", pay), "resume with policy_id requires auth metadata")
	r.Fail(r.Req("resume", "snapshot_id", sid, "policy_id", pid, "auth", "token", "payload", pay), "auth must be an object")
	r.Fail(r.Req("resume", "snapshot_base64", snap, "policy", Obj{}, "payload", pay), "raw snapshot restore requires explicit limits")
	r.Fail(r.Req("resume", "snapshot_base64", snap, "policy", set(Policy(sid, cap1, Obj{}), "limits", nil), "payload", pay), "raw snapshot restore requires explicit limits")

	r.Note("3. Authentication, raw form: each field is required.")
	r.Fail(r.Req("resume", "snapshot_base64", snap, "policy", without("snapshot_id"), "payload", pay), "raw snapshot restore requires snapshot_id")
	r.Fail(r.Req("resume", "snapshot_base64", snap, "policy", without("snapshot_key_base64"), "payload", pay), "raw snapshot restore requires snapshot_key_base64")
	r.Fail(r.Req("resume", "snapshot_base64", snap, "policy", without("snapshot_token"), "payload", pay), "raw snapshot restore requires snapshot_token")
	r.Fail(r.Req("resume", "snapshot_base64", snap, "policy", without("snapshot_key_digest"), "payload", pay), "raw snapshot restore requires snapshot_key_digest")
	r.Note("A key whose digest differs, a token for another snapshot, a token under another key, a token in upper case.")
	r.Fail(r.Req("resume", "snapshot_base64", snap, "policy", set(Policy(sid, cap1, Obj{}), "snapshot_key_digest", sha256Hex([]byte("other key"))), "payload", pay), "raw snapshot restore rejected a mismatched snapshot key digest")
	r.Fail(r.Req("resume", "snapshot_base64", snap, "policy", set(Policy(sid, cap1, Obj{}), "snapshot_token", Token(Key, unknown)), "payload", pay), "raw snapshot restore rejected a tampered or unauthenticated snapshot")
	otherKey := []byte("another host key")
	forged := set(set(set(Policy(sid, cap1, Obj{}), "snapshot_key_base64", B64(otherKey)), "snapshot_key_digest", sha256Hex(Key)), "snapshot_token", Token(otherKey, sid))
	r.Fail(r.Req("resume", "snapshot_base64", snap, "policy", forged, "payload", pay), "raw snapshot restore rejected a mismatched snapshot key digest")
	r.Fail(r.Req("resume", "snapshot_base64", snap, "policy", set(Policy(sid, cap1, Obj{}), "snapshot_token", strings.ToUpper(Token(Key, sid))), "payload", pay), "raw snapshot restore rejected a tampered or unauthenticated snapshot")
	r.Fail(r.Req("resume", "snapshot_base64", snap, "policy", set(Policy(sid, cap1, Obj{}), "snapshot_key_base64", "***"), "payload", pay), "snapshot_key_base64 is not valid base64")
	r.Note("Authentication, cached form: the same checks on the auth object.")
	r.Fail(r.Req("resume", "snapshot_id", sid, "policy_id", pid, "auth", Obj{{"snapshot_key_base64", B64(Key)}, {"snapshot_key_digest", sha256Hex(Key)}}, "payload", pay), "raw snapshot restore requires snapshot_token")
	r.Fail(r.Req("resume", "snapshot_id", sid, "policy_id", pid, "auth", set(Auth(sid), "snapshot_token", Token(Key, unknown)), "payload", pay), "raw snapshot restore rejected a tampered or unauthenticated snapshot")
	r.Note("Tampered bytes: they no longer hash to the policy's snapshot_id, and the token for the original id does not authenticate their id.")
	tampered := tamperMeter(mustB64(snap))
	r.Fail(r.Req("resume", "snapshot_base64", B64(tampered), "policy", Policy(sid, cap1, Obj{}), "payload", pay), "raw snapshot restore rejected a tampered or unauthenticated snapshot")
	r.Fail(r.Req("resume", "snapshot_base64", B64(tampered), "policy", set(Policy(sha256Hex(tampered), cap1, Obj{}), "snapshot_token", Token(Key, sid)), "payload", pay), "raw snapshot restore rejected a tampered or unauthenticated snapshot")

	r.Note("4. Policy reassertion: the pending capability must be granted.")
	r.Fail(r.Req("resume", "snapshot_base64", snap, "policy", Policy(sid, []string{"other"}, Obj{}), "payload", pay), "snapshot policy rejected unauthorized capability `fetch_data`")
	r.Fail(r.Req("resume", "snapshot_base64", snap, "policy", Policy(sid, nil, Obj{}), "payload", pay), "snapshot policy rejected unauthorized capability `fetch_data`")

	r.Note("5. Authenticated but malformed or foreign bytes fail closed while decoding.")
	for _, bad := range [][]byte{
		[]byte("not a snapshot"),
		tampered,
		mustB64(snap)[:len(mustB64(snap))/2],
		append(mustB64(snap), 0x00),
	} {
		bid := sha256Hex(bad)
		r.Fail(r.Req("resume", "snapshot_base64", B64(bad), "policy", Policy(bid, cap1, Obj{}), "payload", pay), "Serialization: ")
	}
	r.Note("After all that the snapshot still resumes.")
	r.Suspended(r.Req("resume", "snapshot_id", sid, "policy_id", pid, "auth", Auth(sid), "payload", pay), "fetch_data")
	r.Exit(0)
}

func binaryFrames(r *Rec) {
	r.Spawn()
	r.Note("compile: the program bytes come back as the response payload.")
	c := r.OK(r.Req("compile", "source", "const v = fetch_data(5);\nv + 1;"))
	prog := c.Payload
	r.Note("A compile request must not carry a payload.")
	r.Fail(r.Req("compile", "source", "1"), "compile requests must not include a binary payload", []byte("junk"))
	r.Note("Base64 fields belong to the JSONL transport.")
	r.Fail(r.Req("start", "program_base64", B64(prog), "options", Obj{}), "program_base64 is not used by the binary transport")
	r.Note("start with the program bytes as the payload; the snapshot comes back as the payload.")
	s := r.Suspended(r.Req("start", "options", Options(nil, cap1, nil)), "fetch_data", prog)
	r.Fail(r.Req("start", "program_id", strings.Repeat("0", 64), "options", Obj{}), "program_id did not match program bytes", prog)
	r.Note("Raw resume: the snapshot bytes as the payload with the full policy.")
	r.Completed(r.Req("resume", "policy", Policy(s.SnapshotID(), cap1, Obj{}), "payload", ValuePayload(Num(5))), `{"Number":{"Finite":6.0}}`, s.Payload)
	r.Fail(r.Req("resume", "snapshot_base64", B64(s.Payload), "policy", Policy(s.SnapshotID(), cap1, Obj{}), "payload", ValuePayload(Num(5))), "snapshot_base64 is not used by the binary transport")
	r.Note("Cached resume: no payload.")
	r.Completed(r.Req("resume", "snapshot_id", s.SnapshotID(), "policy_id", s.PolicyID(), "auth", Auth(s.SnapshotID()), "payload", ValuePayload(Num(1))), `{"Number":{"Finite":2.0}}`)
	r.Exit(0)
}

func fatalJSONL(r *Rec) {
	for _, c := range []struct{ note, text, stderr string }{
		{"A line that is not JSON.", "this is not json", "invalid request"},
		{"A JSON value that is not an object.", `[{"protocol_version":2,"id":9,"method":"compile"}]`, "invalid request"},
		{"A missing id.", `{"protocol_version":2,"method":"compile","source":"1"}`, "invalid request"},
		{"A negative id.", `{"protocol_version":2,"id":-1,"method":"compile","source":"1"}`, "invalid request"},
		{"A fractional id.", `{"protocol_version":2,"id":1.5,"method":"compile","source":"1"}`, "invalid request"},
		{"An id beyond u64.", `{"protocol_version":2,"id":18446744073709551616,"method":"compile","source":"1"}`, "invalid request"},
		{"A method that is not a string.", `{"protocol_version":2,"id":1,"method":null}`, "invalid request"},
		{"A truncated object.", `{"protocol_version":2,"id":1,"method":"compile"`, "invalid request"},
	} {
		r.Spawn()
		r.Note("Blank lines are skipped; the request before the bad line is answered.")
		r.Text("   ")
		r.OK(r.Req("compile", "source", "1"))
		r.Note("%s", c.note)
		r.Text(c.text)
		r.Exit(1, c.stderr)
	}
}

func fatalBinary(r *Rec) {
	frame := func(header string, payload string, claim ...uint32) string {
		hl, pl := uint32(len(header)), uint32(len(payload))
		if len(claim) == 2 {
			hl, pl = claim[0], claim[1]
		}
		var p [8]byte
		putU32(p[:4], int(hl))
		putU32(p[4:], int(pl))
		return string(p[:]) + header + payload
	}
	ok := `{"protocol_version":2,"id":1,"method":"compile","source":"1"}`
	for _, c := range []struct{ note, text, stderr string }{
		{"A frame prefix cut short.", "\x05\x00\x00", "truncated"},
		{"A header cut short.", frame(ok, "", uint32(len(ok)+10), 0), "truncated"},
		{"A frame larger than 1 MiB, refused before reading its body.", frame("{}", "", 1<<20, 1), "request frame exceeds maximum size"},
		{"A header that is not JSON.", frame("not json", ""), "invalid request header"},
		{"A header that is not an object.", frame("[1,2]", ""), "invalid request header"},
		{"A header without an id.", frame(`{"protocol_version":2,"method":"compile"}`, ""), "invalid request header"},
		{"A header whose method is not a string.", frame(`{"protocol_version":2,"id":1,"method":7}`, ""), "invalid request header"},
	} {
		r.Spawn()
		r.OK(r.Req("compile", "source", "1"))
		r.Note("%s", c.note)
		r.Text(c.text)
		r.Exit(1, c.stderr)
	}
}

func mustB64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// artifact encodes source as a program artifact (CBOR [magic, version,
// source]) without validating it, as a forging host could.
func artifact(version byte, source string) []byte {
	text := func(b []byte, s string) []byte {
		n := len(s)
		switch {
		case n < 24:
			b = append(b, 0x60|byte(n))
		case n < 256:
			b = append(b, 0x78, byte(n))
		default:
			b = append(b, 0x79, byte(n>>8), byte(n))
		}
		return append(b, s...)
	}
	b := text([]byte{0x83}, "mustard-program")
	return text(append(b, version), source)
}

// tamperMeter returns a first snapshot whose pending call claims one
// allocation more or less: well-formed bytes that no run of the program
// produces, so replaying them diverges.
func tamperMeter(b []byte) []byte {
	s, err := snapshot.Decode(b)
	if err != nil || len(s.Suspensions) > 1 {
		panic("tamperMeter needs a first snapshot")
	}
	s.Last().Meter.Allocations ^= 1
	return snapshot.Encode(s)
}

func snapshotTransfer(r *Rec) {
	r.Spawn("--jsonl")
	id, _ := compile(r, "let t = 0;\nfor (let i = 0; i < 4; i++) t += fetch_data(i);\nt;")
	r.Note("A start comes in full whatever the delivery.")
	s0 := r.Suspended(r.Req("start", "program_id", id, "options", Options(nil, cap1, nil), "snapshot_delivery", "delta"), "fetch_data")
	sid0, pid, snap0 := s0.SnapshotID(), s0.PolicyID(), s0.Payload
	r.Note("delta: only the bytes appended to the resumed snapshot, and the id they extend (snapshot_base_id). Base + delta hash to snapshot_id.")
	s1 := r.OK(r.Req("resume", "snapshot_id", sid0, "policy_id", pid, "auth", Auth(sid0), "payload", ValuePayload(Num(10)), "snapshot_delivery", "delta"))
	snap1 := append(append([]byte(nil), snap0...), s1.Payload...)
	if s1.Result()["snapshot_base_id"] != sid0 || sha256Hex(snap1) != s1.SnapshotID() {
		r.fatalf("delta does not extend the resumed snapshot: %s", s1.Raw)
	}
	sid1 := s1.SnapshotID()
	r.Note("none: no bytes; the session keeps them.")
	s2 := r.OK(r.Req("resume", "snapshot_id", sid1, "policy_id", pid, "auth", Auth(sid1), "payload", ValuePayload(Num(20)), "snapshot_delivery", "none"))
	sid2 := s2.SnapshotID()
	r.Note("Fetch them: whole (offset 0 and max_bytes 983040 by default), or in chunks.")
	whole := r.OK(r.Req("snapshot", "snapshot_id", sid2)).Payload
	if sha256Hex(whole) != sid2 {
		r.fatalf("fetched bytes do not hash to the id")
	}
	r.OK(r.Req("snapshot", "snapshot_id", sid2, "offset", 0, "max_bytes", 100))
	r.OK(r.Req("snapshot", "snapshot_id", sid2, "offset", 100, "max_bytes", 100))
	r.Note("An offset at the end gives no bytes; past the end fails.")
	r.OK(r.Req("snapshot", "snapshot_id", sid2, "offset", len(whole)))
	r.Fail(r.Req("snapshot", "snapshot_id", sid2, "offset", len(whole)+1), "is past the end of snapshot")
	r.Fail(r.Req("snapshot", "snapshot_id", strings.Repeat("ab", 32)), "unknown snapshot_id")
	r.Fail(r.Req("resume", "snapshot_id", sid2, "policy_id", pid, "auth", Auth(sid2), "payload", ValuePayload(Num(30)), "snapshot_delivery", "partial"), "unknown snapshot_delivery `partial`")
	r.Exit(0)

	r.Spawn("--jsonl")
	r.Note("A fresh process: upload the snapshot in chunks; each offset is the length staged so far.")
	r.OK(r.Req("stage", "stage_id", "run-7", "offset", 0, "bytes_base64", B64(whole[:120])))
	r.Fail(r.Req("stage", "stage_id", "run-7", "offset", 100, "bytes_base64", B64(whole[100:])), "stage offset 100 does not match staged length 120")
	r.OK(r.Req("stage", "stage_id", "run-7", "offset", 120, "bytes_base64", B64(whole[120:])))
	r.Fail(r.Req("stage", "stage_id", "run 7", "offset", 0), "stage_id must be 1 to 64 characters of [A-Za-z0-9_-]")
	r.Fail(r.Req("stage", "stage_id", "other", "offset", 5, "bytes_base64", B64(whole[:5])), "unknown stage_id `other`")
	r.Note("Resume naming the stage instead of sending bytes; with delta, the new snapshot extends the staged bytes.")
	s3 := r.OK(r.Req("resume", "stage_id", "run-7", "policy", Policy(sid2, cap1, Obj{}), "payload", ValuePayload(Num(30)), "snapshot_delivery", "delta"))
	if s3.Result()["snapshot_base_id"] != sid2 || sha256Hex(append(append([]byte(nil), whole...), s3.Payload...)) != s3.SnapshotID() {
		r.fatalf("staged resume delta: %s", s3.Raw)
	}
	r.Note("That resume dropped the stage.")
	r.Fail(r.Req("resume", "stage_id", "run-7", "policy", Policy(sid2, cap1, Obj{}), "payload", ValuePayload(Num(30))), "unknown stage_id `run-7`")
	r.Note("A restart at offset 0 replaces what was staged; a stage holding other bytes is checked like sent bytes.")
	r.OK(r.Req("stage", "stage_id", "run-8", "offset", 0, "bytes_base64", B64([]byte("not a snapshot"))))
	r.OK(r.Req("stage", "stage_id", "run-8", "offset", 0, "bytes_base64", B64(snap1)))
	r.Fail(r.Req("resume", "stage_id", "run-8", "policy", Policy(sid2, cap1, Obj{}), "payload", ValuePayload(Num(20))), "raw snapshot restore rejected a tampered or unauthenticated snapshot")
	r.Note("A failed resume drops its stage too: stage the bytes again.")
	r.OK(r.Req("stage", "stage_id", "run-8", "offset", 0, "bytes_base64", B64(snap1)))
	r.Suspended(r.Req("resume", "stage_id", "run-8", "policy", Policy(sid1, cap1, Obj{}), "payload", ValuePayload(Num(20))), "fetch_data")
	r.Completed(r.Req("resume", "snapshot_id", s3.SnapshotID(), "policy_id", pid, "auth", Auth(s3.SnapshotID()), "payload", ValuePayload(Num(40))), `{"Number":{"Finite":100.0}}`)

	r.Note("Values past 1 MiB (stage_values): a source, inputs and an answer each come from a stage; the request that names a stage drops it.")
	r.OK(r.Req("stage", "stage_id", "src", "offset", 0, "bytes_base64", B64([]byte("const a = fetch_data(greeting);\na + '!';"))))
	staged := r.OK(r.Req("compile", "source_stage_id", "src"))
	sid := staged.Result()["program_id"]
	r.OK(r.Req("stage", "stage_id", "in", "offset", 0, "bytes_base64", B64([]byte(`{"greeting":{"String":"hello"}}`))))
	opts := Obj{{"inputs_stage_id", "in"}, {"capabilities", cap1}}
	s4 := r.Suspended(r.Req("start", "program_id", sid, "options", opts), "fetch_data")
	r.OK(r.Req("stage", "stage_id", "answer", "offset", 0, "bytes_base64", B64([]byte(`{"type":"value","value":{"String":"hello, world"}}`))))
	r.Completed(r.Req("resume", "snapshot_id", s4.SnapshotID(), "policy_id", s4.PolicyID(), "auth", Auth(s4.SnapshotID()), "payload_stage_id", "answer"), `{"String":"hello, world!"}`)
	r.Fail(r.Req("stage", "stage_id", "answer", "offset", 5, "bytes_base64", B64([]byte("x"))), "unknown stage_id `answer`")
	r.Exit(0)
}

// SealKey is the seal key of the sealed_snapshots transcript.
var SealKey = []byte("corpus seal key: 32 bytes long!!")

func sealedSnapshots(r *Rec) {
	r.Spawn("--jsonl")
	key := B64(SealKey)
	id, _ := compile(r, "let t = '';\nfor (let i = 0; i < 3; i++) t += fetch_data(secret + i);\nt;")
	r.Note("options.seal_key_base64 seals every record of the execution's snapshots; steps are what they are unsealed.")
	opts := append(Options(Obj{{"secret", Str("private-input-")}}, cap1, nil), KV{"seal_key_base64", key})
	s0 := r.Suspended(r.Req("start", "program_id", id, "options", opts, "snapshot_delivery", "delta"), "fetch_data")
	sid0, pid, snap0 := s0.SnapshotID(), s0.PolicyID(), s0.Payload
	sealedAuth := func(sid string) Obj { return append(Auth(sid), KV{"seal_key_base64", key}) }
	r.Note("A cached resume names the key in auth; delta delivery appends sealed records.")
	s1 := r.OK(r.Req("resume", "snapshot_id", sid0, "policy_id", pid, "auth", sealedAuth(sid0), "payload", ValuePayload(Str("private-answer-0;")), "snapshot_delivery", "delta"))
	snap1 := append(append([]byte(nil), snap0...), s1.Payload...)
	if s1.Result()["snapshot_base_id"] != sid0 || sha256Hex(snap1) != s1.SnapshotID() {
		r.fatalf("sealed delta does not extend the resumed snapshot: %s", s1.Raw)
	}
	sid1 := s1.SnapshotID()
	r.Note("Without the key, or with another, the resume is refused and the execution stays parked.")
	r.Fail(r.Req("resume", "snapshot_id", sid1, "policy_id", pid, "auth", Auth(sid1), "payload", ValuePayload(Str("x"))), "snapshot is sealed and no seal key was given")
	r.Fail(r.Req("resume", "snapshot_id", sid1, "policy_id", pid, "auth", append(Auth(sid1), KV{"seal_key_base64", B64([]byte("another seal key, 32 bytes long!"))}), "payload", ValuePayload(Str("x"))), "snapshot was sealed under another seal key")
	r.Fail(r.Req("start", "program_id", id, "options", append(Options(nil, cap1, nil), KV{"seal_key_base64", B64([]byte("short"))})), "options.seal_key_base64 must decode to at least 32 bytes")
	r.Exit(0)

	r.Spawn("--jsonl")
	r.Note("A fresh process: a raw resume names the key in policy.")
	r.Suspended(r.Req("resume", "snapshot_base64", B64(snap1), "policy", append(Policy(sid1, cap1, Obj{}), KV{"seal_key_base64", key}), "payload", ValuePayload(Str("private-answer-1;"))), "fetch_data")
	r.Fail(r.Req("resume", "snapshot_base64", B64(snap1), "policy", Policy(sid1, cap1, Obj{}), "payload", ValuePayload(Str("x"))), "snapshot is sealed and no seal key was given")
	r.Exit(0)
}

func extensions(r *Rec) {
	r.Spawn()
	r.Note("ping: version, transports, features, default limits, the request bound. (A new version or feature changes this response: regenerate.)")
	r.OK(r.Req("ping"))
	r.Note("stats: what the process holds in its memory budget and how its resumes ran; a fresh process holds nothing.")
	r.OK(r.Req("stats"))
	id, _ := compile(r, "let n = 0; for (let i = 0; i < 2; i++) { try { n += fetch_data(i) } catch (e) { n += 100 } } n")
	r.Note("Closed structures: an unknown key inside options, limits, policy, auth, payload or payload.error fails the request; unknown top-level keys are ignored.")
	r.Fail(r.Req("start", "program_id", id, "options", Obj{{"capabilities", cap1}, {"limit", Obj{}}}), "unknown field `limit` in options")
	r.Fail(r.Req("start", "program_id", id, "options", Options(nil, cap1, Obj{{"instructions", 1000}})), "unknown field `instructions` in limits")
	s := r.Suspended(r.Req("start", "program_id", id, "options", Options(nil, cap1, nil), "host_tag", "ignored"), "fetch_data")
	sid, pid := s.SnapshotID(), s.PolicyID()
	r.Fail(r.Req("resume", "snapshot_id", sid, "policy_id", pid, "auth", append(Auth(sid), KV{"snapshot_id", sid}), "payload", ValuePayload(Num(1))), "unknown field `snapshot_id` in auth")
	r.Fail(r.Req("resume", "snapshot_id", sid, "policy_id", pid, "auth", Auth(sid), "payload", append(ValuePayload(Num(1)), KV{"values", 1})), "unknown field `values` in payload")
	r.Fail(r.Req("resume", "snapshot_id", sid, "policy_id", pid, "auth", Auth(sid), "payload", Obj{{"type", "error"}, {"error", Obj{{"name", "E"}, {"mesage", "m"}}}}), "unknown field `mesage` in payload.error")
	r.Fail(r.Req("resume", "snapshot_id", sid, "policy", append(Policy(sid, cap1, nil), KV{"policy_id", pid}), "payload", ValuePayload(Num(1))), "unknown field `policy_id` in policy")
	r.Note("wall_time_ms: 0 (none) keeps the policy id of the defaults; another value makes another policy, here one a fast guest never reaches.")
	r.Suspended(r.Req("start", "program_id", id, "options", Options(nil, cap1, Obj{{"wall_time_ms", 0}})), "fetch_data")
	r.Suspended(r.Req("start", "program_id", id, "options", Options(nil, cap1, Obj{{"wall_time_ms", 60000}})), "fetch_data")
	r.Suspended(r.Req("resume", "snapshot_id", sid, "policy", Policy(sid, cap1, Obj{{"wall_time_ms", 60000}}), "payload", ValuePayload(Num(1))), "fetch_data")
	r.Note("cancel of a request that is not running: answered, was_running false, nothing changes.")
	r.OK(r.Req("cancel", "target_id", 1))
	r.OK(r.Req("cancel", "target_id", 99999))
	r.Fail(r.Req("cancel"), "cancel requires target_id")
	r.Fail(r.Req("cancel", "target_id", "1"), "target_id must be an unsigned integer")
	r.Note("The session goes on: the snapshot resumes, a host error is caught by the guest.")
	s2 := r.Suspended(r.Req("resume", "snapshot_id", sid, "policy_id", pid, "auth", Auth(sid), "payload", ValuePayload(Num(1))), "fetch_data")
	r.Completed(r.Req("resume", "snapshot_id", s2.SnapshotID(), "policy_id", pid, "auth", Auth(s2.SnapshotID()),
		"payload", Obj{{"type", "error"}, {"error", Obj{{"name", "ToolError"}, {"message", "down"}}}}), "{\"Number\":{\"Finite\":101.0}}")
	r.Note("TypeScript programs (typescript): compile's language; the types are erased, errors point into the TypeScript source.")
	tp := r.OK(r.Req("compile", "language", "typescript", "source", "declare function fetch_data(n: number): number;\nenum Step { First = 1 }\nconst n: number = fetch_data(Step.First) as number;\nn! + 1"))
	ts := r.Suspended(r.Req("start", "program_id", tp.Result()["program_id"], "options", Options(nil, cap1, nil)), "fetch_data")
	r.Completed(r.Req("resume", "snapshot_id", ts.SnapshotID(), "policy_id", ts.PolicyID(), "auth", Auth(ts.SnapshotID()), "payload", ValuePayload(Num(41))), "{\"Number\":{\"Finite\":42.0}}")
	r.Fail(r.Req("compile", "language", "typescript", "source", "const a = 1;\nlet b: = a;"), "Parse: Unexpected \"=\" (2:8)")
	r.Fail(r.Req("compile", "language", "typescript", "source", "export const a = 1;"), "Parse: import and export declarations are not supported: a program is a script (1:1)")
	r.Fail(r.Req("compile", "language", "coffeescript", "source", "1"), "unknown language `coffeescript`")
	r.Exit(0)
}

// batchSource fans out two calls, then makes a third from their answers.
const batchSource = `async function main() {
  const [a, b] = await Promise.all([fetch_data(1), fetch_data(2)]);
  const c = await fetch_data(a + b);
  return [a, b, c];
}
main();`

// batchCalls records host_calls "batch": every outstanding call in one
// step, answers to any subset, and the refusals that change nothing.
func batchCalls(r *Rec) {
	r.Spawn()
	id, _ := compile(r, batchSource)
	batch := append(Options(nil, cap1, nil), KV{"host_calls", "batch"})
	r.Note("host_calls batch: the step lists every outstanding call with its call_id; capability and args repeat calls[0].")
	s1 := r.Suspended(r.Req("start", "program_id", id, "options", batch), "fetch_data")
	resume := func(s hosttest.Response, kv ...any) []any {
		return append([]any{"snapshot_id", s.SnapshotID(), "policy_id", s.PolicyID(), "auth", Auth(s.SnapshotID())}, kv...)
	}
	answer := func(id int, v any) Obj { return Obj{{"call_id", id}, {"payload", ValuePayload(v)}} }
	r.Note("A resume may answer any non-empty subset; unanswered calls stay outstanding and are listed again.")
	s2 := r.Suspended(r.Req("resume", resume(s1, "answers", []any{answer(2, Num(20))})...), "fetch_data")
	r.Note("Answers to calls that are not outstanding fail and change nothing: never made, answered before, or twice in one resume.")
	r.Fail(r.Req("resume", resume(s2, "answers", []any{answer(9, Num(1))})...), "unknown call_id 9")
	r.Fail(r.Req("resume", resume(s2, "answers", []any{answer(2, Num(1))})...), "call_id 2 answered twice")
	r.Fail(r.Req("resume", resume(s2, "answers", []any{answer(1, Num(1)), answer(1, Num(2))})...), "call_id 1 answered twice")
	r.Fail(r.Req("resume", resume(s2, "answers", []any{})...), "answers must be a non-empty array")
	r.Fail(r.Req("resume", resume(s2, "answers", []any{Obj{{"call_id", 0}, {"payload", ValuePayload(Num(1))}}})...), "answers[0].call_id must be a positive integer")
	r.Fail(r.Req("resume", resume(s2, "answers", []any{Obj{{"call_id", 1}, {"payload", ValuePayload(Num(1))}, {"callid", 1}}})...), "unknown field `callid` in answers")
	r.Note("payload in batch mode, or answers in one mode, fail.")
	r.Fail(r.Req("resume", resume(s2, "payload", ValuePayload(Num(1)))...), "resume payload does not match host_calls batch")
	r.Note("After the refusals the snapshot still takes its answer: the third call is made from the first two.")
	s3 := r.Suspended(r.Req("resume", resume(s2, "answers", []any{answer(1, Num(10))})...), "fetch_data")
	r.Completed(r.Req("resume", resume(s3, "answers", []any{answer(3, Num(300))})...), `{"Array":[{"Number":{"Finite":10.0}},{"Number":{"Finite":20.0}},{"Number":{"Finite":300.0}}]}`)
	r.Note("Answers given together are applied in the order given, then the guest runs: both at once, in reverse.")
	r.Suspended(r.Req("resume", resume(s1, "answers", []any{answer(2, Num(2)), answer(1, Num(1))})...), "fetch_data")
	r.Note("An error answer rejects that call's promise: Promise.all rejects, but call 2 is still outstanding and is delivered; the execution fails once nothing is outstanding.")
	errAnswer := Obj{{"call_id", 1}, {"payload", Obj{{"type", "error"}, {"error", Obj{{"name", "NotFound"}, {"message", "no 1"}}}}}}
	rejected := r.Suspended(r.Req("resume", resume(s1, "answers", []any{errAnswer})...), "fetch_data")
	r.Fail(r.Req("resume", resume(rejected, "answers", []any{answer(2, Num(2))})...), "Runtime: NotFound: no 1")
	r.Note("A cancelled answer ends the execution.")
	r.Fail(r.Req("resume", resume(s1, "answers", []any{Obj{{"call_id", 2}, {"payload", Obj{{"type", "cancelled"}}}}})...), "Limit: execution cancelled")
	r.Note("Unknown modes fail; the default mode keeps the one-call step and its policy id.")
	r.Fail(r.Req("start", "program_id", id, "options", append(Options(nil, cap1, nil), KV{"host_calls", "many"})), "unknown host_calls `many`")
	one := r.Suspended(r.Req("start", "program_id", id, "options", append(Options(nil, cap1, nil), KV{"host_calls", "one"})), "fetch_data")
	if one.PolicyID() == s1.PolicyID() {
		r.fatalf("batch and one-mode policies share policy id %s", one.PolicyID())
	}
	r.Fail(r.Req("resume", resume(one, "answers", []any{answer(1, Num(1))})...), "resume payload does not match host_calls one")
	r.Exit(0)

	r.Spawn()
	r.Note("A brand-new process resumes a batch snapshot from its bytes, with host_calls in the policy.")
	batchPolicy := append(Policy(s2.SnapshotID(), cap1, Obj{}), KV{"host_calls", "batch"})
	r.Suspended(r.Req("resume", "snapshot_base64", B64(s2.Payload), "policy", batchPolicy, "answers", []any{answer(1, Num(10))}), "fetch_data")
	r.Note("The same bytes in one mode: the step presents the oldest outstanding call, which the payload answers.")
	r.Suspended(r.Req("resume", "snapshot_base64", B64(s2.Payload), "policy", Policy(s2.SnapshotID(), cap1, Obj{}), "payload", ValuePayload(Num(10))), "fetch_data")
	r.Note("max_outstanding_host_calls counts queued calls: one is too few for Promise.all of two.")
	r.Fail(r.Req("start", "program_id", id, "options", append(Options(nil, cap1, Obj{{"max_outstanding_host_calls", 1}}), KV{"host_calls", "batch"})), "Limit: outstanding host-call limit exhausted")
	r.Exit(0)
}
