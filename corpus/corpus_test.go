package corpus

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

var update = flag.Bool("update", false, "re-record the transcripts from Sessions, then regenerate the fuzz seeds")

func TestMain(m *testing.M) {
	hosttest.RunAsSidecar(cli.Main)
	flag.Parse()
	// Every sidecar the tests spawn inherits the fixed entropy.
	os.Setenv(EntropyEnv, Entropy)
	os.Exit(hosttest.RunTests(m))
}

const transcriptDir = "transcripts"

var regenerate = sync.OnceValue(func() error { return Generate(transcriptDir, Sessions) })

func loadTranscripts(t *testing.T) []*Transcript {
	t.Helper()
	if *update {
		if err := regenerate(); err != nil {
			t.Fatal(err)
		}
	}
	ts, err := Load(transcriptDir)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestReplay replays every transcript against the built binary, and the
// transport-neutral ones over binary frames too.
func TestReplay(t *testing.T) {
	ts := loadTranscripts(t)
	names := map[string]bool{}
	for _, s := range Sessions {
		names[s.Name] = true
	}
	for _, tr := range ts {
		if !names[tr.Name] {
			t.Errorf("%s.jsonl has no session in Sessions; regenerate the transcripts", tr.Name)
		}
		delete(names, tr.Name)
		variants := []*Transcript{tr}
		if tr.ReplayBinary {
			bt, err := tr.Binary()
			if err != nil {
				t.Fatal(err)
			}
			variants = append(variants, bt)
		}
		for _, v := range variants {
			t.Run(tr.Name+"/"+v.Transport, func(t *testing.T) {
				t.Parallel()
				if err := Replay(v); err != nil {
					t.Fatalf("%v\n(regenerate with: go run ./corpus/cmd/gen-transcripts)", err)
				}
			})
		}
	}
	for name := range names {
		t.Errorf("session %s has no transcript; regenerate the transcripts", name)
	}
}

// TestSeedsUpToDate keeps the committed fuzz seeds derived from the
// committed transcripts.
func TestSeedsUpToDate(t *testing.T) {
	ts := loadTranscripts(t)
	files, err := Seeds(ts)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join("..")
	if *update {
		if err := WriteSeeds(root, files); err != nil {
			t.Fatal(err)
		}
	}
	if diffs := StaleSeeds(root, files); len(diffs) > 0 {
		t.Fatalf("fuzz seeds are out of date (run go run ./corpus/cmd/gen-transcripts -seeds):\n%s", strings.Join(diffs, "\n"))
	}
}

// TestTranscriptFormat checks that Parse and Encode round-trip every file,
// so the files stay exactly what the generator writes.
func TestTranscriptFormat(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(transcriptDir, "*.jsonl"))
	if len(paths) == 0 {
		t.Fatal("no transcripts")
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !bytes.Equal(tr.Encode(), data) {
			t.Errorf("%s is not in the generator's form", path)
		}
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		`{"ok":true,"profile":{"execution_ns":123,"response_prepare_ns":45,"instructions":7}}`: `{"ok":true,"profile":{"execution_ns":0,"response_prepare_ns":0,"instructions":7}}`,
		`{"ok":true,"profile":{"execution_ns":123,"response_prepare_ns":45}}`:                  `{"ok":true,"profile":{"execution_ns":0,"response_prepare_ns":0}}`,
		// A negative figure breaks the contract (u64): it must not be hidden.
		`{"ok":true,"profile":{"execution_ns":1,"response_prepare_ns":-4}}`: `{"ok":true,"profile":{"execution_ns":1,"response_prepare_ns":-4}}`,
		// Guest text is never touched.
		`{"value":{"String":"\"execution_ns\":5"}}`: `{"value":{"String":"\"execution_ns\":5"}}`,
	} {
		if got := string(Normalize([]byte(in))); got != want {
			t.Errorf("Normalize(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestCutField(t *testing.T) {
	for _, c := range []struct {
		in   string
		path []string
		out  string
		val  string
	}{
		{`{"a":1,"b":"x","c":2}`, []string{"b"}, `{"a":1,"c":2}`, `"x"`},
		{`{"b":"x","c":2}`, []string{"b"}, `{"c":2}`, `"x"`},
		{`{"b":"x"}`, []string{"b"}, `{}`, `"x"`},
		{`{"r":{"s":{"k":[1],"b":"y"}},"z":0}`, []string{"r", "s", "b"}, `{"r":{"s":{"k":[1]}},"z":0}`, `"y"`},
		{`{"a":{"b":1}}`, []string{"b"}, `{"a":{"b":1}}`, ``},
	} {
		out, val, ok, err := cutField([]byte(c.in), c.path...)
		if err != nil || string(out) != c.out || string(val) != c.val || ok != (c.val != "") {
			t.Errorf("cutField(%s, %v) = %s, %s, %v, %v", c.in, c.path, out, val, ok, err)
		}
	}
}

// TestEntropyVariable covers the sidecar's test-only entropy variable: a
// malformed value is a usage error, a set one is announced on stderr.
func TestEntropyVariable(t *testing.T) {
	run := func(value string) (int, string) {
		cmd, err := hosttest.Command("--jsonl")
		if err != nil {
			t.Fatal(err)
		}
		cmd.Env = append(cmd.Env, EntropyEnv+"="+value)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err = cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), stderr.String()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, stderr.String()
	}
	for _, bad := range []string{"x", "1", "1:", ":1", "-1:5", "1:2:3", "1:1.5", " 1:2", "18446744073709551616:0"} {
		code, stderr := run(bad)
		if code != 2 || !strings.Contains(stderr, EntropyEnv) || !strings.Contains(stderr, "usage:") {
			t.Errorf("%s=%q: exit %d, stderr %q; want a usage error (exit 2)", EntropyEnv, bad, code, stderr)
		}
	}
	for _, good := range []string{"0:0", "18446744073709551615:-1", Entropy} {
		if code, stderr := run(good); code != 0 || stderr != EntropyWarning {
			t.Errorf("%s=%q: exit %d, stderr %q; want exit 0 and the warning", EntropyEnv, good, code, stderr)
		}
	}
	// Unset (empty): no warning.
	cmd, err := hosttest.Command("--jsonl")
	if err != nil {
		t.Fatal(err)
	}
	env := cmd.Env
	cmd.Env = nil
	for _, kv := range env {
		if !strings.HasPrefix(kv, EntropyEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil || stderr.Len() != 0 {
		t.Errorf("unset: %v, stderr %q", err, stderr.String())
	}
}

// TestInProcess runs the transcripts through protocol.Session directly
// with the same entropy: the fuzz seeds derived from them then follow the
// recorded paths (valid tokens, real resumes) in-process too.
func TestInProcess(t *testing.T) {
	seed, clock, ok := strings.Cut(Entropy, ":")
	if !ok {
		t.Fatal("bad Entropy")
	}
	s, _ := strconv.ParseUint(seed, 10, 64)
	c, _ := strconv.ParseInt(clock, 10, 64)
	entropy := func() (uint64, int64) { return s, c }
	for _, tr := range loadTranscripts(t) {
		variants := []*Transcript{tr}
		if tr.ReplayBinary {
			bt, err := tr.Binary()
			if err != nil {
				t.Fatal(err)
			}
			variants = append(variants, bt)
		}
		for _, v := range variants {
			opts := protocol.Options{Transport: protocol.JSONL, Entropy: entropy}
			if v.Transport == "binary" {
				opts.Transport = protocol.Binary
			}
			for pi, p := range v.Processes {
				sess := protocol.NewSession(opts)
				for si, st := range p.Steps {
					if st.Text {
						break
					}
					resp, err := sess.Handle(st.Send, st.SendPayload)
					if err != nil {
						t.Fatalf("%s/%s process %d step %d: %v", tr.Name, v.Transport, pi+1, si+1, err)
					}
					if got := Normalize(resp.Header); !bytes.Equal(got, st.Expect) || (v.Transport == "binary" && !bytes.Equal(resp.Payload, st.ExpectPayload)) {
						t.Fatalf("%s/%s process %d step %d:\ngot  %s\nwant %s", tr.Name, v.Transport, pi+1, si+1, got, st.Expect)
					}
				}
				sess.Close()
			}
		}
	}
}
