package goja

// mustard(no-profiler): upstream's profiler tests, with the profiler.
