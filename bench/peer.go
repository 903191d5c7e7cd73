package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// peer is the reference implementation (the mustardscript npm package)
// running bench/peer/peer.js in one long-lived Node process, which runs
// the same programs in-process and reports timings.
type peer struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	stderr *bytes.Buffer
	info   string

	node, dir string // for the fresh processes of freshResumes
}

// peerDir is bench/peer in the source tree.
func peerDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("source location unknown")
	}
	dir := filepath.Join(filepath.Dir(file), "peer")
	if _, err := os.Stat(filepath.Join(dir, "peer.js")); err != nil {
		return "", fmt.Errorf("%s/peer.js not found (built with -trimpath?)", dir)
	}
	return dir, nil
}

// startPeer installs the peer on demand, starts it and sends it the
// programs. A nil peer comes with the reason it is unavailable; the driver
// never fails because of it.
func startPeer(cfg Config, workloads []*Workload) (*peer, string) {
	p, reason := spawnPeer(cfg)
	if p == nil {
		return nil, reason
	}
	var ready struct {
		Mustard string `json:"mustardscript"`
		Node    string `json:"node"`
	}
	init := map[string]any{
		"cmd":           "init",
		"workloads":     workloads,
		"hot_source":    hotSource,
		"cold_source":   coldSource,
		"cold_note":     strings.Repeat(coldNote, 64),
		"cold_steps":    coldLimit,
		"key":           base64.StdEncoding.EncodeToString(benchKey),
		"large_source":  largeSource,
		"large_answers": LargeAnswers(),
		"huge_source":   hugeSource,
		"huge_answers":  HugeAnswers(),

		"structured_source":  structuredSource,
		"awaited_source":     awaitedSource,
		"structured_answers": StructuredAnswers(),
	}
	if err := p.exchange(init, &ready, time.Minute); err != nil {
		p.close()
		return nil, err.Error()
	}
	p.info = fmt.Sprintf("mustardscript %s, in-process in node %s", ready.Mustard, ready.Node)
	return p, ""
}

// spawnPeer installs the peer on demand and starts peer.js.
func spawnPeer(cfg Config) (*peer, string) {
	dir, err := peerDir()
	if err != nil {
		return nil, err.Error()
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, "node not found in PATH"
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "mustardscript", "package.json")); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			return nil, "npm not found in PATH"
		}
		logf(cfg.Log, "installing the peer: npm install --no-audit --no-fund (in %s)", dir)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Sprintf("npm install failed (%v): %s", err, lastLine(out))
		}
	}
	cmd := exec.Command(node, "peer.js")
	cmd.Dir = dir
	p := &peer{cmd: cmd, lines: make(chan []byte, 1), stderr: &bytes.Buffer{}, node: node, dir: dir}
	cmd.Stderr = p.stderr
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err.Error()
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err.Error()
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Sprintf("starting node: %v", err)
	}
	go func() {
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				close(p.lines)
				return
			}
			p.lines <- line
		}
	}()
	return p, ""
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// exchange sends one command line and decodes the one-line reply.
func (p *peer) exchange(cmd any, reply any, timeout time.Duration) error {
	b, err := json.Marshal(cmd)
	if err != nil {
		return err
	}
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("peer: %v", err)
	}
	select {
	case line, ok := <-p.lines:
		if !ok {
			_ = p.cmd.Wait()
			return fmt.Errorf("peer exited: %s", lastLine(p.stderr.Bytes()))
		}
		var e struct {
			Error string `json:"error"`
		}
		if err := json.Unmarshal(line, &e); err != nil {
			return fmt.Errorf("peer: bad reply %.200q", line)
		}
		if e.Error != "" {
			return fmt.Errorf("peer: %s", e.Error)
		}
		return json.Unmarshal(line, reply)
	case <-time.After(timeout):
		return fmt.Errorf("peer: no reply within %v", timeout)
	}
}

func (p *peer) close() {
	_ = p.stdin.Close()
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// round runs the peer's share of one round; its samples are keyed like
// Row.PeerKey.
func (p *peer) round(rep *Report, cfg Config, round int, workloads []*Workload) error {
	large := share(cfg.Large, round, cfg.Rounds)
	cmd := map[string]any{
		"cmd":           "round",
		"hot":           share(cfg.Hot, round, cfg.Rounds),
		"hot_chain":     cfg.HotChain,
		"compile":       share(cfg.Compile, round, cfg.Rounds),
		"workload":      share(cfg.Workload, round, cfg.Rounds),
		"cold":          share(cfg.ColdResume, round, cfg.Rounds),
		"cold_steps":    nonNil(cfg.ColdSteps),
		"history":       share(cfg.History, round, cfg.Rounds),
		"history_steps": nonNil(cfg.HistorySteps),
		"large":         large,
	}
	var reply struct {
		Samples map[string][]int64 `json:"samples"`
		Notes   map[string]string  `json:"notes"`
		Fresh   map[string]string  `json:"fresh"` // a large program's last dump, for freshResumes
	}
	if err := p.exchange(cmd, &reply, 3*time.Minute); err != nil {
		return err
	}
	if rep.peer == nil {
		rep.peer = map[string][]time.Duration{}
	}
	for k, text := range reply.Notes {
		rep.note(k, text)
	}
	for k, ns := range reply.Samples {
		for _, n := range ns {
			rep.peer[k] = append(rep.peer[k], time.Duration(n))
		}
	}
	for key, line := range reply.Fresh {
		if line == "" {
			continue
		}
		d, err := p.freshResumes(line, large)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		rep.peer[key+"/fresh"] = append(rep.peer[key+"/fresh"], d...)
	}
	return nil
}

// nonNil keeps an empty step list a JSON array (peer.js iterates it).
func nonNil(steps []int) []int {
	if steps == nil {
		return []int{}
	}
	return steps
}

// freshResumes resumes a large program's last suspension n times, each in
// a Node process of its own (peer/fresh.js), timed as the sidecar's fresh
// process is: from the request written, once the process has said it is
// ready (the package loaded), to its answer read. line is peer.js's
// encoding of the dump and the answer.
func (p *peer) freshResumes(line string, n int) ([]time.Duration, error) {
	var out []time.Duration
	for range n {
		d, err := p.freshResume(line)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func (p *peer) freshResume(line string) (time.Duration, error) {
	// A process that never answers is killed, and its reply read fails.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.node, "fresh.js")
	cmd.Dir = p.dir
	stderr := &bytes.Buffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting node: %v", err)
	}
	// end closes its input and waits for it, once: its stderr is complete
	// only then.
	ended := false
	end := func() {
		if !ended {
			ended = true
			_ = stdin.Close()
			_ = cmd.Wait()
		}
	}
	defer end()
	r := bufio.NewReader(stdout)
	readReply := func() error {
		b, err := r.ReadBytes('\n')
		if err != nil {
			end()
			return fmt.Errorf("fresh peer: %v: %s", err, lastLine(stderr.Bytes()))
		}
		var m struct {
			Error *string `json:"error"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("fresh peer: bad reply %.200q", b)
		}
		if m.Error != nil {
			return fmt.Errorf("fresh peer: %s", *m.Error)
		}
		return nil
	}
	if err := readReply(); err != nil { // ready
		return 0, err
	}
	t0 := time.Now()
	if _, err := io.WriteString(stdin, line+"\n"); err != nil {
		return 0, fmt.Errorf("fresh peer: %v", err)
	}
	if err := readReply(); err != nil {
		return 0, err
	}
	return time.Since(t0), nil
}
