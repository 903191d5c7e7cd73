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
	"runtime"
	"sync"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary builds the sidecar once per test process and returns its path.
func Binary() (string, error) {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mustard-sidecar-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "mustard-sidecar")
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		args := []string{"build", "-o", binPath}
		if os.Getenv("MUSTARD_RACE") != "" {
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, "./cmd/mustard-sidecar")...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	return binPath, buildErr
}

// Sidecar is one running sidecar process.
type Sidecar struct {
	JSONL  bool
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *bytes.Buffer
}

// Start spawns the binary with args.
func Start(args ...string) (*Sidecar, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
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

// Response is a decoded response.
type Response struct {
	Header  map[string]any
	Raw     []byte // the header (binary) or line (JSONL) as received
	Payload []byte // binary payload, or the decoded base64 bytes in JSONL
}

// OK reports the response's ok field.
func (r Response) OK() bool { ok, _ := r.Header["ok"].(bool); return ok }

// Error returns the error string of a failed response.
func (r Response) Error() string { s, _ := r.Header["error"].(string); return s }

// Result returns the result object.
func (r Response) Result() map[string]any { m, _ := r.Header["result"].(map[string]any); return m }

// Step returns result.step.
func (r Response) Step() map[string]any { m, _ := r.Result()["step"].(map[string]any); return m }

// Send writes one request: header plus raw bytes, which travel as the
// payload (binary) or as the named base64 field (JSONL; for a start's
// program, "program_base64"; for a resume's snapshot, "snapshot_base64").
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

// SendRaw writes one binary frame as given.
func (s *Sidecar) SendRaw(header, payload []byte) error {
	var prefix [8]byte
	binary.LittleEndian.PutUint32(prefix[:4], uint32(len(header)))
	binary.LittleEndian.PutUint32(prefix[4:], uint32(len(payload)))
	_, err := s.stdin.Write(append(append(prefix[:], header...), payload...))
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
		if err := json.Unmarshal(r.Raw, &r.Header); err != nil {
			return r, err
		}
		if res := r.Result(); res != nil {
			if b64, ok := res["program_base64"].(string); ok {
				r.Payload, _ = base64.StdEncoding.DecodeString(b64)
			}
			if st := r.Step(); st != nil {
				if b64, ok := st["snapshot_base64"].(string); ok {
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
	return r, json.Unmarshal(r.Raw, &r.Header)
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
func (s *Sidecar) Wait() (int, string) {
	_ = s.stdin.Close()
	_, _ = io.Copy(io.Discard, s.stdout)
	err := s.cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
	}
	return code, s.stderr.String()
}

// Kill ends the process at once.
func (s *Sidecar) Kill() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// Pid returns the process id.
func (s *Sidecar) Pid() int { return s.cmd.Process.Pid }

// Auth returns the auth object proving a host accepted snapshot id under key.
func Auth(key []byte, snapshotID string) map[string]any {
	return map[string]any{
		"snapshot_key_base64": base64.StdEncoding.EncodeToString(key),
		"snapshot_key_digest": sha256Hex(key),
		"snapshot_token":      hmacHex(key, snapshotID),
	}
}

// Policy returns a full raw-resume policy object.
func Policy(key []byte, snapshotID string, capabilities []string, limits map[string]any) map[string]any {
	p := Auth(key, snapshotID)
	p["snapshot_id"] = snapshotID
	if capabilities == nil {
		capabilities = []string{}
	}
	p["capabilities"] = capabilities
	if limits == nil {
		limits = map[string]any{}
	}
	p["limits"] = limits
	return p
}
