package host

import (
	"bufio"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

// The tests drive the real sidecar: the test binary re-executes itself as
// the sidecar (hosttest.RunAsSidecar), or as a scripted misbehaving one
// (fakeEnv) for what a real sidecar never does.

const fakeEnv = "MUSTARD_HOST_TEST_FAKE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(fakeSidecar(mode))
	}
	hosttest.RunAsSidecar(cli.Main)
	// The examples find the sidecar as a host does: on PATH.
	os.Exit(hosttest.RunOnPath(m))
}

// sidecarCmd returns a command running the real sidecar.
func sidecarCmd(t testing.TB, args ...string) *exec.Cmd { return hosttest.MustCommand(t, args...) }

// fakeCmd returns a command running the scripted sidecar mode.
func fakeCmd(t testing.TB, mode string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), fakeEnv+"="+mode)
	return cmd
}

// fakeSidecar misbehaves as mode says, on the binary transport. Each mode
// reads one request first, so the client has a call outstanding.
func fakeSidecar(mode string) int {
	in := bufio.NewReader(os.Stdin)
	out := os.Stdout
	readFrame := func() bool {
		var p [8]byte
		if _, err := io.ReadFull(in, p[:]); err != nil {
			return false
		}
		n := int64(binary.LittleEndian.Uint32(p[:4])) + int64(binary.LittleEndian.Uint32(p[4:]))
		_, err := io.CopyN(io.Discard, in, n)
		return err == nil
	}
	frame := func(hl, pl uint32, body string) {
		var p [8]byte
		binary.LittleEndian.PutUint32(p[:4], hl)
		binary.LittleEndian.PutUint32(p[4:], pl)
		out.Write(append(p[:], body...))
	}
	switch mode {
	case "echo": // answers every request with what it was sent (console_test.go)
		return echoSidecar(readFrameBytes(in), frame)
	case "silent": // reads requests and never answers
		for readFrame() {
		}
		return 0
	case "huge-prefix": // claims a 4 GiB response
		readFrame()
		frame(1<<31, 1<<31-1, "")
	case "lying-prefix": // claims 60 MiB, sends 10 bytes, then exits
		readFrame()
		frame(60<<20, 0, "0123456789")
		return 0
	case "garbage": // a header that is not JSON
		readFrame()
		frame(5, 0, "hello")
	case "wrong-id":
		readFrame()
		h := `{"protocol_version":2,"id":999,"ok":true,"result":{"kind":"pong"}}`
		frame(uint32(len(h)), 0, h)
	case "wrong-kind": // answers the first request with a pong
		readFrame()
		h := `{"protocol_version":2,"id":1,"ok":true,"result":{"kind":"pong"}}`
		frame(uint32(len(h)), 0, h)
	case "unsolicited": // answers twice
		readFrame()
		h := `{"protocol_version":2,"id":1,"ok":true,"result":{"kind":"pong"}}`
		frame(uint32(len(h)), 0, h)
		frame(uint32(len(h)), 0, h)
	case "crash": // reads a request, complains and exits 3
		readFrame()
		os.Stderr.WriteString("mustard-sidecar: something broke\n")
		return 3
	case "long-line": // JSONL: a line that never ends
		in.ReadString('\n')
		out.WriteString(strings.Repeat("x", 3<<20))
	default:
		os.Stderr.WriteString("unknown fake mode " + mode + "\n")
		return 2
	}
	// Hold the pipes open until the client gives up and kills us.
	io.Copy(io.Discard, in)
	return 0
}

// noLeaks and eventually are hosttest's, for this package's tests.
func noLeaks(t *testing.T) { t.Helper(); hosttest.NoLeaks(t) }

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	hosttest.Eventually(t, what, cond)
}
