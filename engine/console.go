package engine

import (
	"slices"
	"strconv"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
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
		// A line longer than the heap limit could not be held: it fails
		// as any value that large would.
		res, err := formatConsole(r.rt, call.Arguments, int(min(x.limits.HeapLimitBytes, 1<<40)))
		if err != nil {
			panic(err)
		}
		r.Work(res.work)
		if res.truncated {
			r.rt.Interrupt(ErrHeapLimit)
			return goja.Undefined()
		}
		r.Make(len(res.text)) // the line is a copy of its text
		if x.replay == nil {
			x.log(level, res.text)
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
