//go:build linux

package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/internal/link"

	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/value"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// killSource calls step 20 times, each call's answer feeding the next.
var killSource = stepsSource(20)

// stepsSource is a program calling step n times in a chain: its result
// shows whether any call was answered twice or out of order.
func stepsSource(n int) string {
	return `
let acc = seed;
const log = [];
for (let i = 0; i < ` + strconv.Itoa(n) + `; i++) {
  const r = step(i, acc);
  acc = r.acc;
  log.push(r.tag);
}
({ seed, acc, log: log.join(",") });
`
}

// runAll runs n executions of killSource at once through r and returns
// their results by index, and how often each (execution, call) was asked.
func runAll(t *testing.T, r *Runner, prog host.Program, n int) ([]string, map[string]int) {
	var mu sync.Mutex
	asked := map[string]int{}
	caps := map[string]Capability{
		"step": func(_ context.Context, c Call) (value.Value, error) {
			var i, acc int
			if err := c.Decode(&i, &acc); err != nil {
				return value.Value{}, err
			}
			mu.Lock()
			asked[fmt.Sprintf("%s/%d", c.Execution, c.Seq)]++
			mu.Unlock()
			return host.ValueOf(map[string]any{"acc": (acc*31 + i*7 + c.Seq) % 1_000_003, "tag": "s" + strconv.Itoa(i)})
		},
	}
	return runEach(t, r, prog, n, caps), asked
}

// Must hold: 200 executions of a 20-call program through a pool of 4
// processes, while a random process is SIGKILLed every 50 ms throughout,
// all complete with the values of an undisturbed run, each call asked
// once; afterwards no goroutine and no child process is left.
func TestRunnerCompletesEveryExecutionWhileSidecarsAreKilled(t *testing.T) {
	runWhileKilling(t, killSource, host.HostCallsOne, runAll, func() time.Duration { return 50 * time.Millisecond })
}

// runWhileKilling runs 200 executions (50 in the default run) of source
// through a pool of 4 processes undisturbed, then again while a random
// process is SIGKILLed every interval() (at most a tenth of the
// undisturbed run) throughout, with run (runAll or runAllBatched), and
// checks that every execution gives the undisturbed value, that each
// call was asked exactly once, and that no goroutine or child process is
// left.
func runWhileKilling(t *testing.T, source string, mode host.HostCalls, run func(*testing.T, *Runner, host.Program, int) ([]string, map[string]int), interval func() time.Duration) {
	noLeaks(t)
	executions, processes := longtest.Pick(50, 200), 4
	ctx := context.Background()

	quiet := newPool(t, processes)
	prog, err := quiet.Compile(ctx, source)
	require.NoError(t, err)
	start := time.Now()
	want, _ := run(t, &Runner{Pool: quiet, Key: testKey, HostCalls: mode}, prog, executions)
	undisturbed := time.Since(start)
	t.Logf("undisturbed: %d executions in %v", executions, undisturbed.Round(time.Millisecond))
	// Kills come at most a tenth of the undisturbed run apart (and at
	// least 2 ms), so that a short run on a fast machine sees several.
	every := func() time.Duration { return max(min(interval(), undisturbed/10), 2*time.Millisecond) }
	require.NoError(t, quiet.Close())
	require.Contains(t, want[7], `"log":{"String":"s0,s1,s2,s3,s4,s5,s6,s7,s8,s9,s10,s11,s12,s13,s14,s15,s16,s17,s18,s19"}`)

	var started atomic.Int32
	pool, err := host.NewPool(host.PoolConfig{Size: processes, Command: func() *exec.Cmd { return sidecarCmd(t) }})
	require.NoError(t, err)
	setStarted(pool, func(*host.Client) { started.Add(1) })

	stop := make(chan struct{})
	var kills atomic.Int32
	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		for {
			select {
			case <-stop:
				return
			case <-time.After(every()):
			}
			// Only a process that has answered a request is killed: one
			// that a busy machine starts slower than the kill interval
			// would otherwise be killed before it answers, again and
			// again, and the run would make no progress.
			live := slices.DeleteFunc(liveClients(pool), func(c *host.Client) bool { return !link.Answered(c) })
			if len(live) == 0 {
				continue
			}
			live[rand.IntN(len(live))].Kill() // SIGKILL, by pidfd: never another process
			kills.Add(1)
		}
	}()
	var hot, cold atomic.Int32
	r := &Runner{Pool: pool, Key: testKey, HostCalls: mode}
	r.observe = func(_ *host.Client, h bool) {
		if h {
			hot.Add(1)
		} else {
			cold.Add(1)
		}
	}
	start = time.Now()
	got, asked := run(t, r, prog, executions)
	elapsed := time.Since(start)
	close(stop)
	<-killerDone
	require.NoError(t, pool.Close())
	t.Logf("with kills: %d executions in %v, %d processes killed, %d started; %d hot and %d cold resumes",
		executions, elapsed.Round(time.Millisecond), kills.Load(), started.Load(), hot.Load(), cold.Load())

	for i := range want {
		require.Equal(t, want[i], got[i], "execution %d", i)
	}
	require.Len(t, asked, executions*20)
	for k, n := range asked {
		require.Equal(t, 1, n, "call %s was asked %d times", k, n)
	}
	require.GreaterOrEqual(t, int(kills.Load()), 5, "the run was disturbed")
	require.Positive(t, cold.Load(), "some executions continued from their checkpoints")
	require.Empty(t, childProcesses(t), "child processes left")
}

const batchKillSource = `
async function main() {
  let acc = seed;
  const log = [];
  for (let round = 0; round < 4; round++) {
    const rs = await Promise.all([0, 1, 2, 3, 4].map((i) => step(round * 5 + i, acc)));
    for (const r of rs) {
      acc = (acc * 31 + r.acc) % 1000003;
      log.push(r.tag);
    }
  }
  return { seed, acc, log: log.join(",") };
}
main();
`

// runEach runs n executions of prog at once through r, execution i with
// the input seed i, and returns their results by index.
func runEach(t *testing.T, r *Runner, prog host.Program, n int, caps map[string]Capability) []string {
	results := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := r.Run(context.Background(), Execution{ID: fmt.Sprintf("exec-%d", i), Program: prog, Capabilities: caps,
				Inputs: map[string]value.Value{"seed": value.Number(float64(i))}})
			if err != nil {
				t.Errorf("execution %d: %v", i, err)
				return
			}
			results[i] = wireText(t, v)
		}()
	}
	wg.Wait()
	return results
}

// runAllBatched runs n executions of batchKillSource at once through r
// and returns their results by index, and how often each (execution,
// call id) was asked. Each call takes a random 0 to 3 ms, so the answers
// of a round come back in any order, some together and some alone.
func runAllBatched(t *testing.T, r *Runner, prog host.Program, n int) ([]string, map[string]int) {
	var mu sync.Mutex
	asked := map[string]int{}
	caps := map[string]Capability{
		"step": func(ctx context.Context, c Call) (value.Value, error) {
			var i, acc int
			if err := c.Decode(&i, &acc); err != nil {
				return value.Value{}, err
			}
			mu.Lock()
			asked[fmt.Sprintf("%s/%d", c.Execution, c.ID)]++
			mu.Unlock()
			select {
			case <-time.After(time.Duration(rand.IntN(3000)) * time.Microsecond):
			case <-ctx.Done():
				return value.Value{}, ctx.Err()
			}
			return host.ValueOf(map[string]any{"acc": (acc*31 + i*7 + int(c.ID)) % 1_000_003, "tag": "s" + strconv.Itoa(i)})
		},
	}
	return runEach(t, r, prog, n, caps), asked
}

// Must hold: in batch mode, 200 executions of four rounds of five
// concurrent calls through a pool of 4 processes, while a random process
// is SIGKILLed at random intervals (10 to 60 ms) throughout, all complete
// with the values of an undisturbed run and each (execution, call id) is
// asked exactly once: answers stored but not yet delivered when a process
// dies go with the cold resume, and calls still running are neither
// restarted nor asked twice. Afterwards no goroutine and no child process
// is left.
func TestRunnerAnswersEveryBatchedCallOnceWhileSidecarsAreKilled(t *testing.T) {
	runWhileKilling(t, batchKillSource, host.HostCallsBatch, runAllBatched, func() time.Duration {
		return time.Duration(10+rand.IntN(50)) * time.Millisecond
	})
}

// childProcesses lists the processes whose parent is this one, zombies
// included: a child not reaped is still listed.
func childProcesses(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*/stat")
	require.NoError(t, err)
	me := strconv.Itoa(os.Getpid())
	var out []string
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue // it ended meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces, so split after ')'.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == me {
			out = append(out, s)
		}
	}
	return out
}
