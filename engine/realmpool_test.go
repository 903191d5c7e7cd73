package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

func TestRealmPoolRefillsWithoutAWake(t *testing.T) {
	rt := NewRuntime()
	defer rt.Close()
	rt.Warm()
	p := &rt.realms
	hosttest.Eventually(t, "the pool fills", p.full)
	for i := 0; i < 5; i++ {
		r, err := rt.newRealm()
		require.NoError(t, err)
		require.NotNil(t, r)
		// The preparer polls: it is awake, and nothing was sent to wake it.
		require.False(t, p.dozing.Load())
		require.Empty(t, p.wake)
		hosttest.Eventually(t, "the pool fills again", p.full)
	}
	// Taken faster than it refills: a start builds its own.
	for i := 0; i < 3*realmsAhead; i++ {
		r, err := rt.newRealm()
		require.NoError(t, err)
		require.NotNil(t, r)
	}
}

func TestRealmPoolDozesAndAStartWakesIt(t *testing.T) {
	defer func(d time.Duration) { realmDozeAfter = d }(realmDozeAfter)
	realmDozeAfter = 5 * time.Millisecond
	rt := NewRuntime()
	rt.Warm()
	p := &rt.realms
	for i := 0; i < 3; i++ {
		hosttest.Eventually(t, "the preparer dozes", p.dozing.Load)
		_, err := rt.newRealm()
		require.NoError(t, err)
		require.False(t, p.dozing.Load())
		hosttest.Eventually(t, "the woken preparer refills the pool", p.full)
	}
	// Close ends a dozing preparer.
	hosttest.Eventually(t, "the preparer dozes", p.dozing.Load)
	done := make(chan struct{})
	go func() { rt.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Close hung with the preparer asleep")
	}
}

func TestRealmPoolCloseWhilePolling(t *testing.T) {
	rt := NewRuntime()
	rt.Warm()
	hosttest.Eventually(t, "the pool fills", rt.realms.full)
	_, err := rt.newRealm()
	require.NoError(t, err)
	rt.Close() // hangs here if the polling preparer missed the stop
	require.True(t, rt.closed.Load())
}
