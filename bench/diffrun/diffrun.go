// Package diffrun runs the reference implementation's own test programs
// (testdata/programs.json, extracted by bench/peer/diffrun/extract.js) on
// the reference's npm package and on a sidecar binary, and compares the
// two runs: the capability calls in order with their arguments, and the
// result (a value compared structurally with the value model, or an
// error's kind; messages are not compared). Every disagreement gets a
// class. bench/cmd/diffrun is the command; nothing here runs in the
// default `go test` except the corpus and classifier checks.
package diffrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Corpus is programs.json.
type Corpus struct {
	Reference struct {
		Repository string `json:"repository"`
		Commit     string `json:"commit"`
		Package    string `json:"package"`
	} `json:"reference"`
	Files    []FileStats `json:"files"`
	Programs []Program   `json:"programs"`
}

// FileStats is what the extractor found in one file of the reference.
type FileStats struct {
	File       string         `json:"file"`
	Origin     string         `json:"origin"`
	Found      int            `json:"found"`
	Kept       int            `json:"kept"`
	Duplicates int            `json:"duplicates"`
	Skipped    map[string]int `json:"skipped"`
	Note       string         `json:"note,omitempty"`
}

// Program is one guest program with its policy and the host's answers.
type Program struct {
	ID           string                 `json:"id"`
	File         string                 `json:"file"`
	Test         string                 `json:"test"`
	Origin       string                 `json:"origin"` // node, rust, test262, corpus, gallery
	How          string                 `json:"how"`
	Source       string                 `json:"source"`
	Inputs       map[string]value.Value `json:"inputs"`
	Capabilities []string               `json:"capabilities"`
	Limits       map[string]uint64      `json:"limits"`
	Answers      []Answer               `json:"answers"`
}

// Answer is one answer the test's host gave, in call order. An empty
// Capability answers whatever is called.
type Answer struct {
	Capability string       `json:"capability"`
	Value      *value.Value `json:"value,omitempty"`
	Error      *CallError   `json:"error,omitempty"`
	Cancel     bool         `json:"cancel,omitempty"`
}

// CallError is an error a capability threw.
type CallError struct {
	Name    string       `json:"name"`
	Message string       `json:"message"`
	Code    string       `json:"code,omitempty"`
	Details *value.Value `json:"details,omitempty"`
}

// Call is one capability call an execution made.
type Call struct {
	Capability string        `json:"capability"`
	Args       []value.Value `json:"args"`
}

// Result is how an execution ended: Value, or Error.
type Result struct {
	Value *value.Value `json:"value,omitempty"`
	Error *ErrorResult `json:"error,omitempty"`
}

// ErrorResult is an error's kind (Parse, Validation, Runtime, Limit,
// Serialization; Host for the harness's own failures) and first line.
type ErrorResult struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Outcome is one run of one program.
type Outcome struct {
	ID     string `json:"id"`
	Calls  []Call `json:"calls"`
	Result Result `json:"result"`
}

// LoadCorpus reads programs.json.
func LoadCorpus(path string) (*Corpus, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Corpus
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

// Answerer answers calls as both sides do: the next recorded answer when
// it is for the capability called (or names none), otherwise the call's
// first argument (undefined when there is none).
type Answerer struct {
	answers []Answer
	next    int
}

// NewAnswerer answers with p's recorded answers.
func NewAnswerer(p *Program) *Answerer { return &Answerer{answers: p.Answers} }

// Answer returns the payload for a call.
func (a *Answerer) Answer(capability string, args []value.Value) host.Payload {
	if a.next < len(a.answers) {
		r := a.answers[a.next]
		if r.Capability == "" || r.Capability == capability {
			a.next++
			switch {
			case r.Error != nil:
				return host.Throw(host.CallError{Name: r.Error.Name, Message: r.Error.Message, Code: r.Error.Code, Details: r.Error.Details})
			case r.Cancel:
				return host.Cancel()
			case r.Value != nil:
				return host.Return(*r.Value)
			}
			return host.Return(value.Undefined())
		}
	}
	if len(args) > 0 {
		return host.Return(args[0])
	}
	return host.Return(value.Undefined())
}

// ReferenceRun is the reference runner's output.
type ReferenceRun struct {
	Mustardscript string    `json:"mustardscript"`
	Node          string    `json:"node"`
	Results       []Outcome `json:"results"`
}

// RunReference runs every program of the corpus at corpusPath on the
// reference: `node <peerDir>/diffrun/reference.js`.
func RunReference(ctx context.Context, peerDir, corpusPath string) (*ReferenceRun, error) {
	script := filepath.Join(peerDir, "diffrun", "reference.js")
	cmd := exec.CommandContext(ctx, "node", script, corpusPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("reference runner: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var r ReferenceRun
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("reference runner output: %w", err)
	}
	return &r, nil
}

// MaxCalls bounds the calls of one execution on either side.
const MaxCalls = 1000

// RunSidecar runs p on the sidecar process c, answering with an Answerer.
// A run longer than wall is cancelled (a Limit error).
func RunSidecar(ctx context.Context, c *host.Client, key host.Key, p *Program, wall time.Duration) Outcome {
	out := Outcome{ID: p.ID}
	ctx, cancel := context.WithTimeout(ctx, wall)
	defer cancel()
	prog, err := c.Compile(ctx, p.Source)
	if err != nil {
		out.Result.Error = errorResult(err)
		return out
	}
	var lim host.Limits
	for k, v := range p.Limits {
		v := v
		switch k {
		case "instruction_budget":
			lim.InstructionBudget = &v
		case "heap_limit_bytes":
			lim.HeapLimitBytes = &v
		case "allocation_budget":
			lim.AllocationBudget = &v
		case "call_depth_limit":
			lim.CallDepthLimit = &v
		case "max_outstanding_host_calls":
			lim.MaxOutstandingHostCalls = &v
		}
	}
	a := NewAnswerer(p)
	step, err := c.Start(ctx, host.StartRequest{Program: prog, Inputs: p.Inputs, Capabilities: p.Capabilities, Limits: lim})
	for err == nil && step.Suspended != nil {
		s := step.Suspended
		if len(out.Calls) >= MaxCalls {
			out.Result.Error = &ErrorResult{Kind: "Host", Message: fmt.Sprintf("more than %d calls", MaxCalls)}
			return out
		}
		out.Calls = append(out.Calls, Call{Capability: s.Capability, Args: s.Args})
		step, err = c.Resume(ctx, host.ResumeRequest{SnapshotID: s.SnapshotID, PolicyID: s.PolicyID, Key: key,
			Payload: a.Answer(s.Capability, s.Args)})
	}
	if err != nil {
		out.Result.Error = errorResult(err)
		return out
	}
	v := step.Value
	out.Result.Value = &v
	return out
}

func errorResult(err error) *ErrorResult {
	var he *host.Error
	if errors.As(err, &he) {
		msg, _, _ := strings.Cut(he.Message, "\n")
		if k := he.Kind(); k != "" {
			return &ErrorResult{Kind: k, Message: strings.TrimPrefix(msg, k+": ")}
		}
		return &ErrorResult{Kind: "Host", Message: msg}
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return &ErrorResult{Kind: "Host", Message: msg}
}
