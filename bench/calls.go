package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/internal/jsonscan"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// Batched host calls (options.host_calls "batch"): a suspended step lists
// every outstanding call with its call_id, and one resume answers any of
// them. The driver answers all of a step's calls at once.

// hostCall is one call listed in a batch-mode suspended step; args alias
// the response.
type hostCall struct {
	id         uint64
	capability string
	args       []byte
}

// parseCalls appends the calls of a suspended step's "calls" array to dst.
// It walks the text with jsonscan like parseResponse, and falls back to
// encoding/json for a capability name with escapes.
func parseCalls(dst []hostCall, raw []byte) ([]hostCall, error) {
	start := len(dst)
	i := jsonscan.SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return dst, fmt.Errorf("suspended step without calls (is host_calls batch?): %.200q", raw)
	}
	plain := true
	for i = jsonscan.SkipSpace(raw, i+1); i < len(raw) && raw[i] == '{'; {
		end := jsonscan.SkipValue(raw, i)
		var c hostCall
		jsonscan.Members(raw[i:end], func(k, v []byte) bool {
			switch string(k) {
			case `"` + wire.FieldCallID + `"`:
				n, err := strconv.ParseUint(string(v), 10, 64)
				c.id, plain = n, plain && err == nil
			case `"` + wire.FieldCapability + `"`:
				var ok bool
				c.capability, ok = jsonscan.PlainString(v)
				plain = plain && ok
			case `"` + wire.FieldArgs + `"`:
				c.args = v
			}
			return plain
		})
		if !plain || c.id == 0 || c.args == nil {
			break
		}
		dst = append(dst, c)
		if i = jsonscan.SkipSpace(raw, end); i < len(raw) && raw[i] == ',' {
			i = jsonscan.SkipSpace(raw, i+1)
		}
	}
	if plain && i < len(raw) && raw[i] == ']' {
		return dst, nil
	}
	var calls []struct {
		ID         uint64          `json:"call_id"`
		Capability string          `json:"capability"`
		Args       json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(raw, &calls); err != nil {
		return dst[:start], fmt.Errorf("bad calls %.200q: %v", raw, err)
	}
	dst = dst[:start]
	for _, c := range calls {
		dst = append(dst, hostCall{c.ID, c.Capability, c.Args})
	}
	return dst, nil
}

// matcher answers one run's calls: each call takes the first of the
// fixture's calls with its capability and arguments that no earlier call
// of the run has taken, so a run can make each recorded call once.
type matcher struct {
	w     *Workload
	used  []bool
	order []int // indices into w.Calls, in the order calls were matched
}

func newMatcher(w *Workload) *matcher {
	return &matcher{w: w, used: make([]bool, len(w.Calls))}
}

func (m *matcher) reset() {
	clear(m.used)
	m.order = m.order[:0]
}

// match returns the payload for a call and records which fixture call it
// was.
func (m *matcher) match(capability string, args []byte) ([]byte, error) {
	rec, err := m.w.lookup(capability, args)
	if err != nil {
		return nil, err
	}
	for _, i := range rec.idx {
		if !m.used[i] {
			m.used[i] = true
			m.order = append(m.order, i)
			return rec.payload, nil
		}
	}
	return nil, fmt.Errorf("%s: %s(%s) made more often than recorded (%d)", m.w.Name, capability, args, len(rec.idx))
}

// answersField appends a batch resume's answers array: every call in
// calls, in order, with its payload.
func answersField(dst []byte, calls []hostCall, payloads [][]byte) []byte {
	dst = append(dst, '[')
	for i, c := range calls {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"`+wire.FieldCallID+`":`...)
		dst = strconv.AppendUint(dst, c.id, 10)
		dst = append(dst, `,"`+wire.FieldPayload+`":`...)
		dst = append(dst, payloads[i]...)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// batchResumeRequest is resumeRequest in batch mode: it answers every
// call in calls.
func batchResumeRequest(dst []byte, id uint64, snapshotID, policyID string, calls []hostCall, payloads [][]byte) []byte {
	b := append(resumeHead(dst, id, snapshotID, policyID), `"`+wire.FieldAnswers+`":`...)
	return append(answersField(b, calls, payloads), '}')
}

// rawResumeRequestMode is rawResumeRequest in either mode: answer is the
// payload (one mode) or the answers array (batch mode, whose policy says
// so).
func rawResumeRequestMode(id uint64, snapshotID string, caps []string, batch bool, answer []byte) []byte {
	pol := hosttest.Policy(benchKey, snapshotID, caps, map[string]any{})
	field := wire.FieldPayload
	if batch {
		pol[wire.FieldHostCalls] = wire.HostCallsBatch
		field = wire.FieldAnswers
	}
	b, _ := json.Marshal(map[string]any{
		wire.FieldProtocolVersion: wire.ProtocolVersion, wire.FieldID: id, wire.FieldMethod: wire.MethodResume,
		wire.FieldPolicy: pol,
		field:            json.RawMessage(answer),
	})
	return b
}

// conn is one sidecar: a process over pipes, or a Session in process.
type conn interface {
	call(header, payload []byte) (*stepResponse, []byte, error)
}

// sessionConn is a Session in process, over the binary transport.
type sessionConn struct{ s *protocol.Session }

func (c sessionConn) call(header, payload []byte) (*stepResponse, []byte, error) {
	resp, err := c.s.Handle(header, payload)
	if err != nil {
		return nil, nil, err
	}
	r, err := parseResponse(resp.Header)
	return r, resp.Payload, err
}

// freshSession opens a new Session, as a fresh process would be.
func freshSession() (conn, func(), error) {
	s := protocol.NewSession(protocol.Options{})
	return sessionConn{s}, s.Close, nil
}

// freshProcess spawns a new sidecar process.
func freshProcess() (conn, func(), error) {
	h, err := newHost(false)
	if err != nil {
		return nil, nil, err
	}
	return h, h.close, nil
}

// runMode is how runWorkload drives an execution.
type runMode struct {
	batch bool // host_calls "batch": each step's calls answered together in one resume
	// cold resumes every step from its snapshot bytes, with the full
	// policy, in a sidecar opened by fresh for that resume alone.
	cold  bool
	fresh func() (conn, func(), error)
}

func (m runMode) String() string {
	s := "one mode"
	if m.batch {
		s = "batch mode"
	}
	if m.cold {
		return s + ", cold"
	}
	return s + ", hot"
}

// runTrace is what one run of a workload did.
type runTrace struct {
	roundTrips int     // start + resumes
	order      []int   // the fixture's calls (indices) in the order the sidecar presented them
	steps      [][]int // the same, per suspended step
	result     []byte  // canonical form of the completed value
}

// runWorkload runs w once through c from its compiled program: start, then
// resumes answered from the fixture until it completes, in mode m. It
// fails unless every call is one of the fixture's calls (each made at most
// as often as recorded), all of them are made, and the result is the
// expected one.
func (w *Workload) runWorkload(c conn, programID string, m runMode) (*runTrace, error) {
	caps := mustJSONText(w.Capabilities)
	r, snap, err := c.call(startRequestMode(1, programID, w.inputs, caps, m.batch), nil)
	if err != nil {
		return nil, fmt.Errorf("%s (%s): start: %w", w.Name, m, err)
	}
	tr := &runTrace{roundTrips: 1}
	mt := newMatcher(w)
	answered := map[uint64]bool{}
	var calls []hostCall
	var payloads [][]byte
	for r.Result.Step.Type == wire.StepSuspended {
		if tr.roundTrips > len(w.Calls) {
			return nil, fmt.Errorf("%s (%s): still suspended after %d round trips for %d calls", w.Name, m, tr.roundTrips, len(w.Calls))
		}
		calls, payloads = calls[:0], payloads[:0]
		if m.batch {
			if calls, err = parseCalls(calls, r.Result.Step.Calls); err != nil {
				return nil, fmt.Errorf("%s (%s): %w", w.Name, m, err)
			}
			if len(calls) == 0 {
				return nil, fmt.Errorf("%s (%s): a suspended step lists no calls", w.Name, m)
			}
		} else {
			calls = append(calls, hostCall{capability: r.Result.Step.Capability, args: r.Result.Step.Args})
		}
		first := len(mt.order)
		for _, hc := range calls {
			if m.batch {
				if answered[hc.id] {
					return nil, fmt.Errorf("%s (%s): call_id %d listed again after it was answered", w.Name, m, hc.id)
				}
				answered[hc.id] = true
			}
			p, err := mt.match(hc.capability, hc.args)
			if err != nil {
				return nil, fmt.Errorf("%s (%s): %w", w.Name, m, err)
			}
			payloads = append(payloads, p)
		}
		tr.steps = append(tr.steps, append([]int(nil), mt.order[first:]...))
		var answer []byte
		if m.batch {
			answer = answersField(nil, calls, payloads)
		} else {
			answer = payloads[0]
		}
		sid, pid := r.Result.SnapshotID, r.Result.PolicyID
		tr.roundTrips++
		if !m.cold {
			var req []byte
			if m.batch {
				req = batchResumeRequest(nil, uint64(tr.roundTrips), sid, pid, calls, payloads)
			} else {
				req = resumeRequest(nil, uint64(tr.roundTrips), sid, pid, answer)
			}
			r, snap, err = c.call(req, nil)
		} else {
			// The bytes, copied: a connection may reuse its buffers.
			snap = bytes.Clone(snap)
			var fc conn
			var done func()
			if fc, done, err = m.fresh(); err != nil {
				return nil, err
			}
			r, snap, err = fc.call(rawResumeRequestMode(uint64(tr.roundTrips), sid, w.Capabilities, m.batch, answer), snap)
			if err == nil {
				snap = bytes.Clone(snap)
			}
			done()
		}
		if err != nil {
			return nil, fmt.Errorf("%s (%s): resume %d: %w", w.Name, m, tr.roundTrips-1, err)
		}
	}
	tr.order = mt.order
	if r.Result.Step.Type != wire.StepCompleted {
		return nil, fmt.Errorf("%s (%s): step %q after %d round trips", w.Name, m, r.Result.Step.Type, tr.roundTrips)
	}
	if len(tr.order) != len(w.Calls) {
		return nil, fmt.Errorf("%s (%s): completed after %d of %d calls", w.Name, m, len(tr.order), len(w.Calls))
	}
	got, err := canonical(r.Result.Step.Value)
	if err != nil || !bytes.Equal(got, w.expected) {
		return nil, fmt.Errorf("%s (%s): result %s, want %s (%v)", w.Name, m, got, w.expected, err)
	}
	tr.result = got
	return tr, nil
}

// Crossing is how many round trips (start + resumes) one program takes in
// each mode.
type Crossing struct {
	Name, Group string
	Calls       int // capability calls
	One, Batch  int // round trips, host_calls "one" and "batch"; Batch 0 when not run
	// OrderNote is empty when the one-mode calls come in the fixture's
	// order (for the gallery: the reference's), and says where they
	// first differ otherwise.
	OrderNote string
}

// verifyModes runs w through c in one mode and, unless batch is false, in
// batch mode, each hot and, unless fresh is nil, cold (every resume in a
// sidecar from fresh), and checks that every run completes with the
// expected value, that cold runs take exactly the hot runs' steps, and
// (in OrderNote, not an error) whether the one-mode calls come in the
// fixture's order.
func (w *Workload) verifyModes(c conn, fresh func() (conn, func(), error), programID string, batch bool) (Crossing, error) {
	x := Crossing{Name: w.Name, Group: w.Group, Calls: len(w.Calls)}
	modes := []bool{false}
	if batch {
		modes = append(modes, true)
	}
	for _, b := range modes {
		hot, err := w.runWorkload(c, programID, runMode{batch: b})
		if err != nil {
			return x, err
		}
		if fresh != nil {
			cm := runMode{batch: b, cold: true, fresh: fresh}
			cold, err := w.runWorkload(c, programID, cm)
			if err != nil {
				return x, err
			}
			if fmt.Sprint(cold.steps) != fmt.Sprint(hot.steps) {
				return x, fmt.Errorf("%s (%s): steps %v, hot %v", w.Name, cm, cold.steps, hot.steps)
			}
		}
		if b {
			x.Batch = hot.roundTrips
			continue
		}
		x.One = hot.roundTrips
		for i, k := range hot.order {
			if k != i {
				got, want := w.Calls[k], w.Calls[i]
				x.OrderNote = fmt.Sprintf("call %d of %d is %s(%s), the fixture's %s(%s)", i+1, len(w.Calls), got.Capability, got.Args, want.Capability, want.Args)
				break
			}
		}
	}
	return x, nil
}
