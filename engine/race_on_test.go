//go:build race

package engine

// raceEnabled: the race detector slows goja several times over, so wall-clock
// bounds are checked only without it (the end-to-end tests check them on
// the real binary).
const raceEnabled = true
