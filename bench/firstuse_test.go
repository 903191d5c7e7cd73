package bench

import (
	"bytes"
	"strings"
	"testing"
)

// TestFirstUse runs the first-use measurement once per program against the
// real binary: every program completes in a fresh process, and the table
// has a row for each.
func TestFirstUse(t *testing.T) {
	figs, err := MeasureFirstUse(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != len(FirstUsePrograms) {
		t.Fatalf("%d figures for %d programs", len(figs), len(FirstUsePrograms))
	}
	for i, f := range figs {
		if f.Program != FirstUsePrograms[i].Name || f.Compile <= 0 || f.Start <= 0 {
			t.Errorf("figure %d: %+v", i, f)
		}
	}
	var b bytes.Buffer
	PrintFirstUse(&b, figs, 1)
	if got := strings.Count(b.String(), "\n| "); got != len(figs)+2 { // and the header and its rule
		t.Errorf("%d table rows for %d programs:\n%s", got, len(figs), b.String())
	}
}
