package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/internal/trace"
	"github.com/mustard-sidecar/mustard-sidecar/internal/version"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

const usage = `usage: mustard-sidecar [--jsonl] [--memory-budget N] [--max-stage-bytes N]
                       [--snapshot-key-file PATH] [--trace FILE] [--log-format text|json]
                       [--version]

Runs guest JavaScript for an embedding host, speaking the mustard-sidecar
protocol (version 2) on stdin/stdout.

  (default)              length-prefixed binary frames
  --jsonl                newline-delimited JSON, raw bytes as base64 fields
  --memory-budget N      bound in bytes on what the sidecar holds and takes:
                         cached programs, snapshots and policies, parked
                         executions, staged bytes, a compile, the running
                         execution's heap limit (a positive integer; default
                         134217728, 128 MiB, or twice --max-stage-bytes)
  --max-stage-bytes N    bound on staged upload bytes, all stages together
                         (a positive integer, at most half the memory
                         budget; default 67108864, 64 MiB)
  --snapshot-key-file PATH
                         the file's bytes (at least 32) are the only snapshot
                         key resumes may use; snapshot_key_base64 may then be
                         left out
  --trace FILE           record every request and response, keys and tokens
                         redacted, as a transcript the corpus replayer runs
                         (corpus/README.md)
  --log-format text|json log to stderr, one structured record a line: the
                         start, each request (method, duration, error
                         code), limits hit, fatal errors; default: no log
  --version              print the sidecar's version and exit
  -h, --help             print this help and exit
`

// commandLine is what the sidecar's arguments ask for.
type commandLine struct {
	opts       protocol.Options
	tracePath  string
	logFormat  string
	replayArgs []string // the arguments a replay of a trace passes
}

// usageError is an argument the command refuses: its message, then the
// usage text, on stderr; exit 2.
type usageError string

func (e usageError) Error() string { return string(e) }

// errExit stops parsing at --help or --version: what it asked for is
// printed, exit 0.
var errExit = errors.New("exit")

// parseFlags reads args as docs/protocol.md ("The process") spells them. It
// returns the command line and ok, or the exit status after writing what
// the arguments asked for (usage, version) to stdout or why they are
// refused to stderr.
func parseFlags(args []string, stdout, stderr io.Writer) (cl commandLine, code int, ok bool) {
	cl.opts.Transport = protocol.Binary
	cl.replayArgs = []string{}
	// failed is the error a flag's value was refused with: the flag
	// package reports it in words of its own.
	var failed error
	fs := cl.flagSet(stdout, &failed)

	// The flag package also takes -name for --name, --name=true for a
	// boolean and "--" as the end of the flags; the command takes none of
	// them. Arguments are parsed up to the first it refuses, which is
	// refused unless one before it was.
	stop, refused := len(args), usageError("")
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(args[i], "=")
		f := spelled(fs, name)
		if f == nil || (hasValue && isBool(f)) {
			stop, refused = i, usageError(fmt.Sprintf("unknown argument %q", args[i]))
			break
		}
		if !hasValue && !isBool(f) {
			if i+1 == len(args) {
				stop, refused = i, usageError(name+" needs a value")
				break
			}
			i++
		}
	}
	if err := fs.Parse(args[:stop]); err != nil {
		var bad usageError
		switch {
		case failed == errExit:
			return cl, 0, false
		case errors.As(failed, &bad):
			refused = bad
		case failed != nil:
			// A key file that cannot be used: one line, no usage.
			fmt.Fprintf(stderr, "mustard-sidecar: %v\n", failed)
			return cl, 2, false
		default:
			refused = usageError(err.Error())
		}
	}
	if refused == "" && cl.opts.MemoryBudget > 0 && cl.opts.MaxStageBytes > cl.opts.MemoryBudget/2 {
		refused = usageError(fmt.Sprintf("--max-stage-bytes (%d) must be at most half of --memory-budget (%d)", cl.opts.MaxStageBytes, cl.opts.MemoryBudget))
	}
	if refused != "" {
		fmt.Fprintf(stderr, "mustard-sidecar: %s\n%s", refused, usage)
		return cl, 2, false
	}
	return cl, 0, true
}

// spelled is the flag an argument names as the command spells it: --name,
// or -h.
func spelled(fs *flag.FlagSet, arg string) *flag.Flag {
	if arg == "-h" {
		return fs.Lookup("h")
	}
	name, ok := strings.CutPrefix(arg, "--")
	if !ok || name == "h" {
		return nil
	}
	return fs.Lookup(name)
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// flagSet defines the command's flags (the usage text describes each),
// parsed into cl. A flag's value refused, or --help and --version (which
// print to stdout and stop with errExit), leave the error in *failed.
func (cl *commandLine) flagSet(stdout io.Writer, failed *error) *flag.FlagSet {
	fs := flag.NewFlagSet("mustard-sidecar", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	value := func(name, help string, set func(string) error) {
		fs.Func(name, help, func(v string) error { *failed = set(v); return *failed })
	}
	boolean := func(name, help string, set func() error) {
		fs.BoolFunc(name, help, func(string) error { *failed = set(); return *failed })
	}
	boolean("jsonl", "newline-delimited JSON instead of binary frames", func() error {
		cl.opts.Transport = protocol.JSONL
		cl.replayArgs = append(cl.replayArgs, "--jsonl")
		return nil
	})
	value("memory-budget", "bound in bytes on what the sidecar holds and takes", func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n > maxMemoryBudget {
			return usageError(fmt.Sprintf("--memory-budget must be a positive integer of bytes (at most %d), got %q", int64(maxMemoryBudget), v))
		}
		cl.opts.MemoryBudget = n
		cl.replayArgs = append(cl.replayArgs, "--memory-budget", v)
		return nil
	})
	value("max-stage-bytes", "bound on staged upload bytes", func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return usageError(fmt.Sprintf("--max-stage-bytes must be a positive integer, got %q", v))
		}
		cl.opts.MaxStageBytes = n
		cl.replayArgs = append(cl.replayArgs, "--max-stage-bytes", v)
		return nil
	})
	value("snapshot-key-file", "the only snapshot key resumes may use", func(path string) error {
		key, err := readKeyFile(path)
		if err != nil {
			return fmt.Errorf("--snapshot-key-file: %w", err)
		}
		cl.opts.PinnedKey = key
		cl.replayArgs = append(cl.replayArgs, "--snapshot-key-file", trace.PinnedKeyArg)
		return nil
	})
	value("trace", "record the session as a transcript", func(path string) error {
		cl.tracePath = path
		return nil
	})
	value("log-format", "log to stderr: text or json", func(v string) error {
		if v != "text" && v != "json" {
			return usageError(fmt.Sprintf("--log-format must be text or json, got %q", v))
		}
		cl.logFormat = v
		return nil
	})
	boolean("version", "print the version and exit", func() error {
		fmt.Fprintln(stdout, version.Version)
		return errExit
	})
	help := func() error {
		fmt.Fprint(stdout, usage)
		return errExit
	}
	boolean("help", "print the usage and exit", help)
	boolean("h", "print the usage and exit", help)
	return fs
}
