package corpus

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
)

// Session describes a transcript in Go: Run drives the sidecar through a
// Rec, which records every exchange. Requests may use earlier responses
// (snapshot ids, bytes), so transcripts never need hand editing.
type Session struct {
	Name  string
	About string
	// Binary records over binary frames instead of JSONL.
	Binary bool
	// ReplayBinary also replays a JSONL transcript over binary frames; its
	// requests must carry nothing transport-specific.
	ReplayBinary bool
	Run          func(r *Rec)
}

// Rec records one session. Its methods check what the contract promises
// about each response, so a regression cannot be recorded as expected
// behaviour without the generator failing.
type Rec struct {
	t     *Transcript
	cur   *Process
	sp    *spawned
	sc    *hosttest.Sidecar
	notes []string
	id    uint64
}

type recordError struct{ err error }

func (r *Rec) fatalf(format string, args ...any) {
	panic(recordError{fmt.Errorf(format, args...)})
}

// Record runs s against the built binary and returns its transcript.
func Record(s Session) (t *Transcript, err error) {
	tr := &Transcript{Name: s.Name, About: s.About, Transport: "jsonl", ReplayBinary: s.ReplayBinary, Entropy: Entropy}
	if s.Binary {
		tr.Transport, tr.ReplayBinary = "binary", false
	}
	r := &Rec{t: tr}
	defer func() {
		if r.sc != nil {
			r.sp.stop()
			r.sc.Kill()
		}
		if v := recover(); v != nil {
			re, ok := v.(recordError)
			if !ok {
				panic(v)
			}
			t, err = nil, fmt.Errorf("%s: %v", s.Name, re.err)
		}
	}()
	s.Run(r)
	if r.sc != nil {
		r.fatalf("the last process has no Exit")
	}
	if len(tr.Processes) == 0 {
		r.fatalf("no process")
	}
	return tr, nil
}

// Spawn starts a sidecar process; with no args, the transport's default.
func (r *Rec) Spawn(args ...string) {
	if r.sc != nil {
		r.fatalf("Spawn before Exit")
	}
	if args == nil && r.t.Transport == "jsonl" {
		args = []string{"--jsonl"}
	}
	sp, err := start(r.t, Process{Args: args})
	if err != nil {
		r.fatalf("spawn: %v", err)
	}
	r.sp, r.sc = sp, sp.sc
	r.t.Processes = append(r.t.Processes, Process{Args: args})
	r.cur = &r.t.Processes[len(r.t.Processes)-1]
	r.id = 0
}

// Note adds a comment line before the next request.
func (r *Rec) Note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// Req builds a request with the next id: protocol_version, id, method,
// then kv as key, value pairs.
func (r *Rec) Req(method string, kv ...any) Obj {
	r.id++
	return append(Obj{{"protocol_version", 2}, {"id", r.id}, {"method", method}}, pairs(kv)...)
}

func pairs(kv []any) Obj {
	if len(kv)%2 != 0 {
		panic("corpus: odd key/value list")
	}
	var o Obj
	for i := 0; i < len(kv); i += 2 {
		o = append(o, KV{kv[i].(string), kv[i+1]})
	}
	return o
}

// Call sends a request (an Obj, or raw JSON bytes) with an optional
// binary payload and records the response.
func (r *Rec) Call(req any, payload ...[]byte) hosttest.Response {
	if r.sc == nil {
		r.fatalf("Call before Spawn")
	}
	var send []byte
	switch v := req.(type) {
	case []byte:
		send = v
	case string:
		send = []byte(v)
	default:
		send = encode(v)
	}
	if !json.Valid(send) {
		r.fatalf("request %q is not JSON; send malformed input with Text", send)
	}
	var pl []byte
	if len(payload) > 0 {
		pl = payload[0]
	}
	binary := r.t.Transport == "binary"
	if len(pl) > 0 && !binary {
		r.fatalf("a JSONL request carries raw bytes as base64 fields, not a payload")
	}
	step := Step{Notes: r.notes, Send: send, SendPayload: pl}
	r.notes = nil
	var b bytes.Buffer
	writeRequest(&b, binary, step)
	if err := r.sc.WriteBytes(b.Bytes()); err != nil {
		r.fatalf("write %s: %v", send, err)
	}
	resp, err := r.sc.Recv()
	if err != nil {
		r.fatalf("request %s: no response: %v", send, err)
	}
	resp.Raw = Normalize(resp.Raw)
	step.Expect = resp.Raw
	if binary {
		step.ExpectPayload = resp.Payload
	}
	r.cur.Steps = append(r.cur.Steps, step)
	if v := resp.Version(); v != "2" {
		r.fatalf("request %s: response protocol_version %q", send, v)
	}
	return resp
}

// OK records a request that must succeed.
func (r *Rec) OK(req any, payload ...[]byte) hosttest.Response {
	resp := r.Call(req, payload...)
	if !resp.OK() {
		r.fatalf("request %s: want ok, got %s", r.last().Send, resp.Raw)
	}
	return resp
}

// Fail records a request that must fail with an error containing phrase.
func (r *Rec) Fail(req any, phrase string, payload ...[]byte) hosttest.Response {
	resp := r.Call(req, payload...)
	if resp.OK() || !strings.Contains(resp.Error(), phrase) {
		r.fatalf("request %s: want an error containing %q, got %s", r.last().Send, phrase, resp.Raw)
	}
	return resp
}

// Completed records a start/resume that must complete with value (JSON).
func (r *Rec) Completed(req any, value string, payload ...[]byte) hosttest.Response {
	resp := r.OK(req, payload...)
	st := resp.Step()
	if st["type"] != "completed" || hosttest.JSON(st["value"]) != value {
		r.fatalf("request %s: want completed with %s, got %s", r.last().Send, value, resp.Raw)
	}
	return resp
}

// Suspended records a start/resume that must suspend on capability.
func (r *Rec) Suspended(req any, capability string, payload ...[]byte) hosttest.Response {
	resp := r.OK(req, payload...)
	st := resp.Step()
	if st["type"] != "suspended" || st["capability"] != capability || resp.SnapshotID() != sha256Hex(resp.Payload) {
		r.fatalf("request %s: want suspended on %s, got %s", r.last().Send, capability, resp.Raw)
	}
	return resp
}

func (r *Rec) last() Step { return r.cur.Steps[len(r.cur.Steps)-1] }

// Text sends raw text (malformed input that ends the session): a line in
// JSONL, bytes as they are in binary.
func (r *Rec) Text(text string) {
	if r.sc == nil {
		r.fatalf("Text before Spawn")
	}
	if !utf8.ValidString(text) {
		// The transcript stores it as a JSON string, which cannot hold it.
		r.fatalf("Text %q is not valid UTF-8", text)
	}
	step := Step{Notes: r.notes, Send: []byte(text), Text: true}
	r.notes = nil
	var b bytes.Buffer
	writeRequest(&b, r.t.Transport == "binary", step)
	if err := r.sc.WriteBytes(b.Bytes()); err != nil {
		r.fatalf("write %q: %v", text, err)
	}
	r.cur.Steps = append(r.cur.Steps, step)
}

// Exit closes stdin and records how the process ends; code must match and
// stderr contain each of want.
func (r *Rec) Exit(code int, want ...string) {
	if r.sc == nil {
		r.fatalf("Exit before Spawn")
	}
	got, stderr := r.sc.Wait()
	r.sp.stop()
	if left := r.sc.Leftover(); len(left) > 0 {
		r.fatalf("unexpected output after the last response: %q", left)
	}
	r.sc = nil
	if got != code {
		r.fatalf("exit code %d, want %d (stderr %q)", got, code, stderr)
	}
	if !strings.HasPrefix(stderr, EntropyWarning) {
		r.fatalf("stderr does not start with the fixed-entropy warning: %q", stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			r.fatalf("stderr %q does not contain %q", stderr, w)
		}
	}
	r.cur.Exit = Exit{Code: got, Stderr: stderr}
}

// Key is the host's snapshot key in every transcript.
var Key = []byte("corpus-host-key-0123456789abcdef")

// sha256Hex is the lowercase hex SHA-256 of b (an id, a key digest).
var sha256Hex = snapshot.KeyDigest

// Token is the HMAC a host sends to prove it accepted snapshotID.
var Token = snapshot.Token

// Auth is the auth object of a cached resume.
func Auth(snapshotID string) Obj {
	return Obj{
		{"snapshot_key_base64", base64.StdEncoding.EncodeToString(Key)},
		{"snapshot_key_digest", sha256Hex(Key)},
		{"snapshot_token", Token(Key, snapshotID)},
	}
}

// Policy is the full policy of a raw resume.
func Policy(snapshotID string, capabilities []string, limits Obj) Obj {
	if capabilities == nil {
		capabilities = []string{}
	}
	if limits == nil {
		limits = Obj{}
	}
	return append(Obj{{"capabilities", capabilities}, {"limits", limits}, {"snapshot_id", snapshotID}}, Auth(snapshotID)...)
}

// B64 is standard base64 with padding.
func B64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// Generate records every session and writes dir/<name>.jsonl, removing
// transcripts no session produces any more.
func Generate(dir string, sessions []Session) error {
	if err := GenerateOnly(dir, sessions); err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, s := range sessions {
		keep[s.Name+".jsonl"] = true
	}
	old, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	for _, path := range old {
		if !keep[filepath.Base(path)] {
			if err := os.Remove(path); err != nil {
				return err
			}
		}
	}
	return nil
}

// GenerateOnly records sessions and writes their transcripts, leaving the
// other files in dir alone. Nothing is written unless every session records.
func GenerateOnly(dir string, sessions []Session) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	out := map[string][]byte{}
	for _, s := range sessions {
		t, err := Record(s)
		if err != nil {
			return err
		}
		out[s.Name+".jsonl"] = t.Encode()
	}
	for name, b := range out {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
