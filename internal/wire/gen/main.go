// Command gen writes the wire's names (methods, fields, error codes and
// ping's features) as JSON, for clients outside Go to check their own
// names against: go generate ./internal/wire writes the Node package's
// copy, clients/node/test/fixtures/wire-names.json.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	out := flag.String("o", "", "the file to write (default: standard output)")
	flag.Parse()
	b := names()
	if *out == "" {
		os.Stdout.Write(b)
		return
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
