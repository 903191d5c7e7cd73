package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// The process as a whole: signals while guest code runs, and a host that
// writes faster than it reads.

// SIGTERM and SIGINT end the process even while a guest spins in
// for(;;){} under a budget it would take days to spend, and Go prints no
// traceback. The loop begins only once the host resumes a suspension, so
// the test knows what the sidecar is doing when the signal arrives.
func TestE2ESignalWhileGuestRuns(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			h := newHost(t, transports[0])
			programID, _ := h.compile(`const go_on = cap(1); for(;;){}`)
			opts := options([]string{"cap"}, nil)
			// 10^15 instructions: JSON carries it exactly, and no run of
			// this test comes near spending it.
			opts["limits"] = map[string]any{"instruction_budget": uint64(1_000_000_000_000_000)}
			s := stepOf(t, h.do(h.req("start", "program_id", programID, "options", opts), nil, ""))
			require.Equal(t, "suspended", s.Type)

			busy0, procOK := cpuTicks(h.sc.Pid())
			require.NoError(t, h.sc.Send(h.req("resume", "snapshot_id", s.SnapshotID, "policy_id", s.PolicyID,
				"auth", hosttest.Auth(hostKey, s.SnapshotID), "payload", valuePayload(num(1))), nil, ""))
			if procOK {
				waitSpinning(t, h.sc.Pid(), busy0)
			}

			require.NoError(t, h.sc.Signal(sig))
			code, stderr, exited := h.sc.WaitExit(exitTimeout)
			require.True(t, exited, "the sidecar outlived %v after %v; stderr: %s", exitTimeout, sig, stderr)
			// Any status will do (Go's default is death by the signal), as
			// long as it is not a crash report.
			t.Logf("exit status %d after %v; stderr %q", code, sig, stderr)
			assert.NotContains(t, stderr, "goroutine ")
			assert.NotContains(t, stderr, "panic:")
		})
	}
}

// spinTicks of CPU time (about 0.2 s at the usual 100 ticks/s) show the
// guest loop is running: an idle sidecar waiting for input uses none.
const spinTicks = 20

// waitSpinning waits until the process has used spinTicks of CPU since
// busy0. It asserts nothing: on a machine too busy to give the sidecar
// that much CPU within exitTimeout, the signal simply arrives earlier in
// the resume, which the test accepts too.
func waitSpinning(t *testing.T, pid int, busy0 uint64) {
	t.Helper()
	deadline := time.Now().Add(exitTimeout)
	for time.Now().Before(deadline) {
		busy, ok := cpuTicks(pid)
		if !ok {
			return
		}
		if busy-busy0 >= spinTicks {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("the guest loop was not seen spinning within %v; signalling anyway", exitTimeout)
}

// cpuTicks returns utime+stime of a process from /proc/<pid>/stat.
func cpuTicks(pid int) (uint64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name may contain spaces; the fields after it do not.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so utime (14) and stime (15) are f[11], f[12].
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	return u + s, err1 == nil && err2 == nil
}

// What a sidecar may hold of a host's input while the host reads none of
// its output, for the 256 KiB requests of the test below:
//
//   - the request being served, read in full (its response cannot be
//     written: the stdout pipe is full);
//   - while that request is a start or resume that has run for a
//     millisecond, up to 4 requests read ahead of it (internal/cli
//     readAhead: reading ahead is what lets a cancel reach a running
//     guest); none otherwise;
//   - the 4 KiB read-ahead of the frame reader's bufio.Reader;
//   - the stdin pipe's buffer;
//   - requests already answered whose whole responses sit in the stdout
//     pipe's buffer. Each response here is larger than its request (a
//     compile answers the program bytes, which hold the source; a start
//     answers its 256 KiB input back), so a pipe of P bytes holds at most
//     P / 256 KiB of them.
//
// Linux pipes hold 64 KiB unless an owner raises them (up to
// fs.pipe-max-size, 1 MiB by default), which neither side does. With the
// default pipes that is 256 KiB + 4 KiB + 64 KiB = 324 KiB for compiles
// and 5 x 256 KiB + 4 KiB + 64 KiB = 1,348 KiB for long starts; even with
// both pipes at 1 MiB it is at most 9 x 256 KiB + 4 KiB + 1 MiB ~ 3.3 MiB.
// The bound asserted is 4 MiB: a sidecar that queued requests without a
// bound would take all backpressureFrames x 256 KiB: 16 MiB in the long
// suites, 6 MiB in the default run (still past the bound).
var backpressureFrames = longtest.Pick(24, 64)

const (
	backpressureSource = 256 << 10
	backpressureBound  = 4 << 20
	// backpressureStall: a write not complete after this long has
	// stalled: the sidecar stopped reading.
	backpressureStall = 2 * time.Second
)

// A host that writes faster than the sidecar answers, and reads nothing,
// is pushed back on: the sidecar reads at most 4 requests ahead of the one
// it serves (and only while that one is a start or resume running long)
// and stops reading while it cannot write that one's response, so the
// host's writes block after a bounded number of bytes. Then every request is answered, in
// order, and the sidecar's peak RSS stays small.
//
// The timing cannot make the assertion flake: the bound is on what the
// sidecar took before a write stalled for 2 s, and a slower (busier)
// sidecar only takes less in that time; a correct sidecar always stalls
// the writer eventually, as 6 MiB cannot fit in what it may hold.
func TestE2EHostWritingFasterThanItReadsIsPushedBack(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat("x", backpressureSource)

	// Compiles: served in well under a millisecond, so nothing is read
	// ahead of them. A valid program: one long comment, then 1.
	compile, err := json.Marshal(map[string]any{"protocol_version": 2, "id": 0, "method": "compile", "source": "//" + pad + "\n1"})
	require.NoError(t, err)
	compileID := ""
	t.Run("compile", func(t *testing.T) {
		t.Parallel()
		pushBack(t, func(id int) []byte {
			return frameOf(strings.Replace(string(compile), `"id":0`, `"id":`+strconv.Itoa(id), 1), nil)
		}, func(id int, hdr, payload []byte) {
			var r struct {
				Result struct {
					ProgramID string `json:"program_id"`
				} `json:"result"`
			}
			require.NoError(t, json.Unmarshal(hdr, &r), "%.300s", hdr)
			require.Equal(t, sha256Hex(payload), r.Result.ProgramID)
			if id == 1 {
				compileID = r.Result.ProgramID
			}
			require.Equal(t, compileID, r.Result.ProgramID, "the same source compiles to the same program")
		})
	})

	// Starts that run long enough for requests to be read ahead of them
	// (internal/cli readAheadAfter), each taking 256 KiB of input and
	// answering it back.
	program := compileBytes(t, `let i = 0; while (i < 50000) i++; pad`)
	start, err := json.Marshal(map[string]any{"protocol_version": 2, "id": 0, "method": "start",
		"options": map[string]any{"inputs": map[string]any{"pad": map[string]any{"String": pad}}, "limits": map[string]any{"instruction_budget": 10_000_000}}})
	require.NoError(t, err)
	t.Run("long start", func(t *testing.T) {
		t.Parallel()
		pushBack(t, func(id int) []byte {
			return frameOf(strings.Replace(string(start), `"id":0`, `"id":`+strconv.Itoa(id), 1), program)
		}, func(id int, hdr, payload []byte) {
			var r struct {
				Result struct {
					Step struct {
						Value struct{ String string } `json:"value"`
					} `json:"step"`
				} `json:"result"`
			}
			require.NoError(t, json.Unmarshal(hdr, &r), "%.300s", hdr)
			require.Equal(t, pad, r.Result.Step.Value.String)
		})
	})
}

// pushBack writes backpressureFrames requests without reading, measures
// how much the sidecar took before the writes stalled, then reads and
// checks every response.
func pushBack(t *testing.T, request func(id int) []byte, check func(id int, header, payload []byte)) {
	// os.Pipe rather than cmd.StdinPipe: the host's end must be an
	// *os.File to take a write deadline. Likewise for stdout, so that
	// Wait does not close the host's end before it has read everything.
	stdinR, stdinW, err := os.Pipe()
	require.NoError(t, err)
	stdoutR, stdoutW, err := os.Pipe()
	require.NoError(t, err)
	cmd, err := hosttest.Command()
	require.NoError(t, err)
	cmd.Stdin, cmd.Stdout = stdinR, stdoutW
	var stderr bytes.Buffer // read only once the process has exited
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	stdinR.Close()
	stdoutW.Close()
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	stop := make(chan struct{}) // ends the writer when the test does
	t.Cleanup(func() {
		close(stop)
		stdinW.Close()
		_ = cmd.Process.Kill()
		<-exited
		stdoutR.Close()
	})

	// The writer reports the bytes accepted until its first stalled write
	// (or -1 if none stalled), writes the rest without a deadline, and
	// closes stdin when the test has read every response.
	accepted := make(chan int64, 1)
	writeErr := make(chan error, 1)
	readAll := make(chan struct{})
	go func() {
		var n int64
		stalled := false
		for id := 1; id <= backpressureFrames; id++ {
			msg := request(id)
			for len(msg) > 0 {
				if !stalled {
					_ = stdinW.SetWriteDeadline(time.Now().Add(backpressureStall))
				}
				k, err := stdinW.Write(msg)
				msg = msg[k:]
				if !stalled {
					n += int64(k)
				}
				if errors.Is(err, os.ErrDeadlineExceeded) && !stalled {
					stalled = true
					accepted <- n
					_ = stdinW.SetWriteDeadline(time.Time{})
					continue
				}
				if err != nil {
					writeErr <- err
					return
				}
			}
		}
		if !stalled {
			accepted <- -1
		}
		select {
		case <-readAll:
			writeErr <- stdinW.Close()
		case <-stop:
		}
	}()

	var n int64
	select {
	case n = <-accepted:
	case err := <-writeErr:
		t.Fatalf("writing requests: %v", err)
	}
	require.NotEqual(t, int64(-1), n, "the sidecar took all %d MiB without the host reading a response", backpressureFrames*backpressureSource>>20)
	t.Logf("the host's writes stalled after %d KiB", n>>10)
	require.Less(t, n, int64(backpressureBound), "bytes the sidecar took before pushing back")

	out := bufio.NewReaderSize(stdoutR, 1<<16)
	for id := 1; id <= backpressureFrames; id++ {
		hdr, payload, err := readFrame(out)
		require.NoError(t, err, "response %d", id)
		var r struct {
			ID uint64 `json:"id"`
			OK bool   `json:"ok"`
		}
		require.NoError(t, json.Unmarshal(hdr, &r), "%.300s", hdr)
		require.Equal(t, uint64(id), r.ID, "responses come in request order")
		require.True(t, r.OK, "%.300s", hdr)
		check(id, hdr, payload)
	}
	// Before EOF: the process must still be there to be measured.
	hwm := vmHWM(t, cmd.Process.Pid)
	t.Logf("VmHWM %.1f MiB", float64(hwm)/(1<<20))
	if !hosttest.RaceEnabled {
		assert.Less(t, hwm, int64(128<<20), "peak RSS")
	}

	close(readAll)
	require.NoError(t, <-writeErr)
	select {
	case <-exited:
	case <-time.After(exitTimeout):
		t.Fatalf("the sidecar did not exit within %v of EOF", exitTimeout)
	}
	require.NoError(t, waitErr, "exit after EOF; stderr: %s", stderr.String())
	assert.Empty(t, stderr.String())
	rest, err := io.ReadAll(out)
	require.NoError(t, err)
	assert.Empty(t, rest, "one response per request, no more")
}

// readFrame reads one binary response frame.
func readFrame(r io.Reader) (header, payload []byte, err error) {
	var prefix [8]byte
	if _, err := io.ReadFull(r, prefix[:]); err != nil {
		return nil, nil, err
	}
	hl, pl := binary.LittleEndian.Uint32(prefix[:4]), binary.LittleEndian.Uint32(prefix[4:])
	buf := make([]byte, int(hl)+int(pl))
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, nil, err
	}
	return buf[:hl], buf[hl:], nil
}
