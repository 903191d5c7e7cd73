package engine

import (
	"fmt"

	"os"
	"sort"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/parser"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
)

// What metering costs: each compute-heavy program runs as compiled (with
// the instruction and allocation meters inserted) and compiled from its
// source unchanged. The built-in guards are the same in both.

var meteringPrograms = []struct{ name, src string }{
	{"numeric-loop", `let s = 0; for (let i = 0; i < 300000; i++) { s = (s + i * i) % 1000003 } s`},
	{"fib25", `function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) } fib(25)`},
	// Strings are flat in goja, so appends are copies: short strings keep
	// the loop, not the copying, the cost.
	{"string-building", `let total = 0;
for (let k = 0; k < 50; k++) { let s = ''; for (let i = 0; i < 2000; i++) { s += String.fromCharCode(97 + i % 26) } total += s.length }
total`},
	{"json-round-trip", `const items = [];
for (let i = 0; i < 2000; i++) items.push({ id: i, name: 'item' + i, tags: ['a', 'b'], nested: { x: i / 2, ok: i % 2 === 0 } });
let n = 0; for (let k = 0; k < 5; k++) n += JSON.parse(JSON.stringify(items)).length; n`},
	{"sort-100k", `const a = []; let x = 1;
for (let i = 0; i < 100000; i++) { x = (x * 1103515245 + 12345) % 2147483648; a.push(x) }
a.sort((p, q) => p - q); a[0]`},
}

// meteringLimits are high enough that no program fails.
func meteringLimits() policy.Limits {
	return policy.Limits{
		InstructionBudget:       1 << 50,
		HeapLimitBytes:          1 << 50,
		AllocationBudget:        1 << 50,
		CallDepthLimit:          1 << 20,
		MaxOutstandingHostCalls: 1 << 50,
	}
}

// meteringProgram compiles src as Compile does, or for the unmetered run
// without the allocation reports and run without the interpreter's
// instruction count.
func meteringProgram(tb testing.TB, src string, metered bool) *Program {
	tb.Helper()
	p, err := Compile(src)
	if err != nil {
		tb.Fatal(err)
	}
	if metered {
		return p
	}
	prg, err := parser.ParseFile(nil, "", src, 0, currentParseOptions...)
	if err != nil {
		tb.Fatal(err)
	}
	u := *p
	if u.compiled, err = goja.CompileAST(prg, true); err != nil {
		tb.Fatal(err)
	}
	u.unmetered = true
	return &u
}

func benchmarkMetering(b *testing.B, src string, metered bool) {
	p := meteringProgram(b, src, metered)
	h := snapshot.Header{Program: p.Bytes, Seed: 1, ClockMillis: 1}
	limits := meteringLimits()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, step := testRuntime.Start(Config{Program: p, Header: h, Limits: limits}); step.Err != nil || !step.Done {
			b.Fatalf("step: %+v", step)
		}
	}
}

// BenchmarkMetering: go test -run='^$' -bench=Metering -count=5 ./engine/
func BenchmarkMetering(b *testing.B) {
	for _, p := range meteringPrograms {
		b.Run(p.name+"/metered", func(b *testing.B) { benchmarkMetering(b, p.src, true) })
		b.Run(p.name+"/unmetered", func(b *testing.B) { benchmarkMetering(b, p.src, false) })
	}
}

// Both builds compute the same result, and only the metered one counts.
func TestMeteringBenchProgramsAgree(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("seconds of guest compute; the benchmarks run the same check")
	}
	for _, p := range meteringPrograms {
		t.Run(p.name, func(t *testing.T) {
			var got [2]Step
			for i, metered := range []bool{true, false} {
				prog := meteringProgram(t, p.src, metered)
				h := snapshot.Header{Program: prog.Bytes, Seed: 1, ClockMillis: 1}
				_, got[i] = testRuntime.Start(Config{Program: prog, Header: h, Limits: meteringLimits()})
				if got[i].Err != nil || !got[i].Done {
					t.Fatalf("metered=%v: %+v", metered, got[i])
				}
			}
			if fmt.Sprint(got[0].Value) != fmt.Sprint(got[1].Value) {
				t.Fatalf("metered %v, unmetered %v", got[0].Value, got[1].Value)
			}
			if got[0].Meter.Instructions == 0 {
				t.Fatal("the metered build charged nothing")
			}
			if got[1].Meter.Allocations != 0 {
				t.Fatalf("the unmetered build counted %d allocations", got[1].Meter.Allocations)
			}
			t.Logf("%s: %d instructions, %d allocations", p.name, got[0].Meter.Instructions, got[0].Meter.Allocations)
		})
	}
}

// meteringReportEnv runs TestMeteringOverheadReport, which times every
// program both ways and fails when the median overhead is over 30%.
const meteringReportEnv = "MUSTARD_METERING_REPORT"

func TestMeteringOverheadReport(t *testing.T) {
	if os.Getenv(meteringReportEnv) == "" {
		t.Skip("set " + meteringReportEnv + "=1 to time metering")
	}
	if raceEnabled {
		t.Skip("timings under the race detector mean nothing")
	}
	var ratios []float64
	var report strings.Builder
	fmt.Fprintf(&report, "\n%-16s %14s %14s %8s\n", "program", "metered ns/op", "unmetered ns/op", "ratio")
	for _, p := range meteringPrograms {
		m := testing.Benchmark(func(b *testing.B) { benchmarkMetering(b, p.src, true) })
		u := testing.Benchmark(func(b *testing.B) { benchmarkMetering(b, p.src, false) })
		r := float64(m.NsPerOp()) / float64(u.NsPerOp())
		ratios = append(ratios, r)
		fmt.Fprintf(&report, "%-16s %14d %14d %8.3f\n", p.name, m.NsPerOp(), u.NsPerOp(), r)
	}
	sort.Float64s(ratios)
	median := ratios[len(ratios)/2]
	fmt.Fprintf(&report, "median ratio %.3f", median)
	t.Log(report.String())
	if median > 1.30 {
		t.Errorf("median metering overhead %.0f%% is over 30%%", (median-1)*100)
	}
}
