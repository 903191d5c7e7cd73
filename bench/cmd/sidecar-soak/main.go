// Command sidecar-soak drives one in-process sidecar through a long,
// deterministic mix of requests (compiles, starts, hot and raw resumes,
// guest errors, limit failures, memory bombs, protocol errors), checks
// every response, and reports throughput, RSS over time and goroutines.
// It exits non-zero on any unexpected response, RSS growth past 1.5× the
// figure after 2,000 requests, a peak RSS of 256 MiB or more, or leaked
// goroutines.
//
//	go run ./bench/cmd/sidecar-soak [-n 100000] [-seed 1] [-every 2000]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/mustard-sidecar/mustard-sidecar/bench"
)

func main() {
	cfg := bench.DefaultSoakConfig()
	flag.IntVar(&cfg.Requests, "n", cfg.Requests, "requests in the mix (after a short warm-up)")
	flag.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the request mix")
	flag.IntVar(&cfg.Every, "every", cfg.Every, "sample RSS and goroutines every this many requests")
	quiet := flag.Bool("q", false, "no progress lines on stderr")
	flag.Parse()
	if !*quiet {
		cfg.Log = os.Stderr
	}
	rep, err := bench.Soak(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sidecar-soak:", err)
		os.Exit(1)
	}
	rep.Print(os.Stdout)
	if len(rep.Failures()) > 0 {
		os.Exit(1)
	}
}
