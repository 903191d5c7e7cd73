// Command gen-transcripts records corpus/transcripts/*.jsonl by running the
// sessions described in package corpus against a freshly built sidecar,
// then derives the fuzz seed corpora from them.
//
//	go run ./corpus/cmd/gen-transcripts          # transcripts, then seeds
//	go run ./corpus/cmd/gen-transcripts -seeds   # seeds only, from the files
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/mustard-sidecar/mustard-sidecar/corpus"
	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

func main() {
	hosttest.RunAsSidecar(cli.Main)
	seedsOnly := flag.Bool("seeds", false, "only regenerate the fuzz seed corpora from the existing transcripts")
	run := flag.String("run", "", "only record the sessions whose name matches this regular expression")
	flag.Parse()
	if err := generate(*seedsOnly, *run); err != nil {
		fmt.Fprintln(os.Stderr, "gen-transcripts:", err)
		os.Exit(1)
	}
}

func generate(seedsOnly bool, run string) error {
	root, err := corpus.ModuleRoot()
	if err != nil {
		return err
	}
	dir := filepath.Join(root, "corpus", "transcripts")
	if !seedsOnly {
		// The transcripts depend on it: with it, snapshot ids are stable.
		if err := os.Setenv(corpus.EntropyEnv, corpus.Entropy); err != nil {
			return err
		}
		sessions := corpus.Sessions
		if run != "" {
			re, err := regexp.Compile(run)
			if err != nil {
				return err
			}
			sessions = nil
			for _, s := range corpus.Sessions {
				if re.MatchString(s.Name) {
					sessions = append(sessions, s)
				}
			}
			if err := corpus.GenerateOnly(dir, sessions); err != nil {
				return err
			}
		} else if err := corpus.Generate(dir, sessions); err != nil {
			return err
		}
	}
	ts, err := corpus.Load(dir)
	if err != nil {
		return err
	}
	files, err := corpus.Seeds(ts)
	if err != nil {
		return err
	}
	return corpus.WriteSeeds(root, files)
}
