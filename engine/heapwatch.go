package engine

import (
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
)

// The heap limit covers what no size pre-check can see (string
// concatenation in a loop, object graphs). goja has no per-VM heap figure,
// so a segment's growth is the growth of the process heap since the segment
// began; the sidecar runs one segment at a time.
//
// Only live memory fails a program: every decision is taken on the guest's
// own goroutine, at a metering point, after a forced collection, while the
// guest is paused. Heap readings taken elsewhere only say when to look: a
// watchdog samples the heap every heapPollInterval while a segment runs and
// asks for a look at the next metering point when growth passes the
// trigger; the meter also looks every heapCheckTicks instructions, and
// built-ins every quarter of the limit they report allocating (meter.go),
// which bounds the growth between looks when the watchdog is starved of
// CPU. A loaded machine can therefore delay a heap-limit failure, never
// cause one.
const (
	heapPollInterval = time.Millisecond
	heapCheckTicks   = 1024
)

var heapMetric = "/memory/classes/heap/objects:bytes"

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// heapWatch is a Runtime's watchdog state: the segment it samples.
type heapWatch struct {
	current  atomic.Pointer[Execution]
	wake     chan struct{}
	sleeping atomic.Bool
}

// heapState is one execution's heap accounting.
type heapState struct {
	// Per segment.
	base      uint64        // process heap when the segment began, less retained (or after a collection found less)
	trigger   atomic.Uint64 // heap at which to collect and look: read by the watchdog
	due       atomic.Uint64 // instruction count past which the meter looks; the watchdog sets 0 to ask for a look
	allocated uint64        // bytes built-ins reported since the last look

	// Across segments: what the execution keeps while it is parked counts
	// against its limit when it resumes. It is the walk of the guest's
	// reachable values at the suspension (retain), a deterministic
	// function of the execution, so a replay counts exactly what the
	// original counted at every step.
	retained uint64
}

// enterSegment starts heap accounting for a segment of x about to run. It
// is on the hot path of every resume: one heap reading, and no wake-up of a
// watchdog that is still ticking.
func (rt *Runtime) enterSegment(x *Execution) {
	// A native call that a stop interrupted in an earlier segment may
	// still be running, allocating: it is not this segment's.
	goja.MustardWaitAbandoned()
	x.rebase()
	rt.watch.current.Store(x)
	if rt.watch.sleeping.Load() {
		select {
		case rt.watch.wake <- struct{}{}:
		default:
		}
	}
}

// leaveSegment ends the segment and reports whether it ended over its
// limit: a native call that allocated a lot just before the segment
// completed or suspended came after the last metering point.
func (rt *Runtime) leaveSegment(x *Execution) bool {
	rt.watch.current.CompareAndSwap(x, nil)
	over, _ := x.finalHeapCheck()
	return over
}

// endSegment ends the segment without a look at the heap.
func (rt *Runtime) endSegment(x *Execution) {
	rt.watch.current.CompareAndSwap(x, nil)
}

// suspendSegment ends a segment at a suspension, as leaveSegment, and
// carries what the execution keeps into its next segment.
func (rt *Runtime) suspendSegment(x *Execution) bool {
	rt.watch.current.CompareAndSwap(x, nil)
	if over, _ := x.finalHeapCheck(); over {
		return true
	}
	// The stacks a deep recursion grew are not kept while it waits.
	x.realm.rt.MustardTrimStacks()
	x.retain()
	return false
}

// retain measures what the suspended execution keeps: every value the
// guest can still reach, the promises of its outstanding host calls
// included (goja's MustardRetainedBytes; the costs are calibrated to the
// Go heap those values take).
func (x *Execution) retain() {
	roots := x.callPromises(x.roots[:0])
	x.heap.retained = x.realm.rt.MustardRetainedBytes(roots...)
	clear(roots)
	x.roots = roots[:0]
}

// callPromises appends to roots the promises of the outstanding
// asynchronous calls, in the order of the calls: what the guest may
// still reach that only the engine holds.
func (x *Execution) callPromises(roots []goja.Value) []goja.Value {
	for i := range x.outstanding {
		if p := x.outstanding[i].promise; p != nil {
			roots = append(roots, x.realm.rt.ToValue(p))
		}
	}
	return roots
}

// keepsOver reports whether what a suspended execution keeps is over the
// heap limit of l, the limits it is resumed under: the resume then fails
// at once. A hot resume and a replay reaching the same suspension decide
// this from the same figure.
func (x *Execution) keepsOver(l policy.Limits) bool {
	return x.heap.retained > l.HeapLimitBytes
}

// rebase starts a segment's count from what the execution keeps: at the
// start of every segment, and in a replay at each journaled suspension, as
// the original's next segment started (not from everything the replay has
// allocated since it began).
func (x *Execution) rebase() {
	h := &x.heap
	now := heapBytes()
	h.base = now - min(now, h.retained)
	h.trigger.Store(h.base + x.limits.HeapLimitBytes)
	h.allocated = 0
	x.scheduleLook()
}

// sub is a - b, or 0 when b is larger.
func sub(a, b uint64) uint64 { return a - min(a, b) }

// scheduleLook sets when the meter next takes its slow path: at the budget,
// or heapCheckTicks instructions from now, whichever comes first.
func (x *Execution) scheduleLook() {
	x.heap.due.Store(min(x.limits.InstructionBudget, x.meter.Instructions+heapCheckTicks))
}

// checkHeap is called by the meters when a look is due; it interrupts the
// guest if its live growth is over the limit.
func (x *Execution) checkHeap() {
	x.scheduleLook()
	if x.overHeapLimit(0) {
		x.fail(ErrHeapLimit)
	}
}

// overHeapLimit reports whether the segment's live growth, plus pending
// bytes a built-in is about to allocate, is over the limit. A reading under
// the trigger answers at once; otherwise a forced collection tells live
// memory from garbage. The trigger is one limit's growth from the
// segment's base, so growth over the limit is always looked at; only when
// a collection finds live growth in the last quarter of the limit does
// the next one wait for a quarter of the limit more (a program that keeps
// close to its limit and makes garbage does not collect continuously),
// which the segment's end looks past (finalHeapCheck).
func (x *Execution) overHeapLimit(pending uint64) bool {
	over, _ := x.heapCheck(heapBytes(), pending, x.heap.trigger.Load())
	return over
}

// finalHeapCheck is the look at a segment's end (it completes or
// suspends): growth over the limit is looked at whatever the trigger, so
// a segment never ends keeping more than its limit.
func (x *Execution) finalHeapCheck() (bool, uint64) {
	return x.heapCheck(heapBytes(), 0, x.heap.base+x.limits.HeapLimitBytes)
}

// heapCheck is overHeapLimit from a heap reading just taken, collecting
// when the reading is over trigger; it also returns the reading it ended
// with (a fresh one if it collected).
func (x *Execution) heapCheck(reading, pending, trigger uint64) (bool, uint64) {
	h := &x.heap
	if reading+pending <= trigger {
		return false, reading
	}
	// A value the guest no longer reaches can linger in the interpreter
	// (a popped temporary, the last string a property was read on): the
	// collection must not count it.
	x.realm.rt.MustardForgetTransients()
	if !x.collect() {
		return false, reading // stopped: the segment ends with the stop
	}
	reading = heapBytes()
	now := reading + pending
	limit := x.limits.HeapLimitBytes
	if now > h.base && now-h.base > limit {
		return true, reading
	}
	// Less than the base: garbage from before the segment was collected.
	// Counting from here forgets at most what the segment held so far
	// (under one limit), which can delay a failure but never cause one.
	h.base = min(h.base, now)
	h.trigger.Store(max(h.base+limit, now+limit/heapCheckShare))
	return false, reading
}

// collect forces a collection. On a heap of a GiB one takes tens of
// milliseconds, during which the segment's goroutine would notice no stop:
// inside a segment it runs on a goroutine of its own, and a stop (a cancel,
// the wall-time limit) ends the wait; false then. The collection goes on
// and finishes by itself.
func (x *Execution) collect() bool {
	var stopping <-chan struct{}
	if x.stop != nil {
		stopping = x.stop.stopping()
	}
	if stopping == nil {
		runtime.GC()
		return true
	}
	done := make(chan struct{})
	go func() {
		runtime.GC()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-stopping:
		return false
	}
}

// idleTicks is how long the watchdog keeps ticking with nothing running
// before it sleeps; while it ticks, starting a segment costs no wake-up.
const idleTicks = 100

// watchHeap is the watchdog goroutine; it ends when the Runtime closes.
func (rt *Runtime) watchHeap() {
	defer rt.wg.Done()
	w := &rt.watch
	t := time.NewTicker(heapPollInterval)
	defer t.Stop()
	idle := 0
	for {
		select {
		case <-t.C:
		case <-rt.stop:
			return
		}
		x := w.current.Load()
		if x != nil {
			idle = 0
			if heapBytes() > x.heap.trigger.Load() {
				x.heap.due.Store(0)
			}
			continue
		}
		if idle++; idle < idleTicks {
			continue
		}
		// Sleep; a segment that starts after the flag is set sends a wake.
		w.sleeping.Store(true)
		if w.current.Load() == nil {
			select {
			case <-w.wake:
			case <-rt.stop:
				return
			}
		}
		w.sleeping.Store(false)
		idle = 0
	}
}
