package goja

import (
	"encoding/json"
	"io"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mustard-sidecar/mustard-sidecar/internal/regexp2"
	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
)

// Interrupts inside native operations that cannot check for one themselves
// (a mustard-sidecar addition; see PATCHES.md).
//
// Most long native loops check for an interrupt as they go (tick, poll,
// work). A few operations are one call into a library that takes no
// interrupt: a math/big addition of two 128 MiB numbers, a collator
// comparison. offload runs such a call on another goroutine and
// waits for it or for an Interrupt, whichever comes first: interrupted,
// the execution ends at once with the interrupt, and the call's result,
// when it comes, is dropped. Only calls whose duration is bounded (by
// their operands' size, which the built-in charged before the call) are
// offloaded, so what an interrupted call goes on spending is bounded too.
// (A regexp2 search reports its steps as it goes: see regexp2Scan.)

// interruptWake returns a channel closed by the next Interrupt, or a closed
// one if the vm is interrupted already.
func (vm *vm) interruptWake() <-chan struct{} {
	vm.interruptLock.Lock()
	defer vm.interruptLock.Unlock()
	if atomic.LoadUint32(&vm.interrupted) != 0 {
		return closedWake
	}
	if vm.wake == nil {
		vm.wake = make(chan struct{})
	}
	return vm.wake
}

var closedWake = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// wakeWaiters is called by Interrupt, with interruptLock held.
func (vm *vm) wakeWaiters() {
	if vm.wake != nil {
		close(vm.wake)
		vm.wake = nil
	}
}

// offload runs f on another goroutine and returns when it has returned, or
// ends the running built-in with the interrupt as soon as one arrives. f
// must touch nothing that the execution may use after an interrupt (it
// reads its own operands and returns its result through its closure); a
// panic in f is raised again here.
func (r *Runtime) offload(f func()) {
	r.vm.checkInterrupt()
	w := getOffloadWorker()
	w.job <- f
	select {
	case p := <-w.done:
		putOffloadWorker(w)
		if p != nil {
			panic(p)
		}
	case <-r.vm.interruptWake():
		if atomic.LoadUint32(&r.vm.interrupted) != 0 {
			abandon(w)
			r.vm.checkInterrupt()
		}
		// The interrupt was cleared before it could be raised (only an
		// embedder's ClearInterrupt does that): wait for f after all.
		p := <-w.done
		putOffloadWorker(w)
		if p != nil {
			panic(p)
		}
	}
}

// An offloaded call the interrupt abandoned goes on until it returns, and
// may allocate (a BigInt result, a string) while it does: the process's
// heap, which an embedder measures, holds that memory until then, and a
// core runs the call. abandoned counts such calls.
var abandoned struct {
	sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0
}

// abandon lets the worker finish f, then returns it to the pool.
func abandon(w *offloadWorker) {
	abandoned.Lock()
	abandoned.n++
	if abandoned.idle == nil {
		abandoned.idle = make(chan struct{})
	}
	abandoned.Unlock()
	go func() {
		<-w.done
		putOffloadWorker(w)
		abandoned.Lock()
		if abandoned.n--; abandoned.n == 0 {
			close(abandoned.idle)
			abandoned.idle = nil
		}
		abandoned.Unlock()
	}()
}

// MustardWaitAbandoned returns once every offloaded call that an
// interrupt abandoned (in any Runtime) has returned: at once when none
// runs. An embedder that measures the process's heap for its next
// execution calls it first, so that the memory such a call holds while it
// runs, and the core it takes, are not the next execution's. The wait is
// at most what the interrupted call was charged for.
func MustardWaitAbandoned() {
	abandoned.Lock()
	idle := abandoned.idle
	abandoned.Unlock()
	if idle != nil {
		<-idle
	}
}

// offloadWorker is a goroutine that runs offloaded calls, one at a time;
// idle ones wait in a pool, so that an offloaded call costs two channel
// handoffs rather than a new goroutine.
type offloadWorker struct {
	job  chan func()
	done chan any
}

var offloadPool struct {
	sync.Mutex
	idle []*offloadWorker
}

func getOffloadWorker() *offloadWorker {
	offloadPool.Lock()
	if n := len(offloadPool.idle); n > 0 {
		w := offloadPool.idle[n-1]
		offloadPool.idle = offloadPool.idle[:n-1]
		offloadPool.Unlock()
		return w
	}
	offloadPool.Unlock()
	w := &offloadWorker{job: make(chan func()), done: make(chan any)}
	go w.run()
	return w
}

func putOffloadWorker(w *offloadWorker) {
	offloadPool.Lock()
	offloadPool.idle = append(offloadPool.idle, w)
	offloadPool.Unlock()
}

func (w *offloadWorker) run() {
	for f := range w.job {
		w.done <- w.call(f)
	}
}

func (w *offloadWorker) call(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

// longCallUnits: a single library call on strings of more units than this
// (a collator comparison, case mapping, normalization: tens of
// nanoseconds a unit) is offloaded.
const longCallUnits = 1 << 20

// longCall runs f, one library call whose time is linear in n string
// units, at once when they are few or no Meter is installed (upstream's
// behaviour), and offloaded otherwise. The built-in charged the work
// before the call: what an interrupted call goes on spending was paid.
func (r *Runtime) longCall(n int, f func()) {
	if n <= longCallUnits || r.meter == nil {
		f()
		return
	}
	r.offload(f)
}

// longString is f(), a string made by one library call linear in n units,
// through longCall.
func (r *Runtime) longString(n int, f func() String) String {
	var s String
	r.longCall(n, func() { s = f() })
	return s
}

// localeCompare compares this and that as String.prototype.localeCompare
// does; long strings offloaded, with a collator of their own (a collator
// keeps state while it compares, and an interrupted comparison may still
// be running).
func (r *Runtime) localeCompare(this, that String) int {
	n := this.Length() + that.Length()
	if n <= longCallUnits || r.meter == nil {
		return r.collator().CompareString(norm.NFD.String(this.String()), norm.NFD.String(that.String()))
	}
	var res int
	r.offload(func() {
		res = collate.New(language.Und).CompareString(norm.NFD.String(this.String()), norm.NFD.String(that.String()))
	})
	return res
}

// JSON.parse reads its text through a jsonReader, 64 KiB at a time with an
// interrupt check between (encoding/json scans what it reads in one go,
// and grows its reads), and a token that begins more than longCallUnits
// before the end of the text and is that long itself (a string, a
// number: encoding/json unquotes and converts it in one call) is read
// offloaded.
type jsonReader struct {
	text      string
	pos       int
	vm        *vm
	offloaded bool // read by an offloaded Token: no interrupt checks there
	prev      *jsonReader
}

const jsonReadChunk = 64 << 10

func (rd *jsonReader) Read(p []byte) (int, error) {
	if !rd.offloaded {
		rd.vm.checkInterrupt()
	}
	if rd.pos >= len(rd.text) {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), jsonReadChunk)], rd.text[rd.pos:])
	rd.pos += n
	return n, nil
}

// jsonInput starts reading text for JSON.parse.
func (r *Runtime) jsonInput(text string) io.Reader {
	r.jsonIn = &jsonReader{text: text, vm: r.vm, prev: r.jsonIn}
	return r.jsonIn
}

// jsonDone ends it.
func (r *Runtime) jsonDone() { r.jsonIn = r.jsonIn.prev }

// jsonToken is d.Token(), offloaded when the token is long.
func (r *Runtime) jsonToken(d *json.Decoder) (json.Token, error) {
	in := r.jsonIn
	off := int(d.InputOffset())
	if in == nil || len(in.text)-off <= longCallUnits || jsonTokenEnd(r, in.text, off)-off <= longCallUnits {
		return d.Token()
	}
	var tok json.Token
	var err error
	in.offloaded = true
	r.offload(func() { tok, err = d.Token() })
	in.offloaded = false
	return tok, err
}

// jsonTokenEnd is about where the token after off ends in text: past a
// string's closing quote or a number's last character; off itself for
// anything else.
func jsonTokenEnd(r *Runtime, text string, off int) int {
	i := off
	for i < len(text) && strings.IndexByte(" \t\r\n,:", text[i]) >= 0 {
		i++
	}
	if i >= len(text) {
		return off
	}
	start := i
	switch c := text[i]; {
	case c == '"':
		for i++; i < len(text); i++ {
			if (i-start)&(jsonReadChunk-1) == 0 {
				r.vm.checkInterrupt()
			}
			if text[i] == '\\' {
				i++
			} else if text[i] == '"' {
				return i + 1
			}
		}
		return i
	case c == '-' || c >= '0' && c <= '9':
		for ; i < len(text) && strings.IndexByte("+-.0123456789eE", text[i]) >= 0; i++ {
			if (i-start)&(jsonReadChunk-1) == 0 {
				r.vm.checkInterrupt()
			}
		}
		return i
	}
	return off
}

// regexp2Scan runs a regexp2 search. Without a Meter it is upstream's
// search, bounded by the pattern's match timeout. With one and operand
// metering, it runs with the timeout off, and regexp2 reports its steps
// as it goes (every regexp2.DefaultStepEvery, a few tens of
// microseconds): each is charged regexpStepUnits, and an interrupt (the
// Meter's, a cancel, the wall-time limit) ends the search at the next
// report. So a backtracking search costs what it does, the same on every
// run, and stops at the budget. With a Meter alone (older programs) the
// timeout stays and the steps only bring interrupt checks. Either way the
// search runs on this goroutine. A search that ends with a panic (the interrupt)
// may have changed w's cached runes (a search from inside a surrogate
// pair does while it runs), so the cache is dropped.
func (r *Runtime) regexp2Scan(w *regexp2Wrapper, f func(*regexp2.SearchOptions) (*regexp2.Match, error)) (m *regexp2.Match, err error) {
	defer func() {
		if p := recover(); p != nil {
			w.cache = nil
			panic(p)
		}
	}()
	if r.meter == nil {
		return f(nil) // upstream's behaviour
	}
	if !r.bigMetered {
		// Programs metered without MustardMeterOperands (format version 1
		// or 2) keep the charges their journals recorded: the span, and a
		// match past the pattern's timeout costs more than any budget.
		// Interrupts still end a search from inside it.
		if r.regexp2Poll == nil {
			r.regexp2Poll = &regexp2.SearchOptions{StepHook: r.regexp2Interrupt}
		}
		m, err = f(r.regexp2Poll)
		r.regexp2Failed(err)
		return m, err
	}
	if r.regexp2Search == nil {
		r.regexp2Search = &regexp2.SearchOptions{StepHook: r.regexp2Steps, NoTimeout: true}
	}
	return f(r.regexp2Search)
}

// regexp2Interrupt is the step hook of a search charged by its span only:
// it ends the search with a pending interrupt, charging nothing.
func (r *Runtime) regexp2Interrupt(int) error {
	r.vm.checkInterrupt()
	return nil
}

// regexpTimeoutWork is what a regexp2 match of a program metered without
// MustardMeterOperands costs when it runs past the pattern's match timeout:
// it has done unbounded work, so it costs more than any budget.
const regexpTimeoutWork = 1 << 40

// regexp2Failed handles the error of such a match, which goja reports as
// "no match": a timeout costs regexpTimeoutWork, so it fails the execution
// instead of silently answering "no match".
func (r *Runtime) regexp2Failed(err error) {
	if err != nil && strings.HasPrefix(err.Error(), "match timeout") {
		r.work(min(regexpTimeoutWork, math.MaxInt)) // MaxInt where int has 32 bits
	}
}

// regexpStepUnits is the work a regexp2 step costs: a step takes 3-10 ns
// (regexp2's BenchmarkSteps), so 4 units (1/16 of an instruction) keep a
// backtracking search at about 0.16 µs an instruction at worst.
const regexpStepUnits = 4

// regexp2Steps is the step hook of a metered regexp2 search: it charges
// the steps and ends the search with a pending interrupt (panicking
// through regexp2, which keeps no state across searches).
func (r *Runtime) regexp2Steps(n int) error {
	r.work(mulBytes(int64(n), regexpStepUnits))
	return nil
}
