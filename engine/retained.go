package engine

// RetainedBytes is what the parked execution keeps while it waits for its
// resume, at most: the walk of the guest's reachable values at its last
// suspension (retain, heapwatch.go), the figure its heap limit is held
// to, times 9/4. The walk's costs are calibrated to the Go heap within a
// factor of 2 (internal/goja/mustard_retained.go), and some shapes take
// more than it counts: an array of integers grown by push, 2.2 times (a
// slot and a boxed number each, and the array's spare capacity, where the
// walk counts a slot of its length), arrays of fractions and of short
// strings 1.5 times, while a long string takes what it counts. A caller
// that weighs parked executions by memory must not count less than they
// keep (TestParkedExecutionWeighsWhatItKeeps). It does not include what
// every execution has whatever it runs (ParkedOverhead); callers that
// weigh parked executions add that.
//
// Callers use this method alone, so that a better measure of the guest's
// heap changes only its body.
func (x *Execution) RetainedBytes() uint64 { return x.heap.retained * 9 / 4 }

// ParkedOverhead is what a parked execution keeps beside RetainedBytes,
// whatever it runs: its realm's own objects and its goroutine's stack
// (measured: about 20 KB for a program that only calls a capability; after
// recursion to the default call depth about 40 KB, and 80 KB through
// callbacks, the interpreter's stacks trimmed at the suspension;
// TestParkedExecutionWeighsWhatItKeeps). It is kept well above these: a
// weight that undercounts lets parked executions outgrow the budget.
const ParkedOverhead = 128 << 10
