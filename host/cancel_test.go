package host

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Must hold: cancelling the context of a start or resume sends the
// in-band cancel; the call ends with the sidecar's "Limit: execution
// cancelled" (which also matches context.Canceled), in a tight loop and
// inside a long built-in, and the process serves the next request.
func TestClientContextCancelSendsCancel(t *testing.T) {
	noLeaks(t)
	// A generous grace: the kill fallback must not be what ends the call.
	c := newClient(t, Config{Cmd: sidecarCmd(t), CancelGrace: 20 * time.Second})
	pong, err := c.Ping(context.Background())
	if err != nil || !pong.Has("cancel") {
		t.Skipf("this sidecar has no in-band cancel yet (ping: %v)", err)
	}
	huge := Limits{InstructionBudget: Limit(1 << 62), AllocationBudget: Limit(1 << 40), HeapLimitBytes: Limit(1 << 30)}
	for _, tc := range []struct{ name, src string }{
		{"tight loop", `for (;;) {}`},
		{"long built-in", `const a = []; for (let i = 0; i < 1e6; i++) a.push((i * 7919) % 1000003);
			for (;;) a.sort((x, y) => x - y);`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prog, err := c.Compile(context.Background(), tc.src)
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				_, err := c.Start(ctx, StartRequest{Program: prog, Limits: huge})
				errc <- err
			}()
			eventually(t, "the start to be written", func() bool { return c.outstanding() == 1 })
			cancelled := time.Now()
			cancel()
			err = <-errc
			t.Logf("ended %v after the cancel", time.Since(cancelled).Round(time.Millisecond))
			var se *Error
			require.ErrorAs(t, err, &se)
			require.Equal(t, "Limit: execution cancelled", se.Message)
			require.ErrorIs(t, err, context.Canceled)
			require.Equal(t, "Limit: execution cancelled", err.Error())
			_, err = c.Compile(context.Background(), "1")
			require.NoError(t, err, "the process serves the next request")
		})
	}
}
