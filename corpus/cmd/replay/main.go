// Command replay runs transcripts again against this build of the sidecar
// and reports the first difference from each recording: a trace a host
// recorded with --trace, or a corpus transcript.
//
//	go run ./corpus/cmd/replay session.jsonl [more.jsonl ...]
//	go run ./corpus/cmd/replay -seeds session.jsonl   # also add fuzz seeds from it
//
// With -seeds, the fuzz seed corpora (corpus/README.md, "Fuzzing") gain
// seeds derived from each transcript, named trace_<name>_...: the
// transcript's request streams, programs, snapshots and values, with the
// replay's keys and tokens in place of the redacted ones. Plain go test
// then runs them; regenerating the transcript seeds leaves them alone.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/corpus"
	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

// seedPrefix names the seeds derived from traces, apart from the ones
// derived from the committed transcripts.
const seedPrefix = "trace_"

func main() {
	hosttest.RunAsSidecar(cli.Main)
	seeds := flag.Bool("seeds", false, "also write fuzz seeds derived from each transcript")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: replay [-seeds] transcript.jsonl ...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	failed := false
	for _, path := range flag.Args() {
		if err := replay(path, *seeds); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			failed = true
			continue
		}
		fmt.Printf("%s: every response matched\n", path)
	}
	if failed {
		os.Exit(1)
	}
}

func replay(path string, seeds bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	t, err := corpus.Parse(data)
	if err != nil {
		return err
	}
	if err := corpus.Replay(t); err != nil {
		return err
	}
	if !seeds {
		return nil
	}
	restored, err := corpus.Restored(t)
	if err != nil {
		return err
	}
	files, err := corpus.Seeds([]*corpus.Transcript{restored})
	if err != nil {
		return err
	}
	root, err := corpus.ModuleRoot()
	if err != nil {
		return err
	}
	for rel, b := range files {
		name := seedPrefix + strings.TrimPrefix(filepath.Base(rel), corpus.SeedPrefix)
		full := filepath.Join(root, filepath.Dir(rel), name)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("%s: %d fuzz seeds written\n", path, len(files))
	return nil
}
