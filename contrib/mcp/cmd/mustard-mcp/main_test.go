package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mustard-sidecar/mustard-sidecar/contrib/mcp/server"
	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

// The tests run real processes: the test binary re-executes itself as
// mustard-mcp (roleEnv=server), as the stdio upstream MCP server
// (roleEnv=upstream) and as the sidecar (hosttest's child marker). The
// streamable HTTP upstream server runs in the test process, on loopback,
// so that its tools can count their calls and hold them at barriers.

const roleEnv = "MUSTARD_MCP_TEST_ROLE"

// childEnv is hosttest's marker of a process that is to be the sidecar:
// mustard-mcp's children (it runs this binary as its sidecar) inherit it.
const childEnv = "MUSTARD_SIDECAR_HOSTTEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "server":
		os.Unsetenv(roleEnv) // its sidecar children are sidecars
		os.Exit(server.Main(os.Args[1:]))
	case "upstream":
		os.Unsetenv(roleEnv)
		os.Unsetenv(childEnv)
		os.Exit(runStdioUpstream())
	}
	hosttest.RunAsSidecar(cli.Main)
	os.Exit(hosttest.RunTests(m))
}

// runStdioUpstream is the stdio upstream server, namespace "files".
func runStdioUpstream() int {
	s := mcp.NewServer(&mcp.Implementation{Name: "files", Version: "1"}, nil)
	type pathIn struct {
		Path string `json:"path" jsonschema:"the file's path"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "read", Description: "Read a file."},
		func(ctx context.Context, req *mcp.CallToolRequest, in pathIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "contents of " + in.Path}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "stat", Description: "A file's metadata."},
		func(ctx context.Context, req *mcp.CallToolRequest, in pathIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "size 3"},
				&mcp.ResourceLink{URI: "file://" + in.Path, Name: in.Path, MIMEType: "text/plain"},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "remove", Description: "Remove a file."},
		func(ctx context.Context, req *mcp.CallToolRequest, in pathIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "permission denied: " + in.Path}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
		return 1
	}
	return 0
}

// web is the streamable HTTP upstream server, namespace "web".
type web struct {
	url string

	mu    sync.Mutex
	calls map[string]int // "tool arg" -> calls
	meet  *barrier
	gates map[int]*gate
}

type barrier struct {
	mu      sync.Mutex
	arrived int
	all     chan struct{}
}

type gate struct {
	entered chan struct{}
	release chan struct{}
}

func (w *web) count(key string) {
	w.mu.Lock()
	w.calls[key]++
	w.mu.Unlock()
}

func (w *web) calledTimes(key string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls[key]
}

func (w *web) gate(n int) *gate {
	w.mu.Lock()
	defer w.mu.Unlock()
	g := w.gates[n]
	if g == nil {
		g = &gate{entered: make(chan struct{}, 16), release: make(chan struct{})}
		w.gates[n] = g
	}
	return g
}

// hangBound bounds waits that only a broken program would exceed.
const hangBound = 60 * time.Second

func startWeb(t testing.TB) *web {
	w := &web{calls: map[string]int{}, gates: map[int]*gate{}, meet: &barrier{all: make(chan struct{})}}
	s := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	type meetIn struct {
		Who string `json:"who"`
	}
	type meetOut struct {
		Who string `json:"who"`
		Met bool   `json:"met"`
	}
	// meet returns once two calls are in it at once: two calls awaited
	// together complete, calls made one after the other never do.
	mcp.AddTool(s, &mcp.Tool{Name: "meet", Description: "Wait for the other caller."},
		func(ctx context.Context, req *mcp.CallToolRequest, in meetIn) (*mcp.CallToolResult, meetOut, error) {
			w.count("meet " + in.Who)
			b := w.meet
			b.mu.Lock()
			b.arrived++
			if b.arrived == 2 {
				close(b.all)
			}
			b.mu.Unlock()
			select {
			case <-b.all:
				return nil, meetOut{Who: in.Who, Met: true}, nil
			case <-time.After(hangBound):
				return nil, meetOut{}, errors.New("nobody came")
			case <-ctx.Done():
				return nil, meetOut{}, ctx.Err()
			}
		})
	type nIn struct {
		N int `json:"n"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "step", Description: "Return n."},
		func(ctx context.Context, req *mcp.CallToolRequest, in nIn) (*mcp.CallToolResult, any, error) {
			w.count("step " + strconv.Itoa(in.N))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(in.N)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "gate", Description: "Wait until the test opens gate n."},
		func(ctx context.Context, req *mcp.CallToolRequest, in nIn) (*mcp.CallToolResult, any, error) {
			w.count("gate " + strconv.Itoa(in.N))
			g := w.gate(in.N)
			g.entered <- struct{}{}
			select {
			case <-g.release:
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "opened"}}}, nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	type msIn struct {
		MS int `json:"ms"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "sleep", Description: "Sleep ms milliseconds."},
		func(ctx context.Context, req *mcp.CallToolRequest, in msIn) (*mcp.CallToolResult, any, error) {
			time.Sleep(time.Duration(in.MS) * time.Millisecond)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slept"}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Test") != "1" {
			w.count("request without the configured header")
		}
		h.ServeHTTP(rw, r)
	}))
	t.Cleanup(hs.Close)
	w.url = hs.URL
	return w
}

// writeConfig writes the config naming both upstream servers.
func writeConfig(t testing.TB, w *web) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{"mcpServers": map[string]any{
		"files": map[string]any{"command": exe, "args": []string{}, "env": map[string]string{roleEnv: "upstream"}},
		"web":   map[string]any{"url": w.url, "headers": map[string]string{"X-Test": "1"}},
	}}
	b, _ := json.Marshal(cfg)
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// mustardCmd is mustard-mcp as a process.
func mustardCmd(t testing.TB, args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append(args, "--sidecar", exe)...)
	cmd.Env = append(os.Environ(), roleEnv+"=server", childEnv+"=1", "GORACE=atexit_sleep_ms=0")
	cmd.Stderr = os.Stderr
	return cmd
}

// connectStdio starts mustard-mcp on stdio and connects a client to it.
func connectStdio(t testing.TB, args ...string) (*mcp.ClientSession, *exec.Cmd) {
	cmd := mustardCmd(t, args...)
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, cmd
}

// runOut is run_code's structured result.
type runOut struct {
	Result json.RawMessage `json:"result"`
	Logs   []struct {
		Level string `json:"level"`
		Text  string `json:"text"`
	} `json:"logs"`
	Error *server.Failure `json:"error"`
}

func runCode(t testing.TB, cs *mcp.ClientSession, args map[string]any) (*mcp.CallToolResult, runOut) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	var out runOut
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("structuredContent %s: %v", b, err)
	}
	return res, out
}

// sameJSON reports whether two JSON texts hold the same value (the
// client decodes structuredContent into maps, which lose member order).
func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func text(res *mcp.CallToolResult) string {
	if len(res.Content) != 1 {
		return fmt.Sprintf("%d content items", len(res.Content))
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return "not text"
}

const mainProgram = `
type Met = { who: string; met: boolean };
const [a, b]: Met[] = await Promise.all([web.meet({ who: "a" }), web.meet({ who: "b" })]);
const content = await files.read({ path: "/etc/motd" });
const stat = await files.stat({ path: "/etc/motd" });
let caught = "";
try {
  await files.remove({ path: "/etc/motd" });
} catch (e) {
  caught = (e as Error).name + ": " + (e as Error).message;
}
console.log("read", content.length, "characters");
console.warn({ caught });
({ met: [a, b], content, stat, caught })
`

func TestEndToEnd(t *testing.T) {
	w := startWeb(t)
	cfg := writeConfig(t, w)
	cs, _ := connectStdio(t, "--config", cfg)
	ctx := context.Background()

	t.Run("declarations", func(t *testing.T) {
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(tools.Tools) != 1 || tools.Tools[0].Name != "run_code" {
			t.Fatalf("tools: %+v", tools.Tools)
		}
		d := tools.Tools[0].Description
		for _, want := range []string{"declare const files: {", "declare const web: {", "meet(args", "Promise<{",
			"read(args: {"} {
			if !strings.Contains(d, want) {
				t.Errorf("description lacks %q:\n%s", want, d)
			}
		}
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: server.DeclarationsURI})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Contents) != 1 || !strings.Contains(d, res.Contents[0].Text) {
			t.Errorf("the resource is not the description's declarations: %+v", res.Contents)
		}
	})

	t.Run("program", func(t *testing.T) {
		res, out := runCode(t, cs, map[string]any{"code": mainProgram})
		if res.IsError {
			t.Fatalf("isError: %s", text(res))
		}
		var got struct {
			Met     []map[string]any
			Content string
			Stat    []map[string]any
			Caught  string
		}
		if err := json.Unmarshal(out.Result, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Met) != 2 || got.Met[0]["who"] != "a" || got.Met[1]["who"] != "b" || got.Met[0]["met"] != true {
			t.Errorf("met: %+v", got.Met)
		}
		if got.Content != "contents of /etc/motd" {
			t.Errorf("content %q", got.Content)
		}
		if len(got.Stat) != 2 || got.Stat[0]["type"] != "text" || got.Stat[0]["text"] != "size 3" ||
			got.Stat[1]["type"] != "resource_link" || got.Stat[1]["uri"] != "file:///etc/motd" {
			t.Errorf("stat: %+v", got.Stat)
		}
		if got.Caught != "ToolError: permission denied: /etc/motd" {
			t.Errorf("caught %q", got.Caught)
		}
		if len(out.Logs) != 2 || out.Logs[0].Level != "log" || out.Logs[0].Text != "read 21 characters" ||
			out.Logs[1].Level != "warn" || !strings.Contains(out.Logs[1].Text, "permission denied") {
			t.Errorf("logs: %+v", out.Logs)
		}
		tx := text(res)
		first, _, _ := strings.Cut(tx, "\n")
		if !sameJSON(first, string(out.Result)) || !strings.Contains(tx, "\n[log] read 21 characters\n") {
			t.Errorf("text:\n%s", tx)
		}
		if w.calledTimes("request without the configured header") != 0 {
			t.Error("mustard-mcp did not send the configured headers")
		}
		if w.calledTimes("meet a") != 1 || w.calledTimes("meet b") != 1 {
			t.Errorf("calls: %v", w.calls)
		}
	})

	t.Run("function", func(t *testing.T) {
		res, out := runCode(t, cs, map[string]any{"language": "javascript",
			"code":   "async ({ n }) => { const s = await web.step({ n }); return Number(s) * 2 }",
			"inputs": map[string]any{"n": 21}})
		if res.IsError || string(out.Result) != "42" {
			t.Fatalf("%v %s", res.IsError, text(res))
		}
		// A function declaration, as models often write it, in TypeScript.
		res, out = runCode(t, cs, map[string]any{
			"code":   "async function main({ n }: { n: number }): Promise<number> {\n  const s = await web.step({ n });\n  return Number(s) * 3;\n}\n",
			"inputs": map[string]any{"n": 7}})
		if res.IsError || string(out.Result) != "21" {
			t.Fatalf("%v %s", res.IsError, text(res))
		}
	})

	t.Run("syntax error", func(t *testing.T) {
		res, out := runCode(t, cs, map[string]any{"code": "const a = 1;\nconst b = ;\n"})
		if !res.IsError || out.Error == nil || out.Error.Kind != "Parse" || out.Error.Line != 2 || out.Error.Column == 0 {
			t.Fatalf("%+v %s", out.Error, text(res))
		}
		if !strings.HasPrefix(text(res), "Parse: ") {
			t.Errorf("text %q", text(res))
		}
	})

	t.Run("run_id of other code", func(t *testing.T) {
		if res, out := runCode(t, cs, map[string]any{"code": "1", "run_id": "taken"}); res.IsError || string(out.Result) != "1" {
			t.Fatal(text(res))
		}
		res, out := runCode(t, cs, map[string]any{"code": "2", "run_id": "taken"})
		if !res.IsError || out.Error == nil || out.Error.Kind != "Input" || !strings.Contains(out.Error.Message, "other code") {
			t.Fatalf("%+v %s", out.Error, text(res))
		}
	})

	t.Run("runtime error", func(t *testing.T) {
		res, out := runCode(t, cs, map[string]any{"code": "console.log('before');\nconst o: any = null;\no.x\n"})
		if !res.IsError || out.Error == nil || out.Error.Kind != "Runtime" || out.Error.Line != 3 ||
			len(out.Logs) != 1 || out.Logs[0].Text != "before" {
			t.Fatalf("%+v %+v %s", out.Error, out.Logs, text(res))
		}
	})
}

// TestEndToEndLimits: an endless loop ends with a Limit reply within the
// wall time and the server keeps serving; this one speaks streamable
// HTTP.
func TestEndToEndLimits(t *testing.T) {
	w := startWeb(t)
	cmd := mustardCmd(t, "--config", writeConfig(t, w), "--http", "127.0.0.1:0", "--wall-time", "2s", "--max-tool-calls", "3",
		"--instruction-budget", "1000000000000000")
	cmd.Stderr = nil
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	url := ""
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "mustard-mcp: serving MCP on "); ok {
			url = u
			break
		}
		t.Log(sc.Text())
	}
	if url == "" {
		t.Fatal("mustard-mcp did not say where it serves")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	start := time.Now()
	res, out := runCode(t, cs, map[string]any{"code": "console.log('spinning'); while (true) {}"})
	if !res.IsError || out.Error == nil || out.Error.Kind != "Limit" || !strings.HasPrefix(text(res), "Limit: ") {
		t.Fatalf("%+v %s", out.Error, text(res))
	}
	if len(out.Logs) != 1 || out.Logs[0].Text != "spinning" {
		t.Errorf("logs %+v", out.Logs)
	}
	t.Logf("endless loop ended after %v: %s", time.Since(start), text(res))

	// A run waiting in a tool call past the wall time ends too.
	res, out = runCode(t, cs, map[string]any{"code": "console.log('waiting'); await web.gate({ n: 9 })"})
	if !res.IsError || out.Error == nil || out.Error.Kind != "Limit" || !strings.Contains(out.Error.Message, "wall time") {
		t.Fatalf("%+v %s", out.Error, text(res))
	}
	t.Logf("a run waiting in a tool: %s", text(res))

	res, out = runCode(t, cs, map[string]any{"code": "for (let i = 0; i < 5; i++) await web.step({ n: i }); 'done'"})
	if !res.IsError || out.Error == nil || out.Error.Kind != "Limit" || !strings.Contains(out.Error.Message, "more than 3 tool calls") {
		t.Fatalf("%+v %s", out.Error, text(res))
	}
	if w.calledTimes("step 3") != 0 {
		t.Errorf("the fourth call reached the tool")
	}

	res, out = runCode(t, cs, map[string]any{"code": "6 * 7"})
	if res.IsError || string(out.Result) != "42" {
		t.Fatalf("after the limit: %s", text(res))
	}
}

// children are the processes whose parent is pid, by whether they are the
// upstream stdio server.
func sidecarChildren(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	var out []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 2 || fields[1] != strconv.Itoa(pid) {
			continue
		}
		env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if strings.Contains(string(env), roleEnv+"=upstream") {
			continue
		}
		out = append(out, p)
	}
	return out
}

const gateProgram = `
const a = await web.step({ n: %d });
const g = await web.gate({ n: %d });
const b = await web.step({ n: %d });
console.log("through", g);
({ a, g, b })
`

// TestEndToEndSidecarKilled kills mustard-mcp's sidecars while a tool
// call of a run is outstanding: the run completes, and no tool is called
// twice.
func TestEndToEndSidecarKilled(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds the sidecar processes in /proc")
	}
	w := startWeb(t)
	cs, cmd := connectStdio(t, "--config", writeConfig(t, w), "--processes", "1")
	g := w.gate(1)
	done := make(chan struct{})
	var res *mcp.CallToolResult
	var out runOut
	go func() {
		defer close(done)
		res, out = runCode(t, cs, map[string]any{"code": fmt.Sprintf(gateProgram, 100, 1, 101), "run_id": "killed-sidecar"})
	}()
	select {
	case <-g.entered:
	case <-time.After(hangBound):
		t.Fatal("the gate was not reached")
	}
	kids := sidecarChildren(t, cmd.Process.Pid)
	if len(kids) == 0 {
		t.Fatal("no sidecar process found")
	}
	for _, p := range kids {
		if err := syscallKill(p); err != nil {
			t.Fatal(err)
		}
	}
	close(g.release)
	<-done
	if res.IsError {
		t.Fatalf("%s", text(res))
	}
	if !sameJSON(string(out.Result), `{"a":"100","g":"opened","b":"101"}`) {
		t.Errorf("result %s", out.Result)
	}
	for _, k := range []string{"step 100", "gate 1", "step 101"} {
		if n := w.calledTimes(k); n != 1 {
			t.Errorf("%s called %d times", k, n)
		}
	}
	// The killed process is replaced: the server still runs programs.
	if res, _ := runCode(t, cs, map[string]any{"code": "1"}); res.IsError {
		t.Fatal(text(res))
	}
}

// TestEndToEndRestart kills mustard-mcp itself while a run waits in a
// tool call, starts it again on the same store, and calls run_code with
// the same run_id: the run continues from its checkpoint (the tool call
// before the kill is not made again).
func TestEndToEndRestart(t *testing.T) {
	w := startWeb(t)
	cfg := writeConfig(t, w)
	store := t.TempDir()
	cs, cmd := connectStdio(t, "--config", cfg, "--store", store)
	g := w.gate(2)
	args := map[string]any{"code": fmt.Sprintf(gateProgram, 200, 2, 201), "run_id": "restarted-run"}
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code", Arguments: args})
		errc <- err
	}()
	select {
	case <-g.entered:
	case <-time.After(hangBound):
		t.Fatal("the gate was not reached")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-errc // the call fails with the connection
	close(g.release)

	cs2, _ := connectStdio(t, "--config", cfg, "--store", store)
	res, out := runCode(t, cs2, args)
	if res.IsError {
		t.Fatalf("%s", text(res))
	}
	if !sameJSON(string(out.Result), `{"a":"200","g":"opened","b":"201"}`) {
		t.Errorf("result %s", out.Result)
	}
	if n := w.calledTimes("step 200"); n != 1 {
		t.Errorf("the step before the kill was made %d times", n)
	}
	if n := w.calledTimes("step 201"); n != 1 {
		t.Errorf("the step after the gate was made %d times", n)
	}
	// The completed run is kept: the same run_id answers the same result
	// without running anything again.
	res, out = runCode(t, cs2, args)
	if res.IsError || !sameJSON(string(out.Result), `{"a":"200","g":"opened","b":"201"}`) || w.calledTimes("step 201") != 1 {
		t.Errorf("again: %s", text(res))
	}
}
