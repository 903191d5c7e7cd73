package engine

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/sampletext"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// checkpointPages is the 40 × 50 KB program of bench/README.md.
const checkpointPages = `
let total = 0;
for (let i = 0; i < 40; i++) { const r = fetch_page(i); total += r.length; }
total;
`

// pageAnswer is fetch_page(i)'s answer: ~50 KB of text.
func pageAnswer(i int) Payload {
	text := sampletext.JSONLike(rand.New(rand.NewPCG(uint64(i), 7)), 50_000)
	return Payload{Outcome: snapshot.Outcome{Value: value.String(text)}}
}

// hotRun runs a program to its end, its journal sealed under seal (nil:
// none), answering each focus call with answer(i) for its i-th call, and
// returns every step.
func hotRun(t *testing.T, p *Program, h snapshot.Header, limits policy.Limits, seal *snapshot.Sealer, answer func(i int) Payload) []Step {
	t.Helper()
	x, s := testRuntime.Start(Config{Program: p, Header: h, Limits: limits, Seal: seal})
	// A step's calls are the execution's own until it is resumed.
	steps := []Step{s}
	for i := 0; s.Suspended(); i++ {
		steps[i].Calls = slices.Clone(s.Calls)
		x, s = x.Resume(answer(i), limits)
		steps = append(steps, s)
	}
	require.NoError(t, s.Err)
	return steps
}

// coldFrom resumes the snapshot of a suspension in a realm of its own
// with the answer the hot run gave it, and returns the step it reaches.
func coldFrom(t *testing.T, p *Program, s Step, limits policy.Limits, seal *snapshot.Sealer, answer Payload) Step {
	t.Helper()
	snap, err := snapshot.Load(s.Snapshot, seal)
	require.NoError(t, err)
	x, next := testRuntime.Start(Config{Program: p, Header: snap.Header, Limits: limits, Journal: snap, Raw: s.Snapshot, Seal: seal,
		Answers: []Answer{{CallID: snap.Last().Focus, Payload: answer}}})
	if x != nil {
		x.Abandon()
	}
	return next
}

// sameStep compares what a cold resume reached with what the hot run did:
// the outcome, the calls, the meter and the snapshot's very bytes.
func sameStep(t *testing.T, what string, hot, cold Step) {
	t.Helper()
	assert.Equal(t, describeStep(hot), describeStep(cold), what)
	assert.Equal(t, hot.Meter, cold.Meter, what)
	assert.Equal(t, hot.SnapshotID, cold.SnapshotID, what)
	assert.True(t, bytes.Equal(hot.Snapshot, cold.Snapshot), "%s: the snapshots differ", what)
}

// The 40 × 50 KB program checkpoints at every suspension after its first
// answer: each snapshot holds the header and a few dozen bytes of image,
// not the answers, and a cold resume from any of them reaches exactly
// the step the hot run did (the same meter, calls and snapshot bytes).
func TestCheckpointsKeepWhatTheGuestKeeps(t *testing.T) {
	pagesCheckpointEverywhere(t, checkpointPages, snapshot.VersionCheckpoint, 512)
}

// pagesCheckpointEverywhere runs src, a 40 × 50 KB program, and checks
// that every suspension after the first is a checkpoint of format
// version, its snapshot within room bytes of the program, and that a
// cold resume from any suspension reaches exactly the hot run's next
// step.
func pagesCheckpointEverywhere(t *testing.T, src string, version uint64, room int) {
	t.Helper()
	p, err := Compile(src)
	require.NoError(t, err)
	steps := pagesColdFromEach(t, p, func(i int, raw []byte, snap *snapshot.Snapshot) {
		if i == 0 {
			assert.Nil(t, snap.Checkpoint, "the first suspension has no journal to replace")
		} else {
			require.NotNil(t, snap.Checkpoint, "suspension %d", i)
			assert.EqualValues(t, version, snap.Version)
			assert.Less(t, len(raw), len(p.Bytes)+room, "suspension %d: %d bytes", i, len(raw))
		}
	})
	require.Len(t, steps, 41)
}

// pagesColdFromEach runs p hot to its end, answering its i-th call with
// pageAnswer(i), hands check each suspension's snapshot (raw and
// decoded), and checks that a cold resume from it reaches the hot run's
// next step byte for byte. It returns the hot run's steps.
func pagesColdFromEach(t *testing.T, p *Program, check func(i int, raw []byte, snap *snapshot.Snapshot)) []Step {
	t.Helper()
	h := snapshot.Header{Program: p.Bytes, Capabilities: []string{"fetch_page"}, Seed: 3, ClockMillis: 1}
	limits := policy.DefaultLimits()
	steps := hotRun(t, p, h, limits, nil, pageAnswer)
	require.True(t, steps[len(steps)-1].Done)
	for i, s := range steps[:len(steps)-1] {
		snap, err := snapshot.Load(s.Snapshot, nil)
		require.NoError(t, err)
		check(i, s.Snapshot, snap)
		sameStep(t, fmt.Sprintf("resumed cold at suspension %d", i), steps[i+1], coldFrom(t, p, s, limits, nil, pageAnswer(i)))
	}
	return steps
}

// A guest that keeps records in objects, arrays and closures, draws
// random numbers, and catches the errors some calls answer, two frames
// deep inside try/finally: its large answers bring checkpoints, its small
// ones and errors journal entries after them, and a cold resume from any
// suspension, plain or sealed, reaches the hot run's next step byte for
// byte.
func TestCheckpointsContinueAsTheHotRun(t *testing.T) {
	const src = `
const log = [];
const byKey = {};
let total = 0;
function record(k, v) {
  log.push(k + ":" + (Math.random() * 1e6 | 0));
  byKey[k] = { len: v.length, head: v.slice(0, 5), at: log.length };
}
const add = (n) => { total += n; return total; };
function step(i) {
  try { const r = fetch_page(i); record("p" + i, r); return add(r.length); }
  catch (e) { log.push(e.name + " " + e.message); return -1; }
  finally { log.push(-i); }
}
const sums = [];
for (let i = 0; i < 12; i++) sums.push(step(i));
JSON.stringify({ total, log, byKey, sums, r: Math.random() });
`
	answer := func(i int) Payload {
		switch {
		case i%4 == 3:
			return Payload{Outcome: snapshot.Outcome{Error: &snapshot.HostError{Name: "NotFound", Message: "page " + strconv.Itoa(i)}}}
		case i%3 == 1:
			return Payload{Outcome: snapshot.Outcome{Value: value.String("short " + strconv.Itoa(i))}}
		}
		return pageAnswer(i)
	}
	continueAsHot(t, src, answer, 12, 6)
}

// A guest that sends a document from call to call, with short answers,
// grows its journal by its calls' arguments: it is checkpointed as that
// journal doubles (without the calls counted, its journal grew by ~1 KiB
// a call and it never was), and a cold resume from any suspension, plain
// or sealed, reaches the hot run's next step byte for byte.
func TestCheckpointsForAJournalOfArguments(t *testing.T) {
	const src = `
const note = "0123456789abcdef".repeat(64);
let acc = 0;
for (let i = 0; i < 80; i++) { const r = fetch_page({ i, note }); acc += r.length; }
acc;
`
	answer := func(i int) Payload {
		return Payload{Outcome: snapshot.Outcome{Value: value.String("ok " + strconv.Itoa(i))}}
	}
	continueAsHot(t, src, answer, 80, 40)
}

// A guest that keeps answers: the last page and a second one, which it
// passes on to a later call; some it reads (their length scanned), some
// it does not, some are not ASCII. The image holds an answer's string as
// it arrived, once however often it is held (a variable and the waited
// call's arguments), scanned or not as it was, so that the cold run
// reads the hot run's heap figures and charges.
func TestCheckpointsHoldTheAnswersTheGuestKeeps(t *testing.T) {
	const src = `
let last = "";
let second = null, third = null;
const lengths = [];
let heads = "";
for (let i = 0; i < 16; i++) {
  last = fetch_page(i, i >= 12 ? second : i);
  if (i === 1) second = last;
  if (i === 2) third = last;
  if (i % 2 === 0) lengths.push(last.length);
  if (i > 2) heads += third.slice(0, 2 + i);
}
[second.length, lengths.join(","), last.slice(0, 8), heads.length].join(":");
`
	answer := func(i int) Payload {
		switch {
		case i%4 == 1:
			text := strings.Repeat("é "+strconv.Itoa(i)+" ", 12_000)
			return Payload{Outcome: snapshot.Outcome{Value: value.String(text)}}
		case i == 2:
			return Payload{Outcome: snapshot.Outcome{Value: value.String(strings.Repeat("a short page ", 8))}}
		}
		return pageAnswer(i)
	}
	continueAsHot(t, src, answer, 16, 2)
}

// The same for a guest that calls from inside for-of loops over arrays,
// nested, one over an array's entries: its loops are in flight at every
// call.
func TestCheckpointsContinueForOfLoops(t *testing.T) {
	const src = `
const urls = ["a", "b", "c", "d", "e", "f"];
const summary = [];
for (const [i, u] of urls.entries()) {
  for (const part of [u, u + "!"]) {
    const page = fetch_page(i);
    summary.push(part + page.length);
    if (i === 4) break;
  }
}
summary.join(",");
`
	continueAsHot(t, src, pageAnswer, 11, 10)
}

// The same for a guest keeping a Map and a Set that grow and shrink
// after every checkpoint: their growth is charged from the largest size
// each has had, which the image keeps, so the meter reads the same hot
// and cold.
func TestCheckpointsContinueWithCollections(t *testing.T) {
	const src = `
const counts = new Map();
const firsts = new Set();
for (let i = 0; i < 8; i++) {
  const page = fetch_page(i);
  for (let j = 0; j < 40; j++) counts.set("k" + (i * 40 + j), page.length + j);
  if (i % 3 === 0) for (let j = 0; j < 60; j++) counts.delete("k" + (i * 40 - j));
  firsts.add(page.slice(0, 6 + i));
}
JSON.stringify([counts.size, firsts.size, counts.get("k100")]);
`
	continueAsHot(t, src, pageAnswer, 8, 7)
}

// continueAsHot runs src hot, plain and sealed, answering with answer,
// and resumes it cold from each of its calls suspensions: each resume
// reaches the hot run's next step byte for byte, and at least least of
// the suspensions are checkpoints.
func continueAsHot(t *testing.T, src string, answer func(int) Payload, calls, least int) {
	t.Helper()
	p, err := Compile(src)
	require.NoError(t, err)
	seal, err := snapshot.NewSealer([]byte("a seal key of thirty-two bytes!!"))
	require.NoError(t, err)
	for _, seal := range []*snapshot.Sealer{nil, seal} {
		h := snapshot.Header{Program: p.Bytes, Capabilities: []string{"fetch_page"}, Seed: 11, ClockMillis: 1}
		limits := policy.DefaultLimits()
		steps := hotRun(t, p, h, limits, seal, answer)
		require.Len(t, steps, calls+1)
		checkpoints := 0
		for i, s := range steps[:calls] {
			snap, err := snapshot.Load(s.Snapshot, seal)
			require.NoError(t, err)
			if snap.Checkpoint != nil {
				checkpoints++
			}
			sameStep(t, fmt.Sprintf("sealed %v, resumed cold at suspension %d", seal != nil, i), steps[i+1], coldFrom(t, p, s, limits, seal, answer(i)))
		}
		assert.GreaterOrEqual(t, checkpoints, least, "sealed %v: suspensions after a large answer", seal != nil)
		if least < calls-1 {
			assert.Less(t, checkpoints, calls, "sealed %v: a small answer journals", seal != nil)
		}
	}
}

// checkpointSweepEnv, set to a file's path, makes a run of this test
// binary write a checkpoint at every suspension the image can hold, and
// write the number it wrote into that file when it ends (TestMain).
const checkpointSweepEnv = "MUSTARD_TEST_CHECKPOINT_SWEEP"

func init() {
	if os.Getenv(checkpointSweepEnv) != "" {
		checkpointAlways = true
	}
}

// ReportCheckpoints writes, in a sweep's run, how many checkpoints the
// run wrote.
func ReportCheckpoints() {
	if path := os.Getenv(checkpointSweepEnv); path != "" {
		counts := fmt.Sprintf("%d %d", checkpointsWritten.Load(), checkpointsTried.Load())
		_ = os.WriteFile(path, []byte(counts), 0o600)
	}
}

// The suites that compare hot resumes with cold ones, again with a
// checkpoint at every suspension the image can hold (in a process of its
// own, since the switch is the package's): a cold resume from a
// checkpoint must reach what the hot run reached, as one from the
// journal does, for every guest program of the engine's suites (the
// ones the image cannot hold keep their journal, as they would).
func TestCheckpointSweep(t *testing.T) {
	if os.Getenv(checkpointSweepEnv) != "" {
		t.Skip("the sweep's own run")
	}
	count := filepath.Join(t.TempDir(), "checkpoints")
	suites := "^(TestGuestSuiteCold|TestAsyncProbes|TestBatch.*|TestReplayMatchesHot|" +
		"TestEveryLimitLoweredAtResumeHotEqualsCold|TestLoweredHeapLimitBelowWhatIsKeptFailsBothWays|" +
		"TestResumeRefusesAlikeHotAndCold|TestTypeScriptColdResume|TestNamespacedCapabilities|TestConsole.*|" +
		"TestMathRandomPerSeed|TestClockIsFixedPerStart|TestHostErrorIsCatchable|TestUncaughtErrorHasTraceback|" +
		"TestWhatIsKeptOnBuiltinsCountsAgainstTheHeapLimit|" +
		"TestEntryCall)$"
	cmd := exec.Command(os.Args[0], "-test.run="+suites, "-test.count=1")
	cmd.Env = append(os.Environ(), checkpointSweepEnv+"="+count)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the suites with a checkpoint at every suspension: %v\n%s", err, out)
	}
	b, err := os.ReadFile(count)
	require.NoError(t, err)
	var written, tried int
	_, err = fmt.Sscan(string(b), &written, &tried)
	require.NoError(t, err)
	t.Logf("%d checkpoints written at the %d suspensions with one call outstanding that came to an image", written, tried)
	assert.Greater(t, written, 100, "checkpoints the sweep wrote")
}

// A damaged image (authenticated bytes can still be a leaked key's) is
// refused or runs as some guest state, under the execution's limits:
// never a panic or a hang of the engine. Every byte of a checkpoint's
// image altered, and every prefix of it.
func TestCheckpointDamageFailsClosed(t *testing.T) {
	h := snapshot.Header{Capabilities: []string{"fetch_page"}, Seed: 3, ClockMillis: 1}
	damageCheckpoint(t, checkpointPages, h, 1)
	// Images at rest (version 7): an awaiting script, and an entry
	// function awaiting helpers inside try blocks and then callbacks.
	damageCheckpoint(t, checkpointAwaited, h, 1)
	// Two calls waited for by Promise.all: its element functions, their
	// shared state and the capability's reject function.
	damageCheckpoint(t, `let n = 0;
for (let i = 0; i < 6; i += 2) { const [a, b] = await Promise.all([fetch_page(i), fetch_page(i + 1)]); n += a.length + b.length; }
n`, h, 2)
	h.Entry, h.Inputs = snapshot.EntryCall, asyncShapesInputs
	damageCheckpoint(t, asyncShapes, h, 3)
}

// damageCheckpoint runs src to its suspension at, whose snapshot must
// be a checkpoint, and resumes it cold with its image altered, each
// byte three ways, and cut short at every length: each ends or runs to
// completion, without an internal error.
func damageCheckpoint(t *testing.T, src string, h snapshot.Header, at int) {
	t.Helper()
	p, err := Compile(src)
	require.NoError(t, err)
	h.Program = p.Bytes
	limits := policy.DefaultLimits()
	x, s := testRuntime.Start(Config{Program: p, Header: h, Limits: limits})
	for i := range at {
		x, s = x.Resume(pageAnswer(i), limits)
	}
	require.True(t, s.Suspended())
	x.Abandon()
	snap, err := snapshot.Decode(s.Snapshot)
	require.NoError(t, err)
	require.NotNil(t, snap.Checkpoint)
	image := snap.Checkpoint.Image
	// Short answers from here on: what is tried is the image, and a
	// damaged one may run the guest's loop many times.
	short := Payload{Outcome: snapshot.Outcome{Value: value.String("a short page")}}
	run := func(img []byte) {
		snap.Checkpoint.Image = img
		raw := snapshot.Encode(snap)
		j, err := snapshot.Load(raw, nil)
		require.NoError(t, err)
		x, step := testRuntime.Start(Config{Program: p, Header: j.Header, Limits: limits, Journal: j, Raw: raw,
			Answers: []Answer{{CallID: j.Last().Focus, Payload: short}}})
		for i := 0; step.Suspended() && i < 50; i++ {
			x, step = x.Resume(short, limits)
		}
		if x != nil {
			x.Abandon()
		}
		if step.Err != nil {
			assert.NotContains(t, step.Err.Error(), "internal error")
		}
	}
	for i := range image {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			img := bytes.Clone(image)
			img[i] ^= flip
			run(img)
		}
	}
	for cut := 1; cut < len(image); cut++ {
		run(image[:cut])
	}
	t.Logf("format version %d: %d bytes of image, each altered three ways, and each prefix", snap.Version, len(image))
}

// A guest whose state the image cannot hold, taking 50 KB answers that
// its journal keeps in 19 KB each, has its heap walked for an image at
// the steps that take its journal past a doubling (two or three each),
// not at each of its 40 steps, and less often as the journal grows; one
// whose image is written tries at every step past the first.
func TestCheckpointTriesAsTheJournalDoubles(t *testing.T) {
	var tried []int
	tail := 0
	for step := range 40 {
		if checkpointDue(tail, tail+50_000) {
			tried = append(tried, step)
		}
		tail += 19_000
	}
	assert.LessOrEqual(t, len(tried), 12, "steps tried: %v", tried)
	assert.Less(t, tried[len(tried)-1], 30, "steps tried: %v", tried)
	assert.True(t, checkpointDue(0, 50_000), "after a checkpoint")
	assert.False(t, checkpointDue(0, checkpointMin-1), "under the least journal worth replacing")
}

// The 40 × 50 KB program with its calls awaited, as code mode writes
// it: at every suspension after its first answer the execution is at
// rest (its script's promise returned, the script's body waiting at an
// await), a checkpoint of format version 7 holds it in a few hundred
// bytes, and a cold resume from any suspension reaches exactly the step
// the hot run did.
func TestCheckpointsHoldAsyncCodeAtRest(t *testing.T) {
	pagesCheckpointEverywhere(t, checkpointAwaited, snapshot.VersionRestCheckpoint, 768)
}

// Async code at rest in the shapes code mode writes: an entry function
// (an async arrow the engine calls with the inputs), helpers declared
// async and awaited from a loop over an array, then callbacks, try and
// catch around an await, and host errors: a cold resume from every
// suspension, plain and sealed, reaches the hot run's next step byte for
// byte, most of them from checkpoints.
func TestCheckpointsHoldAsyncShapes(t *testing.T) {
	p, err := Compile(asyncShapes)
	require.NoError(t, err)
	seal, err := snapshot.NewSealer([]byte("a seal key of thirty-two bytes!!"))
	require.NoError(t, err)
	answer := func(i int) Payload {
		if i == 3 {
			return Payload{Outcome: snapshot.Outcome{Error: &snapshot.HostError{Name: "Error", Message: "page gone"}}}
		}
		return pageAnswer(i)
	}
	for _, seal := range []*snapshot.Sealer{nil, seal} {
		h := snapshot.Header{Program: p.Bytes, Capabilities: []string{"fetch_page"}, Seed: 5, ClockMillis: 1,
			Entry: snapshot.EntryCall, Inputs: asyncShapesInputs}
		limits := policy.DefaultLimits()
		steps := hotRun(t, p, h, limits, seal, answer)
		require.Len(t, steps, 8)
		checkpoints := 0
		for i, s := range steps[:7] {
			snap, err := snapshot.Load(s.Snapshot, seal)
			require.NoError(t, err)
			if snap.Checkpoint != nil {
				checkpoints++
				assert.EqualValues(t, snapshot.VersionRestCheckpoint, snap.Version)
			}
			sameStep(t, fmt.Sprintf("sealed %v, resumed cold at suspension %d", seal != nil, i), steps[i+1], coldFrom(t, p, s, limits, seal, answer(i)))
		}
		assert.GreaterOrEqual(t, checkpoints, 4, "sealed %v", seal != nil)
	}
}

// checkpointAwaited is the 40 × 50 KB program with its calls awaited.
const checkpointAwaited = `
let total = 0;
for (let i = 0; i < 40; i++) { const r = await fetch_page(i); total += r.length; }
total;
`

// asyncShapes is an entry function of code mode's shapes, with its
// inputs.
const asyncShapes = `
async (input) => {
  const seen = [];
  async function page(i) {
    try {
      const text = await fetch_page(i);
      return text.length;
    } catch (e) {
      seen.push("failed " + i + ": " + e.message);
      return 0;
    }
  }
  let total = 0;
  for (const i of [0, 1, 2, 3, 4, 5, 6]) {
    const n = await page(i).then((n) => n * input.scale);
    total += n;
    seen.push(i + ":" + n);
  }
  return JSON.stringify({ total, seen, r: Math.random() < 2 });
}
`

var asyncShapesInputs = []value.Member{{Key: "scale", Value: value.Number(2)}}

// Promises the guest makes itself at rest: a new Promise's resolving
// function handed to then, or kept and called once the answer came, a
// rejection through one, an async arrow that returns a call's promise
// (resolved through a thenable job's resolving functions), and a
// resolving function whose promise was already resolved before the
// checkpoint (calling it after the cold resume must do nothing, as in
// the hot run). Every suspension after the first is a checkpoint, and a
// cold resume from each reaches the hot run's next step byte for byte.
func TestCheckpointsHoldPromisesTheGuestMakes(t *testing.T) {
	for _, src := range []string{
		`let n = 0; for (let i = 0; i < 3; i++) { n += (await new Promise((ok) => fetch_page(i).then(ok))).length; } n`,
		`let n = 0;
for (let i = 0; i < 3; i++) {
  let done;
  const p = new Promise((r) => { done = r; });
  fetch_page(i).then((v) => done(v.length));
  n += await p;
}
n`,
		`const errs = [];
for (let i = 0; i < 3; i++) {
  try { await new Promise((_, no) => fetch_page(i).then((v) => no(new Error("length " + v.length)))); }
  catch (e) { errs.push(e.message); }
}
errs.join()`,
		`const get = async (i) => fetch_page(i); let n = 0; for (let i = 0; i < 3; i++) n += (await get(i)).length; n`,
		`let n = 0;
for (let i = 0; i < 3; i++) {
  let res;
  const p = new Promise((r) => { res = r; r(i); });
  n += (await fetch_page(i)).length;
  res(1000);
  n += await p;
}
n`,
	} {
		p, err := Compile(src)
		require.NoError(t, err)
		steps := pagesColdFromEach(t, p, func(i int, _ []byte, snap *snapshot.Snapshot) {
			assert.Equal(t, i > 0, snap.Checkpoint != nil, "%s: suspension %d is a checkpoint", src, i)
		})
		require.Len(t, steps, 4, src)
	}
}

// Async code the image at rest does not hold keeps its journal, and a
// cold resume from it still reaches the hot run's next step: an async
// generator's queue.
func TestCheckpointsRefusedAtRestKeepTheJournal(t *testing.T) {
	for _, src := range []string{
		`async function* pages() { for (let i = 0; i < 3; i++) yield await fetch_page(i); }
let n = 0; for await (const p of pages()) n += p.length; n`,
	} {
		p, err := Compile(src)
		require.NoError(t, err)
		pagesColdFromEach(t, p, func(i int, _ []byte, snap *snapshot.Snapshot) {
			assert.Nil(t, snap.Checkpoint, "%s: suspension %d", src, i)
		})
	}
}

// Calls waited for together at rest: Promise.all, allSettled with a host
// error among the answers, any (and any of promises that all reject,
// one rejected before the checkpoint), race (which leaves the slower call
// outstanding behind the next ones), and two promises awaited one after
// the other. Answered one call at a time and all at once, a cold resume
// from every suspension reaches the hot run's next step byte for byte,
// and most suspensions after the first are checkpoints.
func TestCheckpointsHoldCallsWaitedForTogether(t *testing.T) {
	for _, src := range []string{
		`let n = 0;
for (let i = 0; i < 4; i += 2) { const [a, b] = await Promise.all([fetch_page(i), fetch_page(i + 1)]); n += a.length + b.length; }
n`,
		`const out = [];
for (let i = 0; i < 6; i += 3) {
  const rs = await Promise.allSettled([fetch_page(i), fetch_page(i + 1), fetch_page(i + 2)]);
  for (const r of rs) out.push(r.status === "fulfilled" ? r.value.length : r.reason.message);
}
out.join(",")`,
		`const out = [];
for (let i = 0; i < 6; i += 2) {
  out.push((await Promise.any([fetch_page(i), fetch_page(i + 1)])).length);
  try { await Promise.any([fetch_page(i).then(() => { throw new Error("no " + i); }), Promise.reject(new Error("never"))]); }
  catch (e) { out.push(e.message + ": " + e.errors.map((x) => x.message).join("/")); }
}
out.join(",")`,
		`let n = 0; for (let i = 0; i < 8; i += 2) { n += (await Promise.race([fetch_page(i), fetch_page(i + 1)])).length; } n`,
		`let n = 0; for (let i = 0; i < 4; i += 2) { const [a, b] = [fetch_page(i), fetch_page(i + 1)]; n += (await a).length + (await b).length; } n`,
	} {
		p, err := Compile(src)
		require.NoError(t, err)
		h := snapshot.Header{Program: p.Bytes, Capabilities: []string{"fetch_page"}, Seed: 3, ClockMillis: 1}
		limits := policy.DefaultLimits()
		answer := func(c snapshot.HostCall) Payload {
			i := int(c.Args[0].Num)
			if i == 5 {
				return Payload{Outcome: snapshot.Outcome{Error: &snapshot.HostError{Name: "Error", Message: "page gone"}}}
			}
			return pageAnswer(i)
		}
		for _, batch := range []bool{false, true} {
			x, s := testRuntime.Start(Config{Program: p, Header: h, Limits: limits})
			checkpoints, suspensions := 0, 0
			for s.Suspended() {
				pending := slices.Clone(s.Calls)
				if !batch {
					for _, c := range pending {
						if c.ID == s.Focus {
							pending = []snapshot.HostCall{c}
						}
					}
				}
				answers := make([]Answer, len(pending))
				for i, c := range pending {
					answers[i] = Answer{CallID: c.ID, Payload: answer(c)}
				}
				snap, err := snapshot.Load(s.Snapshot, nil)
				require.NoError(t, err)
				suspensions++
				if snap.Checkpoint != nil {
					checkpoints++
				}
				cx, cold := testRuntime.Start(Config{Program: p, Header: snap.Header, Limits: limits, Journal: snap, Raw: s.Snapshot, Answers: answers})
				if cx != nil {
					cx.Abandon()
				}
				x, s = x.ResumeWith(nil, answers, limits)
				sameStep(t, fmt.Sprintf("%s: batch %v, resumed cold at suspension %d", src, batch, suspensions), s, cold)
			}
			require.NoError(t, s.Err, src)
			t.Logf("batch %v: %d checkpoints at %d suspensions", batch, checkpoints, suspensions)
			assert.GreaterOrEqual(t, 2*checkpoints, suspensions-1, "%s: batch %v: %d checkpoints at %d suspensions", src, batch, checkpoints, suspensions)
		}
	}
}

// An answer the guest keeps in two places is one string in a checkpoint's
// image, as in the hot run, and comes back as one: the cold resume's
// heap figure and meter, and so its next snapshot, are the hot run's.
func TestCheckpointsWriteAKeptAnswerOnce(t *testing.T) {
	p, err := Compile(`
let kept;
let total = 0;
for (let i = 0; i < 8; i++) {
  const r = fetch_page(i);
  if (i === 0) kept = [r, { r }];
  total += r.length;
}
total + kept[0].length + kept[1].r.length;
`)
	require.NoError(t, err)
	first := pageAnswer(0).Outcome.Value.Str[:200]
	checkpoints := 0
	steps := pagesColdFromEach(t, p, func(i int, raw []byte, snap *snapshot.Snapshot) {
		if snap.Checkpoint == nil {
			return
		}
		checkpoints++
		assert.Equal(t, 1, bytes.Count(snap.Checkpoint.Image, []byte(first)), "suspension %d: the kept answer's text in the image", i)
	})
	require.Len(t, steps, 9)
	require.Positive(t, checkpoints)
}

// A guest measuring notes with accents (their length answered without
// their units), joining and normalizing them and keeping the last across
// suspensions resumes cold from each, journal or checkpoint, as it ran
// hot: the same steps, meter readings and bytes. The pages between the
// notes make the journal worth a checkpoint that holds a measured note.
func TestCheckpointsContinueWithMeasuredText(t *testing.T) {
	const src = `
let prev = "";
let n = 0;
for (let i = 0; i < 8; i++) {
  const answer = fetch_page(i);
  if (i % 2 === 0) {
    n += (prev + answer).normalize().length;
    n += answer.length;
    prev = answer;
  } else {
    n += answer.length;
  }
}
n;
`
	answer := func(i int) Payload {
		if i%2 == 1 {
			return pageAnswer(i)
		}
		note := strings.Repeat(fmt.Sprintf("note %d: café, crème brûlée. ", i), 10)
		return Payload{Outcome: snapshot.Outcome{Value: value.String(note)}}
	}
	continueAsHot(t, src, answer, 8, 3)
}
