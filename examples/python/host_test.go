// Package python holds the Python host example; its test runs it.
package python

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

func TestMain(m *testing.M) {
	hosttest.RunAsSidecar(cli.Main)
	// host.py finds mustard-sidecar on PATH, as it would when installed.
	os.Exit(hosttest.RunOnPath(m))
}

// The Python example runs the trip program hot and cold. It needs
// python3 (any 3.8+, standard library only); without it the test is
// skipped, saying so.
func TestPythonHostRunsTheTrip(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH, so the Python example was not run")
	}
	const want = `completed {"Object":{"city":{"String":"Lisbon"},"confirmation":{"String":"LIS-4821"},"ranked":{"Array":[{"String":"Naples"},{"String":"Lisbon"},{"String":"Oslo"}]}}}`
	for _, args := range [][]string{nil, {"--cold"}} {
		t.Run(fmt.Sprint("host.py", args), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // catches a hang only
			defer cancel()
			cmd := exec.CommandContext(ctx, python, append([]string{"host.py"}, append(args, "../trip/trip.js", "../trip/fixture.json")...)...)
			cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			require.Equal(t, want, lines[len(lines)-1])
			require.Equal(t, 5, strings.Count(string(out), "\nsuspended "))
			require.Equal(t, 5*len(args), strings.Count(string(out), "(restarted the sidecar"))
		})
	}
}

// It runs the code-mode program too (TypeScript, dotted capability names,
// console lines, a call entry), hot and cold, once the sidecar announces
// those features.
func TestPythonHostRunsTheCodeModeProgram(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH, so the Python example was not run")
	}
	c, err := host.NewClient(host.Config{Cmd: exec.Command("mustard-sidecar")})
	require.NoError(t, err)
	pong, err := c.Ping(context.Background())
	require.NoError(t, err)
	require.NoError(t, c.Close())
	for _, f := range []string{"typescript", "console", "namespaces", "entry_call"} {
		if !pong.Has(f) {
			t.Skipf("the sidecar does not announce the %q feature", f)
		}
	}
	const want = `completed {"Object":{"triaged":{"Array":[{"Number":{"Finite":12.0}},{"Number":{"Finite":19.0}}]},"summary":{"Number":{"Finite":23.0}}}}`
	for _, args := range [][]string{nil, {"--cold"}} {
		t.Run(fmt.Sprint("host.py", args), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // catches a hang only
			defer cancel()
			cmd := exec.CommandContext(ctx, python, append([]string{"host.py"}, append(args, "../codemode/triage.ts", "../codemode/fixture.json")...)...)
			cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			require.Equal(t, want, lines[len(lines)-1])
			require.Equal(t, 5, strings.Count(string(out), "\nsuspended "))
			require.Contains(t, string(out), "\n  log     found 3 open, 2 untriaged\n")
			require.Equal(t, 1, strings.Count(string(out), "  warn    slack is down (UNAVAILABLE); the summary is #23\n"))
		})
	}
}
