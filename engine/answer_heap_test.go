package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An answer is memory the guest is given: one larger than the heap limit
// fails the execution before the guest sees it (deterministically, so the
// guest cannot keep it past its last segment, which no later resume would
// weigh), whether the call was synchronous or awaited, hot or replayed
// from the snapshot; one within the limit is taken.
func TestAnswerLargerThanTheHeapLimitFails(t *testing.T) {
	limits := policy.DefaultLimits()
	limits.HeapLimitBytes = 1 << 20
	pol, err := policy.New([]string{"cap"}, limits)
	require.NoError(t, err)
	elems := make([]value.Value, 50_000) // 50,000 slots of a boxed number: past 1 MiB
	for i := range elems {
		elems[i] = value.Number(float64(i))
	}
	over := map[string]value.Value{
		"string":          value.String(strings.Repeat("x", 2<<20)),
		"nonascii string": value.String(strings.Repeat("é", 600<<10)), // 1.2 MB of UTF-8 and in the guest
		"array":           value.Array(elems...),
		"nested":          value.Object(value.M("k", value.Array(value.String(strings.Repeat("y", 1<<20))))),
	}
	// answer starts src, then answers its first call with v, hot or in a
	// replay of the first suspension's snapshot.
	answer := func(t *testing.T, src string, v value.Value, cold bool) Step {
		p, err := Compile(src)
		require.NoError(t, err)
		h := snapshot.Header{Program: p.Bytes, Capabilities: pol.Capabilities, Seed: 1, ClockMillis: 1}
		x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: pol.Limits})
		require.True(t, step.Suspended(), "%v", step.Err)
		payload := Payload{Outcome: snapshot.Outcome{Value: v}}
		if !cold {
			_, step = x.Resume(payload, pol.Limits)
			return step
		}
		x.Abandon()
		snap, err := snapshot.Load(step.Snapshot, nil)
		require.NoError(t, err)
		_, step = testRuntime.Start(Config{Program: p, Header: snap.Header, Limits: pol.Limits, Journal: snap, Raw: step.Snapshot,
			Answers: []Answer{{CallID: snap.Last().Focus, Payload: payload}}})
		return step
	}
	within := value.String(strings.Repeat("x", 100<<10))
	for _, src := range []string{"const a = cap(); a.length", "const a = await cap(); a.length", "cap(); 1"} {
		for _, cold := range []bool{false, true} {
			for name, v := range over {
				t.Run(fmt.Sprintf("%s/%s/cold=%v", src, name, cold), func(t *testing.T) {
					step := answer(t, src, v, cold)
					require.Error(t, step.Err)
					assert.Equal(t, "Limit: heap limit exceeded", step.Err.Error())
				})
			}
			t.Run(fmt.Sprintf("%s/within/cold=%v", src, cold), func(t *testing.T) {
				step := answer(t, src, within, cold)
				require.NoError(t, step.Err)
				assert.True(t, step.Done)
			})
		}
	}
}

// Inputs are counted together, as answers are: larger than the heap limit,
// the start fails before the guest runs.
func TestInputsLargerThanTheHeapLimitFail(t *testing.T) {
	limits := policy.DefaultLimits()
	limits.HeapLimitBytes = 1 << 20
	p, err := Compile("a.length + b.length")
	require.NoError(t, err)
	start := func(a, b int) Step {
		inputs := snapshot.SortedInputs([]value.Member{
			value.M("a", value.String(strings.Repeat("a", a))),
			value.M("b", value.String(strings.Repeat("b", b))),
		})
		h := snapshot.Header{Program: p.Bytes, Inputs: inputs, Seed: 1, ClockMillis: 1}
		_, step := testRuntime.Start(Config{Program: p, Header: h, Limits: limits})
		return step
	}
	step := start(600<<10, 600<<10)
	require.Error(t, step.Err)
	assert.Equal(t, "Limit: heap limit exceeded", step.Err.Error())
	step = start(300<<10, 300<<10)
	require.NoError(t, step.Err)
	assert.True(t, value.Equal(value.Number(600<<10), step.Value))
}

// importBytes counts what an imported value takes in the guest as the walk
// of a parked execution's heap counts it, within a factor of 2, so that
// an answer admitted is one the next suspension's weighing also admits.
func TestImportBytesMatchesTheRetainedWalk(t *testing.T) {
	members := make([]value.Member, 200)
	for i := range members {
		members[i] = value.M(strings.Repeat("k", i%40+1)+string(rune('a'+i%26))+strings.Repeat("z", i/26), value.Number(float64(i)+0.5))
	}
	elems := make([]value.Value, 5_000)
	for i := range elems {
		elems[i] = value.Object(value.M("id", value.Number(float64(i)+0.25)), value.M("name", value.String(strings.Repeat("n", 100))))
	}
	for name, v := range map[string]value.Value{
		"long string":      value.String(strings.Repeat("x", 1<<20)),
		"nonascii":         value.String(strings.Repeat("ж", 100_000)),
		"astral":           value.String(strings.Repeat("\U0001F600", 100_000)),
		"numbers":          value.Array(elemsOf(20_000)...),
		"wide object":      value.Object(members...),
		"array of records": value.Array(elems...),
	} {
		t.Run(name, func(t *testing.T) {
			p, pol, h := roomyCapProgram(t, "globalThis.kept = cap(); cap()")
			x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: pol.Limits})
			require.True(t, step.Suspended())
			base := x.heap.retained
			x, step = x.Resume(Payload{Outcome: snapshot.Outcome{Value: v}}, pol.Limits)
			require.True(t, step.Suspended(), "%v", step.Err)
			walked := float64(x.heap.retained - base)
			counted := float64(importBytes(v))
			t.Logf("counted %.0f, walked %.0f", counted, walked)
			assert.InDelta(t, 1, counted/walked, 0.5, "counted %.0f, walked %.0f", counted, walked)
			x.Abandon()
		})
	}
}

// roomyCapProgram compiles src for an execution granted cap under the
// default limits with a 1 GiB heap, and returns the policy and header to
// start it with.
func roomyCapProgram(t *testing.T, src string) (*Program, policy.Policy, snapshot.Header) {
	t.Helper()
	p, err := Compile(src)
	require.NoError(t, err)
	limits := policy.DefaultLimits()
	limits.HeapLimitBytes = 1 << 30
	pol, err := policy.New([]string{"cap"}, limits)
	require.NoError(t, err)
	return p, pol, snapshot.Header{Program: p.Bytes, Capabilities: pol.Capabilities, Seed: 1, ClockMillis: 1}
}

func elemsOf(n int) []value.Value {
	out := make([]value.Value, n)
	for i := range out {
		out[i] = value.Number(float64(i) + 0.5)
	}
	return out
}

func TestGuestStringBytes(t *testing.T) {
	for s, want := range map[string]uint64{
		"":                  0,
		"abc":               3,
		"abcdefgh":          8,
		"abcdefghijklmnopq": 17,
		"é":                 2,
		"abcdefghé":         2 * 9,
		"abcdefghijklmnopé": 2 * 17,
		"a😀":                2 * 3, // a surrogate pair
		"😀abcdefgh😀":        2 * 12,
	} {
		assert.Equal(t, want, guestStringBytes(s), "%q", s)
	}
}

// BenchmarkImportBytes counts a megabyte answer's string: it runs for
// every answer, ahead of its import.
func BenchmarkImportBytes(b *testing.B) {
	v := value.String(strings.Repeat("abcdefgh", 1<<17))
	b.SetBytes(1 << 20)
	for b.Loop() {
		_ = importBytes(v)
	}
}
