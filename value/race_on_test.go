//go:build race

package value

// raceEnabled: under the race detector sync.Pool drops some of what is put
// back, so a pooled decoder's stacks are sometimes made afresh and
// allocation counts are checked only without it.
const raceEnabled = true
