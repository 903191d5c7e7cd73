package bench

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestDriver runs the driver's measurements with tiny counts against the
// real binary, so the driver cannot rot unnoticed. The peer is left out.
func TestDriver(t *testing.T) {
	cfg := Config{Rounds: 2, Hot: 6, HotChain: 4, Compile: 2, ColdStart: 1, Workload: 2, ColdResume: 1, ColdSteps: []int{3}, History: 2, HistorySteps: []int{5}, Large: 1}
	rep, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{
		"pipe floor: 600 B echoed by cat (no sidecar)":                           6,
		"hot round trip, binary frames":                                          6,
		"hot round trip, binary frames, 1 KiB args, from step 5":                 2,
		"hot round trip, binary frames, delta delivery":                          6,
		"hot round trip, binary frames, 1 KiB args, from step 5, delta delivery": 2,
		"hot round trip, JSONL":                                                  6,
		"cold start: spawn → first compile answered":                             1,
		"fresh process: first start (triage, to its first call)":                 1,
		"fresh process: tenth start (same)":                                      1,
		"cold resume at step 3: spawn → answered":                                1,
		"cold resume at step 3: request in fresh process":                        1,
		largeFirstRow: 5,
		largeLastRow:  5,
		"40 × 50 KB answers: cold resume of the last suspension, staged upload + resume": 1,
	}
	ws, err := LoadWorkloads()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		want["compile "+w.Name+", warm process"] = 2
		want[fmt.Sprintf("%s end to end (%d calls): compile+start+resumes", w.Name, len(w.Calls))] = 2
		want[w.Name+" end to end, program cached: start+resumes"] = 2
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
		!strings.Contains(out.String(), "40 × 50 KB answers, ours: final snapshot") {
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
