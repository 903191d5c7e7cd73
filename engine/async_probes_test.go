package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
	"github.com/stretchr/testify/require"
)

// The async host-call probes (testdata/asyncprobes, see its README) are
// programs whose step sequence and result were recorded from the reference
// implementation and from V8 with the reference's host-call model
// simulated (CONTRACT.md, "Host calls in async code"). TestAsyncProbes runs
// each one hot (one execution resumed step by step) and cold (every step
// resumed from snapshot bytes in a fresh run) and checks both against the
// recording.

const (
	asyncProbesFile = "testdata/asyncprobes/expected.json"
)

type asyncProbe struct {
	Name         string             `json:"name"`
	From         string             `json:"from"`
	Source       string             `json:"source"`
	Capabilities []string           `json:"capabilities"`
	Inputs       json.RawMessage    `json:"inputs"`
	Limits       *policy.LimitsSpec `json:"limits"`
	Steps        []asyncProbeStep   `json:"steps"`
	Result       asyncProbeResult   `json:"result"`
	Departs      string             `json:"departs"`

	inputs []value.Member
}

type asyncProbeStep struct {
	Capability string           `json:"capability"`
	Args       []value.Value    `json:"args"`
	Answer     asyncProbeAnswer `json:"answer"`
}

type asyncProbeAnswer struct {
	Value *value.Value `json:"value"`
	Error *struct {
		Name    string       `json:"name"`
		Message string       `json:"message"`
		Code    *string      `json:"code"`
		Details *value.Value `json:"details"`
	} `json:"error"`
	Cancelled bool `json:"cancelled"`
}

type asyncProbeResult struct {
	Value *value.Value `json:"value"`
	Error *struct {
		Kind    ErrorKind `json:"kind"`
		Name    *string   `json:"name"`
		Message string    `json:"message"`
		Exact   bool      `json:"exact"` // the message is guest or host text, or a Limit message
	} `json:"error"`
}

func (a asyncProbeAnswer) payload() Payload {
	switch {
	case a.Cancelled:
		return cancelled
	case a.Error != nil:
		return Payload{Outcome: snapshot.Outcome{Error: &snapshot.HostError{
			Name: a.Error.Name, Message: a.Error.Message, Code: a.Error.Code, Details: a.Error.Details,
		}}}
	default:
		return ret(*a.Value)
	}
}

func loadAsyncProbes(t *testing.T) []asyncProbe {
	t.Helper()
	b, err := os.ReadFile(asyncProbesFile)
	require.NoError(t, err)
	var probes []asyncProbe
	require.NoError(t, json.Unmarshal(b, &probes))
	require.NotEmpty(t, probes)
	seen := map[string]bool{}
	for i := range probes {
		p := &probes[i]
		require.False(t, seen[p.Name], "probe name %q repeated", p.Name)
		seen[p.Name] = true
		in, err := value.ParseJSON(append(append([]byte(`{"Object":`), p.Inputs...), '}'))
		require.NoError(t, err, "%s: inputs", p.Name)
		p.inputs = in.Members
		for j, s := range p.Steps {
			a := s.Answer
			n := 0
			for _, set := range []bool{a.Value != nil, a.Error != nil, a.Cancelled} {
				if set {
					n++
				}
			}
			require.Equal(t, 1, n, "%s: step %d needs one of value, error, cancelled", p.Name, j+1)
		}
		require.True(t, (p.Result.Value == nil) != (p.Result.Error == nil), "%s: result needs value or error", p.Name)
	}
	return probes
}

func (p *asyncProbe) limits() *policy.Limits {
	if p.Limits == nil {
		return nil
	}
	l := p.Limits.Resolve()
	return &l
}

// answers answers each suspension with the recorded answer of the first
// recorded step, not used yet, with the same capability and arguments; a
// suspension the recording does not have is cancelled, which ends the run.
func (p *asyncProbe) answers() gsReply {
	used := make([]bool, len(p.Steps))
	return func(capability string, args []value.Value) Payload {
		key := fmtCalls([]gsCall{{capability, args}})
		for i, s := range p.Steps {
			if !used[i] && fmtCalls([]gsCall{{s.Capability, s.Args}}) == key {
				used[i] = true
				return s.Answer.payload()
			}
		}
		return cancelled
	}
}

func (p *asyncProbe) guestCase() guestCase {
	return guestCase{name: p.Name, src: p.Source, inputs: p.inputs, caps: p.Capabilities, each: p.answers(), limits: p.limits()}
}

var errorName = regexp.MustCompile(`^([A-Za-z_$][\w$]*): `)

// check reports how a run differs from the recording, one line per
// difference; none means it matches.
func (p *asyncProbe) check(r guestRun) []string {
	var out []string
	if r.problem != "" {
		out = append(out, "harness: "+r.problem)
	}
	want := make([]gsCall, len(p.Steps))
	for i, s := range p.Steps {
		want[i] = gsCall{s.Capability, s.Args}
	}
	if w, g := fmtCalls(want), fmtCalls(r.calls); w != g {
		out = append(out, fmt.Sprintf("suspensions:\n      want %s\n      got  %s", w, g))
	}
	got := func() string {
		if r.err != nil {
			return fmt.Sprintf("%q", r.err.Error())
		}
		if !r.step.Done {
			return "no result"
		}
		return fmtValue(r.step.Value)
	}
	if v := p.Result.Value; v != nil {
		if r.err != nil || !r.step.Done || !value.Equal(*v, r.step.Value) {
			out = append(out, fmt.Sprintf("result:\n      want %s\n      got  %s", fmtValue(*v), got()))
		}
		return out
	}
	w := p.Result.Error
	wantText := string(w.Kind) + ": "
	if w.Name != nil {
		wantText += *w.Name + ": "
	}
	if w.Exact {
		wantText += w.Message
	} else {
		wantText += "<any message>"
	}
	var e *Error
	if r.err == nil || !errors.As(r.err, &e) {
		return append(out, fmt.Sprintf("result:\n      want %s\n      got  %s", wantText, got()))
	}
	msg := e.Message
	if i := strings.Index(msg, "\n  at "); i >= 0 {
		msg = msg[:i]
	}
	var name *string
	if e.Kind == KindRuntime {
		if m := errorName.FindStringSubmatch(msg); m != nil {
			name, msg = &m[1], msg[len(m[0]):]
		}
	}
	ok := e.Kind == w.Kind
	if w.Name != nil {
		ok = ok && name != nil && *name == *w.Name
	}
	if w.Exact {
		ok = ok && msg == w.Message
	}
	if !ok {
		out = append(out, fmt.Sprintf("result:\n      want %s\n      got  %s", wantText, got()))
	}
	return out
}

func TestAsyncProbes(t *testing.T) {
	probes := loadAsyncProbes(t)
	passed := 0
	for i := range probes {
		p := &probes[i]
		ok := true
		t.Run(p.Name, func(t *testing.T) {
			for _, mode := range []string{"hot", "cold"} {
				var r guestRun
				c := p.guestCase()
				c.cold = mode == "cold"
				r = runGuest(c)
				if diff := p.check(r); len(diff) > 0 {
					ok = false
					note := ""
					if p.Departs != "" {
						note = "\n    (the recording is V8's; the reference departs: " + p.Departs + ")"
					}
					t.Errorf("%s run differs from the recording:\n    %s%s", mode, strings.Join(diff, "\n    "), note)
				}
			}
		})
		if ok {
			passed++
		}
	}
	t.Logf("%d of %d async host-call probes pass hot and cold", passed, len(probes))
}
