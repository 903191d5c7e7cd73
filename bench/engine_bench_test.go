package bench

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

func triage(b *testing.B) *Workload {
	ws, err := LoadWorkloads()
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range ws {
		if w.Name == "triage" {
			return w
		}
	}
	b.Fatal("no triage workload")
	return nil
}

// handleRaw serves one request and fails the benchmark on any error.
func handleRaw(b *testing.B, s *protocol.Session, header, payload []byte) *stepResponse {
	resp, err := s.Handle(header, payload)
	if err != nil {
		b.Fatal(err)
	}
	r, err := parseResponse(resp.Header)
	if err != nil && !strings.Contains(r.Error, "execution cancelled") {
		b.Fatal(err)
	}
	return r
}

// BenchmarkCompile is an uncached compile: validate, instrument, parse
// and compile the triage program.
func BenchmarkCompile(b *testing.B) {
	src := triage(b).Source
	b.ReportAllocs()
	for b.Loop() {
		if _, err := engine.Compile(src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadProgram is the program half of a cold resume: decode and
// re-validate program bytes from a snapshot (never trusted by id).
func BenchmarkLoadProgram(b *testing.B) {
	p, err := engine.Compile(triage(b).Source)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := engine.LoadProgram(p.Bytes); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSessionCompile is a compile request for a source the session
// compiled before: served from the cache keyed by source.
func BenchmarkSessionCompile(b *testing.B) {
	s := protocol.NewSession(protocol.Options{})
	defer s.Close()
	req := compileRequest(1, triage(b).Source)
	b.ReportAllocs()
	for b.Loop() {
		handleRaw(b, s, req, nil)
	}
}

// BenchmarkSessionStart starts the cached triage program by program_id and
// runs it to its first suspension (list_tickets). Each execution is then
// cancelled so parked executions do not pile up; start-ns/op is the start
// alone.
func BenchmarkSessionStart(b *testing.B) {
	w := triage(b)
	s := protocol.NewSession(protocol.Options{})
	defer s.Close()
	pid := handleRaw(b, s, compileRequest(1, w.Source), nil).Result.ProgramID
	start := startRequest(2, pid, w.inputs, mustJSONText(w.Capabilities))
	var startNS time.Duration
	var cancel []byte
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		r := handleRaw(b, s, start, nil)
		startNS += time.Since(t0)
		if r.Result.Step.Capability != "list_tickets" {
			b.Fatalf("first call %q", r.Result.Step.Capability)
		}
		cancel = resumeRequest(cancel[:0], 3, r.Result.SnapshotID, r.Result.PolicyID, cancelled)
		handleRaw(b, s, cancel, nil)
	}
	b.ReportMetric(float64(startNS.Nanoseconds())/float64(b.N), "start-ns/op")
}

// BenchmarkEngineStart is the engine part of a start: a fresh realm runs
// the triage program to its first capability call.
func BenchmarkEngineStart(b *testing.B) {
	w := triage(b)
	p, err := engine.Compile(w.Source)
	if err != nil {
		b.Fatal(err)
	}
	h := snapshot.Header{Program: p.Bytes, Inputs: []value.Member{value.M("team", value.String("platform-emea"))},
		Capabilities: []string{"get_customer", "get_ticket", "list_tickets", "post_summary"}, Seed: 1, ClockMillis: 1}
	var startNS time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		x, step := benchRuntime.Start(engine.Config{Program: p, Header: h, Limits: policy.DefaultLimits()})
		startNS += time.Since(t0)
		if !step.Suspended() {
			b.Fatalf("not suspended: %v", step.Err)
		}
		x.Abandon()
	}
	b.ReportMetric(float64(startNS.Nanoseconds())/float64(b.N), "start-ns/op")
}

// BenchmarkSnapshotProduction measures what a suspension costs the journal
// (Builder.Suspend, then Builder.Answer for the answer) with ~1 KiB of
// arguments per call, while the journal holds entries=L to 2L calls. The
// format is append-only, so the cost should not depend on L.
func BenchmarkSnapshotProduction(b *testing.B) {
	p, err := engine.Compile(coldSource)
	if err != nil {
		b.Fatal(err)
	}
	header := snapshot.Header{Program: p.Bytes, Capabilities: []string{"cap"}, Seed: 1, ClockMillis: 1,
		Inputs: []value.Member{value.M("note", value.String(strings.Repeat(coldNote, 64))), value.M("steps", value.Number(coldLimit))}}
	note := value.String(strings.Repeat(coldNote, 64))
	limits := snapshot.Limits{InstructionBudget: policy.DefaultInstructionBudget, HeapLimitBytes: policy.DefaultHeapLimitBytes,
		AllocationBudget: policy.DefaultAllocationBudget, CallDepthLimit: policy.DefaultCallDepthLimit, MaxOutstandingHostCalls: policy.DefaultMaxOutstandingHostCalls}
	call := func(bld *snapshot.Builder, i int) {
		args := []value.Value{value.Object(value.M("i", value.Number(float64(i))), value.M("note", note))}
		m := snapshot.Meter{Instructions: uint64(3 * i), Allocations: uint64(i)}
		bld.Call(&snapshot.HostCall{ID: uint64(i), Capability: "cap", Args: args, Meter: m, Sync: true})
		bld.Suspend(uint64(i), m, &limits)
		bld.Answer(&snapshot.Answer{CallID: uint64(i), Outcome: snapshot.Outcome{Value: value.Object(value.M("n", value.Number(float64(i))))}})
	}
	for _, entries := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("entries=%d", entries), func(b *testing.B) {
			window := max(16, entries)
			var bld *snapshot.Builder
			n := window
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if n == window {
					b.StopTimer()
					bld = snapshot.NewBuilder(header, nil, snapshot.Version)
					for j := 1; j < entries; j++ {
						call(bld, j)
					}
					n = 0
					b.StartTimer()
				}
				call(bld, entries+n)
				n++
			}
		})
	}
}

// coldSnapshots runs the cold program in-process and returns the snapshot
// bytes and ids at the given suspension numbers.
func coldSnapshots(b *testing.B, steps ...int) map[int]coldSnapshot {
	s := protocol.NewSession(protocol.Options{})
	defer s.Close()
	pid := handleRaw(b, s, compileRequest(1, coldSource), nil).Result.ProgramID
	resp, err := s.Handle(startRequest(2, pid, coldInputs, capJSON), nil)
	if err != nil {
		b.Fatal(err)
	}
	out := map[int]coldSnapshot{}
	last := 0
	for _, k := range steps {
		last = max(last, k)
	}
	for step := 1; ; step++ {
		r, err := parseResponse(resp.Header)
		if err != nil {
			b.Fatal(err)
		}
		out[step] = coldSnapshot{step: step, id: r.Result.SnapshotID, bytes: bytes.Clone(resp.Payload)}
		if step == last {
			return out
		}
		if resp, err = s.Handle(resumeRequest(nil, 3, r.Result.SnapshotID, r.Result.PolicyID, coldAnswer(step)), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkColdResume resumes snapshot bytes in a fresh Session, as a new
// process does: authenticate, decode, load the program, replay the
// journal's entries=k-1 calls and answer the pending one, up to the next
// suspension. resume-ns/op leaves out ending the execution afterwards.
func BenchmarkColdResume(b *testing.B) {
	snaps := coldSnapshots(b, 1, 10, 100)
	for _, k := range []int{1, 10, 100} {
		c := snaps[k]
		b.Run("entries="+strconv.Itoa(k), func(b *testing.B) {
			req := rawResumeRequest(1, c.id, []string{"cap"}, coldAnswer(k))
			var resumeNS time.Duration
			b.ReportAllocs()
			for b.Loop() {
				s := protocol.NewSession(protocol.Options{})
				t0 := time.Now()
				resp, err := s.Handle(req, c.bytes)
				resumeNS += time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				if err := checkColdStep(resp.Header, k); err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
			b.ReportMetric(float64(resumeNS.Nanoseconds())/float64(b.N), "resume-ns/op")
			b.ReportMetric(float64(len(c.bytes)), "snapshot-bytes")
		})
	}
}

// BenchmarkSnapshotDecode is the decode part of a cold resume.
func BenchmarkSnapshotDecode(b *testing.B) {
	snaps := coldSnapshots(b, 1, 10, 100)
	for _, k := range []int{1, 10, 100} {
		raw := snaps[k].bytes
		b.Run("entries="+strconv.Itoa(k), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := snapshot.Decode(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWorkload runs the triage workload through a Session without
// IPC: start by program_id, then one hot resume per capability call, with
// the same host-side work as the driver (decode, look up, sign).
func BenchmarkWorkload(b *testing.B) {
	w := triage(b)
	s := protocol.NewSession(protocol.Options{})
	defer s.Close()
	pid := handleRaw(b, s, compileRequest(1, w.Source), nil).Result.ProgramID
	start := startRequest(2, pid, w.inputs, mustJSONText(w.Capabilities))
	var req []byte
	b.ReportAllocs()
	for b.Loop() {
		r := handleRaw(b, s, start, nil)
		for r.Result.Step.Type == wire.StepSuspended {
			p, err := w.answer(r.Result.Step.Capability, r.Result.Step.Args)
			if err != nil {
				b.Fatal(err)
			}
			req = resumeRequest(req[:0], 3, r.Result.SnapshotID, r.Result.PolicyID, p)
			r = handleRaw(b, s, req, nil)
		}
		if got, err := canonical(r.Result.Step.Value); err != nil || !bytes.Equal(got, w.expected) {
			b.Fatalf("result %s (%v)", got, err)
		}
	}
}

// benchRuntime runs the engine-level benchmarks, as a Session's would.
var benchRuntime = engine.NewRuntime()
