// Package cli is the mustard-sidecar command: flags, stdio wiring and exit
// codes. It is a package so that test and tool binaries can run themselves
// as the sidecar (see internal/hosttest) instead of building it.
package cli

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/internal/version"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

const usage = `usage: mustard-sidecar [--jsonl] [--max-stage-bytes N] [--snapshot-key-file PATH] [--version]

Runs guest JavaScript for an embedding host, speaking the mustard-sidecar
protocol (version 2) on stdin/stdout.

  (default)              length-prefixed binary frames
  --jsonl                newline-delimited JSON, raw bytes as base64 fields
  --max-stage-bytes N    bound on staged upload bytes, all stages together
                         (a positive integer; default 67108864, 64 MiB)
  --snapshot-key-file PATH
                         the file's bytes (at least 32) are the only snapshot
                         key resumes may use; snapshot_key_base64 may then be
                         left out
  --version              print the sidecar's version and exit
  -h, --help             print this help and exit
`

// entropyEnv ("<seed>:<unix_millis>") fixes every execution's Math.random
// seed and clock so recorded transcripts are reproducible. Tests only:
// guests could otherwise predict Math.random.
const entropyEnv = "MUSTARD_SIDECAR_TEST_ENTROPY"

// Main runs the sidecar with the process's stdio and returns its exit
// status.
func Main(args []string) int {
	if os.Getenv("GOMEMLIMIT") == "" {
		// A soft limit: the collector works harder as the heap nears it, so
		// garbage a hostile guest leaves does not pile up between requests.
		debug.SetMemoryLimit(softMemoryLimit)
	}
	return run(args, os.Stdin, os.Stderr)
}

const softMemoryLimit = 192 << 20

func run(args []string, stdin io.Reader, stderr io.Writer) int {
	opts := protocol.Options{Transport: protocol.Binary}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		switch {
		case a == "--jsonl":
			opts.Transport = protocol.JSONL
		case a == "-h" || a == "--help":
			fmt.Fprint(os.Stdout, usage)
			return 0
		case a == "--version":
			fmt.Fprintln(os.Stdout, version.Version)
			return 0
		case name == "--snapshot-key-file":
			if !hasVal {
				if i+1 == len(args) {
					fmt.Fprintf(stderr, "mustard-sidecar: --snapshot-key-file needs a value\n%s", usage)
					return 2
				}
				i++
				val = args[i]
			}
			key, err := readKeyFile(val)
			if err != nil {
				fmt.Fprintf(stderr, "mustard-sidecar: --snapshot-key-file: %v\n", err)
				return 2
			}
			opts.PinnedKey = key
		case name == "--max-stage-bytes":
			if !hasVal {
				if i+1 == len(args) {
					fmt.Fprintf(stderr, "mustard-sidecar: --max-stage-bytes needs a value\n%s", usage)
					return 2
				}
				i++
				val = args[i]
			}
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n <= 0 {
				fmt.Fprintf(stderr, "mustard-sidecar: --max-stage-bytes must be a positive integer, got %q\n%s", val, usage)
				return 2
			}
			opts.MaxStageBytes = n
		default:
			fmt.Fprintf(stderr, "mustard-sidecar: unknown argument %q\n%s", a, usage)
			return 2
		}
	}
	entropy, err := fixedEntropy(os.Getenv(entropyEnv))
	if err != nil {
		fmt.Fprintf(stderr, "mustard-sidecar: %v\n%s", err, usage)
		return 2
	}
	if entropy != nil {
		fmt.Fprintf(stderr, "mustard-sidecar: warning: %s is set; executions are not randomized\n", entropyEnv)
	}
	out, err := privateStdout()
	if err != nil {
		fmt.Fprintf(stderr, "mustard-sidecar: %v\n", err)
		return 1
	}
	opts.Entropy = entropy
	if err := Serve(opts, stdin, out); err != nil {
		// Unprefixed: hosts match the start of the message ("invalid
		// request ...", per the contract).
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// fixedEntropy parses "<seed>:<unix_millis>". Empty means not set (nil).
func fixedEntropy(v string) (func() (uint64, int64), error) {
	if v == "" {
		return nil, nil
	}
	bad := fmt.Errorf("%s must be <seed>:<unix_millis> (decimal integers), got %q", entropyEnv, v)
	s, c, ok := strings.Cut(v, ":")
	if !ok {
		return nil, bad
	}
	seed, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return nil, bad
	}
	clock, err := strconv.ParseInt(c, 10, 64)
	if err != nil {
		return nil, bad
	}
	return func() (uint64, int64) { return seed, clock }, nil
}
