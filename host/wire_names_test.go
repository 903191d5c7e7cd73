package host

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire/wiretest"
)

// Every member name of the structs a request is encoded from and a
// response decoded into is a name internal/wire declares, and so is every
// one of the structs declared inside functions (which decode results),
// read from the package's source. Limits is written and read as
// wire.Limits.
func TestWireStructNamesAreWireNames(t *testing.T) {
	problems, walked := wiretest.StructNames(request{}, response{}, wireOptions{}, wireAnswer{}, wireAuth{}, wirePolicy{}, wireStep{}, wireCall{},
		wirePayload{}, wireCallError{}, wire.Limits{}, Profile{}, Pong{}, LogLine{})
	if walked < 12 {
		t.Fatalf("walked %d structs: the walk is broken", walked)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, "_test.go") })
	local, found, err := wiretest.LocalStructNames(files...)
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatal("no struct inside a function has a json tag: the scan is broken")
	}
	for _, p := range append(problems, local...) {
		t.Error(p)
	}
}
