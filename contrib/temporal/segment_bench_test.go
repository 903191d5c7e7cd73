package mustardtemporal

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"gocloud.dev/blob/memblob"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// The cost of one segment on a sidecar worker, hot (the execution parked
// in the worker's process) and cold (its snapshot read from the blob
// store and sent to a process): the same resume of a snapshot of about
// 43 KB, answered with one value.
//
//	go test -run '^$' -bench Segment ./
func BenchmarkSegment(b *testing.B) {
	for _, mode := range []string{"hot", "cold"} {
		b.Run(mode, func(b *testing.B) { benchSegment(b, mode == "hot") })
	}
}

func benchSegment(b *testing.B, hot bool) {
	blobs := NewBucketStore(memblob.OpenBucket(nil))
	defer blobs.Close()
	w, err := NewSidecarWorker(SidecarConfig{Queue: testQueue, ID: "bench", Command: sidecarCommand, Processes: 1,
		Key: testKey, SealKey: testSeal, Blobs: blobs})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(w.Start, activity.RegisterOptions{Name: StartActivity})
	env.RegisterActivityWithOptions(w.Resume, activity.RegisterOptions{Name: ResumeActivity})
	// Suspended after 20 answers of 2 KB each.
	src := `let n = 0; for (let i = 0; i < 1e9; i++) { n += get(i).length; } n;`
	rng := rand.New(rand.NewPCG(1, 2))
	filler := func() value.Value {
		b := make([]byte, 2000)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return value.String(string(b))
	}
	answer := filler()
	v, err := env.ExecuteActivity(StartActivity, StartInput{Execution: "bench", Source: src, Capabilities: []string{"get"}})
	if err != nil {
		b.Fatal(err)
	}
	var seg Segment
	if err := v.Get(&seg); err != nil {
		b.Fatal(err)
	}
	resume := func(seg Segment, filler value.Value) Segment {
		v, err := env.ExecuteActivity(ResumeActivity, ResumeInput{Execution: "bench", SnapshotID: seg.SnapshotID,
			SidecarVersion: seg.SidecarVersion, Capabilities: []string{"get"},
			Answers: []host.Answer{{ID: seg.Calls[0].ID, Payload: host.Return(filler)}}})
		if err != nil {
			b.Fatal(err)
		}
		var next Segment
		if err := v.Get(&next); err != nil {
			b.Fatal(err)
		}
		return next
	}
	for range 20 {
		seg = resume(seg, filler())
	}
	w.mu.Lock()
	parked := *w.parked[seg.SnapshotID]
	w.mu.Unlock()
	b.ResetTimer()
	for range b.N {
		if hot {
			x := parked
			w.park(seg.SnapshotID, &x)
		} else {
			w.unpark(seg.SnapshotID)
		}
		if next := resume(seg, answer); next.Hot != hot {
			b.Fatalf("segment hot=%v", next.Hot)
		}
	}
	snap, _ := blobs.Get(context.Background(), SnapshotKey(seg.SnapshotID))
	b.ReportMetric(float64(len(snap)), "snapshot-bytes")
}
