package engine

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateSnapshots = flag.Bool("update-snapshots", false, "rewrite the format version 2, 5, 6 and 7 files in testdata/snapshots")

// The golden snapshots pin the snapshot format: testdata/snapshots holds
// one snapshot of each kind (format version 1, written by the sidecar
// before host calls in async code returned promises; version 2, of
// programs metered by inserted calls; version 3, of programs the
// interpreter meters, written by release 0.2.0 under its metering; version
// 4, the same written today; plain and sealed), each with an annotated hex
// dump beside the plain ones (snapshot.Annotate) so a reader can see the
// layout. All of them must resume to the same result, and today's sidecar
// must write the version 2 and 4 files byte for byte (starting the
// program each holds): a change to the format needs a new version.
//
// The program inside is a program artifact: v1 and v2 hold format version
// 1 of it (sloppy-mode code, written before guest code was strict),
// v2-strict format version 2 (strict-mode code metered by inserted calls)
// and v3 and v4 format version 3 (what Compile writes now).
const goldenSource = `const first = get({ n: 1 });
async function main() {
  const out = [first];
  try { await get({ n: -1 }) } catch (e) { out.push(e.name + ':' + e.message + ':' + e.code) }
  const big = await get({ n: 2 });
  out.push(big.length);
  const [a, b] = await Promise.all([get({ n: 3 }), get({ n: 4 })]);
  out.push(a, b);
  return out;
}
main();
`

var goldenSealKey = []byte(strings.Repeat("golden seal key!", 2))

// goldenAnswer is the golden program's host.
func goldenAnswer(args []value.Value) snapshot.Outcome {
	n := args[0].Members[0].Value.Num
	switch n {
	case -1:
		code := "E_NOT_FOUND"
		return snapshot.Outcome{Error: &snapshot.HostError{Name: "NotFound", Message: "no such n", Code: &code}}
	case 2:
		return snapshot.Outcome{Value: value.String(strings.Repeat("a large answer ", 200))}
	}
	return snapshot.Outcome{Value: value.Number(10 * n)}
}

var goldenResult = jsA(jsN(10), jsS("NotFound:no such n:E_NOT_FOUND"), jsN(3000), jsN(30), jsN(40))

func goldenSealer(t *testing.T) *snapshot.Sealer {
	s, err := snapshot.NewSealer(goldenSealKey)
	require.NoError(t, err)
	return s
}

// writeGoldenV2 runs the golden program, compiled as program format
// programVersion, one call at a time up to the suspension on which both
// Promise.all calls are outstanding.
func writeGoldenV2(t *testing.T, seal *snapshot.Sealer, programVersion uint64) []byte {
	p, err := compileVersion(goldenSource, programVersion)
	require.NoError(t, err)
	limits := policy.DefaultLimits()
	h := snapshot.Header{Program: p.Bytes, Capabilities: []string{"get"}, Seed: 7, ClockMillis: 1_700_000_000_000}
	x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: limits, Seal: seal})
	for step.Suspended() {
		raw := step.Snapshot
		if len(step.Calls) == 2 {
			x.Abandon()
			return raw
		}
		answers := []Answer{{CallID: step.Focus, Payload: Payload{Outcome: goldenAnswer(step.Args)}}}
		x, step = x.ResumeWith(nil, answers, limits)
	}
	t.Fatalf("the golden program never had two calls outstanding: %v", step.Err)
	return nil
}

func TestGoldenSnapshots(t *testing.T) {
	dir := filepath.Join("testdata", "snapshots")
	if *updateSnapshots {
		for _, f := range []struct {
			file    string
			seal    *snapshot.Sealer
			program uint64
		}{
			{"v2.snap", nil, programVersionSloppy},
			{"v2-sealed.snap", goldenSealer(t), programVersionSloppy},
			{"v2-strict.snap", nil, programVersionStrict},
			{"v2-strict-sealed.snap", goldenSealer(t), programVersionStrict},
			{"v5.snap", nil, programVersion},
			{"v5-sealed.snap", goldenSealer(t), programVersion},
		} {
			require.NoError(t, os.WriteFile(filepath.Join(dir, f.file), writeGoldenV2(t, f.seal, f.program), 0o644))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "v6.snap"), writeGoldenCheckpoint(t, nil), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "v6-sealed.snap"), writeGoldenCheckpoint(t, goldenSealer(t)), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "v7.snap"), writeGoldenRest(t, nil), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "v7-sealed.snap"), writeGoldenRest(t, goldenSealer(t)), 0o644))
	}
	for _, c := range []struct {
		file    string
		sealed  bool
		version uint64
		program uint64 // the program artifact's format version
	}{
		{"v1.snap", false, 1, programVersionSloppy},
		{"v1-sealed.snap", true, 1, programVersionSloppy},
		{"v2.snap", false, 2, programVersionSloppy},
		{"v2-sealed.snap", true, 2, programVersionSloppy},
		{"v2-strict.snap", false, 2, programVersionStrict},
		{"v2-strict-sealed.snap", true, 2, programVersionStrict},
		{"v3.snap", false, 3, programVersion},
		{"v3-sealed.snap", true, 3, programVersion},
		{"v4.snap", false, 4, programVersion},
		{"v4-sealed.snap", true, 4, programVersion},
		{"v5.snap", false, 5, programVersion},
		{"v5-sealed.snap", true, 5, programVersion},
		{"v6.snap", false, 6, programVersion},
		{"v6-sealed.snap", true, 6, programVersion},
		{"v7.snap", false, 7, programVersion},
		{"v7-sealed.snap", true, 7, programVersion},
	} {
		t.Run(c.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, c.file))
			require.NoError(t, err)
			var seal *snapshot.Sealer
			if c.sealed {
				seal = goldenSealer(t)
			}
			snap, err := snapshot.Load(raw, seal)
			require.NoError(t, err)
			require.Equal(t, c.version, snap.Version)
			p, err := LoadProgram(snap.Header.Program)
			require.NoError(t, err)
			require.Equal(t, c.program, p.Version, "the program's format version")
			switch c.version {
			case 2, snapshot.Version:
				assert.Equal(t, raw, writeGoldenV2(t, seal, c.program), "today's sidecar writes this snapshot byte for byte")
			case snapshot.VersionCheckpoint:
				assert.Equal(t, raw, writeGoldenCheckpoint(t, seal), "today's sidecar writes this snapshot byte for byte")
				require.NotNil(t, snap.Checkpoint)
				require.Len(t, snap.Suspensions, 3, "the checkpoint's and two journaled after it")
			case snapshot.VersionRestCheckpoint:
				assert.Equal(t, raw, writeGoldenRest(t, seal), "today's sidecar writes this snapshot byte for byte")
				require.NotNil(t, snap.Checkpoint)
				require.Len(t, snap.Suspensions, 3, "the checkpoint's and two journaled after it")
			}
			if !c.sealed && (!snapshot.EarlierMetering(c.version) || !*updateSnapshots) {
				dump, err := snapshot.Annotate(raw)
				require.NoError(t, err)
				dumpFile := filepath.Join(dir, strings.TrimSuffix(c.file, ".snap")+".txt")
				if *updateSnapshots {
					require.NoError(t, os.WriteFile(dumpFile, []byte(dump), 0o644))
				}
				want, err := os.ReadFile(dumpFile)
				require.NoError(t, err)
				assert.Equal(t, string(want), dump, "the annotated dump")
			}
			if snapshot.HasCheckpoint(c.version) {
				resumeEveryWay(t, p, snap, goldenPage, goldenCheckpointResult)
				return
			}
			goldenResumes(t, snap)
		})
	}
}

// The checkpoint golden (format version 6): a script whose first answer
// is large enough for a checkpoint, written at its second suspension,
// and two small answers journaled after it.
const goldenCheckpointSource = `const seen = [];
let total = 0;
for (let i = 0; i < 4; i++) {
  const page = get({ n: i });
  seen.push(page.slice(0, 7));
  total += page.length;
}
[seen.join("|"), total, Math.random() < 2];
`

// goldenPage is the checkpoint golden's host: a 20 KB page first, then
// short ones.
func goldenPage(args []value.Value) snapshot.Outcome {
	n := int(args[0].Members[0].Value.Num)
	if n == 0 {
		return snapshot.Outcome{Value: value.String(strings.Repeat("page 0 of many; ", 1250))}
	}
	return snapshot.Outcome{Value: value.String("page " + strconv.Itoa(n))}
}

var goldenCheckpointResult = jsA(jsS("page 0 |page 1|page 2|page 3"), jsN(20018), jsT)

// The golden of a checkpoint at rest (format version 7): the checkpoint
// golden's program with its calls awaited, through an async helper, as
// code mode writes it.
const goldenRestSource = `const seen = [];
let total = 0;
async function read(n) {
  const page = await get({ n });
  return [page.slice(0, 7), page.length];
}
for (let i = 0; i < 4; i++) {
  const [head, length] = await read(i);
  seen.push(head);
  total += length;
}
[seen.join("|"), total, Math.random() < 2];
`

// writeGoldenCheckpoint runs the checkpoint golden up to its last call.
func writeGoldenCheckpoint(t *testing.T, seal *snapshot.Sealer) []byte {
	return writeGoldenOf(t, goldenCheckpointSource, seal)
}

// writeGoldenRest runs the golden at rest up to its last call.
func writeGoldenRest(t *testing.T, seal *snapshot.Sealer) []byte {
	return writeGoldenOf(t, goldenRestSource, seal)
}

// writeGoldenOf runs src, a checkpoint golden's program, up to its last
// call.
func writeGoldenOf(t *testing.T, src string, seal *snapshot.Sealer) []byte {
	p, err := Compile(src)
	require.NoError(t, err)
	limits := policy.DefaultLimits()
	h := snapshot.Header{Program: p.Bytes, Capabilities: []string{"get"}, Seed: 7, ClockMillis: 1_700_000_000_000}
	x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: limits, Seal: seal})
	for i := 0; step.Suspended(); i++ {
		if i == 3 {
			x.Abandon()
			return step.Snapshot
		}
		x, step = x.Resume(Payload{Outcome: goldenPage(step.Args)}, limits)
	}
	t.Fatalf("the checkpoint golden ended early: %v", step.Err)
	return nil
}

// goldenResumes resumes a golden snapshot cold one call at a time, and
// again answering every outstanding call at once, to the golden result.
func goldenResumes(t *testing.T, snap *snapshot.Snapshot) {
	p, err := LoadProgram(snap.Header.Program)
	require.NoError(t, err)
	resumeEveryWay(t, p, snap, goldenAnswer, goldenResult)
}

// resumeEveryWay resumes snap cold with host answering, one call at a
// time and answering every outstanding call at once, and checks that both
// complete with want.
func resumeEveryWay(t *testing.T, p *Program, snap *snapshot.Snapshot, host func([]value.Value) snapshot.Outcome, want value.Value) {
	t.Helper()
	limits := policy.DefaultLimits()
	for _, batch := range []bool{false, true} {
		outstanding := snap.Outstanding()
		if !batch {
			outstanding = []snapshot.HostCall{*snap.FocusCall()}
		}
		var answers []Answer
		for _, c := range outstanding {
			c, err := c.Decoded() // a loaded snapshot keeps them encoded
			require.NoError(t, err)
			answers = append(answers, Answer{CallID: c.ID, Payload: Payload{Outcome: host(c.Args)}})
		}
		x, step := testRuntime.Start(Config{Program: p, Header: snap.Header, Limits: limits, Journal: snap, Answers: answers})
		for i := 0; step.Suspended(); i++ {
			require.Less(t, i, 10)
			x, step = x.Resume(Payload{Outcome: host(step.Args)}, limits)
		}
		require.NoError(t, step.Err, "batch %v", batch)
		assert.Equal(t, fmtValue(want), fmtValue(step.Value), "batch %v", batch)
	}
}

// The sloppy golden: a program compiled before guest code was strict
// (testdata/snapshots/sloppy-v1.program, program format version 1) and a
// snapshot of it (sloppy-v1.snap), both written by that sidecar. The
// program relies on sloppy-mode semantics (an implicit global, this in a
// plain call and as a map callback's thisArg, arguments.callee) and the
// recorded calls' arguments show it, so replaying it as strict-mode code
// would fail or diverge.
const sloppySource = `// Sloppy-mode code (program format version 1).
tally = 0;
function kind() { return typeof this; }
function count() { tally++; return arguments.callee.name; }
const first = get({ n: 1, kind: kind(), via: count() });
async function main() {
  const out = [first, tally];
  const boxed = [1].map(function () { return typeof this; }, 5);
  const second = await get({ n: 2, boxed: boxed[0] });
  out.push(second, (function () { return this === globalThis; })());
  const [a, b] = await Promise.all([get({ n: 3 }), get({ n: 4 })]);
  out.push(a, b, tally, count());
  return out;
}
main();
`

var sloppyResult = jsA(jsN(10), jsN(1), jsN(20), jsT, jsN(30), jsN(40), jsN(1), jsS("count"))

// sloppyAnswer answers get({n}) with 10 n.
func sloppyAnswer(args []value.Value) snapshot.Outcome {
	return snapshot.Outcome{Value: value.Number(10 * args[0].Members[0].Value.Num)}
}

func TestSloppyProgramV1(t *testing.T) {
	dir := filepath.Join("testdata", "snapshots")
	prog, err := os.ReadFile(filepath.Join(dir, "sloppy-v1.program"))
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(dir, "sloppy-v1.snap"))
	require.NoError(t, err)

	p, err := LoadProgram(prog)
	require.NoError(t, err)
	assert.False(t, p.Strict(), "a format version 1 program is sloppy-mode code")
	assert.Equal(t, sloppySource, p.Source)
	legacy, err := compileVersion(sloppySource, programVersionSloppy)
	require.NoError(t, err)
	assert.Equal(t, prog, legacy.Bytes, "the artifact is format version 1 of the source")

	// Hot, from the program bytes: the calls show sloppy this and callee.
	limits := policy.DefaultLimits()
	h := snapshot.Header{Program: prog, Capabilities: []string{"get"}, Seed: 7, ClockMillis: 1_700_000_000_000}
	x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: limits})
	var calls []gsCall
	var written []byte
	for i := 0; step.Suspended(); i++ {
		require.Less(t, i, 10)
		calls = append(calls, gsCall{step.Capability, step.Args})
		raw := step.Snapshot
		if len(step.Calls) == 2 && written == nil {
			written = raw
		}
		answers := []Answer{{CallID: step.Focus, Payload: Payload{Outcome: sloppyAnswer(step.Args)}}}
		x, step = x.ResumeWith(nil, answers, limits)
	}
	require.NoError(t, step.Err)
	assert.Equal(t, fmtValue(sloppyResult), fmtValue(step.Value))
	assert.Equal(t, fmtCalls([]gsCall{
		cl("get", jsO(kv("n", jsN(1)), kv("kind", jsS("object")), kv("via", jsS("count")))),
		cl("get", jsO(kv("n", jsN(2)), kv("boxed", jsS("object")))),
		cl("get", jsO(kv("n", jsN(3)))),
		cl("get", jsO(kv("n", jsN(4)))),
	}), fmtCalls(calls))
	assert.Equal(t, raw, written, "today's sidecar writes the snapshot byte for byte")

	// Cold, from the snapshot that sidecar wrote.
	snap, err := snapshot.Load(raw, nil)
	require.NoError(t, err)
	assert.Equal(t, prog, snap.Header.Program)
	dump, err := snapshot.Annotate(raw)
	require.NoError(t, err)
	dumpFile := filepath.Join(dir, "sloppy-v1.txt")
	if *updateSnapshots {
		require.NoError(t, os.WriteFile(dumpFile, []byte(dump), 0o644))
	}
	want, err := os.ReadFile(dumpFile)
	require.NoError(t, err)
	assert.Equal(t, string(want), dump, "the annotated dump")
	resumeEveryWay(t, p, snap, sloppyAnswer, sloppyResult)

	// The same source compiled today is strict-mode code.
	strict, err := Compile(sloppySource)
	require.NoError(t, err)
	assert.True(t, strict.Strict())
	assert.NotEqual(t, strict.ID, p.ID)
	_, step = testRuntime.Start(Config{Program: strict, Header: snapshot.Header{Program: strict.Bytes, Capabilities: []string{"get"}}, Limits: limits})
	require.Error(t, step.Err)
	assert.Equal(t, "Runtime: ReferenceError: tally is not defined\n  at <script> (2:1)", step.Err.Error())
}
