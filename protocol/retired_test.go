package protocol_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"

	"github.com/mustard-sidecar/mustard-sidecar/protocol"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
)

// retiredProgram is the artifact of source in program format version 1 or
// 2, as sidecars before the interpreter's metering wrote it.
func retiredProgram(version uint64, source string) []byte {
	enc, err := cbor.CoreDetEncOptions().EncMode()
	if err != nil {
		panic(err)
	}
	b, err := enc.Marshal([]any{"mustard-program", version, source})
	if err != nil {
		panic(err)
	}
	return b
}

// goldenSealKey seals engine/testdata/snapshots' sealed files.
var goldenSealKey = []byte(strings.Repeat("golden seal key!", 2))

const retiredPhrase = "Serialization: program bytes of format version 1 or 2 run only to resume their snapshots; compile the source again"

// A fresh start never runs program bytes of format version 1 or 2 (metered
// by inserted calls, which charge less than today's count): sent as bytes,
// staged, or named by the id a replay cached them under. The snapshots
// their executions wrote still resume, under the metering they recorded.
func TestStartRefusesRetiredProgramFormats(t *testing.T) {
	forBoth(t, func(t *testing.T, jsonl bool) {
		c := newSess(t, jsonl, protocol.Options{})
		for _, version := range []uint64{1, 2} {
			prog := retiredProgram(version, "let s = 0; for (let i = 0; i < 10; i++) s += i; s")
			opts := map[string]any{}
			r := c.call("start", prog, "program_base64", "options", opts)
			wantRetired(t, r)
			r = c.call("start", prog, "program_base64", "program_id", sha256Hex(prog), "options", opts)
			wantRetired(t, r)
			c.must(c.call("stage", prog, "bytes_base64", "stage_id", "p", "offset", 0))
			wantRetired(t, c.call("start", nil, "", "program_stage_id", "p", "options", opts))
			// Never cached: the id stays unknown.
			r = c.call("start", nil, "", "program_id", sha256Hex(prog), "options", opts)
			if r.hdr["error_code"] != "unknown_program_id" {
				t.Fatalf("start by the id of refused bytes: %s", r.raw)
			}
		}
		// The current format of the same source runs.
		r := c.must(c.call("compile", nil, "", "source", "let s = 0; for (let i = 0; i < 10; i++) s += i; s"))
		done := c.must(c.call("start", nil, "", "program_id", r.str("program_id"), "options", map[string]any{}))
		if done.step()["type"] != "completed" {
			t.Fatalf("current format: %s", done.raw)
		}

		// Every golden snapshot of a program of format version 1 or 2
		// resumes from its bytes; the replay caches the program, and a
		// start by its id is refused all the same.
		for _, file := range []string{"v1.snap", "v1-sealed.snap", "v2.snap", "v2-sealed.snap", "v2-strict.snap", "v2-strict-sealed.snap", "sloppy-v1.snap"} {
			snap, err := os.ReadFile(filepath.Join("..", "engine", "testdata", "snapshots", file))
			if err != nil {
				t.Fatal(err)
			}
			id := sha256Hex(snap)
			pol := rawPolicy(id, "get")
			var seal *snapshot.Sealer
			if strings.HasSuffix(file, "-sealed.snap") {
				pol["seal_key_base64"] = base64.StdEncoding.EncodeToString(goldenSealKey)
				if seal, err = snapshot.NewSealer(goldenSealKey); err != nil {
					t.Fatal(err)
				}
			}
			decoded, err := snapshot.Load(snap, seal)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			r := c.call("resume", snap, "snapshot_base64", "policy", pol, "payload", numPayload(30))
			if !r.ok() {
				t.Fatalf("%s: %s", file, r.raw)
			}
			wantRetired(t, c.call("start", nil, "", "program_id", snapshot.ID(decoded.Header.Program), "options", map[string]any{"capabilities": []string{"get"}}))
		}
	})
}

func wantRetired(t *testing.T, r reply) {
	t.Helper()
	if r.ok() || r.err() != retiredPhrase || r.hdr["error_code"] != "retired_program_format" {
		t.Fatalf("want %q (retired_program_format), got %s", retiredPhrase, r.raw)
	}
}
