package bench

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/prefault"
)

// The parked measurement turns the command's populating off by the
// variable's name spelled out, since importing the package into the driver
// would populate the driver's heap too: renaming it must not leave the
// measurement counting pages made resident ahead. (This test binary
// imports it, and takes the 4 MiB.)
func TestNoPrefaultNamesTheVariable(t *testing.T) {
	if want := prefault.Env + "=0"; noPrefault != want {
		t.Fatalf("noPrefault is %q, want %q", noPrefault, want)
	}
}

// TestParkedHeap parks a few executions of each parked-memory program in
// process and checks the measurement runs. With MUSTARD_PARKED_PROFILE set
// to a directory it parks 60 and writes a heap profile per program there,
// taken while all are parked (every allocation sampled):
//
//	MUSTARD_PARKED_PROFILE=/tmp/parked go test -run TestParkedHeap -v ./bench/
//	go tool pprof -sample_index=inuse_space -top /tmp/parked/wait.pprof
func TestParkedHeap(t *testing.T) {
	dir := os.Getenv("MUSTARD_PARKED_PROFILE")
	n := 4
	if dir != "" {
		n = 60
		old := runtime.MemProfileRate
		runtime.MemProfileRate = 1
		defer func() { runtime.MemProfileRate = old }()
	}
	for i, p := range ParkedPrograms {
		var parked func()
		if dir != "" {
			parked = func() {
				runtime.GC()
				f, err := os.Create(filepath.Join(dir, []string{"wait", "objects"}[i%2]+".pprof"))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
					t.Fatal(err)
				}
			}
		}
		d, err := ParkedHeap(p, n, parked)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		t.Logf("%s: %d B of heap, %d B of goroutine stack per parked execution (%d parked)", p.Name, d, stackGrowth, n)
	}
}
