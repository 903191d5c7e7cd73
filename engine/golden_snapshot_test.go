package engine

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateSnapshots = flag.Bool("update-snapshots", false, "rewrite the format version 2 files in testdata/snapshots")

// The golden snapshots pin the snapshot format: testdata/snapshots holds
// one snapshot of each kind (format version 1, written by the sidecar
// before host calls in async code returned promises, and version 2;
// plain and sealed), each with an annotated hex dump beside the plain ones
// (snapshot.Annotate) so a reader can see the layout. All of them must
// resume to the same result, and today's sidecar must write the version 2
// files byte for byte: a change to the format needs a new version.
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

// writeGoldenV2 runs the golden program one call at a time up to the
// suspension on which both Promise.all calls are outstanding.
func writeGoldenV2(t *testing.T, seal *snapshot.Sealer) []byte {
	p, err := Compile(goldenSource)
	require.NoError(t, err)
	limits := policy.DefaultLimits()
	h := snapshot.Header{Program: p.Bytes, Capabilities: []string{"get"}, Seed: 7, ClockMillis: 1_700_000_000_000}
	b := snapshot.NewBuilder(h, seal)
	x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: limits})
	for step.Suspended() {
		raw, _ := step.Record(b)
		if len(step.Calls) == 2 {
			x.Abandon()
			return raw
		}
		answers := []Answer{{CallID: step.Focus, Payload: Payload{Outcome: goldenAnswer(step.Args)}}}
		RecordAnswers(b, answers)
		x, step = x.ResumeWith(nil, answers, limits)
	}
	t.Fatalf("the golden program never had two calls outstanding: %v", step.Err)
	return nil
}

func TestGoldenSnapshots(t *testing.T) {
	dir := filepath.Join("testdata", "snapshots")
	if *updateSnapshots {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "v2.snap"), writeGoldenV2(t, nil), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "v2-sealed.snap"), writeGoldenV2(t, goldenSealer(t)), 0o644))
	}
	for _, c := range []struct {
		file    string
		sealed  bool
		version uint64
	}{
		{"v1.snap", false, 1},
		{"v1-sealed.snap", true, 1},
		{"v2.snap", false, 2},
		{"v2-sealed.snap", true, 2},
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
			if c.version == 2 {
				assert.Equal(t, raw, writeGoldenV2(t, seal), "today's sidecar writes this snapshot byte for byte")
			}
			if !c.sealed {
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
			goldenResumes(t, snap, seal)
		})
	}
}

// goldenResumes resumes a golden snapshot cold one call at a time, and
// again answering every outstanding call at once, to the golden result.
func goldenResumes(t *testing.T, snap *snapshot.Snapshot, seal *snapshot.Sealer) {
	p, err := LoadProgram(snap.Header.Program)
	require.NoError(t, err)
	limits := policy.DefaultLimits()
	for _, batch := range []bool{false, true} {
		var answers []Answer
		outstanding := snap.Outstanding()
		if !batch {
			outstanding = []snapshot.HostCall{*snap.FocusCall()}
		}
		for _, c := range outstanding {
			answers = append(answers, Answer{CallID: c.ID, Payload: Payload{Outcome: goldenAnswer(c.Args)}})
		}
		x, step := testRuntime.Start(Config{Program: p, Header: snap.Header, Limits: limits, Journal: snap, Answers: answers})
		for i := 0; step.Suspended(); i++ {
			require.Less(t, i, 10)
			x, step = x.Resume(Payload{Outcome: goldenAnswer(step.Args)}, limits)
		}
		require.NoError(t, step.Err, "batch %v", batch)
		assert.Equal(t, fmtValue(goldenResult), fmtValue(step.Value), "batch %v", batch)
	}
}
