// Package hosttest drives the real mustard-sidecar binary over pipes, the
// way an embedding host does, for end-to-end tests and benchmarks.
package hosttest

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/frame"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// childEnv marks a process that Start spawned to be the sidecar.
const childEnv = "MUSTARD_SIDECAR_HOSTTEST_CHILD"

var sidecarMain func(args []string) int

// RunAsSidecar makes the calling binary its own sidecar, in the manner of
// the helper-process pattern: in a process that Start spawned, it runs main
// with the process's arguments and exits with its status; anywhere else it
// records main so that Start re-executes this binary. Call it first thing in
// TestMain (or a tool's main) with cli.Main. Under -race the sidecar is
// race-instrumented too, except in the default run of a test under RunTests
// (plain.go), which builds a plain one.
func RunAsSidecar(main func(args []string) int) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(main(os.Args[1:]))
	}
	sidecarMain = main
}

// BinaryEnv names a prebuilt sidecar binary to run instead of this one
// (for benchmarks that time process start-up).
const BinaryEnv = "MUSTARD_SIDECAR_BIN"

// Binary returns the path of the binary Start runs: $MUSTARD_SIDECAR_BIN if
// set, otherwise this one, or under -race a plain build of the sidecar
// (plain.go).
func Binary() (string, error) {
	if bin := os.Getenv(BinaryEnv); bin != "" {
		return bin, nil
	}
	if sidecarMain == nil {
		return "", fmt.Errorf("hosttest: call hosttest.RunAsSidecar(cli.Main) in TestMain or main first")
	}
	if usePlainBuild() {
		return plainBinary()
	}
	return os.Executable()
}

// Command returns an unstarted command that runs the sidecar with args.
func Command(args ...string) (*exec.Cmd, error) { return CommandEnv(nil, args...) }

// MustCommand is Command for a test: it fails the test if the sidecar
// binary cannot be found.
func MustCommand(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	cmd, err := Command(args...)
	if err != nil {
		t.Fatal(err)
	}
	return cmd
}

// CommandEnv is Command with env ("KEY=value") added to the environment the
// sidecar inherits, overriding it.
func CommandEnv(env []string, args ...string) (*exec.Cmd, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(append(os.Environ(), raceExitEnv()), env...), childEnv+"=1")
	return cmd, nil
}

// raceExitEnv keeps a race-instrumented sidecar from sleeping a second
// at exit (the race runtime's default, to let late reports print), which
// every test that closes or restarts a process would otherwise pay.
func raceExitEnv() string {
	return "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")
}

// Sidecar is one running sidecar process.
type Sidecar struct {
	JSONL  bool
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *bytes.Buffer

	sendMu sync.Mutex
	frame  []byte // SendRaw's, reused

	waitOnce sync.Once
	waitErr  error
	leftover []byte
}

// Start spawns the binary with args.
func Start(args ...string) (*Sidecar, error) { return StartEnv(nil, args...) }

// StartEnv is Start with env added to the sidecar's environment.
func StartEnv(env []string, args ...string) (*Sidecar, error) {
	cmd, err := CommandEnv(env, args...)
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &Sidecar{cmd: cmd, stdin: stdin, stdout: bufio.NewReaderSize(stdout, 1<<16), stderr: &bytes.Buffer{}}
	cmd.Stderr = s.stderr
	for _, a := range args {
		if a == "--jsonl" {
			s.JSONL = true
		}
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return s, nil
}

// Response is a decoded response. Header numbers are json.Number, so ids
// and values keep their exact wire text.
type Response struct {
	Header  map[string]any
	Raw     []byte // the header (binary) or line (JSONL) as received
	Payload []byte // binary payload, or the decoded base64 bytes in JSONL
}

// ID returns the echoed id; ok is false unless it is an unsigned integer.
func (r Response) ID() (uint64, bool) {
	n, ok := r.Header[wire.FieldID].(json.Number)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseUint(string(n), 10, 64)
	return id, err == nil
}

// Version returns the response's protocol_version text.
func (r Response) Version() string {
	n, _ := r.Header[wire.FieldProtocolVersion].(json.Number)
	return string(n)
}

// Profile returns the profile object, or nil.
func (r Response) Profile() map[string]any {
	m, _ := r.Header[wire.FieldProfile].(map[string]any)
	return m
}

// SnapshotID returns result.snapshot_id.
func (r Response) SnapshotID() string { s, _ := r.Result()[wire.FieldSnapshotID].(string); return s }

// PolicyID returns result.policy_id.
func (r Response) PolicyID() string { s, _ := r.Result()[wire.FieldPolicyID].(string); return s }

// JSON re-encodes part of a response header; json.Number keeps numbers as
// they were on the wire.
func JSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return string(b)
}

func decodeHeader(b []byte, into *map[string]any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(into); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("trailing data after response header")
	}
	return nil
}

// OK reports the response's ok field.
func (r Response) OK() bool { ok, _ := r.Header[wire.FieldOK].(bool); return ok }

// Error returns the error string of a failed response.
func (r Response) Error() string { s, _ := r.Header[wire.FieldError].(string); return s }

// Result returns the result object.
func (r Response) Result() map[string]any {
	m, _ := r.Header[wire.FieldResult].(map[string]any)
	return m
}

// Step returns result.step.
func (r Response) Step() map[string]any {
	m, _ := r.Result()[wire.FieldStep].(map[string]any)
	return m
}

// Send writes one request: header plus raw bytes, which travel as the
// payload (binary) or as the named base64 field (JSONL; for a start's
// program, "program_base64"; for a resume's snapshot, "snapshot_base64";
// for a stage's chunk, "bytes_base64").
func (s *Sidecar) Send(header map[string]any, raw []byte, rawField string) error {
	if s.JSONL {
		if len(raw) > 0 {
			header[rawField] = base64.StdEncoding.EncodeToString(raw)
		}
		b, err := json.Marshal(header)
		if err != nil {
			return err
		}
		_, err = s.stdin.Write(append(b, '\n'))
		return err
	}
	b, err := json.Marshal(header)
	if err != nil {
		return err
	}
	return s.SendRaw(b, raw)
}

// SendRaw writes one binary frame as given, in one write. The frame is
// put together in a buffer the Sidecar keeps: a new one for each request
// would have the benchmarks time the host's allocator (for a 50 KB answer,
// a large object and, in a young process, its pages) with the sidecar.
func (s *Sidecar) SendRaw(header, payload []byte) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.frame = frame.Append(s.frame[:0], header, payload)
	_, err := s.stdin.Write(s.frame)
	return err
}

// WriteBytes writes bytes to stdin as they are.
func (s *Sidecar) WriteBytes(b []byte) error { _, err := s.stdin.Write(b); return err }

// Recv reads one response.
func (s *Sidecar) Recv() (Response, error) {
	var r Response
	if s.JSONL {
		line, err := s.stdout.ReadBytes('\n')
		if err != nil {
			return r, err
		}
		r.Raw = line[:len(line)-1]
		if err := decodeHeader(r.Raw, &r.Header); err != nil {
			return r, err
		}
		if res := r.Result(); res != nil {
			if b64, ok := res[wire.FieldProgramBase64].(string); ok {
				r.Payload, _ = base64.StdEncoding.DecodeString(b64)
			}
			if b64, ok := res[wire.FieldSnapshotBase64].(string); ok {
				r.Payload, _ = base64.StdEncoding.DecodeString(b64)
			}
			if st := r.Step(); st != nil {
				if b64, ok := st[wire.FieldSnapshotBase64].(string); ok {
					r.Payload, _ = base64.StdEncoding.DecodeString(b64)
				}
			}
		}
		return r, nil
	}
	var prefix [8]byte
	if _, err := io.ReadFull(s.stdout, prefix[:]); err != nil {
		return r, err
	}
	hl, pl := binary.LittleEndian.Uint32(prefix[:4]), binary.LittleEndian.Uint32(prefix[4:])
	buf := make([]byte, int(hl)+int(pl))
	if _, err := io.ReadFull(s.stdout, buf); err != nil {
		return r, err
	}
	r.Raw, r.Payload = buf[:hl], buf[hl:]
	return r, decodeHeader(r.Raw, &r.Header)
}

// Call sends a request and reads its response.
func (s *Sidecar) Call(header map[string]any, raw []byte, rawField string) (Response, error) {
	if err := s.Send(header, raw, rawField); err != nil {
		return Response{}, err
	}
	return s.Recv()
}

// CloseStdin signals EOF.
func (s *Sidecar) CloseStdin() error { return s.stdin.Close() }

// Wait closes stdin and waits for exit, returning the exit code and stderr.
// Unread responses are kept for Leftover.
func (s *Sidecar) Wait() (int, string) {
	_ = s.stdin.Close()
	return s.waitExit()
}

// WaitExit waits, without closing stdin, for the process to exit on its
// own. If it is still running after timeout it is killed and exited is
// false: a process that should have failed fast is waiting for input
// instead. Unread responses are kept for Leftover.
func (s *Sidecar) WaitExit(timeout time.Duration) (code int, stderr string, exited bool) {
	var killed atomic.Bool
	timer := time.AfterFunc(timeout, func() {
		killed.Store(true)
		_ = s.cmd.Process.Kill()
	})
	code, stderr = s.waitExit()
	timer.Stop()
	return code, stderr, !killed.Load()
}

func (s *Sidecar) waitExit() (int, string) {
	s.waitOnce.Do(func() {
		s.leftover, _ = io.ReadAll(s.stdout)
		s.waitErr = s.cmd.Wait()
	})
	code := 0
	if ee, ok := s.waitErr.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if s.waitErr != nil {
		code = -1
	}
	return code, s.stderr.String()
}

// Leftover returns the stdout bytes nobody read, once the process exited.
func (s *Sidecar) Leftover() []byte { return s.leftover }

// Kill ends the process at once. It is safe after Wait and more than once.
func (s *Sidecar) Kill() {
	_ = s.cmd.Process.Kill()
	s.waitExit()
}

// Signal sends sig to the process.
func (s *Sidecar) Signal(sig os.Signal) error { return s.cmd.Process.Signal(sig) }

// Pid returns the process id.
func (s *Sidecar) Pid() int { return s.cmd.Process.Pid }

// Auth returns the auth object proving a host accepted snapshot id under key.
func Auth(key []byte, snapshotID string) map[string]any {
	return map[string]any{
		wire.FieldSnapshotKeyBase64: base64.StdEncoding.EncodeToString(key),
		wire.FieldSnapshotKeyDigest: sha256Hex(key),
		wire.FieldSnapshotToken:     hmacHex(key, snapshotID),
	}
}

// Policy returns a full raw-resume policy object.
func Policy(key []byte, snapshotID string, capabilities []string, limits map[string]any) map[string]any {
	p := Auth(key, snapshotID)
	p[wire.FieldSnapshotID] = snapshotID
	if capabilities == nil {
		capabilities = []string{}
	}
	p[wire.FieldCapabilities] = capabilities
	if limits == nil {
		limits = map[string]any{}
	}
	p[wire.FieldLimits] = limits
	return p
}

// Run runs the binary with args and empty stdin to completion.
func Run(args ...string) (stdout, stderr string, code int, err error) {
	cmd, err := Command(args...)
	if err != nil {
		return "", "", 0, err
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode(), nil
	}
	return out.String(), errb.String(), 0, err
}

// RunOnPath runs m (a *testing.M) with the command name `mustard-sidecar`,
// looked up on PATH, running this binary as the sidecar, for tests of code
// that finds the sidecar the way a host does (host.DefaultCommand,
// external programs, other languages' hosts), and returns its exit code.
// For TestMain, after RunAsSidecar.
func RunOnPath(m interface{ Run() int }) int {
	return RunTests(onPathRun{m})
}

type onPathRun struct{ m interface{ Run() int } }

func (r onPathRun) Run() int {
	undo, err := onPath()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer undo()
	return r.m.Run()
}

// onPath links the name in a new temporary directory, puts that first on
// PATH and marks the environment so that children run as the sidecar. It
// returns a function that undoes all three.
func onPath() (undo func(), err error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mustard-sidecar-path-")
	if err != nil {
		return nil, err
	}
	if err := os.Symlink(bin, filepath.Join(dir, "mustard-sidecar")); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	saved := map[string]*string{}
	for _, k := range []string{"PATH", childEnv, "GORACE"} {
		if v, ok := os.LookupEnv(k); ok {
			saved[k] = &v
		} else {
			saved[k] = nil
		}
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	os.Setenv(childEnv, "1")
	_, race, _ := strings.Cut(raceExitEnv(), "=")
	os.Setenv("GORACE", race)
	return func() {
		for k, v := range saved {
			if v == nil {
				os.Unsetenv(k)
			} else {
				os.Setenv(k, *v)
			}
		}
		os.RemoveAll(dir)
	}, nil
}
