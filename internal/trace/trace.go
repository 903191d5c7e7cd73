// Package trace records a session's traffic as a corpus transcript
// (corpus/README.md): every request and its response, in the order they
// were answered, with raw bytes as base64 and snapshot keys and tokens
// redacted (redact.go), so that the corpus replayer can run it again
// against a fresh sidecar and compare every response byte for byte.
package trace

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Writer writes one session's transcript. It is used by the goroutine that
// serves requests; only Entropy may be called from the engine as well, and
// it is, on that same goroutine.
type Writer struct {
	mu      sync.Mutex
	f       *os.File
	w       *bufio.Writer
	pinned  []byte
	keys    *keyBook
	entropy []string // entropy lines for the request being served
	err     error    // the first write error; the transcript stops there
}

// Header is what a transcript's first lines say about the session.
type Header struct {
	Transport string   // "binary" or "jsonl"
	Args      []string // the process's arguments, as a replay passes them
	// Entropy is the fixed "<seed>:<unix_millis>" every start read, or ""
	// when each start read its own (then recorded per start).
	Entropy string
}

// Create starts a transcript at path (created, or truncated, mode 0600:
// it holds the host's data).
func Create(path string, h Header, pinned []byte) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	w := &Writer{f: f, w: bufio.NewWriterSize(f, 64<<10), pinned: pinned, keys: newKeyBook(pinned)}
	name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	w.line(object("transcript", name, "about", "recorded by mustard-sidecar --trace", "transport", h.Transport, "entropy", h.Entropy))
	args := h.Args
	if args == nil {
		args = []string{}
	}
	w.line(`{"spawn":{"args":` + string(mustJSON(args)) + `}}`)
	w.flush()
	return w, w.err
}

// Entropy records the seed and clock a start read; it goes with the
// request being served.
func (w *Writer) Entropy(seed uint64, clockMillis int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.entropy = append(w.entropy, formatEntropy(seed, clockMillis))
}

// Exchange records a request, redacted, and its response.
func (w *Writer) Exchange(header, payload, response, responsePayload []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.entropy {
		w.line(object("start_entropy", e))
	}
	w.entropy = w.entropy[:0]
	send, err := w.keys.redact(header, w.pinned)
	if err != nil {
		// Not reachable for a request the sidecar answered (it checked the
		// header is a JSON object); never write it unredacted.
		send = []byte(`{}`)
	}
	w.raw("send", send, payload)
	w.raw("expect", NormalizeProfile(response), responsePayload)
	w.flush()
}

// Input records raw input that answered nothing and ended the session (a
// malformed or oversized request), as it was read.
func (w *Writer) Input(b []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.line(object("send_raw_base64", base64.StdEncoding.EncodeToString(b)))
	w.flush()
}

// Close records how the process ends (the sidecar's exit status and all it
// wrote to stderr) and closes the file. It returns the first error met.
func (w *Writer) Close(code int, stderr string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.line(`{"exit":` + string(mustJSON(struct {
		Code   int    `json:"code"`
		Stderr string `json:"stderr"`
	}{code, stderr})) + `}`)
	w.flush()
	if err := w.f.Close(); w.err == nil {
		w.err = err
	}
	return w.err
}

// Err reports the first write error, after which nothing more is written.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *Writer) raw(key string, msg, payload []byte) {
	w.line(string(AppendMessage(nil, key, msg, payload)))
}

// AppendMessage appends a transcript's line (without its newline) for one
// message: `{"<key>":<msg>}`, with the binary payload as payload_base64.
// The corpus writes its transcripts with it too, so both stay one format.
func AppendMessage(b []byte, key string, msg, payload []byte) []byte {
	b = append(append(append(b, `{"`...), key...), `":`...)
	b = append(b, msg...)
	if len(payload) > 0 {
		b = append(b, `,"payload_base64":"`...)
		b = base64.StdEncoding.AppendEncode(b, payload)
		b = append(b, '"')
	}
	return append(b, '}')
}

func (w *Writer) line(s string) {
	if w.err != nil {
		return
	}
	if _, err := w.w.WriteString(s); err == nil {
		err = w.w.WriteByte('\n')
		w.err = err
	} else {
		w.err = err
	}
}

// flush after every exchange, so a process that is killed leaves every
// exchange it answered on disk.
func (w *Writer) flush() {
	if w.err == nil {
		w.err = w.w.Flush()
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // strings and ints only
	}
	return b
}

// object writes a one-level object of string members in order.
func object(kv ...string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(mustJSON(kv[i]))
		b.WriteByte(':')
		b.Write(mustJSON(kv[i+1]))
	}
	b.WriteByte('}')
	return b.String()
}

func formatEntropy(seed uint64, clockMillis int64) string {
	return strconv.FormatUint(seed, 10) + ":" + strconv.FormatInt(clockMillis, 10)
}

// profileTimings matches the two timing figures of a response's profile,
// which is always the last member of the header.
var profileTimings = regexp.MustCompile(`,"profile":\{"execution_ns":\d+,"response_prepare_ns":\d+([,}])`)

// NormalizeProfile rewrites what may differ between two runs of the same
// requests: the profile timings become 0. Everything else must match byte
// for byte.
func NormalizeProfile(header []byte) []byte {
	loc := profileTimings.FindSubmatchIndex(header)
	if loc == nil {
		return header
	}
	out := append([]byte(nil), header[:loc[0]]...)
	out = append(out, `,"profile":{"execution_ns":0,"response_prepare_ns":0`...)
	return append(out, header[loc[2]:]...)
}
