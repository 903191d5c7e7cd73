package main

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The benchmarks run what the end-to-end tests run: mustard-mcp as a
// process on stdio, the streamable HTTP upstream server in this process.
// bench/README.md ("Code mode over MCP") has the figures.

func benchRunCode(b *testing.B, code string) {
	w := startWeb(b)
	cs, _ := connectStdio(b, "--config", writeConfig(b, w))
	args := map[string]any{"code": code}
	runCode(b, cs, args) // compile, start the processes
	b.ResetTimer()
	for b.Loop() {
		if res, _ := runCode(b, cs, args); res.IsError {
			b.Fatal(text(res))
		}
	}
}

// BenchmarkRunCodeParallel10x100ms: ten calls of a tool that sleeps 100
// ms, awaited together; the target is at most 200 ms end to end.
func BenchmarkRunCodeParallel10x100ms(b *testing.B) {
	benchRunCode(b, `const r = await Promise.all(Array.from({ length: 10 }, () => web.sleep({ ms: 100 }))); r.length`)
}

// BenchmarkRunCodeOneCall: run_code with one call of a tool that returns
// at once.
func BenchmarkRunCodeOneCall(b *testing.B) {
	benchRunCode(b, `await web.sleep({ ms: 0 })`)
}

// BenchmarkRunCodeTenCalls: run_code with ten calls one after the other.
func BenchmarkRunCodeTenCalls(b *testing.B) {
	benchRunCode(b, `for (let i = 0; i < 10; i++) await web.sleep({ ms: 0 }); 10`)
}

// BenchmarkRunCodeNoCall: run_code with a program that calls no tool.
func BenchmarkRunCodeNoCall(b *testing.B) {
	benchRunCode(b, `1 + 1`)
}

// BenchmarkDirectToolCall: the same tool called by an MCP client
// directly, the baseline of the overhead.
func BenchmarkDirectToolCall(b *testing.B) {
	w := startWeb(b)
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: w.url}, nil)
	cancel()
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	args := &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 0}}
	b.ResetTimer()
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), hangBound)
		_, err := cs.CallTool(ctx, args)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
	}
}
