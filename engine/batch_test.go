package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Batches: a resume may answer any subset of the outstanding calls
// (CONTRACT.md, "Batched host calls"). The engine does not know about
// modes: a one-at-a-time host answers the focus call, a batch host any
// subset. These tests answer subsets and check that the guest sees them
// as the contract says, and that a cold resume from every step's snapshot
// equals the hot run.

// times10 answers get(n) with 10n, and fails for a negative n.
func times10(c snapshot.HostCall) Payload {
	n := c.Args[0].Num
	if n < 0 {
		return Payload{Outcome: snapshot.Outcome{Error: &snapshot.HostError{Name: "Error", Message: fmt.Sprintf("no %v", n)}}}
	}
	return ret(value.Number(10 * n))
}

// batchRun is one hot run: the steps, and the answers given at each.
type batchRun struct {
	steps   []Step
	answers [][]Answer
	snaps   [][]byte
}

// pickFunc chooses which outstanding calls a resume answers, by index
// into step.Calls, in the order given.
type pickFunc func(step Step, round int) []int

func answerAll(step Step, _ int) []int {
	out := make([]int, len(step.Calls))
	for i := range out {
		out[i] = i
	}
	return out
}

func runBatch(t *testing.T, src string, pick pickFunc) batchRun {
	t.Helper()
	p, err := Compile(src)
	require.NoError(t, err)
	limits := policy.DefaultLimits()
	h := snapshot.Header{Program: p.Bytes, Capabilities: []string{"get"}, Seed: suiteSeed, ClockMillis: suiteClock}
	var r batchRun
	x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: limits})
	for round := 0; step.Suspended(); round++ {
		require.Less(t, round, 100, "runaway")
		raw := step.Snapshot
		var answers []Answer
		for _, i := range pick(step, round) {
			c := step.Calls[i]
			answers = append(answers, Answer{CallID: c.ID, Payload: times10(c)})
		}
		step.Calls = slices.Clone(step.Calls) // the execution reuses its slice
		r.steps, r.answers, r.snaps = append(r.steps, step), append(r.answers, answers), append(r.snaps, raw)
		x, step = x.ResumeWith(nil, answers, limits)
	}
	r.steps = append(r.steps, step)
	// Every step's snapshot, resumed cold with the same answers, goes on
	// exactly as the hot run did.
	for k, raw := range r.snaps {
		assert.Equal(t, snapshot.ID(raw), r.steps[k].SnapshotID, "step %d: snapshot id", k)
		snap, err := snapshot.Load(raw, nil)
		require.NoError(t, err)
		assert.Equal(t, outstandingIDs(r.steps[k].Calls), outstandingIDs(snap.Outstanding()), "step %d: outstanding calls in the snapshot", k)
		cx, cstep := testRuntime.Start(Config{Program: p, Header: snap.Header, Limits: limits, Journal: snap, Raw: raw, Answers: r.answers[k]})
		for j := k + 1; ; j++ {
			assert.Equal(t, describeStep(r.steps[j]), describeStep(cstep), "cold from step %d, step %d", k, j)
			// The replay's journal continues the bytes it was loaded from
			// into the same snapshots as the hot run's journal.
			assert.Equal(t, r.steps[j].SnapshotID, cstep.SnapshotID, "cold from step %d, step %d: snapshot", k, j)
			if !cstep.Suspended() {
				break
			}
			cx, cstep = cx.ResumeWith(nil, r.answers[j], limits)
		}
	}
	return r
}

func outstandingIDs(cs []snapshot.HostCall) []uint64 {
	out := []uint64{}
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func describeStep(s Step) string {
	switch {
	case s.Err != nil:
		return "error " + s.Err.Error()
	case s.Done:
		return "done " + fmtValue(s.Value)
	}
	var parts []string
	for _, c := range s.Calls {
		sync := ""
		if c.Sync {
			sync = " sync"
		}
		parts = append(parts, fmt.Sprintf("%d:%s%s%s", c.ID, c.Capability, fmtValue(value.Array(c.Args...)), sync))
	}
	return fmt.Sprintf("focus %d new %d [%s] at %d/%d", s.Focus, s.NewFrom, strings.Join(parts, " "), s.Meter.Instructions, s.Meter.Allocations)
}

func TestBatchUnansweredCallsStayOutstanding(t *testing.T) {
	src := `async function main() {
	  const a = get(1), b = get(2);
	  const x = await a;
	  const c = get(3);
	  return [x, await b, await c];
	}
	main();`
	// Answer the newest outstanding call only.
	r := runBatch(t, src, func(step Step, _ int) []int { return []int{len(step.Calls) - 1} })
	require.Len(t, r.steps, 4)
	assert.Equal(t, []uint64{1, 2}, outstandingIDs(r.steps[0].Calls))
	assert.Equal(t, []uint64{1}, outstandingIDs(r.steps[1].Calls), "call 2 answered, call 1 still outstanding")
	assert.Equal(t, uint64(3), r.steps[1].NewFrom, "no call made since")
	assert.Empty(t, r.steps[1].NewCalls())
	assert.Equal(t, []uint64{3}, outstandingIDs(r.steps[2].Calls))
	assert.Equal(t, uint64(3), r.steps[2].NewFrom)
	last := r.steps[len(r.steps)-1]
	require.NoError(t, last.Err)
	assert.Equal(t, fmtValue(jsA(jsN(10), jsN(20), jsN(30))), fmtValue(last.Value))
}

func TestBatchAnswersApplyInOrderBeforeTheGuestRuns(t *testing.T) {
	src := `const log = [];
	async function main() {
	  const p = get(1).then((v) => log.push(v));
	  const q = get(2).then((v) => log.push(v));
	  await Promise.all([p, q]);
	  return log;
	}
	main();`
	reverse := func(step Step, _ int) []int {
		out := answerAll(step, 0)
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
		return out
	}
	r := runBatch(t, src, reverse)
	require.Len(t, r.steps, 2, "one resume answers both")
	assert.Equal(t, fmtValue(jsA(jsN(20), jsN(10))), fmtValue(r.steps[1].Value))
	r = runBatch(t, src, answerAll)
	assert.Equal(t, fmtValue(jsA(jsN(10), jsN(20))), fmtValue(r.steps[1].Value))
}

func TestBatchSynchronousCallWaitsForItsOwnAnswer(t *testing.T) {
	src := `const log = [];
	(async () => { log.push(await get(1)) })();
	const s = get(2);
	log.push('sync ' + s);
	log;`
	r := runBatch(t, src, func(step Step, _ int) []int { return []int{0} }) // the oldest only
	require.Len(t, r.steps, 3)
	s0, s1 := r.steps[0], r.steps[1]
	assert.Equal(t, []uint64{1, 2}, outstandingIDs(s0.Calls))
	assert.Equal(t, []bool{false, true}, []bool{s0.Calls[0].Sync, s0.Calls[1].Sync})
	assert.Equal(t, uint64(2), s0.Focus, "the synchronous call is the focus")
	assert.Equal(t, []uint64{2}, outstandingIDs(s1.Calls))
	assert.Equal(t, uint64(2), s1.Focus)
	assert.Equal(t, s0.Meter, s1.Meter, "the async answer waits: no job runs while the script waits in a synchronous call")
	// The synchronous call's answer lets the script finish; the async
	// reaction runs after it.
	assert.Equal(t, fmtValue(jsA(jsS("sync 20"), jsN(10))), fmtValue(r.steps[2].Value))
}

func TestBatchFanOutWavesHotEqualsCold(t *testing.T) {
	src := `async function main() {
	  const ids = await Promise.all([1, 2, 3, 4].map((i) => get(i)));
	  const more = await Promise.allSettled(ids.map((v) => get(v % 30 === 0 ? -1 : v + 1)));
	  let t = 0;
	  for (const r of more) t += r.status === 'fulfilled' ? r.value : 1000;
	  return t + (await get(t));
	}
	main();`
	for _, c := range []struct {
		name   string
		pick   pickFunc
		rounds int
	}{
		{"all at once", answerAll, 3},
		{"oldest first", func(Step, int) []int { return []int{0} }, 9},
		{"alternating halves", func(step Step, round int) []int {
			var out []int
			for i := range step.Calls {
				if i%2 == round%2 || len(step.Calls) == 1 {
					out = append(out, i)
				}
			}
			return out
		}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runBatch(t, src, c.pick)
			last := r.steps[len(r.steps)-1]
			require.NoError(t, last.Err)
			// 10..40 -> 110, 210, (30: error) 1000, 410 -> 1730, then 17300.
			assert.Equal(t, fmtValue(jsN(19030)), fmtValue(last.Value))
			if c.rounds > 0 {
				assert.Len(t, r.steps, c.rounds+1)
			}
		})
	}
}

func TestCheckAnswers(t *testing.T) {
	out := []snapshot.HostCall{{ID: 2}, {ID: 4}}
	ans := func(ids ...uint64) []Answer {
		var a []Answer
		for _, id := range ids {
			a = append(a, Answer{CallID: id})
		}
		return a
	}
	for _, c := range []struct {
		answers []Answer
		want    string
		reason  AnswerReason
	}{
		{ans(2), "", 0},
		{ans(4, 2), "", 0},
		{nil, "a resume must answer at least one call", NoAnswers},
		{ans(5), "unknown call_id 5", UnknownCall},
		{ans(0), "unknown call_id 0", UnknownCall},
		{ans(3), "call_id 3 answered twice", AnsweredTwice},
		{ans(2, 2), "call_id 2 answered twice", AnsweredTwice},
		{ans(4, 9), "unknown call_id 9", UnknownCall},
	} {
		err := CheckAnswers(out, 4, c.answers)
		if c.want == "" {
			assert.NoError(t, err)
			continue
		}
		var ae *AnswerError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, c.want, err.Error())
		assert.Equal(t, c.reason, ae.Reason, c.want)
	}
}

// A refused resume changes nothing: the execution stays parked and takes
// a good resume afterwards; a cancelled answer among others ends it.
func TestBatchRefusedResumeChangesNothing(t *testing.T) {
	p, err := Compile(`async function main() { return (await get(1)) + (await get(2)) } main()`)
	require.NoError(t, err)
	limits := policy.DefaultLimits()
	h := snapshot.Header{Program: p.Bytes, Capabilities: []string{"get"}}
	x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: limits})
	require.True(t, step.Suspended())
	for _, bad := range [][]Answer{nil, {{CallID: 7}}, {{CallID: 1}, {CallID: 1}}} {
		var again *Execution
		again, step = x.ResumeWith(nil, bad, limits)
		require.Same(t, x, again)
		var ae *AnswerError
		require.ErrorAs(t, step.Err, &ae)
	}
	x, step = x.ResumeWith(nil, []Answer{{CallID: 1, Payload: ret(value.Number(1))}}, limits)
	require.True(t, step.Suspended())
	require.Equal(t, uint64(2), step.Focus)
	_, step = x.ResumeWith(nil, []Answer{{CallID: 2, Payload: cancelled}}, limits)
	require.Equal(t, ErrCancelled, step.Err)
}
