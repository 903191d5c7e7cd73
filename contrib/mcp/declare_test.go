package mustardmcp

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var update = flag.Bool("update", false, "rewrite the golden declarations")

// serverTools reads testdata/servers/<name>.json, a tools/list result.
func serverTools(t *testing.T, name string) []Tool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "servers", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var list mcp.ListToolsResult
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var tools []Tool
	for _, tl := range list.Tools {
		tools = append(tools, ToolOf(tl))
	}
	return tools
}

func serverNames(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "servers", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatal("no servers in testdata/servers", err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	return names
}

// TestDeclareGolden generates the declarations of real MCP servers' tool
// lists (and a file of edge cases) and compares them with
// testdata/golden; go test -update rewrites them.
func TestDeclareGolden(t *testing.T) {
	total := 0
	for _, name := range serverNames(t) {
		tools := serverTools(t, name)
		total += len(tools)
		got := Declare(name, tools)
		path := filepath.Join("testdata", "golden", name+".d.ts")
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if got != string(want) {
			t.Errorf("%s: declarations differ from %s (go test -update rewrites it):\n%s", name, path, got)
		}
	}
	if total < 15 {
		t.Errorf("only %d tool schemas in testdata/servers", total)
	}
}

// tscCommand finds a TypeScript compiler: $MUSTARD_TSC, tsc on PATH, the
// Node package's dev dependency, or npx's; nil when there is none.
func tscCommand() []string {
	if p := os.Getenv("MUSTARD_TSC"); p != "" {
		return []string{p}
	}
	if p, err := exec.LookPath("tsc"); err == nil {
		return []string{p}
	}
	local, _ := filepath.Abs(filepath.Join("..", "..", "clients", "node", "node_modules", ".bin", "tsc"))
	if _, err := os.Stat(local); err == nil {
		return []string{local}
	}
	if p, err := exec.LookPath("npx"); err == nil {
		if exec.Command(p, "--no-install", "tsc", "--version").Run() == nil {
			return []string{p, "--no-install", "tsc"}
		}
	}
	return nil
}

// TestDeclareTypeChecks runs tsc --strict --noEmit over every generated
// declaration, and over programs that use them as a model would.
func TestDeclareTypeChecks(t *testing.T) {
	tsc := tscCommand()
	if tsc == nil {
		t.Skip("no TypeScript compiler: set MUSTARD_TSC, put tsc on PATH, or run npm ci in clients/node")
	}
	dir := t.TempDir()
	var files []string
	var decls strings.Builder
	for _, name := range serverNames(t) {
		d := Declare(name, serverTools(t, name))
		decls.WriteString(d)
		f := filepath.Join(dir, name+".d.ts")
		if err := os.WriteFile(f, []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	// Programs as a model writes them, against the declarations: they
	// must type-check, and the commented-out lines must not.
	use := `async function main() {
  const text = await filesystem.read_text_file({ path: "/tmp/a.txt", head: 10 });
  const s: string = text.content;
  const [weather, sum] = await Promise.all([
    everything.structuredContent({ location: "Paris" }),
    everything.add({ a: 1, b: 2 }),
  ]);
  const t: number = weather.temperature;
  await filesystem.list_allowed_directories();
  await filesystem.list_directory_with_sizes({ path: ".", sortBy: "size" });
  await github.list_issues({ owner: "o", repo: "r", state: "OPEN", perPage: 5 });
  await git.git_log({ repo_path: ".", start_timestamp: null });
  await context7["resolve-library-id"]({ libraryName: "react" });
  await edgecases.union_shapes({ shape: { kind: "circle", radius: 1 }, level: null, point: [1, 2], "content-type": "text/plain" });
  const g = await memory.read_graph();
  const names: string[] = g.entities.map((e) => e.name);
  const r = await edgecases.draft4_definitions({ range: ["a", 1], user: { login: "x" } });
  const ok: boolean = r.ok;
  await everything.zip({ files: { "a.txt": "data:," } });
  return { s, t, sum, names, ok };
}
`
	f := filepath.Join(dir, "use.ts")
	if err := os.WriteFile(f, []byte(use), 0o644); err != nil {
		t.Fatal(err)
	}
	files = append(files, f)
	args := append(tsc[1:], "--strict", "--noEmit", "--target", "es2022", "--lib", "es2022")
	args = append(args, files...)
	out, err := exec.Command(tsc[0], args...).CombinedOutput()
	if err != nil {
		t.Fatalf("tsc: %v\n%s", err, out)
	}
	// And wrong uses are refused: the types are not too wide to matter.
	bad := []string{
		`filesystem.read_text_file({});`,
		`filesystem.list_directory_with_sizes({ path: ".", sortBy: "date" });`,
		`edgecases.union_shapes({ shape: { kind: "circle", w: 1, h: 2 } });`,
		`everything.add({ a: "1", b: 2 });`,
		`memory.search_nodes();`,
	}
	args = append(tsc[1:], "--strict", "--noEmit", "--target", "es2022", "--lib", "es2022")
	args = append(args, files[:len(files)-1]...)
	for i, src := range bad {
		f := filepath.Join(dir, fmt.Sprintf("bad%d.ts", i))
		if err := os.WriteFile(f, []byte(src+"\nexport {};\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, f)
	}
	out, _ = exec.Command(tsc[0], args...).CombinedOutput()
	for i, src := range bad {
		if !strings.Contains(string(out), fmt.Sprintf("bad%d.ts", i)) {
			t.Errorf("tsc accepted %s:\n%s", src, out)
		}
	}
}
