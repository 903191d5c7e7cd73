// Command mustard-sidecar runs untrusted guest JavaScript for an embedding
// host over stdin/stdout. See the README for the protocol.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mustard-sidecar/mustard-sidecar/frame"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

const usage = `usage: mustard-sidecar [--jsonl]

Runs guest JavaScript for an embedding host, speaking the mustard-sidecar
protocol (version 2) on stdin/stdout.

  (default)   length-prefixed binary frames
  --jsonl     newline-delimited JSON, raw bytes as base64 fields
  -h, --help  print this help and exit
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stderr))
}

func run(args []string, stdin io.Reader, stderr io.Writer) int {
	transport := protocol.Binary
	for _, a := range args {
		switch a {
		case "--jsonl":
			transport = protocol.JSONL
		case "-h", "--help":
			fmt.Fprint(os.Stdout, usage)
			return 0
		default:
			fmt.Fprintf(stderr, "mustard-sidecar: unknown argument %q\n%s", a, usage)
			return 2
		}
	}
	out, err := privateStdout()
	if err != nil {
		fmt.Fprintf(stderr, "mustard-sidecar: %v\n", err)
		return 1
	}
	if err := serve(transport, stdin, out); err != nil {
		fmt.Fprintf(stderr, "mustard-sidecar: %v\n", err)
		return 1
	}
	return 0
}

// serve answers requests until EOF. A returned error is fatal.
func serve(transport protocol.Transport, in io.Reader, out io.Writer) error {
	s := protocol.NewSession(protocol.Options{Transport: transport})
	defer s.Close()
	if transport == protocol.JSONL {
		r, w := frame.NewLineReader(in), frame.NewLineWriter(out)
		for {
			line, err := r.Next()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return readError(err, "invalid request")
			}
			resp, err := s.Handle(line, nil)
			if err != nil {
				return err
			}
			if err := w.Write(resp.Header); err != nil {
				return fmt.Errorf("writing response: %w", err)
			}
		}
	}
	r, w := frame.NewBinaryReader(in), frame.NewBinaryWriter(out)
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return readError(err, "invalid request header")
		}
		resp, err := s.Handle(f.Header, f.Payload)
		if err != nil {
			return err
		}
		if err := w.Write(resp.Header, resp.Payload); err != nil {
			return fmt.Errorf("writing response: %w", err)
		}
	}
}

func readError(err error, prefix string) error {
	if errors.Is(err, frame.ErrFrameTooLarge) || errors.Is(err, frame.ErrLineTooLarge) || errors.Is(err, frame.ErrTruncated) {
		return err
	}
	return fmt.Errorf("%s: reading stdin failed", prefix)
}
