package engine

import (
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
)

// BenchmarkStartComplete measures a fresh realm running a trivial program.
func BenchmarkStartComplete(b *testing.B) {
	p, err := Compile("1 + 1")
	if err != nil {
		b.Fatal(err)
	}
	h := snapshot.Header{Program: p.Bytes, Seed: 1, ClockMillis: 1}
	for i := 0; i < b.N; i++ {
		if _, step := testRuntime.Start(Config{Program: p, Header: h, Limits: policy.DefaultLimits()}); step.Err != nil {
			b.Fatal(step.Err)
		}
	}
}

// BenchmarkBuildRealm measures preparing one guest realm.
func BenchmarkBuildRealm(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := buildRealm(); err != nil {
			b.Fatal(err)
		}
	}
}
