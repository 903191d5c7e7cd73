package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	mustardmcp "github.com/mustard-sidecar/mustard-sidecar/contrib/mcp"
	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
)

const usage = `usage: mustard-mcp --config FILE [--http ADDR] [--store DIR] [--sidecar PATH] [bounds]

An MCP server with one tool, run_code, which runs TypeScript or JavaScript
in the mustard sidecar with the tools of the MCP servers named in FILE
({"mcpServers": {NAME: {"command", "args", "env"} | {"url", "headers"}}})
as functions NAME.tool(args). It serves MCP on stdio, or streamable HTTP
on ADDR with --http. With --store, runs are checkpointed in DIR and a
restarted server continues them (run_code's run_id).

`

// Main runs mustard-mcp with the command line args (without the program
// name) and returns its exit status.
func Main(args []string) int {
	fs := flag.NewFlagSet("mustard-mcp", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	fs.Usage = func() {
		fmt.Fprint(os.Stderr, usage)
		fs.PrintDefaults()
	}
	var (
		configPath = fs.String("config", "", "the configuration `FILE` naming the upstream MCP servers (required)")
		httpAddr   = fs.String("http", "", "serve streamable HTTP on `ADDR` (host:port) instead of stdio")
		storeDir   = fs.String("store", "", "keep run checkpoints and the snapshot key in `DIR`, so a restarted server continues runs; without it they live in memory")
		sidecar    = fs.String("sidecar", "", "the mustard-sidecar binary (`PATH`); default $MUSTARD_SIDECAR_BIN, else mustard-sidecar from PATH")
		processes  = fs.Int("processes", 2, "sidecar processes")
		budget     = fs.Uint64("instruction-budget", 0, "instruction budget of each run's guest code (0: the sidecar's default)")
		heap       = fs.Uint64("heap-limit", 0, "heap limit of each run in bytes (0: the sidecar's default)")
		wall       = fs.Duration("wall-time", 60*time.Second, "wall time of each run, tool calls included")
		maxCalls   = fs.Int("max-tool-calls", 100, "tool calls per run (0: no bound)")
		maxConc    = fs.Int("max-concurrent-calls", 16, "tool calls of one run running at once")
		callTO     = fs.Duration("call-timeout", 30*time.Second, "timeout of each upstream tool call (0: none)")
		logLevel   = fs.String("log-level", "warn", "log level on stderr: debug, info, warn or error")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *configPath == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintln(os.Stderr, "mustard-mcp: --log-level: not a level")
		return 2
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "mustard-mcp: "+format+"\n", a...)
		return 1
	}
	cfg, err := ReadConfig(*configPath)
	if err != nil {
		return fail("--config: %v", err)
	}
	bin := *sidecar
	if bin == "" {
		bin = os.Getenv("MUSTARD_SIDECAR_BIN")
	}
	if bin == "" {
		bin, err = exec.LookPath(host.DefaultBinary)
		if err != nil {
			return fail("no sidecar: give --sidecar PATH, set MUSTARD_SIDECAR_BIN, or put %s on PATH", host.DefaultBinary)
		}
	}
	var store durable.Store = &durable.MemoryStore{}
	var key host.Key
	if *storeDir != "" {
		key, store, err = openStore(*storeDir)
		if err != nil {
			return fail("--store: %v", err)
		}
	} else if key, err = host.GenerateKey(); err != nil {
		return fail("%v", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	pool, err := host.NewPool(host.PoolConfig{Size: *processes, Logger: logger,
		Command: func() *exec.Cmd { return exec.Command(bin) }})
	if err != nil {
		return fail("starting the sidecar: %v", err)
	}
	defer pool.Close()
	runner := &durable.Runner{Pool: pool, Store: store, Key: key, MaxConcurrentCalls: *maxConc, Logger: logger}
	bridge := &mustardmcp.Bridge{CallTimeout: *callTO}
	connectCtx, cancel := context.WithTimeout(ctx, time.Minute)
	sessions, err := connect(connectCtx, cfg, bridge, host.Version())
	cancel()
	if err != nil {
		return fail("%v", err)
	}
	defer func() {
		for _, s := range sessions {
			s.Close()
		}
	}()
	srv := New(runner, bridge, store, Bounds{InstructionBudget: *budget, HeapLimitBytes: *heap, WallTime: *wall,
		MaxToolCalls: *maxCalls, MaxConcurrentCalls: *maxConc, CallTimeout: *callTO}, host.Version())

	if *httpAddr == "" {
		if err := srv.MCP.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
			return fail("%v", err)
		}
		return 0
	}
	ln, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		return fail("--http: %v", err)
	}
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP }, nil)}
	fmt.Fprintf(os.Stderr, "mustard-mcp: serving MCP on http://%s\n", ln.Addr())
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fail("%v", err)
	}
	return 0
}

// openStore opens the checkpoint directory: DIR/runs for the runs'
// checkpoints and DIR/snapshot.key, made on first use, for the key that
// signs their snapshots (it must outlive the server for a restarted one
// to continue them).
func openStore(dir string) (host.Key, durable.Store, error) {
	if err := os.MkdirAll(filepath.Join(dir, "runs"), 0o700); err != nil {
		return host.Key{}, nil, errors.New("the directory cannot be made")
	}
	keyPath := filepath.Join(dir, "snapshot.key")
	b, err := os.ReadFile(keyPath)
	if errors.Is(err, os.ErrNotExist) {
		k, err := host.GenerateKey()
		if err != nil {
			return host.Key{}, nil, err
		}
		tmp := keyPath + ".tmp"
		if err := os.WriteFile(tmp, k.Bytes(), 0o600); err != nil {
			return host.Key{}, nil, errors.New("the key file cannot be written")
		}
		if err := os.Rename(tmp, keyPath); err != nil {
			return host.Key{}, nil, errors.New("the key file cannot be written")
		}
		b = k.Bytes()
	} else if err != nil {
		return host.Key{}, nil, errors.New("the key file cannot be read")
	}
	key, err := host.NewKey(b)
	if err != nil {
		return host.Key{}, nil, errors.New("the key file does not hold a key")
	}
	st, err := durable.NewDirStore(filepath.Join(dir, "runs"))
	if err != nil {
		return host.Key{}, nil, errors.New("the runs directory cannot be used")
	}
	return key, st, nil
}
