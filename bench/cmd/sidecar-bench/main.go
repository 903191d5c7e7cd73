// Command sidecar-bench builds and spawns the real mustard-sidecar binary,
// measures it over pipes and, when Node and npm are available, compares it
// with the reference implementation running the same programs in-process.
//
//	go run ./bench/cmd/sidecar-bench [flags]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/bench"
	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

func main() {
	hosttest.RunAsSidecar(cli.Main)
	cfg := bench.DefaultConfig()
	flag.IntVar(&cfg.Rounds, "rounds", cfg.Rounds, "alternating rounds of ours and the peer")
	flag.IntVar(&cfg.Hot, "hot", cfg.Hot, "hot round trips per transport")
	flag.IntVar(&cfg.HotChain, "hot-chain", cfg.HotChain, "suspensions per execution before a fresh start (hot)")
	flag.IntVar(&cfg.Compile, "compile", cfg.Compile, "compile requests per workload on a warm process")
	flag.IntVar(&cfg.ColdStart, "cold-start", cfg.ColdStart, "process spawns timed to the first compile answered")
	flag.IntVar(&cfg.Workload, "workload", cfg.Workload, "end-to-end runs per workload and variant")
	flag.IntVar(&cfg.ColdResume, "cold-resume", cfg.ColdResume, "cold resumes per step")
	steps := flag.String("cold-steps", "1,10,100", "suspension numbers to resume cold from")
	flag.IntVar(&cfg.History, "history", cfg.History, "hot round trips with 1 KiB args per step in -history-steps")
	history := flag.String("history-steps", "1,500", "suspension numbers from which -history round trips are timed")
	flag.IntVar(&cfg.Large, "large", cfg.Large, "runs of the 40 × 50 KB answers program (each with a cold resume)")
	workloadsOnly := flag.Bool("workloads-only", false, "measure only the workloads end to end (sets -hot, -compile, -cold-start, -cold-resume, -history and -large to 0)")
	flag.StringVar(&cfg.Gallery, "gallery", "", "a local checkout of the reference's examples/programmatic-tool-calls: record its programs on the peer and measure them end to end too")
	procs := flag.Int("sidecar-procs", 0, "GOMAXPROCS for the sidecars it spawns (0: their default, or the environment's)")
	noPeer := flag.Bool("no-peer", false, "skip the peer comparison")
	quiet := flag.Bool("q", false, "no progress lines on stderr")
	parked := flag.Bool("parked", false, "measure only the memory per parked execution (see -parked-n, -parked-procs)")
	parkedN := flag.Int("parked-n", 60, "executions parked per program and process (-parked)")
	parkedProcs := flag.Int("parked-procs", 3, "fresh sidecar processes per program (-parked)")
	firstUse := flag.Int("first-use", 0, "measure only the first compile and start of each built-in feature in this many fresh processes each")
	flag.Parse()
	if *firstUse > 0 {
		var log io.Writer
		if !*quiet {
			log = os.Stderr
		}
		figs, err := bench.MeasureFirstUse(*firstUse, log)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sidecar-bench:", err)
			os.Exit(1)
		}
		bench.PrintFirstUse(os.Stdout, figs, *firstUse)
		return
	}
	if *parked {
		pc := bench.ParkedConfig{N: *parkedN, Procs: *parkedProcs}
		if !*quiet {
			pc.Log = os.Stderr
		}
		figs, err := bench.MeasureParked(pc)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sidecar-bench:", err)
			os.Exit(1)
		}
		bench.PrintParked(os.Stdout, figs, max(*parkedN, 2))
		return
	}
	cfg.ColdSteps = stepList("-cold-steps", *steps)
	cfg.HistorySteps = stepList("-history-steps", *history)
	if *workloadsOnly {
		cfg.Hot, cfg.Compile, cfg.ColdStart, cfg.ColdResume, cfg.History, cfg.Large = 0, 0, 0, 0, 0, 0
		cfg.ColdSteps, cfg.HistorySteps = nil, nil
	}
	if *procs > 0 {
		// The sidecars inherit it; the driver's host sets its own, and
		// Node ignores it.
		os.Setenv("GOMAXPROCS", strconv.Itoa(*procs))
	}
	cfg.Peer = !*noPeer
	if !*quiet {
		cfg.Log = os.Stderr
	}
	rep, err := bench.Run(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sidecar-bench:", err)
		os.Exit(1)
	}
	rep.Print(os.Stdout)
}

func stepList(flagName, text string) []int {
	var out []int
	for _, s := range strings.Split(text, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "sidecar-bench: bad %s %q\n", flagName, text)
			os.Exit(2)
		}
		out = append(out, n)
	}
	return out
}
