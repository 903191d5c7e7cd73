package engine

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
	"github.com/mustard-sidecar/mustard-sidecar/internal/jsinspect"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
)

// Log is one line of console output: the method's name and the text its
// arguments format to.
type Log struct {
	Level string
	Text  string
}

// logState is the console output of the running segment: the lines kept
// for its step, their text's size, and how many were dropped.
type logState struct {
	lines   []Log
	bytes   uint64
	dropped int
}

// consoleWorkWeight is what one unit of formatting work (a value or
// property visited, a byte written) costs in built-in work units: Node's
// layout rules (line breaking, grouping arrays into columns) make a unit
// dearer than a plain built-in's. With it, the slowest formatting found
// (arrays of nested arrays under %o) spends the default budget in about
// 1.6 s, against 0.3 s for plain loops, while a line of text costs a
// quarter of an instruction per 16 bytes (docs/limits.md).
const consoleWorkWeight = 4

// installConsole adds to ns the console methods a collecting console has
// that no granted capability serves.
func (x *Execution) installConsole(ns *namespaces, granted []string) {
	for _, m := range policy.ConsoleMethods {
		if slices.Contains(granted, "console."+m) {
			continue
		}
		ns.add("console."+m, x.realm.newFunction(m, 0, x.consoleMethod(m)))
	}
}

// consoleMethod returns a collecting console method: it formats its
// arguments as Node's console does and appends the line to the segment's
// logs. Formatting and the copy are charged alike live and in a replay
// (the meter must read the same); a replay keeps no line, since those
// lines went to the host with the steps they belong to.
func (x *Execution) consoleMethod(level string) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		r := x.realm
		// Both caps are deterministic (the heap limit and the budget left
		// are journaled), so a replay formats exactly what the live run
		// did. A line longer than the heap limit could not be held; a
		// walk longer than the budget left could not be paid for.
		left := uint64(0)
		if x.meter.Instructions < x.limits.InstructionBudget {
			left = x.limits.InstructionBudget - x.meter.Instructions
		}
		maxWork := min(left, 1<<40/workUnit)*workUnit/consoleWorkWeight + 1
		res, err := jsinspect.Format(r.rt, call.Arguments, jsinspect.Options{
			MaxBytes: int(min(x.limits.HeapLimitBytes, 1<<40)),
			MaxWork:  int(maxWork),
			Stack:    x.consoleStack,
		})
		if err != nil {
			panic(err) // the guest's own exception, or an interrupt
		}
		r.Work(res.Work * consoleWorkWeight)
		if res.Truncated {
			if uint64(res.Work) < maxWork {
				x.fail(ErrHeapLimit)
			} else {
				x.fail(ErrInstructionBudget)
			}
			return goja.Undefined()
		}
		r.Make(len(res.Text)) // the line is a copy of its text
		if x.replay == nil {
			x.log(level, res.Text)
		}
		return goja.Undefined()
	}
}

// log keeps a line for the segment's step, within the log bound: the
// smaller of max_log_bytes and the heap limit. Once a line would cross
// it, it and every later line of the step are dropped and counted.
func (x *Execution) log(level, text string) {
	l := &x.logs
	bound := min(x.limits.MaxLogBytes, x.limits.HeapLimitBytes)
	if l.dropped > 0 || l.bytes+uint64(len(text)) > bound {
		l.dropped++
		return
	}
	l.bytes += uint64(len(text))
	l.lines = append(l.lines, Log{Level: level, Text: text})
}

// takeLogs returns the segment's lines, with the last line saying how
// many were dropped if any were, and starts the next segment's.
func (x *Execution) takeLogs() []Log {
	l := x.logs
	x.logs = logState{}
	if l.dropped > 0 {
		l.lines = append(l.lines, Log{Level: "warn", Text: "... " + strconv.Itoa(l.dropped) + " more log lines dropped"})
	}
	return l.lines
}

// goFrame is a frame of the stack text goja gives an Error:
// "\tat f (<eval>:1:23(4))", or without a name "\tat <eval>:2:12(3)".
var goFrame = regexp.MustCompile(`^\tat (?:(.*) \()?<eval>:(\d+):(\d+)\(\d+\)\)?$`)

// consoleStack writes an error's stack text as tracebacks show frames:
// "\tat f (2:9)" in the guest's own positions, with the sidecar's own
// frames (the lockdown's, native functions) left out. Lines before the
// first frame (the error's name and message) are kept as they are.
func (x *Execution) consoleStack(stack string) string {
	lines := strings.Split(stack, "\n")
	out := lines[:0]
	for _, l := range lines {
		if !strings.HasPrefix(l, "\tat ") {
			out = append(out, l)
			continue
		}
		m := goFrame.FindStringSubmatch(l)
		if m == nil {
			continue // not the guest's
		}
		line, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		fn, line, col := x.frame(m[1], line, col)
		out = append(out, "\tat "+fn+" ("+strconv.Itoa(line)+":"+strconv.Itoa(col)+")")
	}
	return strings.Join(out, "\n")
}
