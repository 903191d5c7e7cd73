//go:build !linux

package prefault

// Ahead does nothing here: only Linux has the advice.
func Ahead() {}
