package host

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// The wire contract's constants, from the one package that holds them.
const (
	maxRequestBytes = wire.MaxRequestBytes
	protocolVersion = wire.ProtocolVersion
)

// request is the header of every request; raw bytes travel separately.
type request struct {
	ProtocolVersion  int             `json:"protocol_version"`
	ID               uint64          `json:"id"`
	Method           string          `json:"method"`
	Source           *string         `json:"source,omitempty"`
	SourceStageID    string          `json:"source_stage_id,omitempty"`
	Language         string          `json:"language,omitempty"`
	ProgramID        string          `json:"program_id,omitempty"`
	ProgramStageID   string          `json:"program_stage_id,omitempty"`
	Options          *wireOptions    `json:"options,omitempty"`
	SnapshotID       string          `json:"snapshot_id,omitempty"`
	PolicyID         string          `json:"policy_id,omitempty"`
	Policy           *wirePolicy     `json:"policy,omitempty"`
	Auth             *wireAuth       `json:"auth,omitempty"`
	Payload          json.RawMessage `json:"payload,omitempty"`
	PayloadStageID   string          `json:"payload_stage_id,omitempty"`
	Answers          []wireAnswer    `json:"answers,omitempty"`
	StageID          string          `json:"stage_id,omitempty"`
	Offset           *uint64         `json:"offset,omitempty"`
	MaxBytes         *uint64         `json:"max_bytes,omitempty"`
	TargetID         *uint64         `json:"target_id,omitempty"`
	SnapshotDelivery Delivery        `json:"snapshot_delivery,omitempty"`
	Profile          bool            `json:"profile,omitempty"`

	// JSONL only: raw bytes as base64 (binary frames carry them as the
	// payload).
	ProgramBase64  string `json:"program_base64,omitempty"`
	SnapshotBase64 string `json:"snapshot_base64,omitempty"`
	BytesBase64    string `json:"bytes_base64,omitempty"`
}

type wireOptions struct {
	Inputs        json.RawMessage `json:"inputs,omitempty"`
	InputsStageID string          `json:"inputs_stage_id,omitempty"`
	Capabilities  []string        `json:"capabilities"`
	Limits        Limits          `json:"limits"`
	SealKey       string          `json:"seal_key_base64,omitempty"`
	HostCalls     string          `json:"host_calls,omitempty"`
	Console       string          `json:"console,omitempty"`
	Entry         string          `json:"entry,omitempty"`
}

type wireAnswer struct {
	CallID         uint64          `json:"call_id"`
	Payload        json.RawMessage `json:"payload,omitempty"`
	PayloadStageID string          `json:"payload_stage_id,omitempty"`
}

type wireAuth struct {
	KeyBase64 string `json:"snapshot_key_base64"`
	KeyDigest string `json:"snapshot_key_digest"`
	Token     string `json:"snapshot_token"`
	// SealKey travels in auth (a cached resume) or, through wirePolicy,
	// in policy (a raw resume), as the contract says.
	SealKey string `json:"seal_key_base64,omitempty"`
}

type wirePolicy struct {
	Capabilities []string `json:"capabilities"`
	Limits       Limits   `json:"limits"`
	HostCalls    string   `json:"host_calls,omitempty"`
	Console      string   `json:"console,omitempty"`
	SnapshotID   string   `json:"snapshot_id"`
	wireAuth
}

func authFor(k Key, seal SealKey, snapshotID string) wireAuth {
	return wireAuth{KeyBase64: base64.StdEncoding.EncodeToString(k.b), KeyDigest: k.digest, Token: k.Token(snapshotID),
		SealKey: seal.wire()}
}

// rawField says which base64 field carries a request's raw bytes in JSONL.
type rawField uint8

const (
	rawNone rawField = iota
	rawProgram
	rawSnapshot
	rawChunk
)

// encodeRequest returns the bytes to write for req with raw attached, in
// the client's transport, or ErrRequestTooLarge.
func encodeRequest(req *request, raw []byte, field rawField, jsonl bool) ([]byte, error) {
	if !jsonl {
		out, err := marshalHeader(req, 8, len(raw))
		if err != nil {
			return nil, encodeErr(req.Method, err)
		}
		hdr := len(out) - 8
		if hdr+len(raw) > maxRequestBytes {
			return nil, fmt.Errorf("%w: %s request of %d bytes", ErrRequestTooLarge, req.Method, hdr+len(raw))
		}
		binary.LittleEndian.PutUint32(out[:4], uint32(hdr))
		binary.LittleEndian.PutUint32(out[4:], uint32(len(raw)))
		return append(out, raw...), nil
	}
	if len(raw) > 0 {
		// A quick bound before encoding megabytes of base64 for nothing.
		if base64.StdEncoding.EncodedLen(len(raw)) > maxRequestBytes {
			return nil, fmt.Errorf("%w: %s request with %d raw bytes", ErrRequestTooLarge, req.Method, len(raw))
		}
		b64 := base64.StdEncoding.EncodeToString(raw)
		switch field {
		case rawProgram:
			req.ProgramBase64 = b64
		case rawSnapshot:
			req.SnapshotBase64 = b64
		case rawChunk:
			req.BytesBase64 = b64
		}
	}
	line, err := marshalHeader(req, 0, 1)
	if err != nil {
		return nil, encodeErr(req.Method, err)
	}
	if len(line) > maxRequestBytes {
		return nil, fmt.Errorf("%w: %s request of %d bytes", ErrRequestTooLarge, req.Method, len(line))
	}
	return append(line, '\n'), nil
}

// marshalHeader is req as JSON. The members that carry guest values (a
// resume's payload, a batch's answers, a start's inputs) hold JSON this
// package wrote (Payload.MarshalJSON, marshalInputs) and are spliced in as
// they are: encoding/json would check and compact each again, about 8 ns
// a byte, and a resume's answer went through it three times
// (BenchmarkResumeLargeAnswer: 2.2 ms for a 50 KB text, most of it that).
// It returns front bytes of room (a frame's lengths) before the header,
// and room for back bytes more after it.
func marshalHeader(req *request, front, back int) ([]byte, error) {
	r := *req
	r.Payload, r.Answers, r.Options = nil, nil, nil
	head, err := json.Marshal(&r)
	if err != nil {
		return nil, err
	}
	var opts []byte
	if req.Options != nil {
		o := *req.Options
		o.Inputs = nil
		if opts, err = json.Marshal(&o); err != nil {
			return nil, err
		}
	}
	n := front + len(head) + len(opts) + len(req.Payload) + 64 + back
	if req.Options != nil {
		n += len(req.Options.Inputs)
	}
	for _, a := range req.Answers {
		n += len(a.Payload) + 64
	}
	// head always has protocol_version, id and method: reopened, the
	// members below follow a comma.
	b := append(make([]byte, front, n), head[:len(head)-1]...)
	if req.Options != nil {
		b = append(b, `,"`+wire.FieldOptions+`":`...)
		if in := req.Options.Inputs; in != nil {
			b = append(b, `{"`+wire.FieldInputs+`":`...)
			b = append(b, in...)
			if len(opts) > 2 {
				b = append(b, ',')
			}
			opts = opts[1:]
		}
		b = append(b, opts...)
	}
	if req.Payload != nil {
		b = append(b, `,"`+wire.FieldPayload+`":`...)
		b = append(b, req.Payload...)
	}
	if len(req.Answers) > 0 {
		b = append(b, `,"`+wire.FieldAnswers+`":[`...)
		for i, a := range req.Answers {
			if i > 0 {
				b = append(b, ',')
			}
			p := a.Payload
			a.Payload = nil
			ab, err := json.Marshal(&a)
			if err != nil {
				return nil, err
			}
			if p == nil {
				b = append(b, ab...)
				continue
			}
			b = append(b, ab[:len(ab)-1]...)
			b = append(b, `,"`+wire.FieldPayload+`":`...)
			b = append(append(b, p...), '}')
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// encodeErr keeps encoding/json's wrapping ("json: error calling
// MarshalJSON for type value.Value: ...") out of the message.
func encodeErr(method string, err error) error {
	var me *json.MarshalerError
	if errors.As(err, &me) {
		err = me.Unwrap()
	}
	return fmt.Errorf("%s request: %w", method, err)
}

// message is one response as read: its header (binary) or line (JSONL),
// and the binary payload.
type message struct {
	header  []byte
	payload []byte
}

type response struct {
	ProtocolVersion int             `json:"protocol_version"`
	ID              uint64          `json:"id"`
	OK              bool            `json:"ok"`
	Result          json.RawMessage `json:"result"`
	Error           string          `json:"error"`
	ErrorCode       string          `json:"error_code"` // absent from a sidecar without error_codes
	Logs            []LogLine       `json:"logs"`       // a failed start or resume's (the console extension)
	Profile         *Profile        `json:"profile"`
}

// responseReader reads responses with a bound on each one's size.
type responseReader struct {
	br    *bufio.Reader
	jsonl bool
	limit int
	line  []byte
}

func (r *responseReader) next() (message, error) {
	if r.jsonl {
		line, err := r.readLine()
		return message{header: line}, err
	}
	var prefix [8]byte
	if _, err := io.ReadFull(r.br, prefix[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			return message{}, fmt.Errorf("%w: stdout ended inside a response frame", ErrProtocol)
		}
		return message{}, err // io.EOF: the process closed stdout between responses
	}
	hl := binary.LittleEndian.Uint32(prefix[:4])
	pl := binary.LittleEndian.Uint32(prefix[4:])
	total := uint64(hl) + uint64(pl)
	if total > uint64(r.limit) {
		return message{}, fmt.Errorf("%w: a response of %d bytes exceeds the client's limit of %d bytes (Config.MaxResponseBytes)", ErrProtocol, total, r.limit)
	}
	// Grow with what actually arrives, so a prefix that lies about its
	// size costs nothing until the bytes come: doubling, up to the size
	// it gave.
	n := int(total)
	b := make([]byte, 0, min(n, 64<<10))
	for len(b) < n {
		if len(b) == cap(b) {
			b = slices.Grow(b, min(n-len(b), len(b)))
		}
		m, err := r.br.Read(b[len(b):min(cap(b), n)])
		b = b[:len(b)+m]
		if err != nil && len(b) < n {
			return message{}, fmt.Errorf("%w: stdout ended inside a response frame (%d of %d bytes)", ErrProtocol, len(b), total)
		}
	}
	return message{header: b[:hl:hl], payload: b[hl:]}, nil
}

// readLine returns the next non-blank line without its "\n" (and "\r"),
// holding at most limit bytes of it.
func (r *responseReader) readLine() ([]byte, error) {
	for {
		r.line = r.line[:0]
		for {
			chunk, err := r.br.ReadSlice('\n')
			if len(r.line)+len(chunk) > r.limit+1 {
				return nil, fmt.Errorf("%w: a response line exceeds the client's limit of %d bytes (Config.MaxResponseBytes)", ErrProtocol, r.limit)
			}
			r.line = append(r.line, chunk...)
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil {
				if err == io.EOF && len(r.line) == 0 {
					return nil, io.EOF
				}
				if err == io.EOF {
					return nil, fmt.Errorf("%w: stdout ended inside a response line", ErrProtocol)
				}
				return nil, err
			}
			break
		}
		line := bytes.TrimRight(r.line, "\r\n")
		if len(bytes.TrimSpace(line)) > 0 {
			return bytes.Clone(line), nil
		}
	}
}

// decodeResponse parses a message's header. Values inside are decoded by
// value.ParseJSON, which bounds nesting.
func decodeResponse(m message) (*response, error) {
	var r response
	if err := decodeHeader(m.header, &r); err != nil {
		return nil, fmt.Errorf("%w: undecodable response header: %v", ErrProtocol, err)
	}
	if r.ProtocolVersion != protocolVersion {
		return nil, fmt.Errorf("%w: response protocol_version %d, expected %d", ErrProtocol, r.ProtocolVersion, protocolVersion)
	}
	return &r, nil
}

// rawBytes returns a response's raw bytes: the binary payload, or the
// decoded base64 field in JSONL.
func rawBytes(m message, jsonl bool, b64 string) ([]byte, error) {
	if !jsonl {
		return m.payload, nil
	}
	if b64 == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("%w: bad base64 in a response", ErrProtocol)
	}
	return b, nil
}

func sha256Hex(b []byte) string { return wire.SHA256Hex(b) }
