package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Snapshot key file bounds. A key shorter than an HMAC-SHA256 block's
// worth of entropy is refused; a file far larger than any key is a mistake
// (a device, a log), not a key.
const (
	minKeyBytes     = 32
	maxKeyFileBytes = 64 << 10
)

// readKeyFile reads --snapshot-key-file: its bytes, exactly, are the key.
// Errors never name the path (it is the operator's, and may say more than
// they meant to share) or Go's own wording.
func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, keyFileError(err)
	}
	defer f.Close()
	key, err := io.ReadAll(io.LimitReader(f, maxKeyFileBytes+1))
	if err != nil {
		return nil, keyFileError(err)
	}
	switch {
	case len(key) < minKeyBytes:
		return nil, fmt.Errorf("the key must be at least %d bytes; the file has %d", minKeyBytes, len(key))
	case len(key) > maxKeyFileBytes:
		return nil, fmt.Errorf("the key file is larger than %d bytes", maxKeyFileBytes)
	}
	return key, nil
}

func keyFileError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("the key file does not exist")
	case errors.Is(err, fs.ErrPermission):
		return errors.New("the key file cannot be read: permission denied")
	}
	return errors.New("the key file cannot be read")
}
