//go:build linux

package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/host"

	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// leaseHostEnv makes the test binary a host process (leaseHostMain): it
// runs execution $MUSTARD_HOST_TEST_LEASE_ID of leaseSource with a Runner
// on a DirStore in the directory the variable names, and prints the
// result.
const leaseHostEnv = "MUSTARD_HOST_TEST_LEASE_HOST"

var leaseSource = stepsSource(24)

// leaseRun runs execution id of leaseSource on a DirStore in dir. Its one
// tool, step, is idempotent per (execution, call id) in the way a tool
// with effects outside the host should be: it keeps its effects in
// dir/effects.log, one line per call id, and answers a call id it finds
// there with the recorded result instead of acting again. So a call whose
// host died after the effect and before its answer was stored does not
// act twice; two hosts running the same call at once would (each finds no
// line and appends one), which the lease prevents.
func leaseRun(ctx context.Context, dir, id string) (string, error) {
	pool, err := host.NewPool(host.PoolConfig{Size: 1, Command: func() *exec.Cmd {
		cmd, err := hosttest.Command()
		if err != nil {
			panic(err)
		}
		return cmd
	}})
	if err != nil {
		return "", err
	}
	defer pool.Close()
	store, err := NewDirStore(filepath.Join(dir, "store"))
	if err != nil {
		return "", err
	}
	prog, err := pool.Compile(ctx, leaseSource)
	if err != nil {
		return "", err
	}
	effects := filepath.Join(dir, "effects.log")
	step := func(ctx context.Context, c Call) (value.Value, error) {
		var i, acc int
		if err := c.Decode(&i, &acc); err != nil {
			return value.Value{}, err
		}
		b, err := os.ReadFile(effects)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return value.Value{}, err
		}
		key := strconv.FormatUint(c.ID, 10) + " "
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, key); ok {
				n, _ := strconv.Atoi(rest)
				return host.ValueOf(map[string]any{"acc": n, "tag": "s" + strconv.Itoa(i)})
			}
		}
		// Some work, during which this host may be killed.
		select {
		case <-time.After(time.Duration(rand.IntN(25)) * time.Millisecond):
		case <-ctx.Done():
			return value.Value{}, ctx.Err()
		}
		n := (acc*31 + i*7 + int(c.ID)) % 1_000_003
		f, err := os.OpenFile(effects, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			return value.Value{}, err
		}
		_, err = fmt.Fprintf(f, "%d %d\n", c.ID, n)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return value.Value{}, err
		}
		return host.ValueOf(map[string]any{"acc": n, "tag": "s" + strconv.Itoa(i)})
	}
	r := &Runner{Pool: pool, Store: store, Key: testKey, WaitIfBusy: true}
	v, err := r.Run(ctx, Execution{ID: id, Program: prog, Capabilities: map[string]Capability{"step": step},
		Inputs: map[string]value.Value{"seed": value.Number(7)}})
	if err != nil {
		return "", err
	}
	return string(v.AppendJSON(nil)), nil
}

// leaseHostMain is the host process of the lease kill test.
func leaseHostMain() int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // catches a hang only
	defer cancel()
	out, err := leaseRun(ctx, os.Getenv(leaseHostEnv), os.Getenv("MUSTARD_HOST_TEST_LEASE_ID"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "lease host:", err)
		return 1
	}
	fmt.Println(out)
	return 0
}

// Must hold: two host processes run one execution on one DirStore, each
// killed (SIGKILL) and restarted at random several times while it runs.
// Every tool call acts exactly once (one line per call id in the effects
// log, and as many lines as calls), and every host that finishes returns
// the result of a run without kills.
func TestTwoHostsOnOneDirStoreRunEachCallOnceWhileKilled(t *testing.T) {
	ctx := context.Background()
	want, err := leaseRun(ctx, t.TempDir(), "quiet")
	require.NoError(t, err)
	require.Contains(t, want, `"log":{"String":"s0,s1,s2,s3,s4,s5,s6,s7,s8,s9,s10,s11,s12,s13,s14,s15,s16,s17,s18,s19,s20,s21,s22,s23"}`)

	dir := t.TempDir()
	exe, err := os.Executable()
	require.NoError(t, err)
	type host struct {
		cmd   *exec.Cmd
		out   *bytes.Buffer
		done  chan error
		kills int
	}
	start := func() *host {
		h := &host{out: &bytes.Buffer{}, done: make(chan error, 1)}
		h.cmd = exec.Command(exe)
		// Not the sidecar (the tests' environment makes children that).
		env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
			return strings.HasPrefix(kv, "MUSTARD_SIDECAR_HOSTTEST_CHILD=")
		})
		h.cmd.Env = append(env, leaseHostEnv+"="+dir, "MUSTARD_HOST_TEST_LEASE_ID=dup-1")
		h.cmd.Stdout, h.cmd.Stderr = h.out, h.out
		require.NoError(t, h.cmd.Start())
		go func() { h.done <- h.cmd.Wait() }()
		return h
	}
	calls := func() int {
		b, _ := os.ReadFile(filepath.Join(dir, "effects.log"))
		return bytes.Count(b, []byte("\n"))
	}
	hosts := []*host{start(), start()}
	var finished []string
	deadline := time.Now().Add(4 * time.Minute) // catches a hang only
	midRun := 0
	for (hosts[0].kills < 3 || hosts[1].kills < 3) && time.Now().Before(deadline) {
		// Once every call has acted, a restarted host only finds the
		// execution done and finishes in a few milliseconds: it is killed
		// sooner, or the loop would wait for kills until its deadline.
		pause := time.Duration(30+rand.IntN(200)) * time.Millisecond
		if calls() >= 24 {
			pause = time.Duration(rand.IntN(5)) * time.Millisecond
		}
		time.Sleep(pause)
		i := rand.IntN(2)
		h := hosts[i]
		select {
		case err := <-h.done: // it finished first: it must have the result
			require.NoError(t, err, "%s", h.out)
			finished = append(finished, strings.TrimSpace(h.out.String()))
		default:
			if calls() < 24 {
				midRun++
			}
			h.cmd.Process.Kill()
			<-h.done
			h.kills++
		}
		hosts[i] = start()
		hosts[i].kills = h.kills
	}
	for _, h := range hosts {
		select {
		case err := <-h.done:
			require.NoError(t, err, "%s", h.out)
		case <-time.After(3 * time.Minute): // catches a hang only
			h.cmd.Process.Kill()
			t.Fatalf("a host did not finish: %s", h.out)
		}
		finished = append(finished, strings.TrimSpace(h.out.String()))
	}
	t.Logf("%d kills while the execution ran, %d in all; %d hosts finished", midRun, hosts[0].kills+hosts[1].kills, len(finished))
	for i, got := range finished {
		require.Equal(t, want, got, "host %d of %d", i, len(finished))
	}
	b, err := os.ReadFile(filepath.Join(dir, "effects.log"))
	require.NoError(t, err)
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		id, _, _ := strings.Cut(sc.Text(), " ")
		seen[id]++
	}
	require.Len(t, seen, 24, "every call acted")
	for id, n := range seen {
		require.Equal(t, 1, n, "call %s acted %d times", id, n)
	}
}
