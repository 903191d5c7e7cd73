// Command mustard-sidecar runs untrusted guest JavaScript for an embedding
// host over stdin/stdout. See the README for the protocol.
package main

import (
	"os"

	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
	_ "github.com/mustard-sidecar/mustard-sidecar/internal/prefault" // the heap's first pages in one system call
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
