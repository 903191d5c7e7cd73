package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Compile compiles guest source. Syntax errors and forbidden constructs
// fail here, with an *Error of kind "Parse" or "Validation". The returned
// Program is cached by the process, so starts on this client send only its
// id. A done ctx abandons the wait (compiling is bounded; nothing is
// cancelled in the sidecar).
func (c *Client) Compile(ctx context.Context, source string) (Program, error) {
	return c.compile(ctx, source, "")
}

// compile compiles source written in language ("" is JavaScript, the
// request then naming none).
func (c *Client) compile(ctx context.Context, source, language string) (Program, error) {
	parts := []stagePart{{inline: len(source) + len(source)/8 + 64, bytes: []byte(source)}}
	if len(source) <= maxRequestBytes/2 {
		parts = nil // fits for sure, whatever it escapes: no copy
	}
	build := func(ids []string) (*request, []byte, rawField) {
		if len(ids) > 0 && ids[0] != "" {
			return &request{Method: "compile", SourceStageID: ids[0], Language: language}, nil, rawNone
		}
		return &request{Method: "compile", Source: &source, Language: language}, nil, rawNone
	}
	resp, m, err := c.send(ctx, parts, build, false)
	if err != nil {
		return Program{}, err
	}
	var res struct {
		Kind          string `json:"kind"`
		ProgramID     string `json:"program_id"`
		ProgramBase64 string `json:"program_base64"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil || res.Kind != "program" {
		return Program{}, c.broken(fmt.Errorf("%w: compile answered without a program", ErrProtocol))
	}
	b, err := rawBytes(m, c.jsonl, res.ProgramBase64)
	if err != nil {
		return Program{}, c.broken(err)
	}
	if sha256Hex(b) != res.ProgramID {
		return Program{}, c.broken(fmt.Errorf("%w: program bytes do not hash to program_id", ErrProtocol))
	}
	c.remember(res.ProgramID)
	return Program{ID: res.ProgramID, Bytes: b}, nil
}

// marshalInputs is a start's inputs as a JSON object, its names in
// order as encoding/json orders a map's, each value written by the value
// package (marshalHeader says why not through encoding/json).
func marshalInputs(inputs map[string]value.Value) ([]byte, error) {
	names := slices.Sorted(maps.Keys(inputs))
	n := 2
	for _, k := range names {
		n += len(k) + 8
	}
	b := append(make([]byte, 0, n), '{')
	for i, k := range names {
		v := inputs[k]
		if err := v.Validate(); err != nil {
			return nil, err
		}
		name, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(b, name...), ':')
		b = v.AppendJSON(b)
	}
	return append(b, '}'), nil
}

// Start starts an execution and returns its first step: completion, or a
// suspension on the first capability call.
//
// If ctx is done while the execution runs, the client sends the in-band
// cancel request: the sidecar ends the execution and the call fails with
// its "Limit: execution cancelled" error (an *Error for which
// errors.Is(err, context.Canceled) also holds). If the request had already
// finished, its step is returned. If the sidecar does not answer within
// the cancel grace, the process is killed and the call fails with
// ErrProcessExited. A request not yet written when ctx is done is never
// sent.
func (c *Client) Start(ctx context.Context, req StartRequest) (*Step, error) {
	p := req.Program
	if p.ID == "" {
		if len(p.Bytes) == 0 {
			return nil, errors.New("StartRequest.Program is empty")
		}
		p.ID = sha256Hex(p.Bytes)
	}
	inputs := req.Inputs
	if inputs == nil {
		inputs = map[string]value.Value{}
	}
	inputJSON, err := marshalInputs(inputs)
	if err != nil {
		return nil, encodeErr("start", err)
	}
	send := func(raw []byte) (*response, message, error) {
		parts := []stagePart{jsonPart(inputJSON)}
		if raw != nil {
			parts = append(parts, c.rawPart(raw))
		}
		build := func(ids []string) (*request, []byte, rawField) {
			r := &request{Method: "start", ProgramID: p.ID, SnapshotDelivery: req.Delivery, Profile: req.Profile,
				Options: &wireOptions{Inputs: inputJSON, Capabilities: nonNil(req.Capabilities), Limits: req.Limits,
					SealKey: req.SealKey.wire(), HostCalls: req.HostCalls.wire(), Console: req.Console.wire(),
					Entry: req.Entry.wire()}}
			if ids[0] != "" {
				r.Options.Inputs, r.Options.InputsStageID = nil, ids[0]
			}
			if len(ids) > 1 && ids[1] != "" {
				r.ProgramStageID = ids[1]
				return r, nil, rawNone
			}
			return r, raw, rawProgram
		}
		return c.send(ctx, parts, build, true)
	}
	var raw []byte
	if !c.knows(p.ID) {
		raw = p.Bytes
	}
	resp, m, err := send(raw)
	if raw == nil && len(p.Bytes) > 0 && errors.Is(err, ErrUnknownProgramID) {
		// The process evicted it (or restarted): send the bytes.
		resp, m, err = send(p.Bytes)
	}
	if resp != nil && resp.OK {
		c.remember(p.ID)
	}
	return c.step(resp, m, err)
}

// Resume answers the capability call a snapshot is suspended on (or, in
// batch mode, some of its calls) and returns the next step. A done ctx
// cancels as for Start; snapshots returned earlier stay resumable. When
// the request would exceed the sidecar's 1 MiB request limit, the
// snapshot bytes and the largest answers are staged in chunks first (the
// stage and stage_values extensions), as few as make it fit.
func (c *Client) Resume(ctx context.Context, req ResumeRequest) (*Step, error) {
	if req.Key.IsZero() {
		return nil, errors.New("ResumeRequest.Key is required")
	}
	id := req.SnapshotID
	if len(req.Snapshot) > 0 {
		sum := sha256Hex(req.Snapshot)
		if id != "" && id != sum {
			return nil, errors.New("ResumeRequest.SnapshotID is not the id of ResumeRequest.Snapshot")
		}
		id = sum
	}
	if id == "" {
		return nil, errors.New("ResumeRequest needs SnapshotID or Snapshot")
	}
	if req.Policy == nil && req.PolicyID == "" {
		return nil, errors.New("ResumeRequest needs Policy or PolicyID")
	}
	// The answers, each its own part; then the snapshot bytes, if any.
	var payloads [][]byte
	if req.Answers != nil {
		for _, a := range req.Answers {
			b, err := a.Payload.MarshalJSON()
			if err != nil {
				return nil, encodeErr("resume", err)
			}
			payloads = append(payloads, b)
		}
	} else {
		b, err := req.Payload.MarshalJSON()
		if err != nil {
			return nil, encodeErr("resume", err)
		}
		payloads = append(payloads, b)
	}
	var parts []stagePart
	for _, b := range payloads {
		parts = append(parts, jsonPart(b))
	}
	snapAt := -1
	if len(req.Snapshot) > 0 {
		snapAt = len(parts)
		parts = append(parts, c.rawPart(req.Snapshot))
	}
	build := func(ids []string) (*request, []byte, rawField) {
		r := &request{Method: "resume", PolicyID: req.PolicyID, SnapshotDelivery: req.Delivery, Profile: req.Profile}
		if req.Answers != nil {
			for i, a := range req.Answers {
				w := wireAnswer{CallID: a.ID, Payload: payloads[i]}
				if ids[i] != "" {
					w.Payload, w.PayloadStageID = nil, ids[i]
				}
				r.Answers = append(r.Answers, w)
			}
		} else if ids[0] != "" {
			r.PayloadStageID = ids[0]
		} else {
			r.Payload = payloads[0]
		}
		if len(req.Snapshot) == 0 {
			r.SnapshotID = id
		}
		if req.Policy != nil {
			r.Policy = &wirePolicy{Capabilities: nonNil(req.Policy.Capabilities), Limits: req.Policy.Limits,
				HostCalls: req.Policy.HostCalls.wire(), Console: req.Policy.Console.wire(), SnapshotID: id,
				wireAuth: authFor(req.Key, req.SealKey, id)}
		} else {
			auth := authFor(req.Key, req.SealKey, id)
			r.Auth = &auth
		}
		if snapAt >= 0 {
			if ids[snapAt] != "" {
				r.StageID = ids[snapAt]
				return r, nil, rawNone
			}
			return r, req.Snapshot, rawSnapshot
		}
		return r, nil, rawNone
	}
	resp, m, err := c.send(ctx, parts, build, true)
	return c.step(resp, m, err)
}

// stageChunk is the most raw bytes one stage request carries: binary
// frames take 960 KiB, base64 in JSONL a third more.
func (c *Client) stageChunk() int {
	if c.jsonl {
		return wire.MaxJSONLChunk
	}
	return wire.MaxFetchBytes
}

// Stage uploads b under stageID in chunks that each fit a request (the
// stage extension), so that a resume can name it. Resume does this by
// itself for snapshots that need it.
func (c *Client) Stage(ctx context.Context, stageID string, b []byte) error {
	for off := 0; off == 0 || off < len(b); {
		n := min(c.stageChunk(), len(b)-off)
		o := uint64(off)
		resp, _, err := c.roundTrip(ctx, &request{Method: "stage", StageID: stageID, Offset: &o}, b[off:off+n], rawChunk, false)
		if err != nil {
			return err
		}
		var res struct {
			Kind       string `json:"kind"`
			TotalBytes uint64 `json:"total_bytes"`
		}
		if err := json.Unmarshal(resp.Result, &res); err != nil || res.Kind != "staged" || res.TotalBytes != uint64(off+n) {
			return c.broken(fmt.Errorf("%w: stage answered with %d bytes staged, expected %d", ErrProtocol, res.TotalBytes, off+n))
		}
		off += n
		if off == len(b) {
			break
		}
	}
	c.uploads.Add(1)
	return nil
}

// FetchSnapshot returns the bytes of a snapshot the process holds (the
// snapshot fetch extension), in chunks that each fit a response. It checks
// that they hash to id. The size is bounded by Config.MaxResponseBytes.
func (c *Client) FetchSnapshot(ctx context.Context, id string) ([]byte, error) {
	var out []byte
	chunk := uint64(c.stageChunk())
	for {
		off := uint64(len(out))
		resp, m, err := c.roundTrip(ctx, &request{Method: "snapshot", SnapshotID: id, Offset: &off, MaxBytes: &chunk}, nil, rawNone, false)
		if err != nil {
			return nil, err
		}
		var res struct {
			Kind           string `json:"kind"`
			Offset         uint64 `json:"offset"`
			TotalBytes     uint64 `json:"total_bytes"`
			SnapshotBase64 string `json:"snapshot_base64"`
		}
		if err := json.Unmarshal(resp.Result, &res); err != nil || res.Kind != "snapshot" || res.Offset != off {
			return nil, c.broken(fmt.Errorf("%w: snapshot fetch answered out of order", ErrProtocol))
		}
		if res.TotalBytes > uint64(c.maxResponse) {
			return nil, c.broken(fmt.Errorf("%w: snapshot %s is %d bytes, more than the client's limit of %d (Config.MaxResponseBytes)", ErrProtocol, short(id), res.TotalBytes, c.maxResponse))
		}
		b, err := rawBytes(m, c.jsonl, res.SnapshotBase64)
		if err != nil {
			return nil, c.broken(err)
		}
		if uint64(len(b)) > res.TotalBytes-off || (len(b) == 0 && off < res.TotalBytes) {
			return nil, c.broken(fmt.Errorf("%w: snapshot fetch returned %d bytes at offset %d of %d", ErrProtocol, len(b), off, res.TotalBytes))
		}
		if out == nil {
			out = make([]byte, 0, res.TotalBytes)
		}
		out = append(out, b...)
		if uint64(len(out)) == res.TotalBytes {
			break
		}
	}
	if sha256Hex(out) != id {
		return nil, c.broken(fmt.Errorf("%w: fetched snapshot bytes do not hash to %s", ErrProtocol, short(id)))
	}
	return out, nil
}

// Ping asks the sidecar for its version, features and defaults (the ping
// extension; a sidecar without it fails with an *Error).
func (c *Client) Ping(ctx context.Context) (*Pong, error) {
	return query[Pong](ctx, c, "ping", "pong", "a pong")
}

// Stats asks the sidecar what it holds and how its resumes ran (the
// stats extension, feature "stats"; a sidecar without it fails with an
// *Error).
func (c *Client) Stats(ctx context.Context) (*Stats, error) {
	return query[Stats](ctx, c, "stats", "stats", "stats")
}

// query sends a request of method alone and decodes its result, which
// must be of kind; any other answer breaks the protocol (what names what
// was missing).
func query[T any](ctx context.Context, c *Client, method, kind, what string) (*T, error) {
	resp, _, err := c.roundTrip(ctx, &request{Method: method}, nil, rawNone, false)
	if err != nil {
		return nil, err
	}
	var k struct {
		Kind string `json:"kind"`
	}
	out := new(T)
	if json.Unmarshal(resp.Result, &k) != nil || k.Kind != kind || json.Unmarshal(resp.Result, out) != nil {
		return nil, c.broken(fmt.Errorf("%w: %s answered without %s", ErrProtocol, method, what))
	}
	return out, nil
}

// step decodes a start or resume response.
func (c *Client) step(resp *response, m message, err error) (*Step, error) {
	if err != nil {
		return nil, err
	}
	var res wireStep
	if err := decodeStep(resp.Result, &res); err != nil || res.Kind != "step" {
		return nil, c.broken(fmt.Errorf("%w: undecodable step: %v", ErrProtocol, err))
	}
	st := &Step{Profile: resp.Profile, Logs: res.Step.Logs}
	switch res.Step.Type {
	case "completed":
		if p := res.Step.parsed; p != nil {
			st.Value = *p
			break
		}
		v, err := value.ParseJSON(res.Step.Value)
		if err != nil {
			return nil, c.broken(fmt.Errorf("%w: completed step: %v", ErrProtocol, err))
		}
		st.Value = v
	case "suspended":
		b, err := rawBytes(m, c.jsonl, res.Step.SnapshotBase64)
		if err != nil {
			return nil, c.broken(err)
		}
		s := &Suspension{Capability: res.Step.Capability, Args: res.Step.Args, SnapshotID: res.SnapshotID,
			PolicyID: res.PolicyID, Snapshot: b, BaseID: res.SnapshotBaseID}
		for i, k := range res.Step.Calls {
			// Ids are positive and in call order: hosts key answers by them.
			if k.CallID == 0 || i > 0 && k.CallID <= s.Calls[i-1].ID {
				return nil, c.broken(fmt.Errorf("%w: a suspended step lists call_id %d out of order", ErrProtocol, k.CallID))
			}
			s.Calls = append(s.Calls, PendingCall{ID: k.CallID, Capability: k.Capability, Args: k.Args})
		}
		if s.BaseID == "" && len(b) > 0 && sha256Hex(b) != s.SnapshotID {
			return nil, c.broken(fmt.Errorf("%w: snapshot bytes do not hash to snapshot_id", ErrProtocol))
		}
		st.Suspended = s
	default:
		return nil, c.broken(fmt.Errorf("%w: unknown step type %q", ErrProtocol, res.Step.Type))
	}
	return st, nil
}

// broken stops a process that answered outside the contract.
func (c *Client) broken(err error) error {
	c.Kill()
	return &processError{msg: err.Error() + "; the sidecar was stopped", causes: []error{err, ErrProcessExited}}
}

func (c *Client) knows(programID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.known[programID]
}

// remember notes a program the process has cached. The sidecar keeps 256;
// past that many here the set starts over (a miss only costs a retry).
func (c *Client) remember(programID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.known) >= 256 {
		clear(c.known)
	}
	c.known[programID] = true
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
