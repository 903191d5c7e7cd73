//go:build !unix

package cli

import (
	"io"
	"os"
)

// requestInput returns what the sidecar reads requests from: stdin.
func requestInput() io.Reader { return os.Stdin }

// responseOutput returns what the sidecar writes responses to.
func responseOutput(out *os.File) io.Writer { return out }
