package bench

import (
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire/wiretest"
)

// The structs the driver decodes responses into name only members
// internal/wire declares: the named ones by reflection, the ones declared
// inside functions from the source of the files that speak the protocol.
func TestResponseStructNamesAreWireNames(t *testing.T) {
	problems, walked := wiretest.StructNames(soakResponse{})
	local, found, err := wiretest.LocalStructNames("host.go", "calls.go", "driver.go", "large.go", "soak.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(problems, local...) {
		t.Error(p)
	}
	if walked == 0 || found == 0 {
		t.Fatalf("walked %d structs, read %d tags inside functions: the scan is broken", walked, found)
	}
}
