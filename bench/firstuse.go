package bench

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// FirstUseProgram is a program whose first compile and start in a fresh
// process are timed: what the first use of a built-in costs a process
// (a table made on first use, a package's lazy state) is paid by the
// first start after a crash, the first cold resume on a new worker, or a
// pool's restarted place.
type FirstUseProgram struct {
	Name   string
	Source string
}

// FirstUsePrograms are the features timed by -first-use; the first is the
// baseline every other is compared with.
var FirstUsePrograms = []FirstUseProgram{
	{"baseline", `1 + 1`},
	{"RegExp", `/abc/.test('xabc')`},
	{"RegExp with i", `/abc/i.test('xABC')`},
	{"RegExp with iu", `/abc/iu.test('xABC')`},
	{"RegExp \\p{L} with u", `/\p{L}+/u.test('héllo')`},
	{"RegExp with lookbehind", `/(?<=a)b/.test('ab')`},
	{"toUpperCase, non-ASCII", `'héllo'.toUpperCase() + 'HÉLLO'.toLowerCase()`},
	{"localeCompare", `'a'.localeCompare('b')`},
	{"normalize", `'é'.normalize('NFD')`},
	{"Date.parse", `Date.parse('2024-01-02T03:04:05Z')`},
	{"JSON", `JSON.stringify(JSON.parse('{"a":[1,2,3]}'))`},
	{"number formatting", `(1.2345).toFixed(2) + (1e21).toString() + (0.1).toPrecision(3)`},
	{"sort with comparator", `[3, 1, 2].sort((a, b) => a - b).join()`},
	{"Map and Set", `new Map([[1, 2]]).size + new Set([1]).size`},
	{"async function", `(async () => { await null; return 1 })()`},
	{"class with private field", `class A { #x = 1; get x() { return this.#x } }; new A().x`},
	{"generator", `function* g() { yield 1 } [...g()].length`},
	{"BigInt", `String(2n ** 64n)`},
	{"typed array", `new Uint8Array([1, 2, 3]).reduce((a, b) => a + b)`},
	{"string methods", `'a,b,c'.split(',').map(s => s.padStart(3, '-')).join('|')`},
}

// FirstUseFigure is a program's compile and start in fresh processes,
// each after the baseline program's compile and start in the same
// process (which pays what every first start pays), medians over the
// processes.
type FirstUseFigure struct {
	Program        string
	Compile, Start time.Duration
}

// MeasureFirstUse times every program's first compile and start in procs
// fresh sidecar processes each.
func MeasureFirstUse(procs int, log io.Writer) ([]FirstUseFigure, error) {
	procs = max(procs, 1)
	var out []FirstUseFigure
	for _, p := range FirstUsePrograms {
		var compiles, starts []time.Duration
		for range procs {
			c, s, err := firstUse(p.Source)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.Name, err)
			}
			compiles, starts = append(compiles, c), append(starts, s)
		}
		f := FirstUseFigure{Program: p.Name, Compile: Quantile(compiles, 0.5), Start: Quantile(starts, 0.5)}
		logf(log, "first use %s: compile %v, start %v", p.Name, f.Compile, f.Start)
		out = append(out, f)
	}
	return out, nil
}

// firstUse compiles and starts the baseline in a fresh sidecar, then
// times the compile and start of source.
func firstUse(source string) (compile, start time.Duration, err error) {
	h, err := newHost(false)
	if err != nil {
		return 0, 0, err
	}
	defer h.close()
	defer h.sc.CloseStdin()
	run := func(src string) (time.Duration, time.Duration, error) {
		t0 := time.Now()
		r, _, err := h.call(compileRequest(h.nextID(), src), nil)
		if err != nil {
			return 0, 0, err
		}
		t1 := time.Now()
		r, _, err = h.call(startRequest(h.nextID(), r.Result.ProgramID, noInputs, []byte(`[]`)), nil)
		if err != nil {
			return 0, 0, err
		}
		t2 := time.Now()
		if r.Result.Step.Type != wire.StepCompleted {
			return 0, 0, fmt.Errorf("start: step %q, not completed", r.Result.Step.Type)
		}
		return t1.Sub(t0), t2.Sub(t1), nil
	}
	if _, _, err := run(FirstUsePrograms[0].Source); err != nil {
		return 0, 0, err
	}
	return run(source)
}

// PrintFirstUse writes the first-use figures as a Markdown table, each
// against the baseline's.
func PrintFirstUse(w io.Writer, figs []FirstUseFigure, procs int) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "First compile and start of a program in a fresh process, after the baseline's (median of %d processes):\n\n", procs)
	fmt.Fprintf(&b, "| program | compile | start | start over the baseline's |\n| --- | ---: | ---: | ---: |\n")
	base := figs[0].Start
	for i, f := range figs {
		over := "—"
		switch d := f.Start - base; {
		case i == 0:
		case d < 0:
			over = "-" + fmtDur(-d)
		case d == 0:
			over = "0"
		default:
			over = "+" + fmtDur(d)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", f.Program, fmtDur(f.Compile), fmtDur(f.Start), over)
	}
	_, _ = w.Write(b.Bytes())
}
