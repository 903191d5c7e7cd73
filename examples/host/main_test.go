package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
)

func TestMain(m *testing.M) {
	if os.Getenv(asSidecar) == "1" { // the example runs this binary as its sidecar
		os.Exit(cli.Main(os.Args[1:]))
	}
	// A race-built sidecar would pause a second at every exit (-cold
	// restarts it five times).
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}

// The README's quick start, hot, cold and over JSONL.
func TestTheTripExampleRuns(t *testing.T) {
	const want = `completed {"Object":{"city":{"String":"Lisbon"},"confirmation":{"String":"LIS-4821"},"ranked":{"Array":[{"String":"Naples"},{"String":"Lisbon"},{"String":"Oslo"}]}}}`
	for _, tc := range []struct {
		name        string
		cold, jsonl bool
	}{{"hot", false, false}, {"cold", true, false}, {"cold jsonl", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			err := run(&out, "../trip/trip.js", "../trip/fixture.json", tc.cold, tc.jsonl, "")
			require.NoError(t, err, out.String())
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			require.Equal(t, want, lines[len(lines)-1])
			require.Equal(t, 5, strings.Count(out.String(), "\nsuspended "))
			require.Equal(t, map[bool]int{true: 5}[tc.cold], strings.Count(out.String(), "(restarted the sidecar"))
		})
	}
}
