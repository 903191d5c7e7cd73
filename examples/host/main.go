// Command host is a small embedding host built on the public host
// package: it spawns mustard-sidecar, runs a guest program, answers each
// capability call from a fixture file and prints every step, with the
// lines the guest wrote with console. With -cold it kills the sidecar at
// every suspension and resumes from the raw snapshot bytes in a
// brand-new process.
//
//	go run ./examples/host examples/trip/trip.js examples/trip/fixture.json
//	go run ./examples/host examples/codemode/triage.ts examples/codemode/fixture.json
//
// A program whose name ends in .ts is compiled as TypeScript. The fixture
// names the capabilities to grant (dotted names such as
// "github.create_issue" give the guest namespaces), the inputs, the
// answers in call order, and optionally "console": "collect" (collect
// the guest's console lines) and "entry": "call" (the program is a
// function of its inputs).
//
// The sidecar is the binary named by -sidecar or $MUSTARD_SIDECAR_BIN;
// without either, this program runs itself as the sidecar (it links the
// sidecar's command for that), so the example works from a fresh clone
// and leaves no build behind. A host outside this repository runs the
// installed binary instead (host.DefaultCommand finds it on PATH).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// asSidecar marks the process this program started to be the sidecar.
const asSidecar = "MUSTARD_EXAMPLE_HOST_AS_SIDECAR"

type fixture struct {
	Inputs       map[string]value.Value `json:"inputs"`
	Capabilities []string               `json:"capabilities"`
	Answers      []host.Payload         `json:"answers"`
	Console      host.Console           `json:"console"`
	Entry        host.Entry             `json:"entry"`
}

func main() {
	if os.Getenv(asSidecar) == "1" {
		os.Exit(cli.Main(os.Args[1:]))
	}
	cold := flag.Bool("cold", false, "restart the sidecar at every suspension and resume from raw snapshot bytes")
	jsonl := flag.Bool("jsonl", false, "use the --jsonl transport")
	sidecar := flag.String("sidecar", os.Getenv("MUSTARD_SIDECAR_BIN"), "path of a mustard-sidecar binary (default $MUSTARD_SIDECAR_BIN, else this program)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: host [-cold] [-jsonl] [-sidecar PATH] program.js|program.ts fixture.json")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(os.Stdout, flag.Arg(0), flag.Arg(1), *cold, *jsonl, *sidecar); err != nil {
		fmt.Fprintln(os.Stderr, "host:", err)
		os.Exit(1)
	}
}

// command returns the sidecar to start: the given binary, or this one.
func command(sidecar string) (*exec.Cmd, error) {
	if sidecar != "" {
		return exec.Command(sidecar), nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), asSidecar+"=1")
	return cmd, nil
}

func run(out io.Writer, programPath, fixturePath string, cold, jsonl bool, sidecar string) error {
	ctx := context.Background()
	src, err := os.ReadFile(programPath)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(fixturePath)
	if err != nil {
		return err
	}
	var fx fixture
	if err := json.Unmarshal(raw, &fx); err != nil {
		return fmt.Errorf("%s: %v", fixturePath, err)
	}
	start := func() (*host.Client, error) {
		cmd, err := command(sidecar)
		if err != nil {
			return nil, err
		}
		return host.NewClient(host.Config{Cmd: cmd, JSONL: jsonl})
	}
	c, err := start()
	if err != nil {
		return err
	}
	defer func() { c.Close() }()

	// The host's own snapshot key: it signs every snapshot it resumes.
	key, err := host.GenerateKey()
	if err != nil {
		return err
	}
	lang := host.JavaScript
	if strings.HasSuffix(programPath, ".ts") {
		lang = host.TypeScript
	}
	prog, err := c.CompileWith(ctx, string(src), host.CompileOptions{Language: lang})
	if err != nil {
		return fmt.Errorf("compile failed: %w", err)
	}
	fmt.Fprintf(out, "compile   program_id=%.16s… (%d bytes, %s)\n", prog.ID, len(prog.Bytes), lang)

	step, err := c.Start(ctx, host.StartRequest{Program: prog, Inputs: fx.Inputs, Capabilities: fx.Capabilities,
		Console: fx.Console, Entry: fx.Entry})
	for n := 0; ; n++ {
		if err != nil {
			var se *host.Error
			if errors.As(err, &se) {
				printLogs(out, se.Logs)
			}
			return fmt.Errorf("step failed: %w", err)
		}
		printLogs(out, step.Logs)
		s := step.Suspended
		if s == nil {
			fmt.Fprintf(out, "completed %s\n", step.Value.AppendJSON(nil))
			return nil
		}
		args, _ := json.Marshal(s.Args)
		fmt.Fprintf(out, "suspended %s%s snapshot=%.16s… (%d bytes)\n", s.Capability, args, s.SnapshotID, len(s.Snapshot))
		if n >= len(fx.Answers) {
			return fmt.Errorf("the fixture has no answer for call %d", n+1)
		}
		answer := fx.Answers[n]
		a, _ := json.Marshal(answer)
		fmt.Fprintf(out, "  answer  %s\n", a)
		req := host.ResumeRequest{Key: key, Payload: answer}
		if cold {
			// Simulate a crash: a new process knows nothing, so the host
			// sends the snapshot bytes and re-asserts the whole policy.
			c.Kill()
			c.Close()
			if c, err = start(); err != nil {
				return err
			}
			req.Snapshot = s.Snapshot
			req.Policy = &host.Policy{Capabilities: fx.Capabilities, Console: fx.Console}
			fmt.Fprintln(out, "  (restarted the sidecar; resuming from raw snapshot bytes)")
		} else {
			req.SnapshotID, req.PolicyID = s.SnapshotID, s.PolicyID
		}
		step, err = c.Resume(ctx, req)
	}
}

// printLogs prints the lines the guest wrote with console during a step.
func printLogs(out io.Writer, lines []host.LogLine) {
	for _, l := range lines {
		fmt.Fprintf(out, "  %-7s %s\n", l.Level, l.Text)
	}
}
