// Package corpus holds recorded sessions with the real sidecar binary
// (transcripts), replays them, and derives fuzz seed corpora from them.
// See README.md.
package corpus

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/internal/trace"
)

// EntropyEnv is the sidecar's test-only variable fixing every execution's
// Math.random seed and clock ("<seed>:<unix_millis>").
const EntropyEnv = "MUSTARD_SIDECAR_TEST_ENTROPY"

// Entropy is the value every transcript is recorded and replayed with. With
// it, snapshot ids are stable, so transcripts can carry literal tokens.
const Entropy = "20260101:1767225600000"

// EntropyWarning is the start-up line the sidecar writes to stderr when
// EntropyEnv is set.
const EntropyWarning = "mustard-sidecar: warning: " + EntropyEnv + " is set; executions are not randomized\n"

// Transcript is one recorded session: one or more sidecar processes, each
// fed requests and expected to answer exactly as recorded.
type Transcript struct {
	Name  string
	About string
	// Transport is "jsonl" or "binary".
	Transport string
	// ReplayBinary: a JSONL transcript whose requests carry nothing
	// transport-specific, also replayed over binary frames.
	ReplayBinary bool
	Entropy      string
	Processes    []Process
}

// Process is one sidecar process: its arguments, exchanges and exit.
type Process struct {
	Args  []string
	Steps []Step
	Exit  Exit
}

// Step is one thing written to the sidecar and, unless it is raw text
// ending the session, the response it must produce.
type Step struct {
	Notes []string
	// Send is the request: a JSONL line or a binary frame header.
	Send        []byte
	SendPayload []byte
	// Text marks Send as raw input (malformed) with no response: text
	// (send_text; a JSONL line gets its newline) or, Raw, bytes written as
	// they are (send_raw_base64, from a trace).
	Text          bool
	Raw           bool
	Expect        []byte
	ExpectPayload []byte
	// Entropy is the "<seed>:<unix_millis>" the start sent here read, when
	// the recording did not fix one for the whole process (a trace).
	Entropy string
}

// Exit is how a process must end once its stdin is closed.
type Exit struct {
	Code   int    `json:"code"`
	Stderr string `json:"stderr"`
}

// line is one transcript line; exactly one of its groups is set.
type line struct {
	Transcript    *string         `json:"transcript,omitempty"`
	About         string          `json:"about,omitempty"`
	Transport     string          `json:"transport,omitempty"`
	ReplayBinary  bool            `json:"replay_binary,omitempty"`
	Entropy       string          `json:"entropy,omitempty"`
	Spawn         *spawn          `json:"spawn,omitempty"`
	Note          *string         `json:"note,omitempty"`
	Send          json.RawMessage `json:"send,omitempty"`
	SendText      *string         `json:"send_text,omitempty"`
	SendRaw       *string         `json:"send_raw_base64,omitempty"`
	StartEntropy  *string         `json:"start_entropy,omitempty"`
	Expect        json.RawMessage `json:"expect,omitempty"`
	PayloadBase64 *string         `json:"payload_base64,omitempty"`
	Exit          *Exit           `json:"exit,omitempty"`
}

type spawn struct {
	Args []string `json:"args"`
}

// Encode writes a transcript: one JSON object per line. Requests and
// responses are embedded verbatim.
func (t *Transcript) Encode() []byte {
	var b bytes.Buffer
	head := Obj{{"transcript", t.Name}, {"about", t.About}, {"transport", t.Transport}}
	if t.ReplayBinary {
		head = append(head, KV{"replay_binary", true})
	}
	b.Write(encode(append(head, KV{"entropy", t.Entropy})))
	b.WriteByte('\n')
	for _, p := range t.Processes {
		args := p.Args
		if args == nil {
			args = []string{}
		}
		b.WriteString(`{"spawn":{"args":`)
		b.Write(encode(args))
		b.WriteString("}}\n")
		for _, s := range p.Steps {
			for _, n := range s.Notes {
				b.WriteString(`{"note":`)
				b.Write(encode(n))
				b.WriteString("}\n")
			}
			if s.Raw {
				b.WriteString(`{"send_raw_base64":`)
				b.Write(encode(base64.StdEncoding.EncodeToString(s.Send)))
				b.WriteString("}\n")
				continue
			}
			if s.Text {
				b.WriteString(`{"send_text":`)
				b.Write(encode(string(s.Send)))
				b.WriteString("}\n")
				continue
			}
			if s.Entropy != "" {
				b.WriteString(`{"start_entropy":`)
				b.Write(encode(s.Entropy))
				b.WriteString("}\n")
			}
			writeRaw(&b, "send", s.Send, s.SendPayload)
			writeRaw(&b, "expect", s.Expect, s.ExpectPayload)
		}
		b.WriteString(`{"exit":`)
		b.Write(encode(p.Exit))
		b.WriteString("}\n")
	}
	return b.Bytes()
}

func writeRaw(b *bytes.Buffer, key string, raw, payload []byte) {
	b.Write(trace.AppendMessage(nil, key, raw, payload))
	b.WriteByte('\n')
}

// Parse reads a transcript written by Encode.
func Parse(data []byte) (*Transcript, error) {
	t := &Transcript{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	var p *Process
	var notes []string
	var entropy *string
	n := 0
	for sc.Scan() {
		n++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var l line
		d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		d.DisallowUnknownFields()
		if err := d.Decode(&l); err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		payload, err := decodePayload(l.PayloadBase64)
		if err != nil {
			return nil, fmt.Errorf("line %d: payload_base64: %v", n, err)
		}
		switch {
		case l.Transcript != nil:
			if n != 1 {
				return nil, fmt.Errorf("line %d: header must be the first line", n)
			}
			t.Name, t.About, t.Transport, t.ReplayBinary, t.Entropy = *l.Transcript, l.About, l.Transport, l.ReplayBinary, l.Entropy
			if t.Transport != "jsonl" && t.Transport != "binary" {
				return nil, fmt.Errorf("line %d: transport must be jsonl or binary", n)
			}
		case l.Spawn != nil:
			if p != nil {
				return nil, fmt.Errorf("line %d: spawn before the previous process's exit", n)
			}
			t.Processes = append(t.Processes, Process{Args: l.Spawn.Args})
			p = &t.Processes[len(t.Processes)-1]
		case p == nil:
			return nil, fmt.Errorf("line %d: expected spawn", n)
		case l.Note != nil:
			notes = append(notes, *l.Note)
		case l.StartEntropy != nil:
			if entropy != nil {
				return nil, fmt.Errorf("line %d: two start_entropy lines before one send", n)
			}
			entropy = l.StartEntropy
		case l.Send != nil:
			st := Step{Notes: notes, Send: l.Send, SendPayload: payload}
			if entropy != nil {
				st.Entropy, entropy = *entropy, nil
			}
			p.Steps = append(p.Steps, st)
			notes = nil
		case l.SendText != nil:
			p.Steps = append(p.Steps, Step{Notes: notes, Send: []byte(*l.SendText), Text: true})
			notes = nil
		case l.SendRaw != nil:
			b, err := base64.StdEncoding.DecodeString(*l.SendRaw)
			if err != nil {
				return nil, fmt.Errorf("line %d: send_raw_base64: %v", n, err)
			}
			p.Steps = append(p.Steps, Step{Notes: notes, Send: b, Text: true, Raw: true})
			notes = nil
		case l.Expect != nil:
			if len(p.Steps) == 0 {
				return nil, fmt.Errorf("line %d: expect without send", n)
			}
			s := &p.Steps[len(p.Steps)-1]
			if s.Text || s.Expect != nil {
				return nil, fmt.Errorf("line %d: expect without send", n)
			}
			s.Expect, s.ExpectPayload = l.Expect, payload
		case l.Exit != nil:
			if entropy != nil {
				return nil, fmt.Errorf("line %d: start_entropy without a send", n)
			}
			for _, s := range p.Steps {
				if !s.Text && s.Expect == nil {
					return nil, fmt.Errorf("line %d: a send has no expect", n)
				}
			}
			p.Exit = *l.Exit
			p = nil
		default:
			return nil, fmt.Errorf("line %d: unknown line", n)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if t.Name == "" {
		return nil, errors.New("missing header line")
	}
	if p != nil {
		return nil, errors.New("last process has no exit line")
	}
	return t, nil
}

func decodePayload(s *string) ([]byte, error) {
	if s == nil {
		return nil, nil
	}
	return base64.StdEncoding.DecodeString(*s)
}

// Load reads every transcripts/*.jsonl under dir, sorted by name.
func Load(dir string) ([]*Transcript, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []*Transcript
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		t, err := Parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", filepath.Base(path), err)
		}
		if want := strings.TrimSuffix(filepath.Base(path), ".jsonl"); t.Name != want {
			return nil, fmt.Errorf("%s: transcript is named %q", filepath.Base(path), t.Name)
		}
		out = append(out, t)
	}
	return out, nil
}

// Normalize rewrites what the contract lets vary between runs: the profile
// timings become 0. Everything else must match byte for byte.
func Normalize(header []byte) []byte { return trace.NormalizeProfile(header) }

// Binary returns the binary-frame form of a JSONL transcript that has
// ReplayBinary set: "--jsonl" dropped, base64 request fields moved to the
// frame payload, and the base64 response fields expected as the payload.
func (t *Transcript) Binary() (*Transcript, error) {
	if t.Transport != "jsonl" || !t.ReplayBinary {
		return nil, fmt.Errorf("%s: not replayable over binary frames", t.Name)
	}
	bt := *t
	bt.Transport, bt.ReplayBinary = "binary", false
	bt.Processes = nil
	for _, p := range t.Processes {
		var bp Process
		for _, a := range p.Args {
			if a != "--jsonl" {
				bp.Args = append(bp.Args, a)
			}
		}
		bp.Exit = p.Exit
		for _, s := range p.Steps {
			if s.Text {
				return nil, fmt.Errorf("%s: raw text cannot be sent as a frame", t.Name)
			}
			bs := Step{Notes: s.Notes}
			var err error
			if bs.Send, bs.SendPayload, err = moveBase64(s.Send, []string{"program_base64"}, []string{"snapshot_base64"}, []string{"bytes_base64"}); err != nil {
				return nil, fmt.Errorf("%s: request %s: %v", t.Name, s.Send, err)
			}
			if bs.Expect, bs.ExpectPayload, err = moveBase64(s.Expect, []string{"result", "program_base64"}, []string{"result", "step", "snapshot_base64"}, []string{"result", "snapshot_base64"}); err != nil {
				return nil, fmt.Errorf("%s: response %s: %v", t.Name, s.Expect, err)
			}
			bp.Steps = append(bp.Steps, bs)
		}
		bt.Processes = append(bt.Processes, bp)
	}
	return &bt, nil
}

// moveBase64 cuts the first base64 field found at one of paths and returns
// the remaining JSON and the decoded bytes.
func moveBase64(obj []byte, paths ...[]string) ([]byte, []byte, error) {
	for _, path := range paths {
		out, val, ok, err := cutField(obj, path...)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		var s string
		if err := json.Unmarshal(val, &s); err != nil {
			return nil, nil, fmt.Errorf("%s is not a string", strings.Join(path, "."))
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, nil, fmt.Errorf("%s is not base64", strings.Join(path, "."))
		}
		return out, b, nil
	}
	return obj, nil, nil
}

// cutField removes the member at path (keys of nested objects) from a JSON
// object, leaving every other byte as it was.
func cutField(obj []byte, path ...string) (out, val []byte, ok bool, err error) {
	start, end, vstart, first, found, err := findMember(obj, path[0])
	if err != nil || !found {
		return obj, nil, false, err
	}
	if len(path) > 1 {
		inner, val, ok, err := cutField(obj[vstart:end], path[1:]...)
		if err != nil || !ok {
			return obj, nil, ok, err
		}
		out = append(append(append([]byte(nil), obj[:vstart]...), inner...), obj[end:]...)
		return out, val, true, nil
	}
	val = obj[vstart:end]
	if first {
		// Cut the member and the comma after it, if any.
		rest := bytes.TrimLeft(obj[end:], " \t\r\n")
		if len(rest) > 0 && rest[0] == ',' {
			end = len(obj) - len(rest) + 1
		}
	}
	out = append(append([]byte(nil), obj[:start]...), obj[end:]...)
	return out, val, true, nil
}

// findMember locates a top-level member: [start, end) spans it with its
// leading comma (or, for the first member, from just after the brace),
// vstart is where its value begins.
func findMember(obj []byte, key string) (start, end, vstart int, first, found bool, err error) {
	d := json.NewDecoder(bytes.NewReader(obj))
	tok, err := d.Token()
	if err != nil || tok != json.Delim('{') {
		return 0, 0, 0, false, false, errors.New("not a JSON object")
	}
	for i := 0; d.More(); i++ {
		before := int(d.InputOffset())
		k, err := d.Token()
		if err != nil {
			return 0, 0, 0, false, false, err
		}
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return 0, 0, 0, false, false, err
		}
		after := int(d.InputOffset())
		if k == key {
			return before, after, after - len(raw), i == 0, true, nil
		}
	}
	return 0, 0, 0, false, false, nil
}

// Obj is a JSON object that keeps its members in order, so requests read
// naturally (protocol_version, id, method first).
type Obj []KV

// KV is one member of an Obj.
type KV struct {
	Key   string
	Value any
}

// MarshalJSON writes the members in order.
func (o Obj) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, kv := range o {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, encode(kv.Key)...)
		b = append(b, ':')
		b = append(b, encode(kv.Value)...)
	}
	return append(b, '}'), nil
}

// encode marshals v without HTML escaping, so guest source stays readable.
func encode(v any) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		panic(fmt.Sprintf("corpus: encoding %T: %v", v, err))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'})
}

// Stream returns what a process of t reads on stdin: JSONL lines or binary
// frames, in order.
func (t *Transcript) Stream(p Process) []byte {
	var b bytes.Buffer
	for _, s := range p.Steps {
		writeRequest(&b, t.Transport == "binary", s)
	}
	return b.Bytes()
}

func writeRequest(w io.Writer, binary bool, s Step) {
	if s.Raw || s.Text && binary {
		w.Write(s.Send)
		return
	}
	if !binary {
		w.Write(s.Send)
		w.Write([]byte{'\n'})
		return
	}
	var prefix [8]byte
	putU32(prefix[:4], len(s.Send))
	putU32(prefix[4:], len(s.SendPayload))
	w.Write(prefix[:])
	w.Write(s.Send)
	w.Write(s.SendPayload)
}

func putU32(b []byte, n int) {
	b[0], b[1], b[2], b[3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
}
