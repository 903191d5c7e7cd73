// Command mustard-sidecar runs untrusted guest JavaScript for an embedding
// host over stdin/stdout. See the README for the protocol.
package main

import (
	"os"

	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
	"github.com/mustard-sidecar/mustard-sidecar/internal/prefault" // the heap's pages a chunk at a time, not a fault at a time
)

func main() { os.Exit(cli.MainServed(os.Args[1:], prefault.Ahead)) }
