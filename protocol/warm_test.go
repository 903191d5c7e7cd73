package protocol

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// counted is a quietRun whose timer does not fire during a test (the test
// calls fire as the timer would), with its run and done counted.
type counted struct {
	q         *quietRun
	runs, dos atomic.Int32
}

func newCounted(giveUp int) *counted {
	c := &counted{}
	c.q = afterQuiet(time.Hour, giveUp, func() { c.runs.Add(1) }, func() { c.dos.Add(1) })
	return c
}

func (c *counted) is(t *testing.T, runs, dones int32) {
	t.Helper()
	require.Equal(t, runs, c.runs.Load(), "runs")
	require.Equal(t, dones, c.dos.Load(), "dones")
}

func TestQuietRunBeginsOnceWhenQuiet(t *testing.T) {
	c := newCounted(10)
	c.q.fire()
	c.is(t, 1, 1)
	c.q.fire()
	c.q.begin()
	c.q.end()
	c.q.drop()
	c.is(t, 1, 1)
}

func TestQuietRunWaitsForRequestsInFlight(t *testing.T) {
	c := newCounted(10)
	c.q.begin()
	c.q.begin() // read ahead while the first is served
	c.q.fire()
	c.is(t, 0, 0)
	c.q.end()
	c.q.fire()
	c.is(t, 0, 0)
	c.q.end()
	c.q.fire()
	c.is(t, 1, 1)
}

// A request read before the run was arranged is served after it: its end
// must not hold the run back for ever.
func TestQuietRunIgnoresAnEndNotBegun(t *testing.T) {
	c := newCounted(10)
	c.q.end()
	c.q.fire()
	c.is(t, 1, 1)
}

func TestQuietRunDroppedAfterGiveUpRequests(t *testing.T) {
	c := newCounted(3)
	for range 3 {
		c.q.begin()
		c.q.end()
	}
	c.is(t, 0, 1)
	c.q.fire()
	c.q.drop()
	c.is(t, 0, 1)
}

func TestQuietRunDropBeforeItBegins(t *testing.T) {
	c := newCounted(10)
	c.q.drop()
	c.q.drop()
	c.q.fire()
	c.is(t, 0, 1)
}

func TestNilQuietRunIsANoOp(t *testing.T) {
	var q *quietRun
	q.begin()
	q.end()
	q.drop()
}

// With its real timer: the run begins once the quiet has passed after the
// last request served.
func TestQuietRunTimer(t *testing.T) {
	ran := make(chan struct{})
	done := make(chan struct{})
	q := afterQuiet(time.Millisecond, 10, func() { close(ran) }, func() { close(done) })
	q.begin()
	q.end()
	select {
	case <-done:
	case <-time.After(10 * time.Second): // a hang, not a slow machine
		t.Fatal("the run did not begin")
	}
	<-ran
}

// An embedding that does not warm its session itself has it warmed by its
// first compile, inside Serve, while the next request may be read beside
// it (Read's contract): the arranging of the quiet warm-up must not race
// with that read. The session begins the process's warm-up here as the
// first session of a process does.
func TestWarmByACompileBesideARead(t *testing.T) {
	processWarm = sync.Once{}
	s := NewSession(Options{})
	defer s.Close()
	compile := s.Read([]byte(`{"protocol_version":2,"id":1,"method":"compile","source":"1"}`), nil)
	read := make(chan *Request)
	go func() { read <- s.Read([]byte(`{"protocol_version":2,"id":2,"method":"ping"}`), nil) }()
	resp, err := s.Serve(compile)
	require.NoError(t, err)
	require.Contains(t, string(resp.Header), `"ok":true`)
	resp, err = s.Serve(<-read)
	require.NoError(t, err)
	require.Contains(t, string(resp.Header), `"ok":true`)
}
