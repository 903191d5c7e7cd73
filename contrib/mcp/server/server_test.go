package server

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	mustardmcp "github.com/mustard-sidecar/mustard-sidecar/contrib/mcp"
	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
)

// TestToolListFollowsUpstream: when an upstream server's tools change,
// run_code's description and the declarations resource change with
// them, and mustard-mcp's clients are told.
func TestToolListFollowsUpstream(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	noop := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	up.AddTool(&mcp.Tool{Name: "first", InputSchema: map[string]any{"type": "object"}}, noop)
	b := &mustardmcp.Bridge{}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := up.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	ucs, err := mcp.NewClient(&mcp.Implementation{Name: "mustard-mcp"}, &mcp.ClientOptions{ToolListChangedHandler: b.ToolListChanged}).
		Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ucs.Close()
	if err := b.Add(ctx, "up", ucs); err != nil {
		t.Fatal(err)
	}
	srv := New(&durable.Runner{}, b, &durable.MemoryStore{}, Bounds{}, "test")

	changed := make(chan struct{}, 8)
	st2, ct2 := mcp.NewInMemoryTransports()
	ss2, err := srv.MCP.Connect(ctx, st2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss2.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }}).
		Connect(ctx, ct2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	description := func() string {
		res, err := cs.ListTools(ctx, nil)
		if err != nil || len(res.Tools) != 1 {
			t.Fatal(res, err)
		}
		return res.Tools[0].Description
	}
	if d := description(); !strings.Contains(d, "first(args?:") || strings.Contains(d, "second") {
		t.Fatalf("description:\n%s", d)
	}
	up.AddTool(&mcp.Tool{Name: "second", InputSchema: map[string]any{"type": "object"}}, noop)
	for !strings.Contains(description(), "second(args?:") {
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatal("no tools/list_changed from mustard-mcp")
		}
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: DeclarationsURI})
	if err != nil || !strings.Contains(res.Contents[0].Text, "second(args?:") {
		t.Fatalf("resource: %v %v", res, err)
	}
}

func TestFailureOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want Failure
	}{
		{&host.Error{Message: "Parse: Unexpected \";\" (2:11)"}, Failure{Kind: "Parse", Message: "Unexpected \";\" (2:11)", Line: 2, Column: 11}},
		{&host.Error{Message: "Runtime: TypeError: bad\n  at f (3:9)\n  at <script> (5:1)"},
			Failure{Kind: "Runtime", Message: "TypeError: bad\n  at f (3:9)\n  at <script> (5:1)", Line: 3, Column: 9}},
		{&host.Error{Message: "Limit: instruction budget exhausted"}, Failure{Kind: "Limit", Message: "instruction budget exhausted"}},
		{&host.Error{Message: "unknown snapshot_id `x`"}, Failure{Kind: "Host", Message: "unknown snapshot_id `x`"}},
		{&tooManyCalls{max: 3}, Failure{Kind: "Limit", Message: "the program made more than 3 tool calls"}},
		{errors.New("web.get: connection refused"), Failure{Kind: "Host", Message: "web.get: connection refused"}},
	} {
		if got := failureOf(c.err, Bounds{}); got != c.want {
			t.Errorf("%q: %+v, want %+v", c.err, got, c.want)
		}
	}
}
