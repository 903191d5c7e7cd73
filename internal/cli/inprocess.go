package cli

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// SessionOptions reads the command's arguments for a session served in
// a host's own process (the Node package's in-process engine), so that
// a host configures either engine with the same arguments. What only a
// process has is refused: the JSONL transport, a trace, a log, --version
// and --help.
func SessionOptions(args []string) (protocol.Options, error) {
	var stderr bytes.Buffer
	cl, _, ok := parseFlags(args, io.Discard, &stderr)
	if !ok {
		msg, _, _ := strings.Cut(strings.TrimPrefix(stderr.String(), "mustard-sidecar: "), "\n")
		if msg == "" {
			msg = "--version and --help print and exit: a session in process takes neither"
		}
		return protocol.Options{}, errors.New(msg)
	}
	switch {
	case cl.opts.Transport != protocol.Binary:
		return protocol.Options{}, errors.New("--jsonl: a session in process takes binary frames only")
	case cl.tracePath != "":
		return protocol.Options{}, errors.New("--trace: a session in process records no transcript")
	case cl.logFormat != "":
		return protocol.Options{}, errors.New("--log-format: a session in process has no stderr log")
	}
	return cl.opts, nil
}

// SoftMemoryLimit is the Go runtime's soft memory limit for a process
// serving sessions with these options: above their memory budget by
// what the budget does not count (Main sets it so).
func SoftMemoryLimit(opts protocol.Options) int64 {
	budget := opts.MemoryBudget
	if budget == 0 {
		budget = max(protocol.DefaultMemoryBudget, 2*opts.MaxStageBytes)
	}
	return budget + softMemoryLimitAbove
}
