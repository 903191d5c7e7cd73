package bench

import (
	"bytes"
	"fmt"
	"math"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// TestDriver runs the driver's measurements with tiny counts against the
// real binary, so the driver cannot rot unnoticed. The peer is left out.
func TestDriver(t *testing.T) {
	// The check that workloads run cold as hot spawns a process per call:
	// one workload's in the default run (TestWorkloadModes checks them all
	// in one session), all in the long suites.
	cfg := Config{Rounds: 2, Hot: 6, HotChain: 4, Compile: 2, ColdStart: 1, Workload: 2, ColdResume: 1, ColdSteps: []int{3}, History: 2, HistorySteps: []int{5}, Large: 1,
		ColdChecks: longtest.Pick(1, 0)}
	rep, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{
		"pipe floor: 600 B echoed by cat (no sidecar)":                           6,
		"ping round trip, binary frames":                                         6,
		"hot round trip, binary frames":                                          6,
		"hot round trip, binary frames, 1 KiB args, from step 5":                 2,
		"hot round trip, binary frames, delta delivery":                          6,
		"hot round trip, binary frames, 1 KiB args, from step 5, delta delivery": 2,
		"hot round trip, JSONL":                                                  6,
		"cold start: spawn → first compile answered":                             1,
		"fresh process: first start (triage, to its first call)":                 1,
		"fresh process: tenth start (same)":                                      1,
		idleFirstRow:                                                             1,
		idleTenthRow:                                                             1,
		"cold resume at step 3: spawn → answered":                                1,
		"cold resume at step 3: request in fresh process":                        1,
		largeFirstRow:                 5,
		largeLastRow:                  5,
		largeColdRow:                  1,
		largeWarmRow:                  1,
		largeLabel + freshSuffix:      1,
		structuredLabel + firstSuffix: 5,
		structuredLabel + lastSuffix:  5,
		structuredLabel + coldSuffix:  1,
		structuredLabel + warmSuffix:  1,
		structuredLabel + freshSuffix: 1,
		awaitedLabel + firstSuffix:    5,
		awaitedLabel + lastSuffix:     5,
		awaitedLabel + coldSuffix:     1,
		awaitedLabel + warmSuffix:     1,
		awaitedLabel + freshSuffix:    1,
		hugeRow:                       hugeCalls - 1,
	}
	ws, err := LoadWorkloads()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		want["compile "+w.Name+", warm process"] = 2
		want[fmt.Sprintf("%s end to end (%d calls): compile+start+resumes", w.Name, len(w.Calls))] = 2
		want[w.Name+" end to end, program cached: start+resumes"] = 2
		want[w.Name+" end to end, program cached, delta delivery"] = 2
		want[w.Name+" end to end, program cached, batch calls"] = 2
	}
	if len(rep.Crossings) != len(ws) || rep.NoBatch != "" {
		t.Errorf("crossings %+v (no batch: %q)", rep.Crossings, rep.NoBatch)
	}
	for _, x := range rep.Crossings {
		if x.One != x.Calls+1 || x.Batch < 2 || x.Batch > x.One || x.OrderNote != "" {
			t.Errorf("crossings %+v", x)
		}
	}
	if _, err := exec.LookPath("cat"); err != nil {
		delete(want, "pipe floor: 600 B echoed by cat (no sidecar)")
	}
	if len(rep.Rows) != len(want) {
		t.Errorf("%d rows, want %d", len(rep.Rows), len(want))
	}
	for _, r := range rep.Rows {
		n, ok := want[r.Name]
		if !ok {
			t.Errorf("unexpected row %q", r.Name)
			continue
		}
		if len(r.Ours) != n {
			t.Errorf("%s: %d samples, want %d", r.Name, len(r.Ours), n)
		}
		for _, d := range r.Ours {
			if d <= 0 || d > time.Minute {
				t.Errorf("%s: implausible sample %v", r.Name, d)
			}
		}
		if len(r.Peer) != 0 {
			t.Errorf("%s: peer samples with the peer disabled", r.Name)
		}
	}
	var out bytes.Buffer
	rep.Print(&out)
	if !strings.Contains(out.String(), "peer column skipped: disabled") || !strings.Contains(out.String(), "| hot round trip, binary frames | 6 |") ||
		!strings.Contains(out.String(), "40 × 50 KB answers, ours: final snapshot") ||
		!strings.Contains(out.String(), "\n| triage | 25 | 26 | 5 | ") {
		t.Errorf("report:\n%s", out.String())
	}
}

func TestQuantile(t *testing.T) {
	var s []time.Duration
	for i := 10; i >= 1; i-- {
		s = append(s, time.Duration(i))
	}
	if m, p := Quantile(s, 0.5), Quantile(s, 0.9); m != 5 || p != 9 {
		t.Errorf("median %v p90 %v, want 5 and 9", m, p)
	}
	if Quantile(nil, 0.5) != 0 || Quantile(s[:1], 0.9) != 10 {
		t.Error("edge cases")
	}
}

func TestStructured(t *testing.T) {
	got, err := Structured([]byte(`{"b":[1,"x",null,true],"a":{"c":-2.5e3}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Object":{"b":{"Array":[{"Number":{"Finite":1}},{"String":"x"},"Null",{"Bool":true}]},"a":{"Object":{"c":{"Number":{"Finite":-2.5e3}}}}}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	c, err := canonical(got)
	if err != nil || string(c) != `{"b":[1,"x",null,true],"a":{"c":-2500}}` {
		t.Errorf("canonical %s %v", c, err)
	}
}

func TestSummary(t *testing.T) {
	d := func(ns ...int) []time.Duration {
		var s []time.Duration
		for _, n := range ns {
			s = append(s, time.Duration(n))
		}
		return s
	}
	g := GalleryGroup
	rep := &Report{Rows: []*Row{
		{Name: "a end to end", PeerKey: workloadKey + "a", Ours: d(10, 20, 30), Peer: d(20)},       // 1
		{Name: "b end to end", PeerKey: workloadKey + "b", Ours: d(80), Peer: d(10, 20, 30)},       // 4
		{Name: "c end to end", PeerKey: workloadKey + "c", Ours: d(40), Peer: d(20)},               // 2
		{Name: "d end to end", PeerKey: workloadKey + "d", Ours: d(40)},                            // no peer
		{Name: "a cached", PeerKey: workloadCachedKey + "a", Ours: d(30), Peer: d(10)},             // 3
		{Name: "g/x end to end", PeerKey: workloadKey + "g/x", Group: g, Ours: d(10), Peer: d(20)}, // 0.5
		{Name: "g/y end to end", PeerKey: workloadKey + "g/y", Group: g, Ours: d(40), Peer: d(20)}, // 2
		{Name: "compile a", PeerKey: "compile/a", Ours: d(1), Peer: d(100)},                        // not a workload row
		{Name: "hot round trip", PeerKey: "hot", Ours: d(1000), Peer: d(1)},                        // neither
	}}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	s, ok := rep.Summary("", false)
	if !ok || len(s.Ratios) != 3 || !near(s.Geomean, 2) || s.Min != (WorkloadRatio{"a", 1}) || s.Max != (WorkloadRatio{"b", 4}) {
		t.Errorf("end to end: %+v %v", s, ok)
	}
	if s, ok := rep.Summary("", true); !ok || len(s.Ratios) != 1 || !near(s.Geomean, 3) {
		t.Errorf("cached: %+v %v", s, ok)
	}
	if s, ok := rep.Summary(g, false); !ok || len(s.Ratios) != 2 || !near(s.Geomean, 1) || s.Min.Name != "g/x" || s.Max.Name != "g/y" {
		t.Errorf("gallery: %+v %v", s, ok)
	}
	if _, ok := rep.Summary(g, true); ok {
		t.Error("gallery, cached: a summary without samples")
	}
	var out bytes.Buffer
	rep.Print(&out)
	for _, want := range []string{
		"\nbench/workloads end to end (compile+start+resumes), ours/peer over 3 programs: geomean 2.00×, min 1.00× (a), max 4.00× (b)\n",
		"\nbench/workloads end to end (program cached, start+resumes), ours/peer over 1 programs: geomean 3.00×, min 3.00× (a), max 3.00× (a)\n",
		"\nreference gallery end to end (compile+start+resumes), ours/peer over 2 programs: geomean 1.00×, min 0.50× (g/x), max 2.00× (g/y)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if _, ok := (&Report{}).Summary("", false); ok {
		t.Error("summary of a report without peer samples")
	}
}
