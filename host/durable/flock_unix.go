//go:build unix

package durable

import (
	"errors"
	"os"
	"syscall"
)

// lockFile opens path, creating it, and takes an exclusive flock on it,
// waiting for it if block is set; ok is false (and f nil) if it is held
// elsewhere and block is not set. Closing f releases the lock, as the
// end of the process does. A lock taken on a file that was removed
// meanwhile (DirStore.Delete removes its lock files) is let go and taken
// again on the file now at path.
func lockFile(path string, block bool) (f *os.File, ok bool, err error) {
	how := syscall.LOCK_EX
	if !block {
		how |= syscall.LOCK_NB
	}
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, false, err
		}
		for {
			err = syscall.Flock(int(f.Fd()), how)
			if !errors.Is(err, syscall.EINTR) {
				break
			}
		}
		if errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, false, nil
		}
		if err != nil {
			f.Close()
			return nil, false, &os.PathError{Op: "flock", Path: path, Err: err}
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return f, true, nil
		}
		f.Close()
		if err1 != nil {
			return nil, false, err1
		}
		if err2 != nil && !errors.Is(err2, os.ErrNotExist) {
			return nil, false, err2
		}
	}
}
