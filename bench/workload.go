// Package bench measures the sidecar: testing.B benchmarks of the hot
// paths, and the measurement code behind cmd/sidecar-bench, which drives
// the real binary over pipes and compares it with the reference
// implementation running the same workloads in-process.
package bench

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

//go:embed workloads
var workloadFS embed.FS

// Workload is a guest program, every capability call it makes (with its
// arguments, in the order plain JavaScript makes them) and the host's
// answer, and the result it must produce. Hosts answer by capability and
// arguments, as a real host would, so an implementation that issues the
// calls of concurrent async functions in another order still gets the
// right answers. The fixture (<name>.json next to <name>.js) is plain JSON
// so the peer reads it as is; the driver converts it to StructuredValue
// form.
type Workload struct {
	Name         string          `json:"name"`
	Source       string          `json:"source"`
	Inputs       json.RawMessage `json:"inputs"`
	Capabilities []string        `json:"capabilities"`
	Calls        []WorkloadCall  `json:"calls"`
	Expected     json.RawMessage `json:"expected"`
	// Group is "" for the fixtures in bench/workloads and GalleryGroup for
	// programs recorded from the reference's gallery; the driver
	// summarises each group on its own.
	Group string `json:"-"`
	// Language is compile's language for Source: "" (JavaScript) or
	// "typescript".
	Language string `json:"-"`
	// Checked is set by RecordGallery: the round trips the program took
	// in each mode, and whether its calls came in the recorded order.
	Checked *Crossing `json:"-"`

	inputs   []byte               // options.inputs as StructuredValue JSON
	byKey    map[string]*recorded // the calls by callKey
	expected []byte               // canonical form of Expected

	// seen memoises lookup by the argument bytes as the sidecar wrote
	// them. Its encoding is deterministic, so the bytes identify a call
	// as JSON.stringify(args) does for the peer's host, and the canonical
	// form is worked out once per distinct call, not on every one.
	mu   sync.Mutex
	seen map[string]map[string]*recorded // capability → raw args
}

// recorded is the fixture's calls of one capability with equal arguments:
// their indices in Workload.Calls, in order, and the resume payload they
// share.
type recorded struct {
	idx     []int
	payload []byte
}

// WorkloadCall is one capability call and the host's answer: a value, or
// an error the guest sees thrown.
type WorkloadCall struct {
	Capability string          `json:"capability"`
	Args       json.RawMessage `json:"args"`
	Answer     json.RawMessage `json:"answer"`
	Error      *struct {
		Name    string `json:"name"`
		Message string `json:"message"`
		Code    string `json:"code,omitempty"`
	} `json:"error"`
}

// LoadWorkloads reads every bench/workloads/*.js with its fixture.
func LoadWorkloads() ([]*Workload, error) {
	entries, err := workloadFS.ReadDir("workloads")
	if err != nil {
		return nil, err
	}
	var out []*Workload
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".js")
		if !ok {
			continue
		}
		src, err := workloadFS.ReadFile(path.Join("workloads", e.Name()))
		if err != nil {
			return nil, err
		}
		fx, err := workloadFS.ReadFile(path.Join("workloads", name+".json"))
		if err != nil {
			return nil, fmt.Errorf("workload %s: %w", name, err)
		}
		w := &Workload{Name: name, Source: string(src)}
		if err := json.Unmarshal(fx, w); err != nil {
			return nil, fmt.Errorf("workload %s: %w", name, err)
		}
		if err := w.prepare(); err != nil {
			return nil, fmt.Errorf("workload %s: %w", name, err)
		}
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) == 0 {
		return nil, fmt.Errorf("no workloads")
	}
	return out, nil
}

func (w *Workload) prepare() error {
	in, err := Structured(w.Inputs)
	if err != nil {
		return err
	}
	// options.inputs is a map of StructuredValues, not one Object value.
	v, err := value.ParseJSON(in)
	if err != nil || v.Kind != value.KindObject {
		return fmt.Errorf("inputs must be an object")
	}
	b := []byte{'{'}
	for i, m := range v.Members {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, m.Key)
		b = append(b, ':')
		b = m.Value.AppendJSON(b)
	}
	w.inputs = append(b, '}')
	w.byKey = map[string]*recorded{}
	for i, c := range w.Calls {
		var p []byte
		switch {
		case c.Error != nil:
			e, _ := json.Marshal(c.Error)
			p = append(append([]byte(`{"`+wire.FieldType+`":"`+wire.PayloadError+`","`+wire.FieldError+`":`), e...), '}')
		case c.Answer != nil:
			a, err := Structured(c.Answer)
			if err != nil {
				return fmt.Errorf("call %d: %w", i+1, err)
			}
			p = append(append([]byte(`{"`+wire.FieldType+`":"`+wire.PayloadValue+`","`+wire.FieldValue+`":`), a...), '}')
		default:
			return fmt.Errorf("call %d has neither answer nor error", i+1)
		}
		args, err := Structured(c.Args)
		if err != nil {
			return fmt.Errorf("call %d args: %w", i+1, err)
		}
		key, err := callKey(c.Capability, args)
		if err != nil {
			return fmt.Errorf("call %d args: %w", i+1, err)
		}
		rec := w.byKey[key]
		if rec == nil {
			rec = &recorded{payload: p}
			w.byKey[key] = rec
		} else if !bytes.Equal(rec.payload, p) {
			return fmt.Errorf("call %d repeats an earlier call with another answer", i+1)
		}
		rec.idx = append(rec.idx, i)
	}
	exp, err := Structured(w.Expected)
	if err != nil {
		return fmt.Errorf("expected: %w", err)
	}
	if w.expected, err = canonical(exp); err != nil {
		return fmt.Errorf("expected: %w", err)
	}
	return nil
}

// callKey identifies a call by capability and arguments; args is the
// StructuredValue argument array (an Array value or a bare JSON array of
// StructuredValues, as in a suspended step).
func callKey(capability string, args []byte) (string, error) {
	if len(args) > 0 && args[0] == '[' {
		args = append(append([]byte(`{"Array":`), args...), '}')
	}
	c, err := canonical(args)
	if err != nil {
		return "", err
	}
	return capability + "\x00" + string(c), nil
}

// answer returns the resume payload for a suspended call.
func (w *Workload) answer(capability string, args []byte) ([]byte, error) {
	rec, err := w.lookup(capability, args)
	if err != nil {
		return nil, err
	}
	return rec.payload, nil
}

// lookup finds the fixture's calls with a suspended call's capability and
// arguments (args as the sidecar wrote them).
func (w *Workload) lookup(capability string, args []byte) (*recorded, error) {
	w.mu.Lock()
	rec, ok := w.seen[capability][string(args)]
	w.mu.Unlock()
	if ok {
		return rec, nil
	}
	key, err := callKey(capability, args)
	if err != nil {
		return nil, err
	}
	if rec, ok = w.byKey[key]; !ok {
		return nil, fmt.Errorf("%s: no answer for %s(%s)", w.Name, capability, args)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen == nil {
		w.seen = map[string]map[string]*recorded{}
	}
	if w.seen[capability] == nil {
		w.seen[capability] = map[string]*recorded{}
	}
	w.seen[capability][string(args)] = rec
	return rec, nil
}

// Structured converts plain JSON to the StructuredValue wire form, keeping
// object key order.
func Structured(plain []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(plain))
	d.UseNumber()
	out, err := appendStructured(nil, d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return out, nil
}

func appendStructured(dst []byte, d *json.Decoder) ([]byte, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return append(dst, `"Null"`...), nil
	case bool:
		dst = strconv.AppendBool(append(dst, `{"Bool":`...), t)
		return append(dst, '}'), nil
	case json.Number:
		dst = append(dst, `{"Number":{"Finite":`...)
		return append(append(dst, t...), "}}"...), nil
	case string:
		s, _ := json.Marshal(t)
		return append(append(append(dst, `{"String":`...), s...), '}'), nil
	case json.Delim:
		obj := t == '{'
		if obj {
			dst = append(dst, `{"Object":{`...)
		} else {
			dst = append(dst, `{"Array":[`...)
		}
		for i := 0; d.More(); i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			if obj {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				s, _ := json.Marshal(k)
				dst = append(append(dst, s...), ':')
			}
			if dst, err = appendStructured(dst, d); err != nil {
				return nil, err
			}
		}
		if _, err := d.Token(); err != nil {
			return nil, err
		}
		if obj {
			return append(dst, "}}"...), nil
		}
		return append(dst, "]}"...), nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// canonical renders a StructuredValue as plain JSON with one spelling per
// number, so results from different sources compare byte for byte.
func canonical(structured []byte) ([]byte, error) {
	v, err := value.ParseJSON(structured)
	if err != nil {
		return nil, err
	}
	return appendPlain(nil, v), nil
}

func appendPlain(dst []byte, v value.Value) []byte {
	switch v.Kind {
	case value.KindUndefined:
		return append(dst, `"<undefined>"`...)
	case value.KindHole:
		return append(dst, `"<hole>"`...)
	case value.KindNull:
		return append(dst, "null"...)
	case value.KindBool:
		return strconv.AppendBool(dst, v.Bool)
	case value.KindNumber:
		return strconv.AppendFloat(dst, v.Num, 'g', -1, 64)
	case value.KindString:
		return strconv.AppendQuote(dst, v.Str)
	case value.KindArray:
		dst = append(dst, '[')
		for i, e := range v.Elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendPlain(dst, e)
		}
		return append(dst, ']')
	case value.KindObject:
		dst = append(dst, '{')
		for i, m := range v.Members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(strconv.AppendQuote(dst, m.Key), ':')
			dst = appendPlain(dst, m.Value)
		}
		return append(dst, '}')
	}
	return dst
}

// RunInSession runs w once through s, in process: compile, start, and one
// resume per capability call answered from the fixture; it fails unless
// the program makes exactly the fixture's calls (in the fixture's order
// too when ordered is set) and produces the expected result.
func (w *Workload) RunInSession(s *protocol.Session, ordered bool) error {
	call := func(req []byte) (*stepResponse, error) {
		resp, err := s.Handle(req, nil)
		if err != nil {
			return nil, err
		}
		return parseResponse(resp.Header)
	}
	req := compileRequest(1, w.Source)
	if w.Language != "" {
		req = compileRequestIn(1, w.Source, w.Language)
	}
	r, err := call(req)
	if err != nil {
		return fmt.Errorf("%s: compile: %w", w.Name, err)
	}
	if r, err = call(startRequest(2, r.Result.ProgramID, w.inputs, mustJSONText(w.Capabilities))); err != nil {
		return fmt.Errorf("%s: start: %w", w.Name, err)
	}
	n := 0
	for r.Result.Step.Type == wire.StepSuspended {
		step := r.Result.Step
		if n == len(w.Calls) {
			return fmt.Errorf("%s: call %d, %s, is beyond the fixture's %d calls", w.Name, n+1, step.Capability, len(w.Calls))
		}
		if ordered {
			c := w.Calls[n]
			args, err := Structured(c.Args)
			if err != nil {
				return err
			}
			want, err := callKey(c.Capability, args)
			if err != nil {
				return err
			}
			if got, err := callKey(step.Capability, step.Args); err != nil || got != want {
				return fmt.Errorf("%s: call %d is %s(%s), the fixture's %s(%s)", w.Name, n+1, step.Capability, step.Args, c.Capability, c.Args)
			}
		}
		n++
		p, err := w.answer(step.Capability, step.Args)
		if err != nil {
			return err
		}
		if r, err = call(resumeRequest(nil, 3, r.Result.SnapshotID, r.Result.PolicyID, p)); err != nil {
			return fmt.Errorf("%s: resume %d: %w", w.Name, n, err)
		}
	}
	if r.Result.Step.Type != wire.StepCompleted {
		return fmt.Errorf("%s: step %q after %d calls", w.Name, r.Result.Step.Type, n)
	}
	if n != len(w.Calls) {
		return fmt.Errorf("%s: completed after %d of %d calls", w.Name, n, len(w.Calls))
	}
	got, err := canonical(r.Result.Step.Value)
	if err != nil || !bytes.Equal(got, w.expected) {
		return fmt.Errorf("%s: result %s, want %s (%v)", w.Name, got, w.expected, err)
	}
	return nil
}
