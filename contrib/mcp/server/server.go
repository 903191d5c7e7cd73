package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	mustardmcp "github.com/mustard-sidecar/mustard-sidecar/contrib/mcp"
	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Bounds are the limits of each run.
type Bounds struct {
	InstructionBudget uint64        // 0: the sidecar's default
	HeapLimitBytes    uint64        // 0: the sidecar's default
	WallTime          time.Duration // the whole run, tool calls included; also each segment of guest code
	MaxToolCalls      int           // tool calls per run; 0: no bound
	// MaxConcurrentCalls bounds the tool calls of one run running at once.
	MaxConcurrentCalls int
	// CallTimeout bounds each upstream tools/call.
	CallTimeout time.Duration
}

// Server is the run_code MCP server over a Runner and a Bridge.
type Server struct {
	Runner *durable.Runner
	Bridge *mustardmcp.Bridge
	Store  durable.Store
	Bounds Bounds

	MCP *mcp.Server

	mu sync.Mutex
}

// DeclarationsURI is the resource holding the generated declarations.
const DeclarationsURI = "mustard://declarations.d.ts"

// ToolName is the name of the tool that runs code.
const ToolName = "run_code"

var inputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "code": {"type": "string", "description": "A TypeScript (or JavaScript) program: a script whose last expression is the result (top-level await allowed), or a single (async) function expression, called with inputs, whose return value is the result."},
    "language": {"type": "string", "enum": ["typescript", "javascript"], "default": "typescript"},
    "inputs": {"type": "object", "description": "Values the program reads: each is a global of the script, and the function's one argument."},
    "run_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,100}$", "description": "Optional id of the run: calling run_code again with the same run_id and code continues the run where it stopped (after a crash or restart) or returns its outcome, without repeating tool calls it already made."}
  },
  "required": ["code"],
  "additionalProperties": false
}`)

// New makes the MCP server: the run_code tool and the declarations
// resource; both follow the upstream tool lists.
func New(r *durable.Runner, b *mustardmcp.Bridge, store durable.Store, bounds Bounds, version string) *Server {
	s := &Server{Runner: r, Bridge: b, Store: store, Bounds: bounds}
	s.MCP = mcp.NewServer(&mcp.Implementation{Name: "mustard-mcp", Version: version}, &mcp.ServerOptions{
		Instructions: "run_code runs a program that calls the tools declared in its description, in a sandbox; write the whole task as one program.",
	})
	s.addTool()
	s.MCP.AddResource(&mcp.Resource{URI: DeclarationsURI, Name: "declarations", MIMEType: "text/x-typescript",
		Description: "The TypeScript declarations of the functions run_code programs can call."},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: DeclarationsURI,
				MIMEType: "text/x-typescript", Text: b.Declarations()}}}, nil
		})
	prev := b.OnChange
	b.OnChange = func() {
		if prev != nil {
			prev()
		}
		s.addTool() // replaces it, and tells clients the list changed
	}
	return s
}

// Description is the run_code tool's description: what it does, then the
// declarations.
func (s *Server) Description() string {
	return "Run a TypeScript program in a sandbox where the functions declared below call tools. " +
		"Do a whole task in one program: call tools, combine and filter their results in code, " +
		"and return only what is needed. The result comes back as JSON, with the console output.\n\n" +
		s.Bridge.Declarations()
}

func (s *Server) addTool() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.MCP.AddTool(&mcp.Tool{Name: ToolName, Title: "Run code", Description: s.Description(), InputSchema: inputSchema},
		s.runCode)
}

// Input is run_code's input.
type Input struct {
	Code     string                     `json:"code"`
	Language string                     `json:"language,omitempty"`
	Inputs   map[string]json.RawMessage `json:"inputs,omitempty"`
	RunID    string                     `json:"run_id,omitempty"`
}

// Failure is the error of a failed run.
type Failure struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
}

// Text is the failure as one text: "<Kind>: <message>".
func (f Failure) Text() string { return f.Kind + ": " + f.Message }

var runIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)

func (s *Server) runCode(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in Input
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return failed(Failure{Kind: "Input", Message: "the arguments are not {code, language?, inputs?, run_id?}: " + jsonError(err)}, nil), nil
	}
	return s.Run(ctx, in), nil
}

// Run runs one program to completion and makes its tool result.
func (s *Server) Run(ctx context.Context, in Input) *mcp.CallToolResult {
	lang := host.TypeScript
	switch in.Language {
	case "", "typescript":
	case "javascript":
		lang = host.JavaScript
	default:
		return failed(Failure{Kind: "Input", Message: fmt.Sprintf("language must be \"typescript\" or \"javascript\", not %q", in.Language)}, nil)
	}
	if in.RunID != "" && !runIDRE.MatchString(in.RunID) {
		return failed(Failure{Kind: "Input", Message: "run_id must be 1 to 100 characters of letters, digits, _ and -"}, nil)
	}
	inputs := map[string]value.Value{}
	for k, raw := range in.Inputs {
		v, err := value.FromPlainJSON(raw)
		if err != nil {
			return failed(Failure{Kind: "Input", Message: fmt.Sprintf("inputs.%s: %v", k, err)}, nil)
		}
		inputs[k] = v
	}
	entry, code := entryOf(in.Code, lang)
	prog, err := s.Runner.Pool.CompileWith(ctx, code, host.CompileOptions{Language: lang})
	if err != nil {
		return failed(failureOf(err, s.Bounds), nil)
	}
	id := "run-" + in.RunID
	if in.RunID == "" {
		id = "anon-" + randomHex()
	} else if cp, ok, err := s.Store.Load(ctx, id); err == nil && ok && cp.ProgramID != prog.ID {
		return failed(Failure{Kind: "Input", Message: fmt.Sprintf("run_id %q names a run of other code: give the same code to continue it, or a new run_id", in.RunID)}, nil)
	}
	var (
		logMu sync.Mutex
		logs  = []host.LogLine{}
	)
	caps := s.Bridge.Capabilities()
	if max := s.Bounds.MaxToolCalls; max > 0 {
		for name, c := range caps {
			caps[name] = func(ctx context.Context, call durable.Call) (value.Value, error) {
				if call.ID > uint64(max) {
					return value.Value{}, &tooManyCalls{max: max}
				}
				return c(ctx, call)
			}
		}
	}
	exec := durable.Execution{
		ID:           id,
		Program:      prog,
		Inputs:       inputs,
		Capabilities: caps,
		Console:      host.ConsoleCollect,
		Entry:        entry,
		Limits:       s.limits(),
		OnLog: func(l host.LogLine) {
			logMu.Lock()
			logs = append(logs, l)
			logMu.Unlock()
		},
	}
	runCtx := ctx
	if s.Bounds.WallTime > 0 {
		var cancel context.CancelFunc
		// The sidecar ends guest code that runs past the wall time by
		// itself (Limits.WallTime, per segment), with the segment's
		// console lines; the deadline, a little later, ends runs that
		// wait in tool calls.
		grace := max(time.Second, s.Bounds.WallTime/10)
		runCtx, cancel = context.WithTimeoutCause(ctx, s.Bounds.WallTime+grace, errWallTime)
		defer cancel()
	}
	v, err := s.Runner.Run(runCtx, exec)
	if err != nil && context.Cause(runCtx) == errWallTime && ctx.Err() == nil {
		// The run is over: end it for good, so that a retry reports it.
		_ = s.Runner.Cancel(context.WithoutCancel(ctx), id)
		err = errWallTime
	}
	if in.RunID == "" {
		// An anonymous run cannot be continued: drop its checkpoint. A
		// run with an id keeps it, to be continued or reported by a
		// later call with that id.
		_ = s.Store.Delete(context.WithoutCancel(ctx), id)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if err != nil && in.RunID != "" && strings.HasSuffix(err.Error(), "is already running") {
		return failed(Failure{Kind: "Input", Message: fmt.Sprintf("run_id %q is running in another call", in.RunID)}, nil)
	}
	if err != nil {
		return failed(failureOf(err, s.Bounds), logs)
	}
	return succeeded(v, logs)
}

var errWallTime = errors.New("wall time")

type tooManyCalls struct{ max int }

func (e *tooManyCalls) Error() string {
	return fmt.Sprintf("the program made more than %d tool calls", e.max)
}

func isGuestFailure(err error) bool {
	var he *host.Error
	return errors.As(err, &he) && kindOf(he.Message) != ""
}

func (s *Server) limits() host.Limits {
	var l host.Limits
	if s.Bounds.InstructionBudget > 0 {
		l.InstructionBudget = host.Limit(s.Bounds.InstructionBudget)
	}
	if s.Bounds.HeapLimitBytes > 0 {
		l.HeapLimitBytes = host.Limit(s.Bounds.HeapLimitBytes)
	}
	l.WallTime = s.Bounds.WallTime
	return l
}

func randomHex() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var kinds = []string{"Parse", "Validation", "Runtime", "Limit", "Serialization"}

// kindOf is the kind a sidecar error text starts with, or "".
func kindOf(msg string) string {
	for _, k := range kinds {
		if strings.HasPrefix(msg, k+": ") {
			return k
		}
	}
	return ""
}

var (
	parsePos = regexp.MustCompile(`\((\d+):(\d+)\)\s*$`)
	framePos = regexp.MustCompile(`(?m)^\s+at .*\((\d+):(\d+)\)\s*$`)
)

// failureOf describes an error for the model: a guest failure with its
// kind and, where the sidecar gave one, its position (for a runtime
// error, of the innermost frame).
func failureOf(err error, b Bounds) Failure {
	var he *host.Error
	var tm *tooManyCalls
	switch {
	case errors.Is(err, errWallTime), errors.Is(err, durable.ErrCancelled):
		return Failure{Kind: "Limit", Message: fmt.Sprintf("the run did not finish within its wall time (%v)", b.WallTime)}
	case errors.As(err, &tm):
		return Failure{Kind: "Limit", Message: tm.Error()}
	case errors.As(err, &he):
		k := kindOf(he.Message)
		if k == "" {
			return Failure{Kind: "Host", Message: he.Message}
		}
		f := Failure{Kind: k, Message: strings.TrimPrefix(he.Message, k+": ")}
		first, _, _ := strings.Cut(he.Message, "\n")
		if m := parsePos.FindStringSubmatch(first); m != nil && k != "Runtime" {
			f.Line, _ = strconv.Atoi(m[1])
			f.Column, _ = strconv.Atoi(m[2])
		} else if m := framePos.FindStringSubmatch(he.Message); m != nil {
			f.Line, _ = strconv.Atoi(m[1])
			f.Column, _ = strconv.Atoi(m[2])
		}
		return f
	case errors.Is(err, context.Canceled):
		return Failure{Kind: "Host", Message: "the call was cancelled"}
	}
	return Failure{Kind: "Host", Message: err.Error()}
}

func logText(logs []host.LogLine) string {
	var b strings.Builder
	for _, l := range logs {
		fmt.Fprintf(&b, "\n[%s] %s", l.Level, l.Text)
	}
	return b.String()
}

func logsOrEmpty(logs []host.LogLine) []host.LogLine {
	if logs == nil {
		return []host.LogLine{}
	}
	return logs
}

func failed(f Failure, logs []host.LogLine) *mcp.CallToolResult {
	text := f.Text()
	if len(logs) > 0 {
		text += "\n\nconsole:" + logText(logs)
	}
	return &mcp.CallToolResult{
		IsError:           true,
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: map[string]any{"error": f, "logs": logsOrEmpty(logs)},
	}
}

func succeeded(v value.Value, logs []host.LogLine) *mcp.CallToolResult {
	raw, err := mustardmcp.PlainJSON(v)
	if err != nil {
		return failed(Failure{Kind: "Runtime", Message: "the result cannot be written as JSON: " + err.Error()}, logs)
	}
	text := string(raw)
	if len(logs) > 0 {
		text += "\n\nconsole:" + logText(logs)
	}
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: struct {
			Result json.RawMessage `json:"result"`
			Logs   []host.LogLine  `json:"logs"`
		}{raw, logsOrEmpty(logs)},
	}
}
