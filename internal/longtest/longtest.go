// Package longtest splits the project's tests in two: the default run, a
// complete check of behaviour a newcomer waits for, and the long suites
// (hostile programs at their documented bounds, soaks, kill loops, large
// inputs, the fork's exhaustive tables) that run only when MUSTARD_LONG_TESTS
// is set. .ci/run sets it.
package longtest

import (
	"os"
	"testing"
)

// Env is the variable that turns the long suites on.
const Env = "MUSTARD_LONG_TESTS"

// Enabled reports whether the long suites run.
func Enabled() bool {
	v := os.Getenv(Env)
	return v != "" && v != "0"
}

// Skip skips t unless the long suites run.
func Skip(t testing.TB) {
	t.Helper()
	if !Enabled() {
		t.Skipf("a long suite: set %s=1 to run it", Env)
	}
}

// Pick returns long when the long suites run and short otherwise: a test
// that checks the same behaviour on a smaller input in the default run.
func Pick[T any](short, long T) T {
	if Enabled() {
		return long
	}
	return short
}

// Sampled reports whether case i of a long table runs: every case in the
// long suites, every fourth in the default run.
func Sampled(i int) bool {
	return SampledOneIn(i, 4)
}

// SampledOneIn reports whether case i of a long table runs: every case in
// the long suites, every nth (the first among them) in the default run.
func SampledOneIn(i, n int) bool {
	return Enabled() || i%n == 0
}
