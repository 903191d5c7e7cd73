package bench

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// ParkedProgram is a program whose executions are parked (started, suspended
// at their first capability call, not resumed) to weigh what one parked
// execution costs a sidecar process.
type ParkedProgram struct {
	Name   string
	Source string
}

// ParkedPrograms are the programs of the parked-memory measurement; both call
// the capability `wait` synchronously (plain top-level code), so the parked
// execution waits inside the script's first run.
var ParkedPrograms = []ParkedProgram{
	{Name: "wait", Source: `const x = wait(1); x + 1`},
	{Name: "200 objects", Source: `const objs = [];
for (let i = 0; i < 200; i++) objs.push({ id: i, name: 'item' + i, tags: ['a', 'b'] });
const r = wait(1);
objs.length + r`},
}

var parkedCaps = []byte(`["wait"]`)

// ParkedFigure is the memory one parked execution of a program takes.
type ParkedFigure struct {
	Program string
	// RSS: the real sidecar binary's VmRSS growth from the first execution
	// parked to the last, per execution after the first (median over the
	// processes measured). Heap: the same growth of the Go heap in use
	// (HeapInuse after a collection), in process, through a
	// protocol.Session.
	RSS, Heap int64
	RSSRuns   []int64
}

// ParkedConfig sets how the parked-memory measurement runs.
type ParkedConfig struct {
	N     int // executions parked per program and process (the first is the warm-up)
	Procs int // fresh sidecar processes per program for the RSS figure
	Log   io.Writer
}

// MeasureParked runs the parked-memory measurement for every program.
func MeasureParked(cfg ParkedConfig) ([]ParkedFigure, error) {
	cfg.N = max(cfg.N, 2)
	cfg.Procs = max(cfg.Procs, 1)
	var out []ParkedFigure
	for _, p := range ParkedPrograms {
		f := ParkedFigure{Program: p.Name}
		for i := 0; i < cfg.Procs; i++ {
			d, err := parkedRSS(p, cfg.N)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.Name, err)
			}
			logf(cfg.Log, "parked %s: process %d: %d B per execution (RSS)", p.Name, i+1, d)
			f.RSSRuns = append(f.RSSRuns, d)
		}
		s := slices.Clone(f.RSSRuns)
		slices.Sort(s)
		f.RSS = s[len(s)/2]
		h, err := ParkedHeap(p, cfg.N, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Name, err)
		}
		f.Heap = h
		logf(cfg.Log, "parked %s: %d B per execution (heap in use)", p.Name, h)
		out = append(out, f)
	}
	return out, nil
}

// noPrefault turns off the command's populating of its heap's first
// chunk at start-up (internal/prefault.Env): the pages it makes resident
// ahead would take in part of the growth measured, and each execution's
// own memory is the figure.
const noPrefault = "MUSTARD_SIDECAR_PREFAULT=0"

// parkedRSS parks n executions of p in a fresh sidecar and returns the
// VmRSS growth from the first parked to the last, divided by n-1.
func parkedRSS(p ParkedProgram, n int) (int64, error) {
	h, err := newHostEnv([]string{noPrefault}, false)
	if err != nil {
		return 0, err
	}
	defer h.close()
	defer h.sc.CloseStdin()
	r, _, err := h.call(compileRequest(h.nextID(), p.Source), nil)
	if err != nil {
		return 0, err
	}
	pid := r.Result.ProgramID
	var before int64
	for i := 0; i < n; i++ {
		r, _, err := h.call(startRequest(h.nextID(), pid, noInputs, parkedCaps), nil)
		if err != nil {
			return 0, err
		}
		if r.Result.Step.Type != wire.StepSuspended {
			return 0, fmt.Errorf("start: step %q, not suspended", r.Result.Step.Type)
		}
		if i == 0 {
			if before, err = idleRSS(h.sc.Pid()); err != nil {
				return 0, err
			}
		}
	}
	after, err := idleRSS(h.sc.Pid())
	if err != nil {
		return 0, err
	}
	return (after - before) / int64(n-1), nil
}

// idleRSS reads a sidecar's VmRSS once it is idle. A fresh sidecar
// warms up in the background after its first request (a few hundred KB
// allocated once, engine.WarmProcess), and pre-builds the next start's
// realm after each start: a reading taken while the warm-up runs counts
// it in the growth per execution. Measured 2026-12-01, the `wait` figure
// was 29-30 KiB for processes whose warm-up had ended before the first
// reading and 40-46 KiB for those where it had not.
func idleRSS(pid int) (int64, error) {
	if err := awaitIdle(pid); err != nil {
		return 0, err
	}
	return vmRSS(pid)
}

// Idle, for awaitIdle: the process's threads ran or waited to run less
// than idleBusy in each of idleLooks consecutive looks idleLook apart.
// The Go runtime's monitor thread alone wakes every 10 ms or so, for
// microseconds.
const (
	idleLook  = 2 * time.Millisecond
	idleLooks = 5
	idleBusy  = 100 * time.Microsecond
	idleGive  = 10 * time.Second
)

// awaitIdle waits until no thread of the process runs or waits for a CPU
// (/proc/<pid>/task/*/schedstat: time on a CPU, time runnable on a run
// queue). Counting the run-queue wait as busy keeps a machine's load from
// passing for the sidecar's idleness.
func awaitIdle(pid int) error {
	prev, err := schedBusy(pid)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(idleGive)
	for quiet := 0; quiet < idleLooks; {
		if time.Now().After(deadline) {
			return fmt.Errorf("sidecar %d still busy after %v", pid, idleGive)
		}
		time.Sleep(idleLook)
		now, err := schedBusy(pid)
		if err != nil {
			return err
		}
		if now-prev < idleBusy {
			quiet++
		} else {
			quiet = 0
		}
		prev = now
	}
	return nil
}

// schedBusy is the time the process's threads have spent on a CPU or
// runnable on a run queue.
func schedBusy(pid int) (time.Duration, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread exited
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			return 0, fmt.Errorf("%s/schedstat: %q", t.Name(), b)
		}
		for _, s := range f[:2] {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return 0, err
			}
			sum += n
		}
	}
	return time.Duration(sum), nil
}

// vmRSS reads a process's resident set size in bytes.
func vmRSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// ParkedHeap parks n executions of p in a protocol.Session in this process
// and returns the growth of the Go heap in use (after a collection) from
// the first parked to the last, divided by n-1. With parked not nil, it
// is called while all n are parked (to take a heap profile).
func ParkedHeap(p ParkedProgram, n int, parked func()) (int64, error) {
	s := protocol.NewSession(protocol.Options{MaxContinuations: n + 1})
	defer s.Close()
	resp, err := s.Handle(compileRequest(1, p.Source), nil)
	if err != nil {
		return 0, err
	}
	r, err := parseResponse(resp.Header)
	if err != nil {
		return 0, err
	}
	pid := r.Result.ProgramID
	var before int64
	for i := 0; i < n; i++ {
		resp, err := s.Handle(startRequest(uint64(i+2), pid, noInputs, parkedCaps), nil)
		if err != nil {
			return 0, err
		}
		r, err := parseResponse(resp.Header)
		if err != nil {
			return 0, err
		}
		if r.Result.Step.Type != wire.StepSuspended {
			return 0, fmt.Errorf("start: step %q, not suspended", r.Result.Step.Type)
		}
		if i == 0 {
			before = heapInuse()
		}
	}
	stacks := parkedStacks
	after := heapInuse()
	stackGrowth = (parkedStacks - stacks) / int64(n-1)
	if parked != nil {
		parked()
	}
	if s.Parked() != n {
		return 0, fmt.Errorf("%d executions parked, not %d", s.Parked(), n)
	}
	return (after - before) / int64(n-1), nil
}

// heapInuse is the Go heap in use after a full collection. The session's
// realm pre-builder may be building a realm meanwhile: the figure is taken
// twice and the lower kept.
func heapInuse() int64 {
	var lo uint64
	for i := 0; i < 2; i++ {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if i == 0 || m.HeapInuse < lo {
			lo = m.HeapInuse
		}
		parkedStacks = int64(m.StackInuse)
	}
	return int64(lo)
}

// parkedStacks is the goroutine stacks in use at the last heapInuse.
var parkedStacks int64

// stackGrowth is the last ParkedHeap's growth of goroutine stacks per
// execution (not part of its heap figure).
var stackGrowth int64

// PrintParked writes the parked-memory figures as a Markdown table.
func PrintParked(w io.Writer, figs []ParkedFigure, n int) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Memory per parked execution (%d parked, growth from the first to the last / %d):\n\n", n, n-1)
	fmt.Fprintf(&b, "| program | VmRSS, sidecar binary (median) | runs | Go heap in use, in process |\n| --- | ---: | --- | ---: |\n")
	for _, f := range figs {
		runs := make([]string, len(f.RSSRuns))
		for i, r := range f.RSSRuns {
			runs[i] = kib(r)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", f.Program, kib(f.RSS), strings.Join(runs, ", "), kib(f.Heap))
	}
	_, _ = w.Write(b.Bytes())
}

func kib(n int64) string { return strconv.FormatInt((n+512)>>10, 10) + " KiB" }
