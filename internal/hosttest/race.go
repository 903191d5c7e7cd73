//go:build race

package hosttest

// RaceEnabled reports a race-instrumented build. Its own sidecars are
// several times slower and larger (those of the default run are a plain
// build: plain.go), so tests keep peak-RSS bounds and the slowest hostile
// suites to runs without it, which .ci/run makes.
const RaceEnabled = true
