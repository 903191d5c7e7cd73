// Package cli is the mustard-sidecar command: flags, stdio wiring and exit
// codes. It is a package so that test and tool binaries can run themselves
// as the sidecar (see internal/hosttest) instead of building it.
package cli

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/internal/gcpace"
	"github.com/mustard-sidecar/mustard-sidecar/internal/trace"
	"github.com/mustard-sidecar/mustard-sidecar/internal/version"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// entropyEnv ("<seed>:<unix_millis>") fixes every execution's Math.random
// seed and clock so recorded transcripts are reproducible. Tests only:
// guests could otherwise predict Math.random.
const entropyEnv = "MUSTARD_SIDECAR_TEST_ENTROPY"

// Main runs the sidecar with the process's stdio and returns its exit
// status.
func Main(args []string) int { return MainServed(args, nil) }

// MainServed is Main, calling served, when it is not nil, on the serving
// goroutine after each response is written: the command's work between
// requests (internal/prefault.Ahead), which an embedding program does not
// take on.
func MainServed(args []string, served func()) int {
	if os.Getenv("GOGC") == "" {
		// The collector's pace follows the live heap (internal/gcpace):
		// GOGC 400 while it is small, since at Go's default a tool-calling
		// workload took 10-15 % longer on one CPU, and a bounded amount of
		// garbage once large answers and snapshots make it large.
		gcpace.Start()
	}
	return run(args, os.Stdin, os.Stderr, served)
}

// softMemoryLimitAbove is how far the Go runtime's soft memory limit sits
// above the memory budget (128 MiB by default: the limit is 192 MiB): room
// for what the budget does not count (the runtime itself, the binary's
// data, the request being read, the response being written) and for
// garbage. Under the limit the collector works harder as the heap nears
// it, so garbage a hostile guest leaves does not pile up between requests.
const softMemoryLimitAbove = 64 << 20

// maxMemoryBudget keeps the budget and the soft limit above it in range.
const maxMemoryBudget = 1 << 50

func run(args []string, stdin io.Reader, stderr io.Writer, served func()) int {
	cl, exit, ok := parseFlags(args, os.Stdout, stderr)
	if !ok {
		return exit
	}
	opts, tracePath, logFormat, replayArgs := cl.opts, cl.tracePath, cl.logFormat, cl.replayArgs
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(SoftMemoryLimit(opts))
	}
	envEntropy := os.Getenv(entropyEnv)
	entropy, err := fixedEntropy(envEntropy)
	if err != nil {
		fmt.Fprintf(stderr, "mustard-sidecar: %v\n%s", err, usage)
		return 2
	}
	// The log goes to stderr as it is: a trace records what the sidecar
	// says, and a replay cannot say the same durations.
	var log *slog.Logger
	switch logFormat {
	case "text":
		log = slog.New(slog.NewTextHandler(stderr, nil))
	case "json":
		log = slog.New(slog.NewJSONHandler(stderr, nil))
	}
	// What the sidecar writes to stderr from here on, a trace records.
	var said strings.Builder
	stderr = io.MultiWriter(stderr, &said)
	if entropy != nil {
		fmt.Fprintf(stderr, "mustard-sidecar: warning: %s is set; executions are not randomized\n", entropyEnv)
	}
	var tr *trace.Writer
	if tracePath != "" {
		transport := "binary"
		if opts.Transport == protocol.JSONL {
			transport = "jsonl"
		}
		tr, err = trace.Create(tracePath, trace.Header{Transport: transport, Args: replayArgs, Entropy: envEntropy}, opts.PinnedKey)
		if err != nil {
			fmt.Fprintf(stderr, "mustard-sidecar: --trace: the trace file cannot be created\n")
			return 2
		}
		if entropy == nil {
			// Each start's own seed and clock go in the trace, so that a
			// replay can give the start the same ones.
			entropy = func() (uint64, int64) {
				seed, clock := protocol.RandomEntropy()
				tr.Entropy(seed, clock)
				return seed, clock
			}
		}
	}
	out, err := privateStdout()
	if err != nil {
		fmt.Fprintf(stderr, "mustard-sidecar: %v\n", err)
		return 1
	}
	opts.Entropy = entropy
	if log != nil {
		transport := "binary"
		if opts.Transport == protocol.JSONL {
			transport = "jsonl"
		}
		log.Info("sidecar started", "version", version.Version, "pid", os.Getpid(), "transport", transport,
			"pinned_key", opts.PinnedKey != nil)
	}
	code := 0
	if err := serve(opts, stdin, out, tr, log, served); err != nil {
		if log != nil {
			log.Error("fatal error", "error", err.Error())
		}
		// Unprefixed: hosts match the start of the message ("invalid
		// request ...", per the contract).
		fmt.Fprintln(stderr, err)
		code = 1
	}
	if log != nil {
		log.Info("sidecar exiting", "exit_code", code)
	}
	if tr != nil {
		if err := tr.Close(code, said.String()); err != nil {
			fmt.Fprintf(stderr, "mustard-sidecar: warning: --trace: writing the trace failed; it is incomplete\n")
		}
	}
	return code
}

// fixedEntropy parses "<seed>:<unix_millis>", or a comma-separated list of
// them: the n-th start takes the n-th pair and every start after the last
// takes the last (a replayed trace gives each start what it read). Empty
// means not set (nil).
func fixedEntropy(v string) (func() (uint64, int64), error) {
	if v == "" {
		return nil, nil
	}
	type pair struct {
		seed  uint64
		clock int64
	}
	var pairs []pair
	for _, item := range strings.Split(v, ",") {
		bad := fmt.Errorf("%s must be <seed>:<unix_millis> (decimal integers), or a comma-separated list of them, got %q", entropyEnv, item)
		s, c, ok := strings.Cut(item, ":")
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
		pairs = append(pairs, pair{seed, clock})
	}
	next := 0
	return func() (uint64, int64) {
		p := pairs[min(next, len(pairs)-1)]
		next++
		return p.seed, p.clock
	}, nil
}
