package durable

import (
	"math"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/internal/link"
	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// TestMain serves as the sidecar when a test runs this binary as one, and
// as a host of the lease tests' child processes; the examples find the
// sidecar as a host does, on PATH.
func TestMain(m *testing.M) {
	hosttest.RunAsSidecar(cli.Main)
	if os.Getenv(leaseHostEnv) != "" {
		os.Exit(leaseHostMain())
	}
	os.Exit(hosttest.RunOnPath(m))
}

func sidecarCmd(t testing.TB, args ...string) *exec.Cmd { return hosttest.MustCommand(t, args...) }

var testKey = func() host.Key {
	k, err := host.NewKey([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		panic(err)
	}
	return k
}()

func newClient(t *testing.T, cfg host.Config) *host.Client {
	t.Helper()
	c, err := host.NewClient(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// needFeatures fails a test against a sidecar that does not announce
// every feature named: the tests run this repository's own sidecar, which
// must have them.
func needFeatures(t *testing.T, features ...string) {
	t.Helper()
	c := newClient(t, host.Config{Cmd: sidecarCmd(t)})
	pong, err := c.Ping(t.Context())
	require.NoError(t, err)
	for _, f := range features {
		if !pong.Has(f) {
			t.Fatalf("the sidecar does not announce the %q feature", f)
		}
	}
	require.NoError(t, c.Close())
}

func wireText(t *testing.T, v value.Value) string {
	t.Helper()
	return string(v.AppendJSON(nil))
}

// noLeaks and eventually are hosttest's, for this package's tests.
func noLeaks(t *testing.T) { t.Helper(); hosttest.NoLeaks(t) }

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	hosttest.Eventually(t, what, cond)
}

// setStarted has pool tell f about every process it starts.
func setStarted(pool *host.Pool, f func(*host.Client)) {
	link.SetStarted(pool, func(c any) { f(c.(*host.Client)) })
}

// liveClients returns the clients of the pool's running processes.
func liveClients(pool *host.Pool) []*host.Client {
	var out []*host.Client
	for _, c := range link.LiveClients(pool) {
		out = append(out, c.(*host.Client))
	}
	return out
}

// slotClient is the client of the pool's place i.
func slotClient(pool *host.Pool, i int) *host.Client {
	return link.SlotClient(pool, i).(*host.Client)
}

var negZero = math.Copysign(0, -1)
