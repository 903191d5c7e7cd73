package engine

import (
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// heapAndStacks is the memory of live objects and goroutine stacks, after
// a collection.
func heapAndStacks() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: heapMetric}, {Name: "/memory/classes/heap/stacks:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() + s[1].Value.Uint64()
}

// What parked executions keep is no more than their RetainedBytes plus
// ParkedOverhead each, whatever they hold: a large string, objects,
// closures, maps and sets, arrays of numbers and of short strings, parsed
// JSON, a typed array, values kept on built-ins, a large input (which only
// the realm keeps), a stack that grew before they parked; after a hot
// resume; and after a replay from their snapshot, started as the execution
// it replaces was dropped. A host weighs parked executions with these two.
func TestParkedExecutionWeighsWhatItKeeps(t *testing.T) {
	if !measureAlone(t) {
		return
	}
	big := make([]value.Value, 200_000)
	for i := range big {
		big[i] = value.Number(float64(i))
	}
	cases := []struct {
		name, src string
		inputs    []value.Member
	}{
		{"nothing", "fetch_data(1); fetch_data(2)", nil},
		{"a 6.5 MB string", "const s = 'x'.repeat(6.5e6); fetch_data(1); fetch_data(2); s.length", nil},
		{"10,000 objects", "const a = []; for (let i = 0; i < 10000; i++) a.push({i, s: 'k' + i}); fetch_data(1); fetch_data(2); a.length", nil},
		{"closures", "const fs = []; for (let i = 0; i < 5000; i++) fs.push(() => i); fetch_data(1); fetch_data(2); fs.length", nil},
		{"a Map", "const m = new Map(); for (let i = 0; i < 10000; i++) m.set('k' + i, [i]); fetch_data(1); fetch_data(2); m.size", nil},
		{"an input of 200,000 numbers", "fetch_data(big.length); fetch_data(2); big.length", []value.Member{value.M("big", value.Array(big...))}},
		{"after deep recursion", "function f(n) { return n ? [f(n - 1)].length : 0 } f(250); fetch_data(1); fetch_data(2)", nil},
		{"inside, then after, deep recursion through callbacks", "function f(n) { return n ? [0].map(() => f(n - 1))[0] : fetch_data(1) } f(84); fetch_data(2)", nil},
		{"an array of integers", "const a = []; for (let i = 0; i < 100000; i++) a.push(i + 1000); fetch_data(1); fetch_data(2); a.length", nil},
		{"an array of fractions", "const a = []; for (let i = 0; i < 100000; i++) a.push(i + 0.5); fetch_data(1); fetch_data(2); a.length", nil},
		{"an array of short strings", "const a = []; for (let i = 0; i < 50000; i++) a.push('s' + i); fetch_data(1); fetch_data(2); a.length", nil},
		{"objects of four properties", "const a = []; for (let i = 0; i < 10000; i++) a.push({a: i, b: i, c: i, d: i}); fetch_data(1); fetch_data(2); a.length", nil},
		{"pairs", "const a = []; for (let i = 0; i < 10000; i++) a.push([i, i]); fetch_data(1); fetch_data(2); a.length", nil},
		{"a Set of numbers", "const m = new Set(); for (let i = 0; i < 30000; i++) m.add(i * 3); fetch_data(1); fetch_data(2); m.size", nil},
		{"parsed JSON", "const v = JSON.parse(JSON.stringify(Array.from({length: 2000}, (_, i) => ({id: i, name: 'n' + i, tags: ['a', 'b']})))); fetch_data(1); fetch_data(2); v.length", nil},
		{"a typed array", "const t = new Float64Array(500000); fetch_data(1); fetch_data(2); t.length", nil},
		{"a 6.5 MB string on Math", "Math.keep = 'x'.repeat(6.5e6); fetch_data(1); fetch_data(2); Math.keep.length", nil},
		{"objects on Object.prototype under a symbol", "Object.prototype[Symbol.for('k')] = Array.from({length: 10000}, (_, i) => ({i})); fetch_data(1); fetch_data(2); 1", nil},
	}
	const n = 8
	limits := policy.DefaultLimits()
	limits.InstructionBudget, limits.AllocationBudget = 1e8, 1e8 // loops that fill the heap limit
	for _, c := range cases {
		p, err := Compile(c.src)
		require.NoError(t, err)
		h := snapshot.Header{Program: p.Bytes, Inputs: snapshot.SortedInputs(c.inputs), Capabilities: []string{"fetch_data"}, Seed: 7, ClockMillis: 1}
		rt := NewRuntime()
		rt.Warm()
		base := heapAndStacks()
		var xs []*Execution
		var raw []byte // the first suspension's snapshot
		for range n {
			// Each start gets its own copy of the header, as a request
			// decodes its own.
			hc := h
			hc.Inputs = snapshot.SortedInputs(c.inputs)
			x, st := rt.Start(Config{Program: p, Header: hc, Limits: limits})
			require.NoError(t, st.Err, c.name)
			require.True(t, st.Suspended(), c.name)
			xs = append(xs, x)
			if raw == nil {
				raw = st.Snapshot
			}
		}
		weigh := func(what string) {
			grown := heapAndStacks() - min(base, heapAndStacks())
			var weight uint64
			for _, x := range xs {
				weight += x.RetainedBytes() + ParkedOverhead + uint64(x.JournalSize())
			}
			t.Logf("%-30s %-10s %d parked: memory %7.2f MiB, weighed %7.2f MiB (%.2fx)", c.name, what, n, mib(grown), mib(weight), float64(weight)/float64(grown))
			assert.GreaterOrEqual(t, weight, grown, "%s, %s: parked executions keep more than they weigh", c.name, what)
		}
		weigh("started")
		for i, x := range xs {
			x, st := x.Resume(Payload{Outcome: snapshot.Outcome{Value: value.Number(1)}}, limits)
			require.NoError(t, st.Err, c.name)
			require.True(t, st.Suspended(), c.name)
			xs[i] = x
		}
		weigh("resumed")
		// A replay from the snapshot's journal: the journal is decoded
		// before the segment, and the execution lets go of it.
		for i, x := range xs {
			// Dropped, as a session drops what it evicts: its memory is
			// garbage that the replay's collections free.
			x.Abandon()
			xs[i] = nil
			j, err := snapshot.Load(raw, nil)
			require.NoError(t, err)
			hj := j.Header
			x, st := rt.Start(Config{Program: p, Header: hj, Limits: limits, Journal: j, Raw: raw,
				Answers: []Answer{{CallID: 1, Payload: Payload{Outcome: snapshot.Outcome{Value: value.Number(1)}}}}})
			require.NoError(t, st.Err, c.name)
			require.True(t, st.Suspended(), c.name)
			xs[i] = x
		}
		weigh("replayed")
		for _, x := range xs {
			x.Abandon()
		}
		rt.Close()
	}
}
