package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/host"

	"context"
	"fmt"
	"os/exec"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// The sizes of the large values below: in the long suites a 2 MB program,
// 5 MB of inputs (20,000 strings) and a 20 MB tool answer (100,000 rows);
// in the default run 1.2 MB, 1.25 MB and 1.2 MB (1.3 MB as JSON), each
// still past the 1 MiB request limit.
var (
	bigProgramBytes = longtest.Pick(1_200_000, 2_000_000)
	bigDocs         = longtest.Pick(5_000, 20_000)
	bigRows         = longtest.Pick(6_000, 100_000)
)

// Must hold: a 2 MB program, 5 MB of inputs and a 20 MB tool answer run
// through a Runner as small ones do, in both transports: compiled on one
// pool, started on another whose processes never saw the program, hot;
// then again with the process killed while the tool runs and while the
// next call runs, so that the 20 MB answer and then the snapshot holding
// it go to new processes from the stored bytes (cold). No request exceeds
// 1 MiB (the sidecar would end the session), and the tool is asked once.
func TestRunnerCarriesValuesPastOneMiB(t *testing.T) {
	source := "const table = \"" + hosttest.Noise("program", bigProgramBytes) + "\";\n" + `
const rows = fetch_rows(docs.length);
let total = 0;
for (const r of rows) total += r.text.length;
const ack = done(rows.length);
[table.length, docs.length, rows.length, total, rows[rows.length - 1].text.slice(0, 8), ack].join(",");`
	docs := make([]value.Value, bigDocs)
	docText := hosttest.Noise("inputs", bigDocs*250)
	for i := range docs {
		docs[i] = value.String(docText[i*250 : (i+1)*250])
	}
	inputs := map[string]value.Value{"docs": value.Array(docs...)}
	rows := bigRows
	rowText := hosttest.Noise("answer", rows*200)
	out := make([]value.Value, rows)
	for i := range out {
		out[i] = value.Object(value.M("id", value.Number(float64(i))), value.M("text", value.String(rowText[i*200:(i+1)*200])))
	}
	answer := value.Array(out...)
	require.Greater(t, len(answer.AppendJSON(nil)), rows*200)
	require.Greater(t, len(value.Array(docs...).AppendJSON(nil)), bigDocs*250)
	want := fmt.Sprintf("%d,%d,%d,%d,%s,ok", bigProgramBytes, bigDocs, rows, rows*200, rowText[len(rowText)-200:len(rowText)-192])
	limits := host.Limits{HeapLimitBytes: host.Limit(1 << 30), AllocationBudget: host.Limit(1 << 30), InstructionBudget: host.Limit(1 << 30)}

	for _, tr := range hosttest.Transports {
		if tr.JSONL && !longtest.Enabled() {
			continue // the same in base64 lines: minutes under -race (other tests stage over JSONL)
		}
		t.Run(tr.Name, func(t *testing.T) {
			noLeaks(t)
			ctx := context.Background()
			newPool := func() *host.Pool {
				p, err := host.NewPool(host.PoolConfig{Size: 1, Client: host.Config{JSONL: tr.JSONL}, Command: func() *exec.Cmd { return sidecarCmd(t) }})
				require.NoError(t, err)
				t.Cleanup(func() { require.NoError(t, p.Close()) })
				return p
			}
			prog, err := newPool().Compile(ctx, source)
			require.NoError(t, err)
			require.Greater(t, len(prog.Bytes), bigProgramBytes)

			store, err := NewDirStore(t.TempDir())
			require.NoError(t, err)
			pool := newPool()
			for _, cold := range []bool{false, true} {
				r := &Runner{Pool: pool, Key: testKey, Store: store}
				var resumes, colds int
				r.observe = func(c *host.Client, hot bool) {
					resumes++
					if !hot {
						colds++
					}
				}
				var asked atomic.Int32
				kill := func() { // the pool's one process, which holds the execution
					if cold {
						c := slotClient(pool, 0)
						c.Kill()
						<-c.Done()
					}
				}
				id := fmt.Sprintf("big-%s-%v", tr.Name, cold)
				v, err := r.Run(ctx, Execution{ID: id, Program: prog, Inputs: inputs, Limits: limits,
					Capabilities: map[string]Capability{
						"fetch_rows": func(_ context.Context, c Call) (value.Value, error) {
							asked.Add(1)
							require.Equal(t, float64(bigDocs), c.Args[0].Num)
							kill()
							return answer, nil
						},
						"done": func(_ context.Context, c Call) (value.Value, error) {
							asked.Add(1)
							kill()
							return value.String("ok"), nil
						},
					}})
				require.NoError(t, err)
				require.Equal(t, want, v.Str)
				require.EqualValues(t, 2, asked.Load(), "each call asked once")
				require.Equal(t, 2, resumes)
				if cold {
					require.Equal(t, 2, colds, "both resumes went to new processes from the stored bytes")
				} else {
					require.Equal(t, 0, colds)
				}
			}
		})
	}
}
