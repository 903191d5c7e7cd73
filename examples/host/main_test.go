package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/host"
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

// needFeatures fails a test when the sidecar does not announce every
// feature named (this repository's sidecar must have them).
func needFeatures(t *testing.T, features ...string) {
	t.Helper()
	cmd, err := command("")
	require.NoError(t, err)
	c, err := host.NewClient(host.Config{Cmd: cmd})
	require.NoError(t, err)
	defer c.Close()
	pong, err := c.Ping(context.Background())
	require.NoError(t, err)
	for _, f := range features {
		if !pong.Has(f) {
			t.Fatalf("the sidecar does not announce the %q feature", f)
		}
	}
}

// The README's second quick start: a TypeScript program of its inputs
// with namespaced tools and console lines, hot, cold and over JSONL.
func TestTheCodeModeExampleRuns(t *testing.T) {
	needFeatures(t, "typescript", "console", "namespaces", "entry_call")
	const want = `completed {"Object":{"triaged":{"Array":[{"Number":{"Finite":12.0}},{"Number":{"Finite":19.0}}]},"summary":{"Number":{"Finite":23.0}}}}`
	for _, tc := range []struct {
		name        string
		cold, jsonl bool
	}{{"hot", false, false}, {"cold", true, false}, {"cold jsonl", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			err := run(&out, "../codemode/triage.ts", "../codemode/fixture.json", tc.cold, tc.jsonl, "")
			require.NoError(t, err, out.String())
			text := out.String()
			lines := strings.Split(strings.TrimSpace(text), "\n")
			require.Equal(t, want, lines[len(lines)-1])
			require.Contains(t, lines[0], "typescript")
			require.Equal(t, 5, strings.Count(text, "\nsuspended "))
			for _, name := range []string{"github.search_issues", "github.add_label", "github.create_issue", "slack.post_message"} {
				require.Contains(t, text, "\nsuspended "+name+"[")
			}
			// Each line once, in its step, hot or cold.
			var logs []string
			for _, l := range lines {
				if strings.HasPrefix(l, "  log ") || strings.HasPrefix(l, "  warn ") {
					logs = append(logs, l)
				}
			}
			require.Equal(t, []string{
				"  log     triaging bug issues in acme/app",
				"  log     found 3 open, 2 untriaged",
				"  warn    slack is down (UNAVAILABLE); the summary is #23",
			}, logs)
			require.Equal(t, map[bool]int{true: 5}[tc.cold], strings.Count(text, "(restarted the sidecar"))
		})
	}
}
