package goja

import (
	"sync/atomic"
	"time"
)

// Process-wide settings an embedder needs without changing the process
// for everyone else: before these, mustard-sidecar set time.Local and
// regexp2.DefaultMatchTimeout, which every package in the program reads.

var (
	mustardZone          atomic.Pointer[time.Location]
	mustardRegexpTimeout atomic.Int64 // nanoseconds; 0: regexp2's default
)

// MustardSetLocalZone sets the zone the local-time Date methods use
// (getHours, toString, new Date(y, m, ...), ...) for every Runtime; nil
// restores upstream's behaviour, time.Local.
func MustardSetLocalZone(loc *time.Location) { mustardZone.Store(loc) }

// localZone is the zone of local time.
func localZone() *time.Location {
	if loc := mustardZone.Load(); loc != nil {
		return loc
	}
	return time.Local
}

// MustardSetRegexpTimeout bounds each match of a pattern compiled from now
// on by the backtracking engine (regexp2); 0 restores regexp2's default.
// Only searches without a Meter have a timeout: a metered search is
// charged by its steps instead (regexp2Scan).
func MustardSetRegexpTimeout(d time.Duration) { mustardRegexpTimeout.Store(int64(d)) }
