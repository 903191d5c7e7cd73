//go:build race

package hosttest

// RaceEnabled reports a race-instrumented build. Such a sidecar is several
// times slower and larger, so peak-RSS bounds are checked only without it.
const RaceEnabled = true
