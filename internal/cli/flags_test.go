package cli

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/trace"
	"github.com/mustard-sidecar/mustard-sidecar/internal/version"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// TestParseFlags covers every flag's spellings, values and refusals as
// docs/protocol.md ("The process") states them.
func TestParseFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	key := bytes.Repeat([]byte{'k'}, minKeyBytes)
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	shortKey := filepath.Join(dir, "short")
	if err := os.WriteFile(shortKey, key[:minKeyBytes-1], 0o600); err != nil {
		t.Fatal(err)
	}
	type want struct {
		code       int  // with ok false
		ok         bool // parsed: the sidecar runs
		stdout     string
		stderr     string // contained in stderr; "" means stderr is empty
		usage      bool   // stderr ends with the usage text
		transport  protocol.Transport
		budget     int64
		stage      int64
		pinned     bool
		trace      string
		log        string
		replayArgs []string
	}
	run := want{ok: true, transport: protocol.Binary, replayArgs: []string{}}
	with := func(f func(*want)) want { w := run; w.replayArgs = nil; f(&w); return w }
	refused := func(msg string) want { return want{code: 2, stderr: "mustard-sidecar: " + msg + "\n", usage: true} }
	for _, tc := range []struct {
		args []string
		want want
	}{
		{nil, run},
		{[]string{"--jsonl"}, with(func(w *want) { w.transport = protocol.JSONL; w.replayArgs = []string{"--jsonl"} })},
		{[]string{"--jsonl", "--jsonl"}, with(func(w *want) { w.transport = protocol.JSONL; w.replayArgs = []string{"--jsonl", "--jsonl"} })},
		{[]string{"--memory-budget", "268435456"}, with(func(w *want) { w.budget = 268435456; w.replayArgs = []string{"--memory-budget", "268435456"} })},
		{[]string{"--memory-budget=1048576"}, with(func(w *want) { w.budget = 1048576; w.replayArgs = []string{"--memory-budget", "1048576"} })},
		{[]string{"--memory-budget=1", "--memory-budget=2"}, with(func(w *want) {
			w.budget = 2
			w.replayArgs = []string{"--memory-budget", "1", "--memory-budget", "2"}
		})},
		{[]string{"--max-stage-bytes", "5", "--jsonl"}, with(func(w *want) {
			w.transport = protocol.JSONL
			w.stage = 5
			w.replayArgs = []string{"--max-stage-bytes", "5", "--jsonl"}
		})},
		{[]string{"--memory-budget=33554432", "--max-stage-bytes=16777216"}, with(func(w *want) {
			w.budget, w.stage = 33554432, 16777216
			w.replayArgs = []string{"--memory-budget", "33554432", "--max-stage-bytes", "16777216"}
		})},
		{[]string{"--snapshot-key-file", keyFile}, with(func(w *want) {
			w.pinned = true
			w.replayArgs = []string{"--snapshot-key-file", trace.PinnedKeyArg}
		})},
		{[]string{"--snapshot-key-file=" + keyFile}, with(func(w *want) {
			w.pinned = true
			w.replayArgs = []string{"--snapshot-key-file", trace.PinnedKeyArg}
		})},
		{[]string{"--trace", "t.jsonl"}, with(func(w *want) { w.trace = "t.jsonl"; w.replayArgs = []string{} })},
		{[]string{"--trace", "--jsonl"}, with(func(w *want) { w.trace = "--jsonl"; w.replayArgs = []string{} })},
		{[]string{"--trace=-"}, with(func(w *want) { w.trace = "-"; w.replayArgs = []string{} })},
		{[]string{"--log-format", "json"}, with(func(w *want) { w.log = "json"; w.replayArgs = []string{} })},
		{[]string{"--log-format=text"}, with(func(w *want) { w.log = "text"; w.replayArgs = []string{} })},

		{[]string{"--help"}, want{stdout: usage}},
		{[]string{"-h"}, want{stdout: usage}},
		{[]string{"--jsonl", "-h", "--bogus"}, want{stdout: usage}},
		{[]string{"--version"}, want{stdout: version.Version + "\n"}},
		{[]string{"--version", "--memory-budget", "0"}, want{stdout: version.Version + "\n"}},

		{[]string{"--bogus"}, refused(`unknown argument "--bogus"`)},
		{[]string{"jsonl"}, refused(`unknown argument "jsonl"`)},
		{[]string{"-jsonl"}, refused(`unknown argument "-jsonl"`)},
		{[]string{"--json"}, refused(`unknown argument "--json"`)},
		{[]string{"--jsonl=true"}, refused(`unknown argument "--jsonl=true"`)},
		{[]string{"--version=1"}, refused(`unknown argument "--version=1"`)},
		{[]string{"-help"}, refused(`unknown argument "-help"`)},
		{[]string{"--h"}, refused(`unknown argument "--h"`)},
		{[]string{"-h=1"}, refused(`unknown argument "-h=1"`)},
		{[]string{"-version"}, refused(`unknown argument "-version"`)},
		{[]string{"-memory-budget", "5"}, refused(`unknown argument "-memory-budget"`)},
		{[]string{"--"}, refused(`unknown argument "--"`)},
		{[]string{"--", "--jsonl"}, refused(`unknown argument "--"`)},
		{[]string{"-"}, refused(`unknown argument "-"`)},
		{[]string{"---jsonl"}, refused(`unknown argument "---jsonl"`)},
		{[]string{"--=x"}, refused(`unknown argument "--=x"`)},
		{[]string{"--bogus", "--help"}, refused(`unknown argument "--bogus"`)},
		{[]string{"--jsonl", "--bogus", "--version"}, refused(`unknown argument "--bogus"`)},

		{[]string{"--trace"}, refused("--trace needs a value")},
		{[]string{"--jsonl", "--memory-budget"}, refused("--memory-budget needs a value")},
		{[]string{"--max-stage-bytes"}, refused("--max-stage-bytes needs a value")},
		{[]string{"--snapshot-key-file"}, refused("--snapshot-key-file needs a value")},
		{[]string{"--log-format"}, refused("--log-format needs a value")},

		{[]string{"--max-stage-bytes", "0"}, refused(`--max-stage-bytes must be a positive integer, got "0"`)},
		{[]string{"--max-stage-bytes=-1"}, refused(`--max-stage-bytes must be a positive integer, got "-1"`)},
		{[]string{"--max-stage-bytes="}, refused(`--max-stage-bytes must be a positive integer, got ""`)},
		{[]string{"--max-stage-bytes", "1e6"}, refused(`--max-stage-bytes must be a positive integer, got "1e6"`)},
		{[]string{"--max-stage-bytes", "18446744073709551616"}, refused(`--max-stage-bytes must be a positive integer, got "18446744073709551616"`)},
		{[]string{"--memory-budget", "0"}, refused(`--memory-budget must be a positive integer of bytes (at most 1125899906842624), got "0"`)},
		{[]string{"--memory-budget", "128MiB"}, refused(`--memory-budget must be a positive integer of bytes (at most 1125899906842624), got "128MiB"`)},
		{[]string{"--memory-budget", "1125899906842625"}, refused(`--memory-budget must be a positive integer of bytes (at most 1125899906842624), got "1125899906842625"`)},
		{[]string{"--memory-budget", "1048576", "--max-stage-bytes", "524289"}, refused("--max-stage-bytes (524289) must be at most half of --memory-budget (1048576)")},
		{[]string{"--log-format", "xml"}, refused(`--log-format must be text or json, got "xml"`)},
		{[]string{"--log-format=JSON"}, refused(`--log-format must be text or json, got "JSON"`)},
		// The first argument refused is the one reported.
		{[]string{"--memory-budget", "0", "--bogus"}, refused(`--memory-budget must be a positive integer of bytes (at most 1125899906842624), got "0"`)},
		{[]string{"--memory-budget", "0", "--help"}, refused(`--memory-budget must be a positive integer of bytes (at most 1125899906842624), got "0"`)},
		{[]string{"--log-format", "xml", "--trace"}, refused(`--log-format must be text or json, got "xml"`)},

		// A key file that cannot be used: one line, no usage.
		{[]string{"--snapshot-key-file", filepath.Join(dir, "absent")}, want{code: 2, stderr: "mustard-sidecar: --snapshot-key-file: the key file does not exist\n"}},
		{[]string{"--snapshot-key-file", shortKey, "--bogus"}, want{code: 2, stderr: "mustard-sidecar: --snapshot-key-file: the key must be at least 32 bytes; the file has 31\n"}},
	} {
		var stdout, stderr bytes.Buffer
		cl, code, ok := parseFlags(tc.args, &stdout, &stderr)
		w := tc.want
		name := strings.Join(tc.args, " ")
		if ok != w.ok || code != w.code {
			t.Errorf("%q: ok %v, exit %d; want ok %v, exit %d (stderr %q)", name, ok, code, w.ok, w.code, stderr.String())
			continue
		}
		if stdout.String() != w.stdout {
			t.Errorf("%q: stdout %q, want %q", name, stdout.String(), w.stdout)
		}
		switch {
		case w.stderr == "" && stderr.Len() > 0:
			t.Errorf("%q: stderr %q, want none", name, stderr.String())
		case w.usage && stderr.String() != w.stderr+usage:
			t.Errorf("%q: stderr %q, want %q and the usage", name, stderr.String(), w.stderr)
		case !w.usage && stderr.String() != w.stderr:
			t.Errorf("%q: stderr %q, want %q", name, stderr.String(), w.stderr)
		}
		if !ok {
			continue
		}
		o := cl.opts
		if o.Transport != w.transport || o.MemoryBudget != w.budget || o.MaxStageBytes != w.stage ||
			(o.PinnedKey != nil) != w.pinned || cl.tracePath != w.trace || cl.logFormat != w.log {
			t.Errorf("%q: got transport %v budget %d stage %d pinned %v trace %q log %q", name,
				o.Transport, o.MemoryBudget, o.MaxStageBytes, o.PinnedKey != nil, cl.tracePath, cl.logFormat)
		}
		if w.pinned && !bytes.Equal(o.PinnedKey, key) {
			t.Errorf("%q: pinned key %q, want the file's bytes", name, o.PinnedKey)
		}
		if strings.Join(cl.replayArgs, "\x00") != strings.Join(w.replayArgs, "\x00") || cl.replayArgs == nil {
			t.Errorf("%q: replay arguments %q, want %q", name, cl.replayArgs, w.replayArgs)
		}
	}
}

// TestUsageNamesEveryFlag keeps the usage text, written by hand, and the
// flags defined in step.
func TestUsageNamesEveryFlag(t *testing.T) {
	t.Parallel()
	var cl commandLine
	var failed error
	n := 0
	cl.flagSet(io.Discard, &failed).VisitAll(func(f *flag.Flag) {
		n++
		spelling := "--" + f.Name
		if f.Name == "h" {
			spelling = "-h"
		}
		if !regexp.MustCompile(`\n  (-h, )?` + regexp.QuoteMeta(spelling) + `[ ,\n]`).MatchString(usage) {
			t.Errorf("the usage does not describe %s", spelling)
		}
	})
	if n != 9 {
		t.Errorf("%d flags defined; the usage describes 9", n)
	}
}
