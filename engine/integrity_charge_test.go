package engine

import (
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Object.isFrozen and Object.isSealed visit every property of a frozen or
// sealed object: a loop of them on 100,000 elements runs out of the
// default budget in about a second, not the minutes a constant charge let
// it run.
func TestIntegrityChecksChargedPerProperty(t *testing.T) {
	// The default run: a fifth of the properties under a fifth of the budget.
	n := longtest.Pick("20000", "100000")
	for _, src := range []string{
		`const a = Object.freeze(Array(` + n + `).fill(1)); let n = 0; for (;;) if (Object.isFrozen(a)) n++`,
		`const a = Object.seal(Array(` + n + `).fill(1)); let n = 0; for (;;) if (Object.isSealed(a)) n++`,
		`const a = Object.freeze(Array(` + n + `).fill(1)); let n = 0; for (;;) if (Object.isSealed(a)) n++`,
		`const o = {}; for (let i = 0; i < ` + n + `; i++) o['k' + i] = i; Object.freeze(o); let n = 0; for (;;) if (Object.isFrozen(o)) n++`,
	} {
		began := time.Now()
		step := runLimits(t, src, budgetLimits())
		require.Error(t, step.Err, src)
		assert.Equal(t, "Limit: instruction budget exhausted", step.Err.Error(), src)
		// 10x what a quiet machine needs (about a second).
		if !raceEnabled {
			assert.Less(t, time.Since(began), 30*time.Second, src)
		}
	}
}

// One call is charged by the properties it visits: an instruction for
// about every one of them, the same hot and in every run.
func TestIntegrityCheckCharge(t *testing.T) {
	count := func(src string) uint64 {
		l := policy.DefaultLimits()
		l.InstructionBudget = 1e9
		step := runLimits(t, src, l)
		require.NoError(t, step.Err)
		return step.Meter.Instructions
	}
	base := count(`const a = Object.freeze(Array(100000).fill(1)); 0`)
	one := count(`const a = Object.freeze(Array(100000).fill(1)); Object.isFrozen(a)`)
	assert.InDelta(t, 100000*descBytesUnits/workUnit, float64(one-base), 200)
	assert.Equal(t, one, count(`const a = Object.freeze(Array(100000).fill(1)); Object.isFrozen(a)`))
}

// Programs of format version 2 keep the visit rate, a unit a property,
// which their journals recorded.
func TestIntegrityCheckChargeFormat2(t *testing.T) {
	count := func(src string) uint64 {
		p, err := compileVersion(src, programVersionStrict)
		require.NoError(t, err)
		l := policy.DefaultLimits()
		l.InstructionBudget = 1e9
		_, step := testRuntime.Start(Config{Program: p, Limits: l})
		require.NoError(t, step.Err)
		return step.Meter.Instructions
	}
	base := count(`const a = Object.freeze(Array(100000).fill(1)); 0`)
	one := count(`const a = Object.freeze(Array(100000).fill(1)); Object.isFrozen(a)`)
	assert.Equal(t, uint64(100000/workUnit+1), one-base) // and the call
}

// descBytesUnits is goja's descBytes: the units a property visited costs.
const descBytesUnits = 48
