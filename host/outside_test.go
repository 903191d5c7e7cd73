package host

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// Must hold: a Go program outside the module, in a directory of its own
// with a plain require of this module (and a replace directive pointing
// here, as a version from the proxy would be), embeds the sidecar through
// this package: compile, start, answer calls, complete, in under 40 lines.
// The consumer's module also builds cmd/mustard-sidecar itself (the engine
// and the goja fork are packages of this module, so no replace of ours is
// needed), and the program finds that binary on PATH, as a host would.
func TestAProgramOutsideTheModuleEmbedsTheSidecar(t *testing.T) {
	longtest.Skip(t) // builds the whole module again, in a module of its own: minutes under -race
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to build the program with")
	}
	src, err := os.ReadFile("testdata/outside/main.go")
	require.NoError(t, err)
	require.Less(t, bytes.Count(src, []byte("\n")), 40, "the whole program is under 40 lines")
	repo, err := filepath.Abs("..")
	require.NoError(t, err)

	dir := t.TempDir()
	gomod := strings.Join([]string{
		"module example.com/outside",
		"",
		"go 1.26",
		"",
		"require github.com/mustard-sidecar/mustard-sidecar v0.0.0",
		"",
		"replace github.com/mustard-sidecar/mustard-sidecar => " + repo,
		"",
	}, "\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // catches a hang only
	defer cancel()
	build := exec.CommandContext(ctx, goBin, "build", "-o", "outside", ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"), "GOWORK=off")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build:\n%s", out)

	// The sidecar itself builds in the consumer's module: the engine and
	// its goja are part of this module, which needs no replace of its own.
	bin := filepath.Join(dir, "bin")
	build = exec.CommandContext(ctx, goBin, "build", "-o", filepath.Join(bin, "mustard-sidecar"), "github.com/mustard-sidecar/mustard-sidecar/cmd/mustard-sidecar")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"), "GOWORK=off")
	out, err = build.CombinedOutput()
	require.NoError(t, err, "go build of the sidecar in the consumer's module:\n%s", out)

	run := exec.CommandContext(ctx, filepath.Join(dir, "outside"))
	run.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "MUSTARD_SIDECAR_BIN=")
	out, err = run.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "double 1\ndouble 2\ndouble 3\nresult 12\n", string(out))
}

// The package stays light for hosts: it needs only the standard library
// and the value package (with what value itself uses), never the engine.
func TestHostDependsOnlyOnTheStandardLibraryValueAndWire(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list dependencies with")
	}
	deps := func(pkg string) []string {
		out, err := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).Output()
		require.NoError(t, err)
		return strings.Fields(string(out))
	}
	require.Equal(t, []string{"github.com/mustard-sidecar/mustard-sidecar/internal/wire"}, deps("../internal/wire"),
		"the wire package uses the standard library only")
	require.Equal(t, []string{"github.com/mustard-sidecar/mustard-sidecar/internal/version"}, deps("../internal/version"),
		"the version package uses the standard library only")
	want := append(append(append(deps("../internal/wire"), deps("../internal/version")...), deps("../value")...),
		"github.com/mustard-sidecar/mustard-sidecar/host/internal/link", "github.com/mustard-sidecar/mustard-sidecar/host")
	require.ElementsMatch(t, want, deps("."))
	durable := append(append(want, deps("../internal/seal")...), "github.com/mustard-sidecar/mustard-sidecar/host/durable")
	require.ElementsMatch(t, durable, deps("./durable"), "the durable runner adds only the sealing envelope")
	for _, d := range want {
		require.NotContains(t, d, "goja")
		require.NotContains(t, d, "/engine")
	}
}

// The host package and the sidecar built from the same release agree on
// the version; ping tells a host when they do not.
func TestPingTellsTheVersion(t *testing.T) {
	c, err := NewClient(Config{})
	require.NoError(t, err)
	defer c.Close()
	pong, err := c.Ping(context.Background())
	require.NoError(t, err)
	require.Equal(t, Version(), pong.SidecarVersion)
	require.True(t, pong.MatchesHost())
	other := *pong
	other.SidecarVersion = "0.0.1"
	require.False(t, other.MatchesHost())
}
