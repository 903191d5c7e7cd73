package engine

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// chargeOf is the instructions op costs on top of setup: both run in one
// program, then setup alone.
func chargeOf(t *testing.T, setup, op string) uint64 {
	t.Helper()
	count := func(src string) uint64 {
		l := policy.DefaultLimits()
		l.InstructionBudget = 1e9
		l.HeapLimitBytes = 256 << 20
		step := runLimits(t, src, l)
		require.NoError(t, step.Err, src)
		return step.Meter.Instructions
	}
	return count(setup+"; "+op+"; 0") - count(setup+"; 0; 0")
}

// Formatting a number takes far longer than visiting an element, and
// clearing a Map or Set unlinks every entry: each is charged by the work,
// not as a sixty-fourth of an instruction (docs/limits.md).
func TestJoinsAndClearsChargeTheirWork(t *testing.T) {
	// 100,000 elements in the long suites, 20,000 in the default run.
	n := longtest.Pick(20_000, 100_000)
	ns := strconv.Itoa(n)
	ints := chargeOf(t, "const a = Array("+ns+").fill(7)", "a.join()")
	floats := chargeOf(t, "const a = Array.from({ length: "+ns+" }, (_, i) => i + 0.5)", "a.join()")
	typed := chargeOf(t, "const a = new Uint8Array("+ns+").fill(7)", "String(a)")
	strs := chargeOf(t, "const a = Array("+ns+").fill('7')", "a.join()")
	assert.GreaterOrEqual(t, ints, uint64(n*16/workUnit), "integers")
	assert.GreaterOrEqual(t, floats, uint64(n*48/workUnit), "floats")
	assert.GreaterOrEqual(t, typed, uint64(n*16/workUnit), "a typed array")
	assert.Less(t, strs, uint64(n*16/workUnit), "strings are not formatted")
	assert.GreaterOrEqual(t, chargeOf(t, "const s = new Set(Array.from({ length: "+ns+" }, (_, i) => i))", "s.clear()"), uint64(n/workUnit))
	assert.GreaterOrEqual(t, chargeOf(t, "const m = new Map(Array.from({ length: "+ns+" }, (_, i) => [i, i]))", "m.clear()"), uint64(n/workUnit))
}

// A built-in that converts a long string argument to a number reads every
// character, and pays for each as `+s` does.
func TestLongStringArgumentsChargeTheirParse(t *testing.T) {
	const n = 1 << 20
	for _, op := range []string{"Math.abs(s)", "Math.min(1, s)", "'abc'.slice(s)", "new Date(0).setMilliseconds(s)", "(5).toFixed(s.length > 0 ? 2 : s)"} {
		got := chargeOf(t, "const s = '1'.repeat(1 << 20)", op)
		if strings.Contains(op, "toFixed") {
			assert.Less(t, got, uint64(n/workUnit), "%s: the string is not converted", op)
			continue
		}
		assert.GreaterOrEqual(t, got, uint64(n/workUnit), op)
	}
	// A Date setter converts only its own arguments: one past them is never
	// read and costs nothing.
	assert.GreaterOrEqual(t, chargeOf(t, "const s = '1'.repeat(1 << 20)", "new Date(0).setSeconds(1, s)"), uint64(n/workUnit), "setSeconds' second argument")
	assert.Less(t, chargeOf(t, "const s = '1'.repeat(1 << 20)", "new Date(0).setMilliseconds(1, s)"), uint64(n/workUnit), "past setMilliseconds' arity")
	assert.Less(t, chargeOf(t, "const s = '1'.repeat(1 << 20)", "new Date(0).setTime(1, s)"), uint64(n/workUnit), "past setTime's arity")
}

// Error messages name an object by its class tag, as V8 does, and run
// none of the guest's code to make them.
func TestErrorMessagesRunNoGuestCode(t *testing.T) {
	step := runLimits(t, `
		const a = [1, 2, 3];
		let ran = 0;
		a.toString = () => { ran++; return 'X'; };
		const out = [];
		for (const f of [() => a(), () => 1 instanceof a, () => Symbol.keyFor(a),
		                 () => Object.freeze(a).pop(), () => Object.seal([1, 2]).splice(-1),
		                 () => Reflect.ownKeys(new Proxy({}, { ownKeys: () => [a] }))]) {
			try { f(); } catch (e) { out.push(e.message); }
		}
		out.push(ran);
		out.join('|');
	`, policy.DefaultLimits())
	require.NoError(t, step.Err)
	require.True(t, step.Done)
	assert.Equal(t, value.String("[object Array] is not a function|Right-hand side of 'instanceof' is not callable|"+
		"[object Array] is not a symbol|Cannot delete property '2' of [object Array]|Cannot delete property '1' of [object Array]|"+
		"[object Array] is not a valid property name|0"), step.Value)
}

// A long BigInt named in a TypeError's message costs what printing it
// costs, as String(big) does.
func TestLongBigIntsInMessagesAreCharged(t *testing.T) {
	const setup = "const b = 7n ** 100000n"
	printed := chargeOf(t, setup, "String(b)")
	require.Greater(t, printed, uint64(1000), "String of a long BigInt is charged")
	for _, op := range []string{
		"try { Symbol.keyFor(b) } catch {}",
		"try { Reflect.ownKeys(new Proxy({}, { ownKeys: () => [b] })) } catch {}",
	} {
		assert.GreaterOrEqual(t, chargeOf(t, setup, op), printed/2, op)
	}
}

// A search that reads each element through the property lookup (a frozen,
// sealed or holey array) pays 2 units an element, a plain array's one.
func TestSearchesThroughPropertiesChargeTheirLookups(t *testing.T) {
	// 20,000 elements in the long suites, 5,000 in the default run.
	n := longtest.Pick(5_000, 20_000)
	setup := "const p = Array.from({ length: " + strconv.Itoa(n) + " }, (_, i) => i + 2); const f = Object.freeze(p.slice()); const s = Object.seal(p.slice())"
	for _, op := range []string{"indexOf(1)", "lastIndexOf(1)", "includes(1)"} {
		plain := chargeOf(t, setup, "p."+op)
		assert.Less(t, plain, uint64(2*n/workUnit), "p.%s", op)
		assert.GreaterOrEqual(t, chargeOf(t, setup, "f."+op), uint64(2*n/workUnit), "f.%s", op)
		assert.GreaterOrEqual(t, chargeOf(t, setup, "s."+op), uint64(2*n/workUnit), "s.%s", op)
	}
}
