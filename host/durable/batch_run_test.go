package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"

	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// fanOutSource awaits one call of slow per id, all at once.
const fanOutSource = `
async function main() {
  return await Promise.all(ids.map((id) => slow(id)));
}
main();
`

func idsInput(n int) map[string]value.Value {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	return map[string]value.Value{"ids": host.MustValueOf(ids)}
}

// barrierCtx bounds a Run whose calls wait for each other, so that calls
// that do not overlap fail the test instead of hanging it.
func barrierCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// poll waits for cond, or for ctx to be done.
func poll(ctx context.Context, cond func() bool) {
	for !cond() && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
}

// waitOrCancel waits for ch; a done ctx (Run ending) gives up.
func waitOrCancel(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Must hold: in batch mode the Runner runs an execution's outstanding
// calls at once. Each of ten calls returns only once all ten have started
// (a barrier, no sleeps), so the execution completes only if they
// overlap. Each call has its call id, and Seq is ID-1.
func TestRunnerRunsCallsConcurrently(t *testing.T) {
	noLeaks(t)
	ctx := barrierCtx(t)
	pool := newPool(t, 1)
	prog, err := pool.Compile(ctx, fanOutSource)
	require.NoError(t, err)
	const n = 10
	var started atomic.Int32
	all := make(chan struct{})
	var mu sync.Mutex
	var ids []uint64
	r := &Runner{Pool: pool, Key: testKey}
	v, err := r.Run(ctx, Execution{ID: "fan-out", Program: prog, Inputs: idsInput(n), Capabilities: map[string]Capability{
		"slow": func(ctx context.Context, c Call) (value.Value, error) {
			var id int
			if err := c.Decode(&id); err != nil {
				return value.Value{}, err
			}
			mu.Lock()
			ids = append(ids, c.ID)
			mu.Unlock()
			assert.Equal(t, uint64(id+1), c.ID, "ids count from 1 in call order")
			assert.Equal(t, int(c.ID-1), c.Seq)
			if started.Add(1) == n {
				close(all)
			}
			if err := waitOrCancel(ctx, all); err != nil {
				return value.Value{}, err
			}
			return value.Number(float64(10 * id)), nil
		},
	}})
	require.NoError(t, err)
	require.Equal(t, `{"Array":[{"Number":{"Finite":0.0}},{"Number":{"Finite":10.0}},{"Number":{"Finite":20.0}},{"Number":{"Finite":30.0}},{"Number":{"Finite":40.0}},{"Number":{"Finite":50.0}},{"Number":{"Finite":60.0}},{"Number":{"Finite":70.0}},{"Number":{"Finite":80.0}},{"Number":{"Finite":90.0}}]}`, wireText(t, v))
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	require.Equal(t, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, ids, "each call asked once")
	cp, _, err := r.store().Load(ctx, "fan-out")
	require.NoError(t, err)
	require.Equal(t, n, cp.Calls)
}

// Must hold: MaxConcurrentCalls bounds the calls running at once. With a
// bound of 3, ten calls wait at a gate: three start, and no fourth starts
// while they wait (given 50 ms to do so wrongly; with the bound it never
// can); once the gate opens all ten run, never more than three at once.
func TestRunnerBoundsConcurrentCalls(t *testing.T) {
	noLeaks(t)
	ctx := barrierCtx(t)
	pool := newPool(t, 1)
	prog, err := pool.Compile(ctx, fanOutSource)
	require.NoError(t, err)
	const n, limit = 10, 3
	var mu sync.Mutex
	running, peak, started := 0, 0, 0
	gate := make(chan struct{})
	atGate := -1
	go func() {
		poll(ctx, func() bool { mu.Lock(); defer mu.Unlock(); return started >= limit })
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		atGate = started
		mu.Unlock()
		close(gate)
	}()
	r := &Runner{Pool: pool, Key: testKey, MaxConcurrentCalls: limit}
	v, err := r.Run(ctx, Execution{ID: "bounded", Program: prog, Inputs: idsInput(n), Capabilities: map[string]Capability{
		"slow": func(ctx context.Context, c Call) (value.Value, error) {
			mu.Lock()
			running++
			started++
			peak = max(peak, running)
			mu.Unlock()
			defer func() { mu.Lock(); running--; mu.Unlock() }()
			if err := waitOrCancel(ctx, gate); err != nil {
				return value.Value{}, err
			}
			return c.Args[0], nil
		},
	}})
	require.NoError(t, err)
	require.Len(t, v.Elems, n)
	require.Equal(t, limit, atGate, "no call started past the bound")
	require.Equal(t, limit, peak)
	require.Equal(t, n, started)
}

// Must hold: the Runner resumes with the answers that came in while a
// slow call still runs. The slow call (the first) returns only once the
// sidecar has been given the nine others and lists it alone; the guest
// sees the fast answers first and Promise.all's result in call order.
func TestRunnerSendsAnswersAsTheyComeIn(t *testing.T) {
	noLeaks(t)
	ctx := barrierCtx(t)
	pool := newPool(t, 1)
	prog, err := pool.Compile(ctx, `
async function main() {
  const log = [];
  const all = await Promise.all(ids.map((id) => get(id).then((v) => { log.push(v); return v; })));
  return { all, log };
}
main();`)
	require.NoError(t, err)
	store := &MemoryStore{}
	r := &Runner{Pool: pool, Key: testKey, Store: store}
	var resumes atomic.Int32
	r.observe = func(*host.Client, bool) { resumes.Add(1) }
	v, err := r.Run(ctx, Execution{ID: "partial", Program: prog, Inputs: idsInput(10), Capabilities: map[string]Capability{
		"get": func(ctx context.Context, c Call) (value.Value, error) {
			if c.ID == 1 {
				for {
					cp, _, err := store.Load(ctx, "partial")
					if err != nil {
						return value.Value{}, err
					}
					if cp.Calls == 9 && len(cp.Outstanding) == 1 && cp.Outstanding[0].ID == 1 {
						break
					}
					if ctx.Err() != nil {
						return value.Value{}, ctx.Err()
					}
					time.Sleep(time.Millisecond)
				}
			}
			return c.Args[0], nil
		},
	}})
	require.NoError(t, err)
	var got struct {
		All []int `json:"all"`
		Log []int `json:"log"`
	}
	require.NoError(t, host.Decode(v, &got))
	require.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, got.All)
	require.ElementsMatch(t, []int{1, 2, 3, 4, 5, 6, 7, 8, 9}, got.Log[:9], "the fast answers first")
	require.Equal(t, 0, got.Log[9], "the slow one last")
	require.GreaterOrEqual(t, resumes.Load(), int32(2))
}

// Must hold: a host.CallError rejects only its own call's promise.
func TestRunnerCallErrorsRejectOnlyTheirCall(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	pool := newPool(t, 1)
	prog, err := pool.Compile(ctx, `
async function main() {
  const rs = await Promise.allSettled(ids.map((id) => get(id)));
  return rs.map((r) => r.status === "fulfilled" ? r.value : r.reason.name + "/" + r.reason.code);
}
main();`)
	require.NoError(t, err)
	r := &Runner{Pool: pool, Key: testKey}
	v, err := r.Run(ctx, Execution{ID: "errors", Program: prog, Inputs: idsInput(6), Capabilities: map[string]Capability{
		"get": func(ctx context.Context, c Call) (value.Value, error) {
			var id int
			if err := c.Decode(&id); err != nil {
				return value.Value{}, err
			}
			if id%2 == 1 {
				return value.Value{}, host.CallError{Name: "NotFound", Message: "no " + fmt.Sprint(id), Code: fmt.Sprint("E", id)}
			}
			return value.String(fmt.Sprint("ok", id)), nil
		},
	}})
	require.NoError(t, err)
	var got []string
	require.NoError(t, host.Decode(v, &got))
	require.Equal(t, []string{"ok0", "NotFound/E1", "ok2", "NotFound/E3", "ok4", "NotFound/E5"}, got)
}

// Must hold: when Run's context is done in the middle of a batch, the
// running calls' contexts are cancelled and Run waits for them; an answer
// a call returned anyway is stored; a later Run continues from the
// checkpoint, asking again only the calls that have no answer.
func TestRunnerCancelsRunningCallsWithItsContext(t *testing.T) {
	noLeaks(t)
	pool := newPool(t, 1)
	prog, err := pool.Compile(context.Background(), `
async function main() {
  const rs = await Promise.all([get(1), get(2), get(3), get(4), get(5)]);
  return rs.reduce((a, b) => a + b, 0);
}
main();`)
	require.NoError(t, err)
	store := &MemoryStore{}
	r := &Runner{Pool: pool, Key: testKey, Store: store}
	var mu sync.Mutex
	asked := map[uint64]int{}
	var blocked, cancelled atomic.Int32
	block := true
	e := Execution{ID: "cancel-batch", Program: prog, Capabilities: map[string]Capability{
		"get": func(ctx context.Context, c Call) (value.Value, error) {
			mu.Lock()
			asked[c.ID]++
			mu.Unlock()
			if c.ID >= 3 && block {
				blocked.Add(1)
				<-ctx.Done()
				cancelled.Add(1)
				if c.ID == 5 {
					return value.Number(50), nil // returns all the same
				}
				return value.Value{}, ctx.Err()
			}
			return value.Number(float64(10 * c.ID)), nil
		},
	}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Calls 1 and 2 answered, 3 to 5 running (checked below).
		poll(barrierCtx(t), func() bool {
			cp, _, _ := store.Load(ctx, "cancel-batch")
			return blocked.Load() == 3 && cp != nil && cp.Calls == 2 && len(cp.Outstanding) == 3
		})
		cancel()
	}()
	_, err = r.Run(ctx, e)
	require.ErrorIs(t, err, context.Canceled)
	require.EqualValues(t, 3, cancelled.Load(), "Run waited for every running call")

	cp, _, err := store.Load(context.Background(), "cancel-batch")
	require.NoError(t, err)
	require.False(t, cp.Done)
	require.Equal(t, host.HostCallsBatch, cp.HostCalls)
	require.Equal(t, 2, cp.Calls)
	require.Len(t, cp.Outstanding, 3)
	require.Nil(t, cp.Outstanding[0].Answer)
	require.Nil(t, cp.Outstanding[1].Answer)
	require.NotNil(t, cp.Outstanding[2].Answer, "call 5's answer is kept")
	require.Equal(t, "return "+`{"Number":{"Finite":50.0}}`, cp.Outstanding[2].Answer.String())

	block = false
	v, err := r.Run(context.Background(), e)
	require.NoError(t, err)
	require.Equal(t, 10.0+20+30+40+50, v.Num)
	require.Equal(t, map[uint64]int{1: 1, 2: 1, 3: 2, 4: 2, 5: 1}, asked)
}

// Must hold: when the execution fails, or a capability's error stops Run,
// the calls still running have their contexts cancelled and Run waits for
// them before it returns.
func TestRunnerCancelsRunningCallsWhenItStops(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		quick     func() (value.Value, error)
		check     func(t *testing.T, err error)
	}{
		{"the guest fails", `
async function main() {
  const p = hang();
  await quick();
  for (;;) {}
}
main();`, func() (value.Value, error) { return value.Null(), nil }, func(t *testing.T, err error) {
			var se *host.Error
			require.ErrorAs(t, err, &se)
			require.Equal(t, "Limit: instruction budget exhausted", se.Message)
		}},
		{"a capability fails", `
async function main() {
  return await Promise.all([hang(), quick()]);
}
main();`, func() (value.Value, error) { return value.Value{}, errors.New("backend down") }, func(t *testing.T, err error) {
			require.EqualError(t, err, "capability quick: backend down")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noLeaks(t)
			ctx := context.Background()
			pool := newPool(t, 1)
			prog, err := pool.Compile(ctx, tc.src)
			require.NoError(t, err)
			hanging := make(chan struct{})
			var cancelled atomic.Bool
			r := &Runner{Pool: pool, Key: testKey}
			_, err = r.Run(ctx, Execution{ID: "stops", Program: prog, Capabilities: map[string]Capability{
				"hang": func(ctx context.Context, c Call) (value.Value, error) {
					close(hanging)
					<-ctx.Done()
					cancelled.Store(true)
					return value.Value{}, ctx.Err()
				},
				"quick": func(ctx context.Context, c Call) (value.Value, error) {
					if err := waitOrCancel(ctx, hanging); err != nil {
						return value.Value{}, err
					}
					return tc.quick()
				},
			}})
			tc.check(t, err)
			require.True(t, cancelled.Load(), "Run cancelled the running call and waited for it")
		})
	}
}

// Must hold: answers that together exceed what one request and the
// sidecar's stage bound can carry go in several resumes, none lost; an
// answer that alone exceeds the stage bound is dropped from the
// checkpoint and Run fails, so that a later Run asks that call again.
func TestRunnerSplitsAnswersTooLargeForOneRequest(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	pool, err := host.NewPool(host.PoolConfig{Command: func() *exec.Cmd { return sidecarCmd(t, "--max-stage-bytes", "1000000") }})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, pool.Close()) })
	prog, err := pool.Compile(ctx, `
async function main() {
  const rs = await Promise.all([get(1), get(2), get(3)]);
  return rs.map((r) => r.length);
}
main();`)
	require.NoError(t, err)
	store := &MemoryStore{}
	r := &Runner{Pool: pool, Key: testKey, Store: store}
	big := strings.Repeat("x", 700<<10) // two do not fit in one request
	var mu sync.Mutex
	var asked []uint64
	answer := map[uint64]func(ctx context.Context) (value.Value, error){}
	e := Execution{ID: "large", Program: prog, Limits: host.Limits{HeapLimitBytes: host.Limit(64 << 20), AllocationBudget: host.Limit(1 << 30)},
		Capabilities: map[string]Capability{"get": func(ctx context.Context, c Call) (value.Value, error) {
			mu.Lock()
			asked = append(asked, c.ID)
			f := answer[c.ID]
			mu.Unlock()
			return f(ctx)
		}}}
	hold := func(ctx context.Context) (value.Value, error) { <-ctx.Done(); return value.Value{}, ctx.Err() }
	answer[1] = func(context.Context) (value.Value, error) { return value.Value{}, errors.New("stop here") }
	answer[2], answer[3] = hold, hold
	_, err = r.Run(ctx, e)
	require.EqualError(t, err, "capability get: stop here")

	// Two large answers stored together, as if both came in at once.
	cp, _, err := store.Load(ctx, "large")
	require.NoError(t, err)
	require.Len(t, cp.Outstanding, 3)
	next := *cp
	next.Outstanding = slices.Clone(cp.Outstanding)
	p1, p2 := host.Return(value.String(big)), host.Return(value.String(big))
	next.Outstanding[0].Answer, next.Outstanding[1].Answer = &p1, &p2
	require.NoError(t, store.Save(ctx, "large", &next))

	// Call 3's answer alone is too large to stage: dropped, and Run fails.
	asked = nil
	answer[3] = func(context.Context) (value.Value, error) { return value.String(big + big), nil }
	_, err = r.Run(ctx, e)
	require.ErrorIs(t, err, host.ErrRequestTooLarge)
	require.ErrorIs(t, err, host.ErrStageTooLarge)
	require.ErrorContains(t, err, "the answer to get (call 3 of execution \"large\")")
	cp, _, err = store.Load(ctx, "large")
	require.NoError(t, err)
	require.Len(t, cp.Outstanding, 1)
	require.Nil(t, cp.Outstanding[0].Answer, "the answer too large was dropped")
	require.Equal(t, 2, cp.Calls, "the two others went in, one staged")

	answer[3] = func(context.Context) (value.Value, error) { return value.String("small"), nil }
	v, err := r.Run(ctx, e)
	require.NoError(t, err)
	require.Equal(t, `{"Array":[{"Number":{"Finite":716800.0}},{"Number":{"Finite":716800.0}},{"Number":{"Finite":5.0}}]}`, wireText(t, v))
	require.Equal(t, []uint64{3, 3}, asked, "the stored answers were not asked again")
}

// Must hold: checkpoints written before batch mode (one call, no call
// ids: the DirStore record as the previous version wrote it, here with an
// answer stored but not yet sent, and without one) continue under a
// Runner in its default batch mode, one call per step as they started;
// the stored answer is sent, not asked again.
func TestRunnerContinuesCheckpointsWrittenBeforeBatchMode(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	dir := t.TempDir()
	c := newClient(t, host.Config{Cmd: sidecarCmd(t)})
	prog, err := c.Compile(ctx, `let s = 0; for (let i = 0; i < 4; i++) s += f(i); s;`)
	require.NoError(t, err)
	st, err := c.Start(ctx, host.StartRequest{Program: prog, Capabilities: []string{"f"}})
	require.NoError(t, err)
	st, err = c.Resume(ctx, host.ResumeRequest{SnapshotID: st.Suspended.SnapshotID, PolicyID: st.Suspended.PolicyID, Key: testKey,
		Payload: host.Return(value.Number(10))})
	require.NoError(t, err)
	s := st.Suspended // on f(1), one call answered
	for _, old := range []struct{ id, answer string }{
		{"answered", `,"answer":{"type":"value","value":{"Number":{"Finite":20}}}`},
		{"unanswered", ``},
	} {
		record := fmt.Sprintf(`{"program_id":%q,"calls":1,"snapshot_id":%q,"capability":"f","args":[{"Number":{"Finite":1.0}}]%s}`,
			prog.ID, s.SnapshotID, old.answer)
		require.NoError(t, os.WriteFile(filepath.Join(dir, old.id+".json"), []byte(record), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(dir, old.id+"."+s.SnapshotID+".snapshot"), s.Snapshot, 0o600))
	}

	pool := newPool(t, 1)
	store, err := NewDirStore(dir)
	require.NoError(t, err)
	r := &Runner{Pool: pool, Store: store, Key: testKey}
	for _, tc := range []struct {
		id    string
		asked []uint64
	}{{"answered", []uint64{3, 4}}, {"unanswered", []uint64{2, 3, 4}}} {
		var asked []uint64
		v, err := r.Run(ctx, Execution{ID: tc.id, Program: prog, Capabilities: map[string]Capability{
			"f": func(_ context.Context, c Call) (value.Value, error) {
				asked = append(asked, c.ID)
				return value.Number(float64(10 * c.ID)), nil
			},
		}})
		require.NoError(t, err)
		require.Equal(t, 100.0, v.Num)
		require.Equal(t, tc.asked, asked)
		cp, _, err := store.Load(ctx, tc.id)
		require.NoError(t, err)
		require.True(t, cp.Done)
		require.Equal(t, 4, cp.Calls)
		require.Equal(t, host.HostCalls(""), cp.HostCalls, "it kept its mode")
	}
}

// A DirStore keeps a batch checkpoint's outstanding calls and answers.
func TestDirStoreKeepsOutstandingCalls(t *testing.T) {
	ctx := context.Background()
	s, err := NewDirStore(t.TempDir())
	require.NoError(t, err)
	snap := []byte("snapshot bytes")
	ans := host.Throw(host.CallError{Name: "E", Message: "m"})
	cp := &Checkpoint{ProgramID: "p", Calls: 3, HostCalls: host.HostCallsBatch, SnapshotID: wire.SHA256Hex(snap), Snapshot: snap,
		Capability: "f", Args: []value.Value{value.Number(1)},
		Outstanding: []StoredCall{
			{PendingCall: host.PendingCall{ID: 4, Capability: "f", Args: []value.Value{value.Number(1)}}},
			{PendingCall: host.PendingCall{ID: 6, Capability: "g", Args: []value.Value{}}, Answer: &ans},
		}}
	require.NoError(t, s.Save(ctx, "b", cp))
	got, ok, err := s.Load(ctx, "b")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, host.HostCallsBatch, got.HostCalls)
	require.Equal(t, 3, got.Calls)
	require.Len(t, got.Outstanding, 2)
	require.Equal(t, host.PendingCall{ID: 4, Capability: "f", Args: []value.Value{value.Number(1)}}, got.Outstanding[0].PendingCall)
	require.Nil(t, got.Outstanding[0].Answer)
	require.Equal(t, uint64(6), got.Outstanding[1].ID)
	require.Equal(t, ans.String(), got.Outstanding[1].Answer.String())
}
