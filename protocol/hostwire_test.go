package protocol

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/frame"
	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// The host package and the sidecar read the wire from one contract, each
// in its own code: the host encodes its typed requests, the protocol
// decodes typed requests of its own. This test sends every kind of request
// the host package makes, through its real client, to a sidecar that
// records what its decoder made of each (wireChild below), and checks that
// the decoded request says what the host was asked to send.

// wireChildEnv names the file a spawned test binary records decoded
// requests in; set, the binary serves as a sidecar (main_test.go).
const wireChildEnv = "MUSTARD_PROTOCOL_WIRE_CHILD"

// wireSealKey is the seal key the test's requests use; the child reports a
// request's seal as this key or another.
var wireSealKey = []byte("seal-key:0123456789abcdef0123456789")

// seenRequest is what the decoder made of a request, in plain values.
type seenRequest struct {
	ID     uint64
	Method string
	Err    string `json:",omitempty"`

	Language string `json:",omitempty"` // compile
	Source   string `json:",omitempty"`

	Delivery string      `json:",omitempty"` // start and resume
	Profile  bool        `json:",omitempty"`
	Seal     string      `json:",omitempty"` // "test key", "another key"
	Policy   *seenPolicy `json:",omitempty"` // start's options, a resume's policy given whole

	ProgramID  string            `json:",omitempty"` // start
	ProgramSHA string            `json:",omitempty"` // of the bytes sent or staged
	Inputs     map[string]string `json:",omitempty"` // name → StructuredValue JSON
	Entry      string            `json:",omitempty"`

	SnapshotID   string       `json:",omitempty"` // resume, snapshot
	ByID         bool         `json:",omitempty"`
	SnapshotSHA  string       `json:",omitempty"`
	Staged       bool         `json:",omitempty"`
	PolicyID     string       `json:",omitempty"`
	CachedPolicy bool         `json:",omitempty"`
	Auth         *seenAuth    `json:",omitempty"`
	Payload      *seenPayload `json:",omitempty"`
	Answers      []seenAnswer `json:",omitempty"`
	StageID      string       `json:",omitempty"` // stage
	Offset       uint64       `json:",omitempty"` // stage, snapshot
	Bytes        int          `json:",omitempty"`
	MaxBytes     uint64       `json:",omitempty"` // snapshot
	Target       uint64       `json:",omitempty"` // cancel
}

type seenPolicy struct {
	Capabilities []string
	Limits       policy.Limits
	HostCalls    string
	Console      string
}

type seenAuth struct{ SnapshotID, KeyBase64, KeyDigest, Token string }

type seenPayload struct {
	Cancelled bool       `json:",omitempty"`
	Value     string     `json:",omitempty"`
	Error     *seenError `json:",omitempty"`
}

type seenError struct {
	Name, Message string
	Code          *string `json:",omitempty"`
	Details       string  `json:",omitempty"`
}

type seenAnswer struct {
	CallID  uint64
	Payload seenPayload
}

// shortJSON is v's JSON, or its digest when it is long.
func shortJSON(v value.Value) string {
	b := v.AppendJSON(nil)
	if len(b) <= 256 {
		return string(b)
	}
	return "sha256:" + wire.SHA256Hex(b)
}

func seenSeal(s *snapshot.Sealer) string {
	if s == nil {
		return ""
	}
	if mine, err := snapshot.NewSealer(wireSealKey); err == nil && s.Same(mine) {
		return "test key"
	}
	return "another key"
}

func seenPol(p policy.Policy) *seenPolicy {
	return &seenPolicy{Capabilities: p.Capabilities, Limits: p.Limits, HostCalls: p.HostCalls.String(), Console: p.Console.String()}
}

func seenPay(p resumePayload) seenPayload {
	if p.cancelled {
		return seenPayload{Cancelled: true}
	}
	if e := p.outcome.Error; e != nil {
		se := &seenError{Name: e.Name, Message: e.Message, Code: e.Code}
		if e.Details != nil {
			se.Details = shortJSON(*e.Details)
		}
		return seenPayload{Error: se}
	}
	o, err := p.outcome.Decoded()
	if err != nil {
		return seenPayload{Value: "undecodable: " + err.Error()}
	}
	return seenPayload{Value: shortJSON(o.Value)}
}

var deliveryNames = map[delivery]string{deliverFull: "", deliverDelta: "delta", deliverNone: "none"}

// observe decodes a request with s's decoder, as the session serving it
// will, and serves a stage so that later requests find it.
func observe(s *Session, header, payload []byte) seenRequest {
	f, id, method, err := envelope(header, s.opts.Transport == Binary)
	v := seenRequest{ID: id, Method: method}
	if err != nil {
		v.Err = err.Error()
		return v
	}
	d := &s.decode
	switch method {
	case wire.MethodCompile:
		var r compileRequest
		r, err = d.compile(f, payload)
		v.Language, v.Source = string(r.lang), r.source
	case wire.MethodStart:
		var r startRequest
		r, err = d.start(f, payload)
		v.Delivery, v.Profile, v.Seal = deliveryNames[r.delivery], r.profile, seenSeal(r.seal)
		v.Policy, v.Entry, v.ProgramID = seenPol(r.pol), r.entry.String(), r.programID
		if r.hasProgram {
			v.ProgramSHA = wire.SHA256Hex(r.program)
		}
		v.Inputs = map[string]string{}
		for _, m := range r.inputs {
			v.Inputs[m.Key] = shortJSON(m.Value)
		}
	case wire.MethodResume:
		var r resumeRequest
		d.resume(&r, f, payload)
		err = errors.Join(r.err, r.afterSnapshot, r.afterPolicy)
		v.Delivery, v.Profile, v.Seal = deliveryNames[r.delivery], r.profile, seenSeal(r.seal)
		v.SnapshotID, v.ByID, v.Staged = r.snapID, r.byID, r.staged
		v.PolicyID, v.CachedPolicy = r.polID, r.cached
		if r.raw != nil {
			v.SnapshotSHA = wire.SHA256Hex(r.raw)
		}
		if !r.cached {
			v.Policy = seenPol(r.pol)
		}
		a := r.auth
		v.Auth = &seenAuth{SnapshotID: a.snapshotID, KeyBase64: a.keyB64, KeyDigest: a.digest, Token: a.token}
		if r.hasPayload {
			p := seenPay(r.answer)
			v.Payload = &p
		}
		for _, a := range r.answers {
			v.Answers = append(v.Answers, seenAnswer{CallID: a.CallID, Payload: seenPay(resumePayload{cancelled: a.Payload.Cancelled, outcome: a.Payload.Outcome})})
		}
	case wire.MethodStage:
		var r stageRequest
		if r, err = d.stage(f, payload); err == nil {
			_, err = s.stage(r)
		}
		v.StageID, v.Offset, v.Bytes = r.stageID, r.offset, len(r.chunk)
	case wire.MethodSnapshot:
		var r fetchRequest
		r, err = d.fetch(f, payload)
		v.SnapshotID, v.Offset, v.MaxBytes = r.snapID, r.offset, r.maxBytes
	case wire.MethodCancel:
		v.Target, err = d.cancel(f, payload)
	case wire.MethodPing:
		err = d.ping(payload)
	}
	if err != nil {
		v.Err = err.Error()
	}
	return v
}

// runWireChild serves stdin/stdout as the sidecar does (a request is read,
// and a cancel takes effect, while an earlier one is served), and records
// in path what a second session's decoder made of each request.
func runWireChild(path string, args []string) int {
	opts := Options{Transport: Binary}
	for _, a := range args {
		if a == "--jsonl" {
			opts.Transport = JSONL
		}
	}
	out, err := os.Create(path)
	if err != nil {
		return 2
	}
	defer out.Close()
	real, shadow := NewSession(opts), NewSession(opts)
	defer real.Close()
	defer shadow.Close()
	enc := json.NewEncoder(out)

	reqs := make(chan *Request, 16)
	go func() {
		defer close(reqs)
		br, lr := frame.NewBinaryReader(os.Stdin), frame.NewLineReader(os.Stdin)
		for {
			var header, payload []byte
			if opts.Transport == Binary {
				fr, err := br.Next()
				if err != nil {
					return
				}
				// The reader reuses its buffer; a request must stay
				// unchanged until it is served.
				header, payload = bytes.Clone(fr.Header), bytes.Clone(fr.Payload)
			} else {
				line, err := lr.Next()
				if err != nil {
					return
				}
				header = bytes.Clone(line)
			}
			if enc.Encode(observe(shadow, header, payload)) != nil {
				return
			}
			reqs <- real.Read(header, payload)
		}
	}()
	bw, lw := frame.NewBinaryWriter(os.Stdout), frame.NewLineWriter(os.Stdout)
	for r := range reqs {
		resp, err := real.Serve(r)
		if err != nil {
			return 1
		}
		if opts.Transport == Binary {
			err = bw.Write(resp.Header, resp.Payload)
		} else {
			err = lw.Write(resp.Header)
		}
		if err != nil {
			return 1
		}
	}
	return 0
}

// readSeen reads what the child recorded.
func readSeen(t *testing.T, path string) []seenRequest {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []seenRequest
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v seenRequest
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v))
		out = append(out, v)
	}
	require.NoError(t, sc.Err())
	return out
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func TestHostRequestsDecodeAsSent(t *testing.T) {
	for _, jsonl := range []bool{false, true} {
		name := "binary"
		if jsonl {
			name = "jsonl"
		}
		t.Run(name, func(t *testing.T) { testHostRequestsDecodeAsSent(t, jsonl) })
	}
}

func testHostRequestsDecodeAsSent(t *testing.T, jsonl bool) {
	exe, err := os.Executable()
	require.NoError(t, err)
	capture := filepath.Join(t.TempDir(), "seen.jsonl")
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), wireChildEnv+"="+capture)
	c, err := host.NewClient(host.Config{Cmd: cmd, JSONL: jsonl})
	require.NoError(t, err)
	defer c.Close()
	ctx, stop := context.WithTimeout(context.Background(), 2*time.Minute) // a hang, not a speed bound
	defer stop()

	keyBytes := []byte("snapshot-key:0123456789abcdef0123")
	key, err := host.NewKey(keyBytes)
	require.NoError(t, err)
	seal, err := host.NewSealKey(wireSealKey)
	require.NoError(t, err)
	auth := func(id string) *seenAuth {
		return &seenAuth{SnapshotID: id, KeyBase64: base64.StdEncoding.EncodeToString(keyBytes), KeyDigest: wire.KeyDigest(keyBytes), Token: wire.Token(keyBytes, id)}
	}
	defaults := policy.DefaultLimits()
	caps := []string{"tools.fetch"}
	var want []seenRequest

	// compile, JavaScript and TypeScript.
	src := `const r = tools.fetch({ q: n }); r.x + 1;`
	prog, err := c.Compile(ctx, src)
	require.NoError(t, err)
	want = append(want, seenRequest{Method: wire.MethodCompile, Language: "javascript", Source: src})
	tsSrc := `const r: { x: number } = tools.fetch({ q: n }); r.x + 1;`
	_, err = c.CompileTypeScript(ctx, tsSrc)
	require.NoError(t, err)
	want = append(want, seenRequest{Method: wire.MethodCompile, Language: "typescript", Source: tsSrc})

	// start with every option (the program by id: the sidecar compiled
	// it), then a cached resume.
	limits := host.Limits{InstructionBudget: host.Limit(5_000_000), HeapLimitBytes: host.Limit(48 << 20),
		AllocationBudget: host.Limit(9_000_000), CallDepthLimit: host.Limit(300), MaxOutstandingHostCalls: host.Limit(7),
		MaxLogBytes: host.Limit(4096), WallTime: 1500*time.Millisecond + 1}
	wantLimits := policy.Limits{InstructionBudget: 5_000_000, HeapLimitBytes: 48 << 20, AllocationBudget: 9_000_000,
		CallDepthLimit: 300, MaxOutstandingHostCalls: 7, MaxLogBytes: 4096, WallTimeMS: 1501}
	st, err := c.Start(ctx, host.StartRequest{Program: prog, Inputs: map[string]value.Value{"n": value.Number(5)},
		Capabilities: caps, Limits: limits, Delivery: host.DeliverDelta, Profile: true, SealKey: seal,
		Console: host.ConsoleCollect})
	require.NoError(t, err)
	require.NotNil(t, st.Suspended)
	want = append(want, seenRequest{Method: wire.MethodStart, Delivery: "delta", Profile: true, Seal: "test key",
		Policy:    &seenPolicy{Capabilities: caps, Limits: wantLimits, HostCalls: "one", Console: "collect"},
		ProgramID: prog.ID, Inputs: map[string]string{"n": shortJSON(value.Number(5))}, Entry: "script"})

	s := st.Suspended
	answer := value.Object(value.Member{Key: "x", Value: value.Number(41)})
	st, err = c.Resume(ctx, host.ResumeRequest{SnapshotID: s.SnapshotID, PolicyID: s.PolicyID, Key: key, SealKey: seal,
		Payload: host.Return(answer), Delivery: host.DeliverNone})
	require.NoError(t, err)
	require.True(t, value.Equal(value.Number(42), st.Value), "%v", st.Value)
	want = append(want, seenRequest{Method: wire.MethodResume, Delivery: "none", Seal: "test key",
		SnapshotID: s.SnapshotID, ByID: true, PolicyID: s.PolicyID, CachedPolicy: true, Auth: auth(s.SnapshotID),
		Payload: &seenPayload{Value: shortJSON(answer)}})

	// start by program id, then answers that throw and that cancel.
	basic := func(n float64) *host.Suspension {
		st, err := c.Start(ctx, host.StartRequest{Program: prog, Capabilities: caps, Inputs: map[string]value.Value{"n": value.Number(n)}})
		require.NoError(t, err)
		require.NotNil(t, st.Suspended)
		want = append(want, seenRequest{Method: wire.MethodStart,
			Policy:    &seenPolicy{Capabilities: caps, Limits: defaults, HostCalls: "one", Console: "off"},
			ProgramID: prog.ID, Inputs: map[string]string{"n": shortJSON(value.Number(n))}, Entry: "script"})
		return st.Suspended
	}
	s = basic(1)
	details := value.Object(value.Member{Key: "retry", Value: value.Bool(false)})
	code := "E_UPSTREAM"
	_, err = c.Resume(ctx, host.ResumeRequest{SnapshotID: s.SnapshotID, PolicyID: s.PolicyID, Key: key,
		Payload: host.Throw(host.CallError{Name: "TypeError", Message: "no such page", Code: code, Details: &details})})
	require.Error(t, err) // the guest does not catch it
	want = append(want, seenRequest{Method: wire.MethodResume, SnapshotID: s.SnapshotID, ByID: true, PolicyID: s.PolicyID,
		CachedPolicy: true, Auth: auth(s.SnapshotID),
		Payload: &seenPayload{Error: &seenError{Name: "TypeError", Message: "no such page", Code: &code, Details: shortJSON(details)}}})

	s = basic(2)
	_, err = c.Resume(ctx, host.ResumeRequest{SnapshotID: s.SnapshotID, PolicyID: s.PolicyID, Key: key, Payload: host.Cancel()})
	require.Error(t, err)
	want = append(want, seenRequest{Method: wire.MethodResume, SnapshotID: s.SnapshotID, ByID: true, PolicyID: s.PolicyID,
		CachedPolicy: true, Auth: auth(s.SnapshotID), Payload: &seenPayload{Cancelled: true}})

	// A raw resume: the snapshot's bytes and the whole policy.
	s = basic(3)
	require.NotEmpty(t, s.Snapshot)
	pol := &host.Policy{Capabilities: caps, HostCalls: host.HostCallsOne}
	st, err = c.Resume(ctx, host.ResumeRequest{Snapshot: s.Snapshot, Policy: pol, Key: key, Payload: host.Return(answer)})
	require.NoError(t, err)
	require.True(t, value.Equal(value.Number(42), st.Value))
	rawPolicy := policy.Policy{Capabilities: caps, Limits: defaults}
	want = append(want, seenRequest{Method: wire.MethodResume, SnapshotID: s.SnapshotID, SnapshotSHA: sha(s.Snapshot),
		PolicyID: rawPolicy.ID(), Policy: seenPol(rawPolicy), Auth: &seenAuth{SnapshotID: s.SnapshotID,
			KeyBase64: auth("").KeyBase64, KeyDigest: auth("").KeyDigest, Token: wire.Token(keyBytes, s.SnapshotID)},
		Payload: &seenPayload{Value: shortJSON(answer)}})

	// An answer over the request limit: staged in chunks, then named.
	s = basic(4)
	big := value.Object(value.Member{Key: "x", Value: value.Number(1)},
		value.Member{Key: "page", Value: value.String(strings.Repeat("0123456789abcdef", 80_000))})
	bigJSON, err := json.Marshal(host.Return(big))
	require.NoError(t, err)
	st, err = c.Resume(ctx, host.ResumeRequest{SnapshotID: s.SnapshotID, PolicyID: s.PolicyID, Key: key, Payload: host.Return(big)})
	require.NoError(t, err)
	require.True(t, value.Equal(value.Number(2), st.Value))
	chunk := wire.MaxFetchBytes
	if jsonl {
		chunk = wire.MaxJSONLChunk
	}
	for off := 0; off < len(bigJSON); off += chunk {
		want = append(want, seenRequest{Method: wire.MethodStage, Offset: uint64(off), Bytes: min(chunk, len(bigJSON)-off)})
	}
	want = append(want, seenRequest{Method: wire.MethodResume, SnapshotID: s.SnapshotID, ByID: true, PolicyID: s.PolicyID,
		CachedPolicy: true, Auth: auth(s.SnapshotID), Payload: &seenPayload{Value: shortJSON(big)}})

	// Batch mode, called as a function, its answers by call id; the
	// snapshot fetched rather than delivered.
	batchSrc := `async ({ n }) => { const [a, b] = await Promise.all([tools.fetch(n), tools.fetch(n + 1)]); return a + b; }`
	bprog, err := c.Compile(ctx, batchSrc)
	require.NoError(t, err)
	want = append(want, seenRequest{Method: wire.MethodCompile, Language: "javascript", Source: batchSrc})
	st, err = c.Start(ctx, host.StartRequest{Program: bprog, Capabilities: caps, HostCalls: host.HostCallsBatch,
		Entry: host.EntryCall, Delivery: host.DeliverNone, Inputs: map[string]value.Value{"n": value.Number(10)}})
	require.NoError(t, err)
	require.NotNil(t, st.Suspended)
	require.Len(t, st.Suspended.Calls, 2)
	want = append(want, seenRequest{Method: wire.MethodStart, Delivery: "none",
		Policy:    &seenPolicy{Capabilities: caps, Limits: defaults, HostCalls: "batch", Console: "off"},
		ProgramID: bprog.ID, Inputs: map[string]string{"n": shortJSON(value.Number(10))}, Entry: "call"})
	s = st.Suspended
	snap, err := c.FetchSnapshot(ctx, s.SnapshotID)
	require.NoError(t, err)
	require.Equal(t, s.SnapshotID, sha(snap))
	want = append(want, seenRequest{Method: wire.MethodSnapshot, SnapshotID: s.SnapshotID, MaxBytes: uint64(chunk)})
	var answers []host.Answer
	var wantAnswers []seenAnswer
	for i, call := range s.Calls {
		answers = append(answers, host.Answer{ID: call.ID, Payload: host.Return(value.Number(float64(i + 1)))})
		wantAnswers = append(wantAnswers, seenAnswer{CallID: call.ID, Payload: seenPayload{Value: shortJSON(value.Number(float64(i + 1)))}})
	}
	st, err = c.Resume(ctx, host.ResumeRequest{SnapshotID: s.SnapshotID, PolicyID: s.PolicyID, Key: key, Answers: answers})
	require.NoError(t, err)
	require.True(t, value.Equal(value.Number(3), st.Value), "%v", st.Value)
	want = append(want, seenRequest{Method: wire.MethodResume, SnapshotID: s.SnapshotID, ByID: true, PolicyID: s.PolicyID,
		CachedPolicy: true, Auth: auth(s.SnapshotID), Answers: wantAnswers})

	// ping, and a cancel of a start that spins: the context is cancelled
	// once the sidecar has read the start.
	_, err = c.Ping(ctx)
	require.NoError(t, err)
	want = append(want, seenRequest{Method: wire.MethodPing})
	// The program compiled elsewhere: this client sends its bytes.
	otherCmd := exec.Command(exe)
	otherCmd.Env = append(os.Environ(), wireChildEnv+"="+filepath.Join(t.TempDir(), "other.jsonl"))
	other, err := host.NewClient(host.Config{Cmd: otherCmd})
	require.NoError(t, err)
	spin, err := other.Compile(ctx, `for (;;) {}`)
	require.NoError(t, err)
	require.NoError(t, other.Close())
	spinCtx, cancel := context.WithCancel(ctx)
	go func() {
		for spinCtx.Err() == nil {
			if seen := readSeenQuiet(capture); len(seen) > 0 && seen[len(seen)-1].ProgramID == spin.ID {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond) // polling the child's record, not waiting for an outcome
		}
	}()
	// A budget it cannot use up: the default one ends the spin within
	// milliseconds on a quick machine, before the poller has seen it.
	const spinBudget = 1 << 62
	_, err = c.Start(spinCtx, host.StartRequest{Program: spin, Limits: host.Limits{InstructionBudget: host.Limit(spinBudget)}})
	cancel()
	require.ErrorIs(t, err, context.Canceled)
	spinLimits := defaults
	spinLimits.InstructionBudget = spinBudget
	want = append(want, seenRequest{Method: wire.MethodStart, ProgramID: spin.ID, ProgramSHA: sha(spin.Bytes), Entry: "script",
		Policy: &seenPolicy{Capabilities: []string{}, Limits: spinLimits, HostCalls: "one", Console: "off"}})
	want = append(want, seenRequest{Method: wire.MethodCancel})

	require.NoError(t, c.Close())
	got := readSeen(t, capture)
	require.Len(t, got, len(want))
	for i := range got {
		w := want[i]
		w.ID = got[i].ID
		if w.Method == wire.MethodStage {
			require.NotEmpty(t, got[i].StageID, "request %d", i)
			w.StageID = got[i].StageID
		}
		if w.Method == wire.MethodCancel {
			w.Target = got[i-1].ID
		}
		require.Equal(t, w, got[i], "request %d (%s)", i, w.Method)
	}
}

// readSeenQuiet reads the child's record so far, ignoring a line it is
// still writing.
func readSeenQuiet(path string) []seenRequest {
	b, _ := os.ReadFile(path)
	var out []seenRequest
	for _, line := range strings.Split(string(b), "\n") {
		var v seenRequest
		if json.Unmarshal([]byte(line), &v) == nil {
			out = append(out, v)
		}
	}
	return out
}
