package engine

import (
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
)

var updateMetering = flag.Bool("update-metering", false, "rewrite testdata/metering_golden.json")

const meteringGolden = "testdata/metering_golden.json"

// goldenBombs leave a process with garbage, a forced collection behind it
// and a heap that has been large: none of it may change what a later
// execution is charged or how it ends.
var goldenBombs = []string{
	"let s = 'x'; for(;;) s += s",
	"const a = []; for(;;) a.push({ x: a.length })",
	"'x'.repeat(2**40)",
	"Array(200).fill('x'.repeat(1e6)).map(Function.prototype.call, String.prototype.toUpperCase)",
	"JSON.parse('[' + '[1],'.repeat(1e6) + '[1]]')",
	"new (Uint8Array.prototype.constructor)(2**28)",
	"const m = new Map(); for (let i = 0;; i++) m.set(i, 'v' + i)",
}

// The metering of the determinism programs is pinned: every step's
// instructions and allocations, each call and the end, as recorded in
// testdata/metering_golden.json, in a process that first ran every memory
// bomb, and whatever the load of the machine (CI runs beside other work).
// A change to what is charged rewrites the golden file on purpose:
// go test ./engine -run TestMeteringGolden -update-metering.
func TestMeteringGolden(t *testing.T) {
	for _, src := range goldenBombs {
		step := runLimits(t, src, policy.DefaultLimits())
		require.True(t, step.Err != nil && strings.HasPrefix(step.Err.Error(), "Limit: "), "%s: %v", src, step.Err)
	}
	got := mdHotAll(t)
	if *updateMetering {
		b, err := json.MarshalIndent(got, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(meteringGolden, append(b, '\n'), 0o644))
		return
	}
	b, err := os.ReadFile(meteringGolden)
	require.NoError(t, err)
	var want map[string][]mdStep
	require.NoError(t, json.Unmarshal(b, &want))
	require.Equal(t, want, got)
}
