package goja

// mustard(no-profiler): upstream's sampling profiler (StartProfile,
// StopProfile) is left out: the sidecar never profiles guest code, and the
// pprof package it wrote with cost every process start-up its init.
