//go:build unix

package cli

import (
	"os"
	"syscall"
)

// privateStdout takes a private handle on fd 1 for protocol frames and
// points fd 1 and os.Stdout at stderr, so that no stray write anywhere in
// the process can corrupt the frame stream.
func privateStdout() (*os.File, error) {
	fd, err := syscall.Dup(1)
	if err != nil {
		return nil, err
	}
	syscall.CloseOnExec(fd)
	if err := dupTo(2, 1); err != nil {
		return nil, err
	}
	out := os.NewFile(uintptr(fd), "protocol-stdout")
	os.Stdout = os.Stderr
	return out, nil
}
