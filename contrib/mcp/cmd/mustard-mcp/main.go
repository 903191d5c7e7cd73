// Command mustard-mcp is an MCP server whose tool run_code runs
// TypeScript or JavaScript programs in the mustard sidecar, with the
// tools of the upstream MCP servers it is configured with as functions:
//
//	mustard-mcp --config FILE [--http ADDR] [--store DIR] [--sidecar PATH]
//
// See contrib/mcp/README.md.
package main

import (
	"os"

	"github.com/mustard-sidecar/mustard-sidecar/contrib/mcp/server"
)

func main() { os.Exit(server.Main(os.Args[1:])) }
