//go:build linux

package prefault

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// resident counts the pages of b that are in memory.
func resident(t *testing.T, b []byte) int {
	t.Helper()
	page := syscall.Getpagesize()
	vec := make([]byte, (len(b)+page-1)/page)
	_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0])))
	require.Zero(t, errno, "mincore")
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// requireZero fails the test at b's first byte that is not zero: the
// populating changed what was there.
func requireZero(t *testing.T, b []byte) {
	t.Helper()
	for i, v := range b {
		if v != 0 {
			t.Fatalf("byte %d is %d after populating, want 0", i, v)
		}
	}
}

func TestPopulateMakesPagesPresentUnchanged(t *testing.T) {
	const size = 1 << 20
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	require.NoError(t, err)
	defer syscall.Munmap(b)
	b[0] = 7 // touched before, kept as it is
	pages := size / syscall.Getpagesize()
	// One page, or a few where the kernel takes anonymous memory in
	// larger folios.
	require.Less(t, resident(t, b), pages/2)

	errno := populate(uintptr(unsafe.Pointer(&b[0])), size)
	if errors.Is(errno, syscall.EINVAL) {
		t.Skip("this kernel has no MADV_POPULATE_WRITE (Linux 5.14)")
	}
	require.Zero(t, errno)
	require.Equal(t, pages, resident(t, b))
	require.Equal(t, byte(7), b[0])
	b[0] = 0 // checked: the rest must be as it was too
	requireZero(t, b)
}

// The chunk init populated is the heap's: the object it was named after
// lies in it, and the call succeeded on a kernel that has the advice.
func TestInitPopulatedTheHeapChunk(t *testing.T) {
	if result.off {
		t.Skip(Env + "=0 is set")
	}
	if errors.Is(result.errno, syscall.EINVAL) {
		t.Skip("this kernel has no MADV_POPULATE_WRITE (Linux 5.14)")
	}
	require.Zero(t, result.errno)
	require.Zero(t, result.base%chunk)
	addr := uintptr(unsafe.Pointer(early))
	require.True(t, result.base <= addr && addr < result.base+chunk)
}

// Memory reserved but not mapped read-write (as the heap's arenas are
// beyond their mapped chunks) is refused, and stays absent.
func TestPopulateReservedIsRefused(t *testing.T) {
	b, err := syscall.Mmap(-1, 0, 1<<16, syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	require.NoError(t, err)
	defer syscall.Munmap(b)
	require.NotZero(t, populate(uintptr(unsafe.Pointer(&b[0])), 1<<16))
	require.Zero(t, resident(t, b))
}

// reportEnv makes TestReportInit print what init did, in a process of the
// test binary that TestEnvTurnsItOff starts.
const reportEnv = "PREFAULT_TEST_REPORT"

func TestReportInit(t *testing.T) {
	if os.Getenv(reportEnv) == "" {
		t.Skip("run by TestEnvTurnsItOff")
	}
	earlier := make([]byte, 3*chunk) // the heap grows before the first call
	Ahead()                          // which only takes the heap's size
	first := settle()
	big := make([]byte, 3*chunk) // and after it
	Ahead()
	looks := settle()
	runtime.KeepAlive(earlier)
	runtime.KeepAlive(big)
	os.Stdout.WriteString("off=" + strconv.FormatBool(result.off) + " looks=" + strconv.Itoa(first) + "," + strconv.Itoa(looks) + " base=" + strconv.FormatUint(uint64(result.base), 16) + "\n")
}

func TestEnvTurnsItOff(t *testing.T) {
	// Unset, it populates (TestInitPopulatedTheHeapChunk, in this process).
	for _, c := range []struct{ value, want string }{{"0", "off=true looks=0,0 base=0\n"}, {"1", "off=false looks=0,1 base="}} {
		t.Run(c.value, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestReportInit$", "-test.v=false")
			cmd.Env = append(os.Environ(), reportEnv+"=1", Env+"="+c.value)
			out, err := cmd.Output()
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(string(out), c.want), "%s=%q: %s", Env, c.value, out)
			if c.value != "0" {
				require.NotContains(t, string(out), "base=0\n", "%s=%q populated nothing", Env, c.value)
			}
		})
	}
}

// settle lets a populating begun by an earlier call end, and returns how
// many times the mapping has been looked up.
func settle() int {
	ahead.wg.Wait()
	ahead.mu.Lock()
	defer ahead.mu.Unlock()
	return ahead.looks
}

// grown keeps what TestAheadPopulatesTheHeapsGrowth allocated.
var grown [][]byte

// What the heap grows into after init is populated by the next call, and
// its bytes are as they were; a call with no growth since looks nothing up.
func TestAheadPopulatesTheHeapsGrowth(t *testing.T) {
	if result.off {
		t.Skip(Env + "=0 is set")
	}
	if errors.Is(result.errno, syscall.EINVAL) {
		t.Skip("this kernel has no MADV_POPULATE_WRITE (Linux 5.14)")
	}
	Ahead() // the first call in this process: the heap's size at start-up
	Ahead() // what the test binary grew since
	looks := settle()
	Ahead()
	require.Equal(t, looks, settle(), "looked the mapping up without the heap growing")

	// Larger than the room the heap has: the runtime maps new chunks for
	// it, above the populated top, and does not write them (fresh memory
	// is zero). It is kept, so that a later run in this process (-count)
	// needs new memory too.
	big := make([]byte, 2*chunk)
	grown = append(grown, big)
	pages := len(big) / syscall.Getpagesize()
	if resident(t, big) >= pages/2 {
		t.Skip("the heap had room for it in memory already populated")
	}
	Ahead()
	require.Equal(t, looks+1, settle())
	require.Equal(t, pages, resident(t, big))
	requireZero(t, big)
}
