package engine

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// keptOnBuiltins are programs that keep 6 MB more before each of 30 host
// calls, each in another place: the global object, a built-in, a
// prototype, under a string or a symbol, a built-in only an instance
// reaches, a built-in function, a slot of a built-in's own.
var keptOnBuiltins = []struct{ name, store string }{
	{"globalThis", "globalThis['k' + i] = v"},
	{"Math", "Math['k' + i] = v"},
	{"Object.prototype", "Object.prototype['k' + i] = v"},
	{"Array.prototype under a symbol", "Array.prototype[Symbol.for('k' + i)] = v"},
	{"Function.prototype", "Function.prototype['k' + i] = v"},
	{"the array iterator prototype", "Object.getPrototypeOf([].values())['k' + i] = v"},
	{"the generator prototype", "Object.getPrototypeOf(Object.getPrototypeOf((function* () {})()))['k' + i] = v"},
	{"a built-in function", "JSON.stringify['k' + i] = v"},
	{"an accessor of a built-in", "Object.getOwnPropertyDescriptor(RegExp.prototype, 'flags').get['k' + i] = v"},
	{"Promise", "Promise['k' + i] = v"},
	{"in place of a built-in method", "Array.prototype[['map', 'filter', 'forEach', 'some', 'every', 'reduce', 'find', 'flat', 'join', 'at', 'fill', 'sort', 'slice', 'splice', 'push', 'pop', 'shift', 'concat', 'keys', 'values', 'entries', 'indexOf', 'includes', 'reverse', 'findLast', 'flatMap', 'copyWithin', 'lastIndexOf', 'unshift', 'toSorted'][i]] = v"},
}

// Whatever a guest keeps on a built-in counts against its heap limit as
// what it keeps on the global object does: under an 8 MiB limit, 6 MB
// kept before each of 30 host calls fails at the second segment, hot and
// in a replay alike.
func TestWhatIsKeptOnBuiltinsCountsAgainstTheHeapLimit(t *testing.T) {
	limits := policy.DefaultLimits()
	limits.HeapLimitBytes = 8 << 20
	answer := Payload{Outcome: snapshot.Outcome{Value: value.Number(1)}}
	cases := append(keptOnBuiltins[:len(keptOnBuiltins):len(keptOnBuiltins)], struct{ name, store string }{
		// 3 MB kept in a lexical binding, 3 MB more in each symbol's
		// description.
		"the symbol registry", "Symbol.for(s + i)"})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "for (let i = 0; i < 30; i++) { " + strings.ReplaceAll(c.store, "= v", "= new Uint8Array(6e6)") + "; cap(i) }"
			if c.name == "the symbol registry" {
				src = "const s = 'k'.repeat(3e6); for (let i = 0; i < 30; i++) { " + c.store + "; cap(i) }"
			}
			p, err := Compile(src)
			require.NoError(t, err)
			// The second segment fails by a live-heap look (the walk
			// of what it kept is weighed at the next resume). A look
			// that collects garbage from before the segment counts from
			// there (docs/limits.md): the megabytes earlier cases left
			// would let the segment end, and the next resume fail.
			runtime.GC()
			h := snapshot.Header{Program: p.Bytes, Capabilities: []string{"cap"}, Seed: 1, ClockMillis: 1}
			x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: limits})
			var raw []byte
			calls := 0
			for step.Suspended() {
				calls++
				raw = step.Snapshot
				x, step = x.Resume(answer, limits)
			}
			require.Error(t, step.Err, "%d calls made", calls)
			assert.ErrorIs(t, step.Err, ErrHeapLimit)
			assert.Equal(t, 1, calls, "host calls made before the heap limit stopped the guest")
			// A replay from the snapshot of the last call fails the same way.
			require.NotNil(t, raw)
			snap, err := snapshot.Load(raw, nil)
			require.NoError(t, err)
			_, cold := testRuntime.Start(Config{Program: p, Header: snap.Header, Limits: limits, Journal: snap, Raw: raw,
				Answers: []Answer{{CallID: snap.Last().Focus, Payload: answer}}})
			assert.ErrorIs(t, cold.Err, ErrHeapLimit, "replayed: %s", describeStep(cold))
		})
	}
}
