package protocol_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/frame"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// Seeds in testdata/fuzz/FuzzSession are the request streams of the
// transcripts in corpus/transcripts (go run ./corpus/cmd/gen-transcripts
// -seeds). They were recorded with this entropy, so their snapshot ids and
// HMAC tokens are valid here too and the seeds reach every resume path.
func fixedEntropy() (uint64, int64) { return 20260101, 1767225600000 }

// maxRequests bounds the work of one input.
const maxRequests = 64

// FuzzSession feeds a session arbitrary request streams, split into
// requests by the real frame readers of either transport.
func FuzzSession(f *testing.F) {
	f.Add(false, []byte(`{"protocol_version":2,"id":1,"method":"compile","source":"fetch_data(1)"}`+"\n"))
	f.Add(true, []byte("\x02\x00\x00\x00\x00\x00\x00\x00{}"))
	f.Fuzz(func(t *testing.T, binary bool, stream []byte) {
		opts := protocol.Options{Transport: protocol.JSONL, Entropy: fixedEntropy}
		next := lineRequests(stream)
		if binary {
			opts.Transport = protocol.Binary
			next = frameRequests(stream)
		}
		s := protocol.NewSession(opts)
		defer s.Close()
		hay := haystack(stream)
		known := map[string][]byte{} // snapshots seen whole, by id
		for i := 0; i < maxRequests; i++ {
			header, payload, ok := next()
			if !ok {
				return
			}
			resp, err := s.Handle(header, payload)
			if err != nil {
				fatal, ok := err.(*protocol.FatalError)
				if !ok {
					t.Fatalf("Handle returned %T %q; only *protocol.FatalError may end a session", err, err)
				}
				prefix := "invalid request: "
				if binary {
					prefix = "invalid request header: "
				}
				if !strings.HasPrefix(fatal.Msg, prefix) {
					t.Fatalf("fatal error %q does not start with %q", fatal.Msg, prefix)
				}
				checkClean(t, fatal.Msg, hay)
				return
			}
			checkResponse(t, binary, header, resp, hay, known)
		}
	})
}

func lineRequests(stream []byte) func() ([]byte, []byte, bool) {
	r := frame.NewLineReader(bytes.NewReader(stream))
	return func() ([]byte, []byte, bool) {
		line, err := r.Next()
		return line, nil, err == nil
	}
}

func frameRequests(stream []byte) func() ([]byte, []byte, bool) {
	r := frame.NewBinaryReader(bytes.NewReader(stream))
	return func() ([]byte, []byte, bool) {
		f, err := r.Next()
		return f.Header, f.Payload, err == nil
	}
}

// response is the shape every response header must have.
type response struct {
	Version json.RawMessage `json:"protocol_version"`
	ID      json.RawMessage `json:"id"`
	OK      *bool           `json:"ok"`
	Result  *struct {
		Kind           string          `json:"kind"`
		ProgramID      string          `json:"program_id"`
		ProgramBase64  *string         `json:"program_base64"`
		SnapshotID     string          `json:"snapshot_id"`
		SnapshotBaseID *string         `json:"snapshot_base_id"`
		PolicyID       string          `json:"policy_id"`
		Step           json.RawMessage `json:"step"`
		SnapshotBase64 *string         `json:"snapshot_base64"`
		StageID        *string         `json:"stage_id"`
		Offset         *uint64         `json:"offset"`
		TotalBytes     *uint64         `json:"total_bytes"`
		TargetID       *uint64         `json:"target_id"`
		WasRunning     *bool           `json:"was_running"`
		SidecarVersion *string         `json:"sidecar_version"`
		Features       []string        `json:"features"`
		BudgetBytes    *int64          `json:"memory_budget_bytes"`
		UsedBytes      *int64          `json:"memory_used_bytes"`
		Parked         *int64          `json:"parked_executions"`
	} `json:"result"`
	Error     *string `json:"error"`
	ErrorCode *string `json:"error_code"`
	Profile   *struct {
		ExecutionNS       *uint64 `json:"execution_ns"`
		ResponsePrepareNS *uint64 `json:"response_prepare_ns"`
	} `json:"profile"`
}

type step struct {
	Type           string          `json:"type"`
	Value          json.RawMessage `json:"value"`
	Capability     *string         `json:"capability"`
	Args           []any           `json:"args"`
	SnapshotBase64 *string         `json:"snapshot_base64"`
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

func checkResponse(t *testing.T, binary bool, req []byte, resp protocol.Response, hay []string, known map[string][]byte) {
	t.Helper()
	h := resp.Header
	if !utf8.Valid(h) || !json.Valid(h) {
		t.Fatalf("response header is not valid UTF-8 JSON: %q", h)
	}
	var r response
	if err := json.Unmarshal(h, &r); err != nil {
		t.Fatalf("response header %s: %v", h, err)
	}
	if string(r.Version) != "2" {
		t.Fatalf("response protocol_version %s in %s", r.Version, h)
	}
	// The request's id is echoed verbatim: it was a plain integer or the
	// request would have been fatal.
	// Keys are exact (encoding/json's struct matching is not).
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(req, &fields); err != nil || !bytes.Equal(fields["id"], r.ID) {
		t.Fatalf("response id %s for request id %s", r.ID, fields["id"])
	}
	if r.OK == nil {
		t.Fatalf("response without ok: %s", h)
	}
	var snap []byte
	if !*r.OK {
		if r.Error == nil || r.Result != nil || r.Profile != nil || len(resp.Payload) > 0 {
			t.Fatalf("failed response must have an error and nothing else: %s (+%d bytes)", h, len(resp.Payload))
		}
		checkClean(t, *r.Error, hay)
		if r.ErrorCode == nil || !slices.Contains(protocol.ErrorCodes(), *r.ErrorCode) {
			t.Fatalf("failed response without a documented error_code: %s", h)
		}
		return
	}
	if r.ErrorCode != nil {
		t.Fatalf("successful response with an error_code: %s", h)
	}
	if r.Error != nil || r.Result == nil {
		t.Fatalf("successful response must have a result and no error: %s", h)
	}
	res := r.Result
	switch res.Kind {
	case "program":
		b := resp.Payload
		if !binary {
			if res.ProgramBase64 == nil || len(b) > 0 {
				t.Fatalf("JSONL compile result without program_base64: %s", h)
			}
			b = mustBase64(t, *res.ProgramBase64)
		} else if res.ProgramBase64 != nil {
			t.Fatalf("binary compile result with program_base64: %s", h)
		}
		if len(b) == 0 || res.ProgramID != sha256Hex(b) {
			t.Fatalf("program_id %s is not the SHA-256 of the %d program bytes", res.ProgramID, len(b))
		}
		if r.Profile != nil {
			t.Fatalf("compile result with a profile: %s", h)
		}
		return
	case "snapshot":
		b := resp.Payload
		if !binary {
			if res.SnapshotBase64 == nil || len(b) > 0 {
				t.Fatalf("JSONL snapshot result without snapshot_base64: %s", h)
			}
			b = mustBase64(t, *res.SnapshotBase64)
		} else if res.SnapshotBase64 != nil {
			t.Fatalf("binary snapshot result with snapshot_base64: %s", h)
		}
		if res.Offset == nil || res.TotalBytes == nil || *res.Offset > *res.TotalBytes || uint64(len(b)) > *res.TotalBytes-*res.Offset {
			t.Fatalf("snapshot result with inconsistent offsets (%d bytes): %s", len(b), h)
		}
		if len(h)+len(resp.Payload) >= 1<<20 {
			t.Fatalf("snapshot result of %d bytes", len(h)+len(resp.Payload))
		}
		if whole, ok := known[res.SnapshotID]; ok && !bytes.Equal(whole[*res.Offset:*res.Offset+uint64(len(b))], b) {
			t.Fatalf("fetched bytes differ from the snapshot: %s", h)
		}
		return
	case "staged":
		if res.StageID == nil || res.TotalBytes == nil || len(resp.Payload) > 0 {
			t.Fatalf("staged result without stage_id and total_bytes: %s", h)
		}
		return
	case "pong":
		if res.SidecarVersion == nil || res.Features == nil || len(resp.Payload) > 0 {
			t.Fatalf("pong without its fields: %s", h)
		}
		return
	case "stats":
		if res.BudgetBytes == nil || res.UsedBytes == nil || res.Parked == nil || len(resp.Payload) > 0 ||
			*res.UsedBytes < 0 || *res.UsedBytes > *res.BudgetBytes || *res.Parked < 0 {
			t.Fatalf("stats result: %s", h)
		}
		return
	case "cancelled":
		// In process nothing runs while a cancel is read: Handle serves
		// each request before reading the next.
		if res.TargetID == nil || res.WasRunning == nil || *res.WasRunning || len(resp.Payload) > 0 {
			t.Fatalf("cancel result: %s", h)
		}
		return
	case "step":
	default:
		t.Fatalf("result kind %q: %s", res.Kind, h)
	}
	var st step
	if err := json.Unmarshal(res.Step, &st); err != nil {
		t.Fatalf("step %s: %v", res.Step, err)
	}
	switch st.Type {
	case "completed":
		if st.Value == nil || res.SnapshotID != "" || res.PolicyID != "" || st.SnapshotBase64 != nil || len(resp.Payload) > 0 {
			t.Fatalf("completed step must carry a value and no snapshot: %s", h)
		}
	case "suspended":
		snap = resp.Payload
		if !binary {
			if st.SnapshotBase64 != nil {
				if len(snap) > 0 {
					t.Fatalf("JSONL suspension with a payload: %s", h)
				}
				snap = mustBase64(t, *st.SnapshotBase64)
			}
		} else if st.SnapshotBase64 != nil {
			t.Fatalf("binary suspension with snapshot_base64: %s", h)
		}
		if st.Capability == nil || st.Args == nil || !hex64.MatchString(res.SnapshotID) || !hex64.MatchString(res.PolicyID) {
			t.Fatalf("suspended step must name the capability, args, snapshot id and policy id: %s", h)
		}
		noBytes := (!binary && st.SnapshotBase64 == nil) || (binary && len(snap) == 0)
		switch {
		case res.SnapshotBaseID != nil:
			// A delta: base + delta hash to the id, when the base was seen.
			if base, ok := known[*res.SnapshotBaseID]; ok {
				snap = append(append([]byte(nil), base...), snap...)
				if res.SnapshotID != sha256Hex(snap) {
					t.Fatalf("base + delta do not hash to snapshot_id: %s", h)
				}
				known[res.SnapshotID] = snap
			}
		case noBytes:
			// snapshot_delivery "none".
		default:
			if res.SnapshotID != sha256Hex(snap) {
				t.Fatalf("snapshot id is not the SHA-256 of the %d snapshot bytes: %s", len(snap), h)
			}
			known[res.SnapshotID] = snap
		}
	default:
		t.Fatalf("step type %q: %s", st.Type, h)
	}
	if p := r.Profile; p != nil && (p.ExecutionNS == nil || p.ResponsePrepareNS == nil) {
		t.Fatalf("profile without both timings: %s", h)
	}
}

func mustBase64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("response carries invalid base64 %q", s)
	}
	return b
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Text that would reveal the host: Go type names and runtime output, file
// names and paths. The contract forbids all of it in any error.
var (
	leaks = []string{
		"goroutine", "github.com/", "goja.", "runtime.", "runtime error", "reflect.", "main.", "interface {",
		"interface{}", "map[string]", "[]uint8", "[]byte", "func(", "struct {", "*engine.", "engine.", "*protocol.",
		"protocol.", "snapshot.", "policy.", "value.Value", "json.", "Go value", "Go struct", "cbor.", "strconv.",
		"panic", "[recovered]", "nil pointer", "index out of range", "slice bounds", "<nil>", "%!", "unexpected EOF",
	}
	leakPatterns = []*regexp.Regexp{
		regexp.MustCompile(`\.go\b`),
		regexp.MustCompile(`\b0x[0-9a-f]{6,}\b`),
		regexp.MustCompile(`(^|[^A-Za-z0-9_.])/(usr|home|root|tmp|work|var|opt|etc|proc|go)/`),
	}
)

// checkClean fails if msg reveals the host. Requests may carry any text
// (sources, method names, ids are echoed back), so a leak counts only when
// it is not in the request stream itself.
func checkClean(t *testing.T, msg string, hay []string) {
	t.Helper()
	for _, l := range leaks {
		if strings.Contains(msg, l) && !inHaystack(hay, l) {
			t.Fatalf("error text reveals the host (%q): %q", l, msg)
		}
	}
	for _, re := range leakPatterns {
		if m := re.FindString(msg); m != "" && !inHaystack(hay, m) {
			t.Fatalf("error text reveals the host (%q): %q", m, msg)
		}
	}
	for _, dir := range hostDirs {
		if dir != "" && strings.Contains(msg, dir) && !inHaystack(hay, dir) {
			t.Fatalf("error text reveals a host directory (%q): %q", dir, msg)
		}
	}
}

var hostDirs = func() []string {
	wd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	return []string{wd, runtime.GOROOT(), home, os.TempDir()}
}()

func inHaystack(hay []string, s string) bool {
	for _, h := range hay {
		if strings.Contains(h, s) {
			return true
		}
	}
	return false
}

// haystack is the text a request stream can make the sidecar echo: the
// raw bytes, every JSON string in it decoded, and those strings decoded
// from base64 (program sources and snapshot contents).
func haystack(stream []byte) []string {
	hay := []string{string(stream)}
	d := json.NewDecoder(bytes.NewReader(stream))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			// Skip past the bad byte and keep tokenizing what follows.
			off := int(d.InputOffset()) + 1
			if off >= len(stream) {
				break
			}
			stream = stream[off:]
			d = json.NewDecoder(bytes.NewReader(stream))
			continue
		}
		if s, ok := tok.(string); ok {
			hay = append(hay, s)
			if b, err := base64.StdEncoding.DecodeString(s); err == nil {
				hay = append(hay, string(b))
			}
		}
	}
	return hay
}
