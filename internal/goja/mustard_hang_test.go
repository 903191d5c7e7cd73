package goja

import "time"

// hangBound is a test's wall-time bound on a hang, given for the plain
// binary: the race detector slows goja's native loops up to twenty times.
func hangBound(d time.Duration) time.Duration {
	if raceEnabled {
		return 20 * d
	}
	return d
}
