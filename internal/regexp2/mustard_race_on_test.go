//go:build race

package regexp2

// raceEnabled: the race detector makes sync.Pool drop some of what is put
// in it, so a test cannot count on getting back the runner it returned.
const raceEnabled = true
