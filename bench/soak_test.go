package bench

import (
	"bytes"
	"strings"
	"testing"
)

// TestSoak runs the soak with a tiny request count, so that it cannot rot
// unnoticed. Its RSS growth check is trivial at this size (the reference
// is taken at the last request); the response and goroutine checks are
// not.
func TestSoak(t *testing.T) {
	cfg := DefaultSoakConfig()
	cfg.Requests, cfg.Every = 300, 100
	rep, err := Soak(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep.Print(&out)
	if f := rep.Failures(); len(f) > 0 {
		t.Fatalf("soak failed: %s\n%s", strings.Join(f, "; "), out.String())
	}
	if rep.Requests != 300 || len(rep.Samples) != 3 || rep.Samples[2].Requests != 300 {
		t.Errorf("report:\n%s", out.String())
	}
	for k, n := range rep.Kinds {
		if n == 0 && soakMix[k].weight >= 30 {
			t.Errorf("no %q request in 300", soakMix[k].name)
		}
	}
	t.Logf("\n%s", out.String())
}
