package corpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/internal/trace"
)

// processTimeout bounds one process of a transcript: a sidecar that stops
// answering fails the replay instead of hanging it.
const processTimeout = 60 * time.Second

// spawned is a sidecar started for one process of a transcript.
type spawned struct {
	sc      *hosttest.Sidecar
	timer   *time.Timer
	cleanup func()
	// warned: the replay fixes the entropy where the recording did not,
	// so the sidecar writes the fixed-entropy warning first.
	warned bool
}

func (s *spawned) stop() {
	s.timer.Stop()
	s.cleanup()
}

// start spawns the sidecar for process p of t, with the entropy t was
// recorded with: fixed for the whole process, or, for a trace, the seed and
// clock each start read. A pinned-key argument of a trace
// (trace.PinnedKeyArg) becomes a file holding the replay key.
func start(t *Transcript, p Process) (*spawned, error) {
	entropy := t.Entropy
	var perStart []string
	for _, s := range p.Steps {
		if s.Entropy != "" {
			perStart = append(perStart, s.Entropy)
		}
	}
	if len(perStart) > 0 {
		entropy = strings.Join(perStart, ",")
	}
	sp := &spawned{cleanup: func() {}, warned: t.Entropy == "" && entropy != ""}
	args := append([]string(nil), p.Args...)
	for i, a := range args {
		if a == trace.PinnedKeyArg && i > 0 && args[i-1] == "--snapshot-key-file" {
			dir, err := os.MkdirTemp("", "mustard-replay-")
			if err != nil {
				return nil, err
			}
			sp.cleanup = func() { os.RemoveAll(dir) }
			args[i] = filepath.Join(dir, "snapshot.key")
			if err := os.WriteFile(args[i], trace.ReplayKey(1), 0o600); err != nil {
				sp.cleanup()
				return nil, err
			}
		}
	}
	sc, err := hosttest.StartEnv([]string{EntropyEnv + "=" + entropy}, args...)
	if err != nil {
		sp.cleanup()
		return nil, err
	}
	sp.sc = sc
	sp.timer = time.AfterFunc(processTimeout, sc.Kill)
	return sp, nil
}

// Replay runs every process of t against the built binary and reports the
// first difference from the recording.
func Replay(t *Transcript) error {
	if sealed(t) {
		return errors.New("the session sealed snapshots: a trace redacts seal keys, and sealed bytes cannot replay byte for byte under another key")
	}
	binary := t.Transport == "binary"
	for pi, p := range t.Processes {
		sp, err := start(t, p)
		if err != nil {
			return err
		}
		err = replayProcess(sp, binary, p)
		sp.stop()
		if err != nil {
			sp.sc.Kill()
			return fmt.Errorf("process %d: %v", pi+1, err)
		}
	}
	return nil
}

func replayProcess(sp *spawned, binary bool, p Process) error {
	sc := sp.sc
	for i := 0; i < len(p.Steps); {
		// Normally one request, then its response. A cancel that reached
		// its target is written before the target's response is read, as
		// the host wrote it: while the target ran.
		end := cancelWindow(p.Steps, i)
		var b bytes.Buffer
		for _, s := range p.Steps[i : end+1] {
			if !s.Text {
				restored, err := restore(s.Send)
				if err != nil {
					return fmt.Errorf("step %d: %v", i+1, err)
				}
				s.Send = restored
			}
			writeRequest(&b, binary, s)
		}
		if err := sc.WriteBytes(b.Bytes()); err != nil {
			return fmt.Errorf("step %d: write: %v", i+1, err)
		}
		for ; i <= end; i++ {
			s := p.Steps[i]
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
	}
	code, stderr := sc.Wait()
	want := p.Exit.Stderr
	if sp.warned {
		want = EntropyWarning + want
	}
	if code != p.Exit.Code || stderr != want {
		return fmt.Errorf("exit: got code %d stderr %q, want code %d stderr %q", code, stderr, p.Exit.Code, want)
	}
	if left := sc.Leftover(); len(left) > 0 {
		return fmt.Errorf("unexpected output after the last response: %q", left)
	}
	return nil
}

// sealed reports whether a trace's requests carry a (redacted) seal key.
func sealed(t *Transcript) bool {
	for _, p := range t.Processes {
		for _, s := range p.Steps {
			if !s.Text && bytes.Contains(s.Send, []byte(`"`+trace.SealedMarker)) {
				return true
			}
		}
	}
	return false
}

// restore puts the replay's keys and tokens in place of a trace's
// redaction markers; other requests are sent as recorded.
func restore(send []byte) ([]byte, error) {
	if !bytes.Contains(send, []byte(`"redacted-`)) {
		return send, nil
	}
	return trace.Restore(send)
}

// cancelWindow returns the last step to write before reading the response
// of step i: i itself, or a later effective cancel (answered
// "was_running":true) of a request among those steps.
func cancelWindow(steps []Step, i int) int {
	end := i
	for k := i; k <= end; k++ {
		id, ok := requestID(steps[k])
		if !ok {
			continue
		}
		for c := end + 1; c < len(steps); c++ {
			if target, ok := effectiveCancel(steps[c]); ok && target == id {
				end = c
			}
		}
	}
	return end
}

func requestID(s Step) (uint64, bool) {
	if s.Text {
		return 0, false
	}
	var r struct {
		ID     *uint64 `json:"id"`
		Method string  `json:"method"`
	}
	if json.Unmarshal(s.Send, &r) != nil || r.ID == nil || (r.Method != "start" && r.Method != "resume") {
		return 0, false
	}
	return *r.ID, true
}

// effectiveCancel reports the target of a cancel that reached it.
func effectiveCancel(s Step) (uint64, bool) {
	if s.Text {
		return 0, false
	}
	var r struct {
		Result struct {
			Kind       string `json:"kind"`
			TargetID   uint64 `json:"target_id"`
			WasRunning bool   `json:"was_running"`
		} `json:"result"`
	}
	if json.Unmarshal(s.Expect, &r) != nil || r.Result.Kind != "cancelled" || !r.Result.WasRunning {
		return 0, false
	}
	return r.Result.TargetID, true
}

// Restored returns a copy of t whose requests carry the replay's keys and
// tokens in place of a trace's redaction markers: what Replay sends, for
// deriving fuzz seeds from a trace.
func Restored(t *Transcript) (*Transcript, error) {
	out := *t
	out.Processes = nil
	for _, p := range t.Processes {
		q := p
		q.Steps = append([]Step(nil), p.Steps...)
		for i, s := range q.Steps {
			if s.Text {
				continue
			}
			send, err := restore(s.Send)
			if err != nil {
				return nil, err
			}
			q.Steps[i].Send = send
		}
		out.Processes = append(out.Processes, q)
	}
	return &out, nil
}
