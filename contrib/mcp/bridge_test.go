package mustardmcp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

const hangBound = 30 * time.Second

// connected is a server and a bridge whose namespace "up" is a client
// session of it, over in-memory transports.
func connected(t *testing.T, s *mcp.Server, b *Bridge) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"},
		&mcp.ClientOptions{ToolListChangedHandler: b.ToolListChanged})
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if err := b.Add(ctx, "up", cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

func obj(t *testing.T, x any) value.Value {
	t.Helper()
	v, err := value.FromGo(x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCapabilities(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	type in struct {
		X    float64 `json:"x"`
		Skip any     `json:"skip,omitempty"`
	}
	type out struct {
		Double float64 `json:"double"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "double", Description: "Structured output."},
		func(ctx context.Context, req *mcp.CallToolRequest, in in) (*mcp.CallToolResult, out, error) {
			return nil, out{Double: 2 * in.X}, nil
		})
	s.AddTool(&mcp.Tool{Name: "json-text", InputSchema: map[string]any{"type": "object"},
		OutputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"b":1,"a":[true,null]}`}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "image", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a dot"},
				&mcp.ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "broken", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "out of order"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	b := &Bridge{CallTimeout: 200 * time.Millisecond}
	connected(t, s, b)
	caps := b.Capabilities()
	ctx := context.Background()
	call := func(name string, args ...value.Value) (string, error) {
		c := caps["up."+name]
		if c == nil {
			t.Fatalf("no capability up.%s in %v", name, caps)
		}
		v, err := c(ctx, durable.Call{Execution: "x", ID: 1, Name: "up." + name, Args: args})
		if err != nil {
			return "", err
		}
		b, err := PlainJSON(v)
		return string(b), err
	}
	for _, c := range []struct {
		name string
		args []value.Value
		want string
	}{
		{"double", []value.Value{obj(t, map[string]any{"x": 21})}, `{"double":42}`},
		{"json-text", nil, `{"b":1,"a":[true,null]}`},
		// Undefined members are left out, as JSON.stringify does.
		{"echo", []value.Value{value.Object(value.M("a", value.Number(1)), value.M("u", value.Undefined()))}, `"{\"a\":1}"`},
		{"echo", nil, `"{}"`},
		{"image", nil, `[{"type":"text","text":"a dot"},{"type":"image","data":"AQI=","mimeType":"image/png"}]`},
	} {
		got, err := call(c.name, c.args...)
		if err != nil || got != c.want {
			t.Errorf("%s: %s, %v; want %s", c.name, got, err, c.want)
		}
	}
	_, err := call("broken")
	var ce host.CallError
	if !errors.As(err, &ce) || ce.Name != "ToolError" || ce.Message != "out of order" {
		t.Errorf("broken: %#v", err)
	}
	_, err = call("echo", value.String("x"))
	if !errors.As(err, &ce) || ce.Name != "TypeError" {
		t.Errorf("a string argument: %#v", err)
	}
	_, err = call("slow")
	if err == nil || errors.As(err, &ce) || !strings.Contains(err.Error(), "no answer within 200ms") {
		t.Errorf("slow: %#v", err)
	}
}

// TestToolListChanged: a notifications/tools/list_changed refreshes the
// capabilities and the declarations.
func TestToolListChanged(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	noop := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	s.AddTool(&mcp.Tool{Name: "first", InputSchema: map[string]any{"type": "object"}}, noop)
	changed := make(chan struct{}, 8)
	b := &Bridge{OnChange: func() { changed <- struct{}{} }}
	connected(t, s, b)
	if strings.Contains(b.Declarations(), "second") || b.Capabilities()["up.second"] != nil {
		t.Fatal("second is there before it is added")
	}
	s.AddTool(&mcp.Tool{Name: "second", Description: "Added later.", InputSchema: map[string]any{"type": "object",
		"properties": map[string]any{"n": map[string]any{"type": "integer"}}, "required": []any{"n"}}}, noop)
	for {
		select {
		case <-changed:
		case <-time.After(hangBound):
			t.Fatal("no refresh")
		}
		if b.Capabilities()["up.second"] != nil {
			break
		}
	}
	if d := b.Declarations(); !strings.Contains(d, "second(args: {\n    n: number;\n  }): Promise<unknown>;") {
		t.Errorf("declarations:\n%s", d)
	}
}
