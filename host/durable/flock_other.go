//go:build !unix

package durable

import "os"

// lockFile opens path, creating it. Without flock there is no lock: a
// blocking lock is granted at once and a non-blocking one is refused, so
// DirStore leases rely on expiry alone and one directory must be used by
// one DirStore at a time.
func lockFile(path string, block bool) (*os.File, bool, error) {
	if !block {
		return nil, false, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	return f, true, nil
}
