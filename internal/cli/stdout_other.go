//go:build !unix

package cli

import "os"

func privateStdout() (*os.File, error) {
	out := os.Stdout
	os.Stdout = os.Stderr
	return out, nil
}
