package engine

import (
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// benchHotResume measures one hot resume to the next suspension of a
// program that keeps state while it makes host calls.
func benchHotResume(b *testing.B, src string) {
	p, err := Compile(src)
	if err != nil {
		b.Fatal(err)
	}
	l := policy.DefaultLimits()
	l.InstructionBudget = 1 << 62
	l.HeapLimitBytes = 64 << 20
	h := snapshot.Header{Program: p.Bytes, Capabilities: []string{"cap"}, Seed: 1, ClockMillis: 1}
	x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: l})
	answer := Payload{Outcome: snapshot.Outcome{Value: value.Number(1)}}
	b.ResetTimer()
	for b.Loop() {
		x, step = x.Resume(answer, l)
		if !step.Suspended() {
			b.Fatal(describeStep(step))
		}
	}
	b.StopTimer()
	x.Abandon()
}

func BenchmarkHotResume(b *testing.B) {
	b.Run("small state", func(b *testing.B) {
		benchHotResume(b, "const seen = [{id: 1}, {id: 2}]; let n = 0; for (;;) n += cap(n)")
	})
	b.Run("5,000 records", func(b *testing.B) {
		benchHotResume(b, "const rows = Array.from({length: 5000}, (_, i) => ({id: i, name: 'n' + i, tags: ['a', 'b']})); let n = 0; for (;;) n += cap(n)")
	})
}
