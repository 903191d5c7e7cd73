//go:build unix

package engine

import (
	"os"
	"syscall"
	"testing"
)

func makeFIFO(t *testing.T, path string) (string, bool) {
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Logf("no named pipe: %v", err)
		return "", false
	}
	return path, true
}

// releaseFIFO unblocks a reader stuck opening the pipe.
func releaseFIFO(path string) {
	if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		_ = f.Close()
	}
}
