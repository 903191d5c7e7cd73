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
)

// Must hold: a Go program outside the module, in a directory of its own
// with a replace directive pointing here, embeds the sidecar through this
// package: compile, start, answer calls, complete, in under 40 lines. The
// package needs nothing outside the standard library, so the build needs
// no module download; the program finds the sidecar on PATH, as a host
// would (TestMain puts this test binary there).
func TestAProgramOutsideTheModuleEmbedsTheSidecar(t *testing.T) {
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

	run := exec.CommandContext(ctx, filepath.Join(dir, "outside"))
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
	want := append(append(deps("../internal/wire"), deps("../value")...), "github.com/mustard-sidecar/mustard-sidecar/host")
	require.ElementsMatch(t, want, deps("."))
	for _, d := range want {
		require.NotContains(t, d, "goja")
		require.NotContains(t, d, "/engine")
	}
}
