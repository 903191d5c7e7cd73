package corpus

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

// processTimeout bounds one process of a transcript: a sidecar that stops
// answering fails the replay instead of hanging it.
const processTimeout = 60 * time.Second

// start spawns the sidecar for a process of t. The sidecar inherits the
// environment, which must fix the entropy t was recorded with.
func start(t *Transcript, args []string) (*hosttest.Sidecar, *time.Timer, error) {
	if got := os.Getenv(EntropyEnv); got != t.Entropy {
		return nil, nil, fmt.Errorf("%s=%q in the environment, transcript needs %q", EntropyEnv, got, t.Entropy)
	}
	sc, err := hosttest.Start(args...)
	if err != nil {
		return nil, nil, err
	}
	return sc, time.AfterFunc(processTimeout, sc.Kill), nil
}

// Replay runs every process of t against the built binary and reports the
// first difference from the recording.
func Replay(t *Transcript) error {
	binary := t.Transport == "binary"
	for pi, p := range t.Processes {
		sc, timer, err := start(t, p.Args)
		if err != nil {
			return err
		}
		err = replayProcess(sc, binary, p)
		timer.Stop()
		if err != nil {
			sc.Kill()
			return fmt.Errorf("process %d: %v", pi+1, err)
		}
	}
	return nil
}

func replayProcess(sc *hosttest.Sidecar, binary bool, p Process) error {
	for i, s := range p.Steps {
		var b bytes.Buffer
		writeRequest(&b, binary, s)
		if err := sc.WriteBytes(b.Bytes()); err != nil {
			return fmt.Errorf("step %d: write: %v", i+1, err)
		}
		if s.Text {
			continue
		}
		r, err := sc.Recv()
		if err != nil {
			return fmt.Errorf("step %d: request %s\nno response: %v", i+1, s.Send, err)
		}
		got := Normalize(r.Raw)
		if !bytes.Equal(got, s.Expect) {
			return fmt.Errorf("step %d: request %s\ngot  %s\nwant %s", i+1, s.Send, got, s.Expect)
		}
		if binary && !bytes.Equal(r.Payload, s.ExpectPayload) {
			return fmt.Errorf("step %d: request %s\npayload differs: got %x\nwant %x", i+1, s.Send, r.Payload, s.ExpectPayload)
		}
	}
	code, stderr := sc.Wait()
	if code != p.Exit.Code || stderr != p.Exit.Stderr {
		return fmt.Errorf("exit: got code %d stderr %q, want code %d stderr %q", code, stderr, p.Exit.Code, p.Exit.Stderr)
	}
	if left := sc.Leftover(); len(left) > 0 {
		return fmt.Errorf("unexpected output after the last response: %q", left)
	}
	return nil
}
