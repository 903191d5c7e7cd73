//go:build !linux

package engine

// processCPU is not read here: the sweep measures wall time alone.
func processCPU() int64 { return -1 }
