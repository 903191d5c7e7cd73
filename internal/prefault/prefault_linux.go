package prefault

import (
	"syscall"
	"unsafe"
)

// chunk is the Go runtime's unit for mapping heap memory (its page
// allocator's chunk): the heap is mapped read-write in whole chunks
// aligned to their size, so the chunk around a heap object is all mapped.
const chunk = 4 << 20

// madvPopulateWrite is MADV_POPULATE_WRITE, the same on every Linux
// architecture.
const madvPopulateWrite = 23

// early is the object whose address names the chunk: allocated here, it
// lies where the heap is growing as package initialisation begins.
var early *[64]byte

// result is what init did (for tests).
var result struct {
	off   bool // Env was "0"
	base  uintptr
	errno syscall.Errno
}

func init() {
	if v, _ := syscall.Getenv(Env); v == "0" {
		result.off = true
		return
	}
	early = new([64]byte)
	result.base = uintptr(unsafe.Pointer(early)) &^ (chunk - 1)
	result.errno = populate(result.base, chunk)
}

// populate makes n bytes at base present and writable without changing
// them. The range must be mapped memory of this process.
func populate(base, n uintptr) syscall.Errno {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, base, n, madvPopulateWrite)
	return errno
}
