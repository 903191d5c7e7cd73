// Package mustardmcp gives guest programs the tools of MCP servers: each
// tool of a connected MCP client session becomes a capability named
// <namespace>.<tool> (durable.Capability), and Declarations is the
// TypeScript a model needs to call them, generated from the tools' JSON
// Schemas. The command mustard-mcp (cmd/mustard-mcp) serves code mode
// over MCP with it.
package mustardmcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// ToolOf is the part of an MCP tool that declarations use.
func ToolOf(t *mcp.Tool) Tool {
	title := t.Title
	if title == "" && t.Annotations != nil {
		title = t.Annotations.Title
	}
	return Tool{Name: t.Name, Title: title, Description: t.Description, InputSchema: t.InputSchema,
		OutputSchema: t.OutputSchema}
}

// Bridge holds MCP client sessions, each under a namespace, and their
// tool lists. It is safe for concurrent use.
type Bridge struct {
	// CallTimeout bounds each tools/call; 0 means none (the caller's ctx
	// still applies).
	CallTimeout time.Duration
	// OnChange, if set, is called after a namespace's tool list changed
	// (Refresh, or a notifications/tools/list_changed).
	OnChange func()

	mu     sync.Mutex
	spaces map[string]*space
}

type space struct {
	session *mcp.ClientSession
	tools   []*mcp.Tool
}

// Add lists the session's tools and puts them under namespace, which
// must be a JavaScript identifier (IsNamespace). A namespace added again
// is replaced.
func (b *Bridge) Add(ctx context.Context, namespace string, cs *mcp.ClientSession) error {
	if !IsNamespace(namespace) {
		return fmt.Errorf("namespace %q is not an identifier a program can use", namespace)
	}
	tools, err := listTools(ctx, cs)
	if err != nil {
		return fmt.Errorf("%s: listing tools: %w", namespace, err)
	}
	b.mu.Lock()
	if b.spaces == nil {
		b.spaces = map[string]*space{}
	}
	b.spaces[namespace] = &space{session: cs, tools: tools}
	b.mu.Unlock()
	return nil
}

func listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var tools []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// Refresh lists the tools of the session under namespace again.
func (b *Bridge) Refresh(ctx context.Context, namespace string) error {
	b.mu.Lock()
	sp := b.spaces[namespace]
	b.mu.Unlock()
	if sp == nil {
		return fmt.Errorf("no namespace %q", namespace)
	}
	tools, err := listTools(ctx, sp.session)
	if err != nil {
		return fmt.Errorf("%s: listing tools: %w", namespace, err)
	}
	b.mu.Lock()
	if b.spaces[namespace] == sp {
		sp.tools = tools
	}
	onChange := b.OnChange
	b.mu.Unlock()
	if onChange != nil {
		onChange()
	}
	return nil
}

// ToolListChanged is a handler for mcp.ClientOptions.ToolListChangedHandler:
// it refreshes the namespace of the session the notification came from.
func (b *Bridge) ToolListChanged(ctx context.Context, req *mcp.ToolListChangedRequest) {
	cs, ok := req.GetSession().(*mcp.ClientSession)
	if !ok {
		return
	}
	b.mu.Lock()
	var ns string
	for name, sp := range b.spaces {
		if sp.session == cs {
			ns = name
		}
	}
	b.mu.Unlock()
	if ns != "" {
		// The notification handler runs on the session's reader: list
		// from another goroutine, whose answers that reader delivers.
		go func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			_ = b.Refresh(ctx, ns)
		}()
	}
}

// Namespaces returns the namespaces in order.
func (b *Bridge) Namespaces() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Sorted(maps.Keys(b.spaces))
}

// Tools returns the tools of a namespace, as last listed.
func (b *Bridge) Tools(namespace string) []*mcp.Tool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if sp := b.spaces[namespace]; sp != nil {
		return slices.Clone(sp.tools)
	}
	return nil
}

// Declarations is the TypeScript to show a model: the usage paragraph,
// then one `declare const <namespace>` per namespace.
func (b *Bridge) Declarations() string {
	var out strings.Builder
	out.WriteString(Usage)
	out.WriteString("\n")
	for _, ns := range b.Namespaces() {
		var tools []Tool
		for _, t := range b.Tools(ns) {
			tools = append(tools, ToolOf(t))
		}
		out.WriteString("\n")
		out.WriteString(Declare(ns, tools))
	}
	return out.String()
}

// Capabilities returns one capability per callable tool, named
// <namespace>.<tool>: it calls tools/call with the guest's one argument
// (an object, or nothing for {}) and answers with the tool's result (see
// Answer). A tool result with isError throws its text in the guest, as
// an Error named "ToolError"; a transport failure or timeout is an error
// the Runner reports (the call is asked again by a later Run).
func (b *Bridge) Capabilities() map[string]durable.Capability {
	caps := map[string]durable.Capability{}
	b.mu.Lock()
	defer b.mu.Unlock()
	for ns, sp := range b.spaces {
		for _, t := range sp.tools {
			if !CallableName(ns, t.Name) {
				continue
			}
			caps[ns+"."+t.Name] = b.capability(sp.session, t)
		}
	}
	return caps
}

func (b *Bridge) capability(cs *mcp.ClientSession, tool *mcp.Tool) durable.Capability {
	name := tool.Name
	structured := tool.OutputSchema != nil
	return func(ctx context.Context, call durable.Call) (value.Value, error) {
		var args any = map[string]any{}
		if len(call.Args) > 0 && call.Args[0].Kind != value.KindUndefined {
			if call.Args[0].Kind != value.KindObject {
				return value.Value{}, host.CallError{Name: "TypeError",
					Message: fmt.Sprintf("%s takes one argument object", call.Name)}
			}
			raw, err := PlainJSON(call.Args[0])
			if err != nil {
				return value.Value{}, host.CallError{Name: "TypeError", Message: fmt.Sprintf("%s: %v", call.Name, err)}
			}
			args = json.RawMessage(raw)
		}
		if len(call.Args) > 1 {
			return value.Value{}, host.CallError{Name: "TypeError",
				Message: fmt.Sprintf("%s takes one argument object, got %d arguments", call.Name, len(call.Args))}
		}
		if b.CallTimeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, b.CallTimeout)
			defer cancel()
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && b.CallTimeout > 0 {
				return value.Value{}, fmt.Errorf("%s: no answer within %v", call.Name, b.CallTimeout)
			}
			return value.Value{}, fmt.Errorf("%s: %w", call.Name, err)
		}
		if res.IsError {
			msg := contentText(res.Content)
			if msg == "" {
				msg = call.Name + " failed"
			}
			return value.Value{}, host.CallError{Name: "ToolError", Message: msg}
		}
		ans, err := Answer(res, structured)
		if err != nil {
			return value.Value{}, fmt.Errorf("%s: %w", call.Name, err)
		}
		return ans, nil
	}
}

// Answer is the value a guest's call gets for a tool's result: its
// structuredContent when present; else a single text item as a string,
// parsed as JSON when the tool declares an output schema (structured) and
// the text is JSON; else the content items as an array of {type, text |
// data | mimeType | uri}.
func Answer(res *mcp.CallToolResult, structured bool) (value.Value, error) {
	if res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return value.Value{}, err
		}
		return jsonValue(raw)
	}
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			if structured && json.Valid([]byte(tc.Text)) {
				return jsonValue([]byte(tc.Text))
			}
			return value.FromGo(tc.Text)
		}
	}
	items := make([]any, 0, len(res.Content))
	for _, c := range res.Content {
		items = append(items, contentItem(c))
	}
	return value.FromGo(items)
}

func jsonValue(raw []byte) (value.Value, error) {
	return value.FromPlainJSON(raw)
}

// PlainJSON is v as JSON.stringify writes it: object members that are
// undefined are left out, undefined array elements, holes, NaN and
// ±Infinity are null. A top-level undefined is null.
func PlainJSON(v value.Value) ([]byte, error) {
	return value.ToPlainJSON(stringifiable(v))
}

func stringifiable(v value.Value) value.Value {
	switch v.Kind {
	case value.KindUndefined, value.KindHole:
		return value.Null()
	case value.KindNumber:
		if math.IsNaN(v.Num) || math.IsInf(v.Num, 0) {
			return value.Null()
		}
	case value.KindArray:
		out := make([]value.Value, len(v.Elems))
		for i, e := range v.Elems {
			out[i] = stringifiable(e)
		}
		return value.Array(out...)
	case value.KindObject:
		out := make([]value.Member, 0, len(v.Members))
		for _, m := range v.Members {
			if m.Value.Kind == value.KindUndefined {
				continue
			}
			out = append(out, value.M(m.Key, stringifiable(m.Value)))
		}
		return value.Object(out...)
	}
	return v
}

type item struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
	URI      string `json:"uri,omitempty"`
}

func contentItem(c mcp.Content) item {
	switch c := c.(type) {
	case *mcp.TextContent:
		return item{Type: "text", Text: c.Text}
	case *mcp.ImageContent:
		return item{Type: "image", Data: base64.StdEncoding.EncodeToString(c.Data), MIMEType: c.MIMEType}
	case *mcp.AudioContent:
		return item{Type: "audio", Data: base64.StdEncoding.EncodeToString(c.Data), MIMEType: c.MIMEType}
	case *mcp.ResourceLink:
		return item{Type: "resource_link", URI: c.URI, MIMEType: c.MIMEType}
	case *mcp.EmbeddedResource:
		it := item{Type: "resource"}
		if r := c.Resource; r != nil {
			it.URI, it.MIMEType, it.Text = r.URI, r.MIMEType, r.Text
			if len(r.Blob) > 0 {
				it.Data = base64.StdEncoding.EncodeToString(r.Blob)
			}
		}
		return it
	}
	// A content type this SDK version has no struct for: its JSON type.
	raw, _ := json.Marshal(c)
	var w struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw, &w)
	return item{Type: w.Type}
}

// contentText is the text of a result's text items, one per line.
func contentText(cs []mcp.Content) string {
	var parts []string
	for _, c := range cs {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
