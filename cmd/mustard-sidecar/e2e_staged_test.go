package main

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// bigLimits let a guest hold tens of megabytes of values.
var bigLimits = map[string]any{"heap_limit_bytes": 1 << 30, "allocation_budget": 1 << 30, "instruction_budget": 1 << 30}

// The sizes of the staged values: in the long suites a 2 MB program, 5 MB
// of inputs (20,000 strings) and a 20 MB answer (100,000 rows); in the
// default run 1.2 MB, 1.5 MB and 3 MB, each still past the 1 MiB request
// limit, so staged in several pieces.
var (
	stagedProgramBytes = longtest.Pick(1_200_000, 2_000_000)
	stagedDocs         = longtest.Pick(6_000, 20_000)
	stagedRows         = longtest.Pick(15_000, 100_000)
)

// stagedProgram is a program of stagedProgramBytes (a data literal) that
// reads the inputs and the answer, then makes one more call.
func stagedProgram() string {
	return "const table = \"" + hosttest.Noise("program", stagedProgramBytes) + "\";\n" +
		`const rows = fetch_rows(docs.length);
let total = 0;
for (const r of rows) total += r.text.length;
const ack = done(rows.length);
[table.length, docs.length, docs[docs.length - 1].slice(0, 8), rows.length, total, rows[rows.length - 1].text.slice(0, 8), ack].join(",");`
}

// stagedInputs are the inputs: stagedDocs strings of 250 bytes.
func stagedInputs() (map[string]any, string) {
	docs := make([]any, stagedDocs)
	text := hosttest.Noise("inputs", stagedDocs*250)
	for i := range docs {
		docs[i] = str(text[i*250 : (i+1)*250])
	}
	return map[string]any{"docs": map[string]any{"Array": docs}}, text[len(text)-250 : len(text)-242]
}

// stagedAnswer is the answer: stagedRows rows of 200 bytes of text and an id.
func stagedAnswer() ([]byte, int, string) {
	rows := stagedRows
	text := hosttest.Noise("answer", rows*200)
	out := make([]any, rows)
	for i := range out {
		out[i] = map[string]any{"Object": map[string]any{"id": num(float64(i)), "text": str(text[i*200 : (i+1)*200])}}
	}
	b, err := json.Marshal(valuePayload(map[string]any{"Array": out}))
	if err != nil {
		panic(err)
	}
	return b, rows * 200, text[len(text)-200 : len(text)-192]
}

// A 20 MB answer, 5 MB of inputs and a 2 MB program (in the default run
// 3 MB, 1.5 MB and 1.2 MB) go through the real
// binary in stages, with no request over 1 MiB: compiled from a staged
// source, started from staged program bytes and inputs in a process that
// never saw the program, resumed hot with a staged answer, and resumed
// cold (staged snapshot and staged answer) in a fresh process, which
// reaches the same result.
func TestE2EStagedValues(t *testing.T) {
	source := stagedProgram()
	inputs, lastDoc := stagedInputs()
	inputJSON, err := json.Marshal(inputs)
	require.NoError(t, err)
	answer, total, lastRow := stagedAnswer()
	require.Greater(t, len(answer), stagedRows*200)
	require.Greater(t, len(inputJSON), stagedDocs*250)
	require.Greater(t, len(source), stagedProgramBytes)
	want := fmt.Sprintf(`{"String":"%d,%d,%s,%d,%d,%s,ok"}`, stagedProgramBytes, stagedDocs, lastDoc, stagedRows, total, lastRow)
	caps := []string{"done", "fetch_rows"}

	for _, tr := range transports {
		if tr.jsonl && !longtest.Enabled() {
			continue // the same steps in base64 lines: minutes under -race
		}
		t.Run(tr.name, func(t *testing.T) {
			chunk := 960 << 10
			if tr.jsonl {
				chunk = 700_000 // base64 keeps the line under 1 MiB
			}
			// Compile from a staged source.
			a := newHost(t, tr)
			a.stageAll("src", []byte(source), chunk)
			progID, prog := a.compile2("source_stage_id", "src")

			// Start in another process from staged program bytes and inputs.
			b := newHost(t, tr)
			b.stageAll("prog", prog, chunk)
			b.stageAll("inputs", inputJSON, chunk)
			opts := map[string]any{"inputs_stage_id": "inputs", "capabilities": caps, "limits": bigLimits}
			first := stepOf(t, b.do(b.req("start", "program_stage_id", "prog", "program_id", progID, "options", opts), nil, ""))
			require.Equal(t, "fetch_rows", first.Capability)
			require.Equal(t, fmt.Sprintf(`[{"Number":{"Finite":%d.0}}]`, stagedDocs), first.Args)
			require.Greater(t, len(first.Snapshot), stagedProgramBytes+stagedDocs*250, "the snapshot holds the program and the inputs")

			// Hot, with the answer staged.
			b.stageAll("answer", answer, chunk)
			hot := stepOf(t, b.do(b.req("resume", "snapshot_id", first.SnapshotID, "policy_id", first.PolicyID,
				"auth", hosttest.Auth(hostKey, first.SnapshotID), "payload_stage_id", "answer"), nil, ""))
			require.Equal(t, "done", hot.Capability)
			require.Greater(t, len(hot.Snapshot), len(first.Snapshot)+stagedRows*90, "the snapshot holds the answer too (hex text compresses by half)")
			fin := stepOf(t, b.resumeCached(hot.SnapshotID, hot.PolicyID, valuePayload(str("ok"))))
			require.Equal(t, want, fin.Value)

			// Cold, in a fresh process: the first snapshot and the answer
			// staged together, then the second snapshot from its bytes.
			c := newHost(t, tr)
			c.stageAll("snap", first.Snapshot, chunk)
			c.stageAll("answer", answer, chunk)
			pol := hosttest.Policy(hostKey, first.SnapshotID, caps, bigLimits)
			cold := stepOf(t, c.do(c.req("resume", "stage_id", "snap", "policy", pol, "payload_stage_id", "answer"), nil, ""))
			require.Equal(t, hot.SnapshotID, cold.SnapshotID, "hot and cold give the same snapshot")

			d := newHost(t, tr)
			d.stageAll("snap", hot.Snapshot, chunk)
			pol = hosttest.Policy(hostKey, hot.SnapshotID, caps, bigLimits)
			fin = stepOf(t, d.do(d.req("resume", "stage_id", "snap", "policy", pol, "payload", valuePayload(str("ok"))), nil, ""))
			require.Equal(t, want, fin.Value)

			// Every stage was dropped by the request that used it.
			for _, h := range []*host{a, b, c, d} {
				resp := h.do(h.req("stage", "stage_id", "answer", "offset", 1), []byte("x"), "bytes_base64")
				require.Equal(t, "unknown stage_id `answer`", resp.Error())
			}
		})
	}
}

// compile2 compiles with the given fields and returns the program's id
// and bytes.
func (h *host) compile2(kv ...any) (string, []byte) {
	h.t.Helper()
	resp := h.mustOK(h.do(h.req("compile", kv...), nil, ""))
	id, _ := resp.Result()["program_id"].(string)
	require.Equal(h.t, sha256Hex(resp.Payload), id)
	return id, resp.Payload
}
