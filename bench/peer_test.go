package bench

import (
	"testing"
)

// The peer's fresh-process cold resume (peer/fresh.js, spawned by
// freshResumes) completes each large program's last suspension with the
// hot run's value, in a Node process of its own, and its samples land
// under the keys of the rows that compare them. Like TestWorkloadsPeer it
// needs Node and an installed peer.
func TestPeerFreshResume(t *testing.T) {
	p, ws := startTestPeer(t)
	defer p.close()
	rep := &Report{}
	if err := p.round(rep, Config{Rounds: 1, Large: 1}, 0, ws); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"large", "structured", "awaited"} {
		if got := rep.peer[key+"/fresh"]; len(got) != 1 || got[0] <= 0 {
			t.Errorf("%s/fresh: samples %v, want one", key, got)
		}
	}
	// A dump that does not resume to the hot run's value fails the row.
	if _, err := p.freshResume(`{"dump":{},"answer":"","want":1,"key":{"b64":""},"capabilities":[]}`); err == nil {
		t.Error("a dump that cannot load was timed")
	}
}
