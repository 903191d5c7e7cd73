// Command diffrun runs the reference implementation's own test programs
// (bench/diffrun/testdata/programs.json) on the reference's npm package
// (bench/peer) and on a mustard-sidecar binary, compares the two runs and
// prints the counts by class, with examples of each disagreement.
//
// Run it from the repository root:
//
//	(cd bench/peer && npm install --no-save --package-lock=false)
//	go run ./bench/cmd/diffrun                         # builds ./cmd/mustard-sidecar
//	go run ./bench/cmd/diffrun -sidecar /path/to/bin   # a binary built elsewhere (another commit)
//	go run ./bench/cmd/diffrun -report report.md -label after
//
// It exits 1 when it cannot run (no Node, no package, no binary) and, with
// -max-disagree N, when more than N programs disagree.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/bench/diffrun"
	"github.com/mustard-sidecar/mustard-sidecar/host"
)

func main() {
	corpusPath := flag.String("corpus", filepath.Join("bench", "diffrun", "testdata", "programs.json"), "the corpus")
	peerDir := flag.String("peer", filepath.Join("bench", "peer"), "the directory with the reference's package (node_modules/mustardscript) and diffrun/reference.js")
	sidecar := flag.String("sidecar", "", "the sidecar binary (default: build ./cmd/mustard-sidecar)")
	wall := flag.Duration("wall", 10*time.Second, "the sidecar's wall-time bound per program (then it is cancelled: a Limit error)")
	report := flag.String("report", "", "write the Markdown report here (default: standard output)")
	label := flag.String("label", "", "a name for this run in the report's title")
	examples := flag.Int("examples", 5, "examples per disagreement class in the report")
	only := flag.String("only", "", "run only programs whose id contains this")
	maxDisagree := flag.Int("max-disagree", -1, "fail when more programs than this disagree (-1: never)")
	flag.Parse()
	if err := run(*corpusPath, *peerDir, *sidecar, *wall, *report, *label, *examples, *only, *maxDisagree); err != nil {
		fmt.Fprintln(os.Stderr, "diffrun:", err)
		os.Exit(1)
	}
}

func run(corpusPath, peerDir, sidecar string, wall time.Duration, reportPath, label string, examples int, only string, maxDisagree int) error {
	ctx := context.Background()
	corpus, err := diffrun.LoadCorpus(corpusPath)
	if err != nil {
		return err
	}
	if only != "" {
		var ps []diffrun.Program
		for _, p := range corpus.Programs {
			if strings.Contains(p.ID, only) {
				ps = append(ps, p)
			}
		}
		corpus.Programs = ps
		sub, err := os.CreateTemp("", "diffrun-corpus-*.json")
		if err != nil {
			return err
		}
		defer os.Remove(sub.Name())
		if err := writeJSON(sub, corpus); err != nil {
			return err
		}
		corpusPath = sub.Name()
	}
	if sidecar == "" {
		dir, err := os.MkdirTemp("", "diffrun-bin-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		sidecar = filepath.Join(dir, "mustard-sidecar")
		build := exec.Command("go", "build", "-o", sidecar, "./cmd/mustard-sidecar")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building ./cmd/mustard-sidecar: %w", err)
		}
	}
	t0 := time.Now()
	ref, err := diffrun.RunReference(ctx, peerDir, corpusPath)
	if err != nil {
		return err
	}
	refTime := time.Since(t0)
	if len(ref.Results) != len(corpus.Programs) {
		return fmt.Errorf("the reference ran %d programs of %d", len(ref.Results), len(corpus.Programs))
	}
	key, err := host.GenerateKey()
	if err != nil {
		return err
	}
	var c *host.Client
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	version := ""
	t1 := time.Now()
	var cs []diffrun.Comparison
	for i := range corpus.Programs {
		p := &corpus.Programs[i]
		if c == nil || c.Err() != nil {
			if c != nil {
				c.Close()
			}
			if c, err = host.NewClient(host.Config{Cmd: exec.Command(sidecar)}); err != nil {
				return err
			}
			if version == "" {
				pong, err := c.Ping(ctx)
				if err != nil {
					return fmt.Errorf("%s: %w", sidecar, err)
				}
				version = pong.SidecarVersion
			}
		}
		ours := diffrun.RunSidecar(ctx, c, key, p, wall)
		if ours.Result.Error != nil && ours.Result.Error.Kind == "Host" && errors.Is(c.Err(), host.ErrProcessExited) {
			ours.Result.Error.Message = "the sidecar process died: " + ours.Result.Error.Message
		}
		cs = append(cs, diffrun.Compare(p, ref.Results[i], ours))
	}
	oursTime := time.Since(t1)
	s := diffrun.Summarize(cs)
	title := "Differential run against the reference's test programs"
	if label != "" {
		title += ": " + label
	}
	header := fmt.Sprintf("Corpus: %d programs from %s@%.12s (bench/diffrun/testdata/programs.json). Reference: %s (Node %s), %.1fs. Sidecar: %s (version %s), %.1fs.",
		len(corpus.Programs), corpus.Reference.Repository, corpus.Reference.Commit, corpus.Reference.Package, ref.Node, refTime.Seconds(),
		filepath.Base(sidecar), version, oursTime.Seconds())
	out := os.Stdout
	if reportPath != "" {
		f, err := os.Create(reportPath)
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	s.WriteMarkdown(out, title, header, examples)
	if reportPath != "" {
		fmt.Printf("%d programs: %d agree, %d disagree; report in %s\n", s.Total, s.Count(diffrun.Agree), s.Total-s.Count(diffrun.Agree), reportPath)
		for _, cl := range s.Classes() {
			if n := s.Count(cl); n > 0 {
				fmt.Printf("  %-36s %d\n", cl, n)
			}
		}
	}
	if maxDisagree >= 0 && s.Total-s.Count(diffrun.Agree) > maxDisagree {
		return fmt.Errorf("%d programs disagree (at most %d allowed)", s.Total-s.Count(diffrun.Agree), maxDisagree)
	}
	return nil
}

func writeJSON(f *os.File, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		return err
	}
	return f.Close()
}
