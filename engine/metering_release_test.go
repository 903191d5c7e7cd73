package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
)

// Journals of snapshot format versions 3 and 4 were written under releases
// 0.2.0's and 0.3.0's metering, which charged less of the work of some
// built-ins: their readings are taken as recorded, and the execution
// resumes with the calls it made checked as always. The same readings in a
// version 5 journal, this release's, are a divergence.
func TestEarlierReleaseJournalsResumeWithTheirReadings(t *testing.T) {
	for _, p := range mdPrograms {
		t.Run(p.name, func(t *testing.T) {
			r := mdStart(t, p.src)
			hot := r.hot(t)
			if len(r.steps) < 2 {
				t.Skip("no suspension")
			}
			k := len(r.steps) - 2 // the last suspension
			raw := r.journal(t, k)
			snap, err := snapshot.Decode(raw)
			require.NoError(t, err)
			// Readings as an earlier metering would have left them: fewer
			// instructions at every call and suspension.
			lower := func(m snapshot.Meter, by uint64) snapshot.Meter {
				m.Instructions -= min(m.Instructions, by)
				return m
			}
			for i := range snap.Calls {
				snap.Calls[i].Meter = lower(snap.Calls[i].Meter, uint64(i+1))
			}
			for i := range snap.Suspensions {
				snap.Suspensions[i].Meter = lower(snap.Suspensions[i].Meter, uint64(i+1))
			}
			for _, version := range []uint64{snapshot.VersionRelease020, snapshot.VersionRelease030, snapshot.Version} {
				snap.Version = version
				again, err := snapshot.Decode(snapshot.Encode(snap))
				require.NoError(t, err)
				s := r.steps[k]
				x, step := testRuntime.Start(Config{
					Program: r.program, Header: again.Header, Limits: r.limits, Journal: again,
					Answers: []Answer{{CallID: s.Focus, Payload: Payload{Outcome: mdAnswer(s.Capability, s.Args)}}},
				})
				if version == snapshot.Version {
					require.Error(t, step.Err)
					assert.Contains(t, step.Err.Error(), "snapshot replay diverged")
					continue
				}
				require.NoError(t, step.Err, "version %d", version)
				for step.Suspended() {
					x, step = x.Resume(Payload{Outcome: mdAnswer(step.Capability, step.Args)}, r.limits)
				}
				got := mdOf(step)
				want := hot[len(hot)-1]
				assert.Equal(t, want.End, got.End, "the execution's end")
				// The readings went on from the journal's last one: lower by
				// the amount it was lowered.
				assert.Equal(t, want.Instructions-uint64(len(snap.Suspensions)), got.Instructions)
			}
		})
	}
}

// journal is the bytes of the snapshot at suspension k of a hot run.
func (r *mdRun) journal(t testing.TB, k int) []byte {
	t.Helper()
	var raw []byte
	for i := 0; i <= k; i++ {
		s := r.steps[i]
		raw = s.Snapshot
		if i < k {
		}
	}
	return raw
}
