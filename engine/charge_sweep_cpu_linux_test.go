package engine

import (
	"syscall"
	"unsafe"
)

// processCPU is the CPU time the process has used, in nanoseconds (every
// thread's, the collector's included), read precisely.
func processCPU() int64 {
	var ts syscall.Timespec
	const clockProcessCPUTimeID = 2
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockProcessCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return -1
	}
	return ts.Nano()
}
