package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tsSource is a TypeScript program with what it runs under.
type tsSource struct {
	name   string
	src    string
	caps   []string
	entry  snapshot.Entry
	direct bool // the parser reads it (no transform)
}

// typeScriptSources are the TypeScript programs of the tests and the
// code-mode corpus.
func typeScriptSources(t *testing.T) []tsSource {
	var out []tsSource
	files, err := filepath.Glob("testdata/typescript/*.ts")
	require.NoError(t, err)
	more, err := filepath.Glob("../corpus/codemode/*.ts")
	require.NoError(t, err)
	files = append(append(files, more...), "../examples/codemode/triage.ts")
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		s := tsSource{name: f, src: string(src)}
		if meta, err := os.ReadFile(strings.TrimSuffix(f, ".ts") + ".json"); err == nil {
			var m struct {
				Entry        string   `json:"entry"`
				Capabilities []string `json:"capabilities"`
			}
			require.NoError(t, json.Unmarshal(meta, &m))
			s.caps = m.Capabilities
			if m.Entry == "call" {
				s.entry = snapshot.EntryCall
			}
		}
		out = append(out, s)
	}
	return out
}

// runRead runs p to its end with console collection, answering every
// call with its arguments, and describes each step.
func runRead(t *testing.T, p *Program, s tsSource) []string {
	t.Helper()
	pol, err := policy.New(s.caps, policy.DefaultLimits())
	require.NoError(t, err)
	h := snapshot.Header{Program: p.Bytes, Capabilities: pol.Capabilities, Seed: suiteSeed, ClockMillis: suiteClock,
		Entry: s.entry, Console: policy.ConsoleCollect}
	var out []string
	x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: pol.Limits})
	for round := 0; ; round++ {
		require.Less(t, round, 500, "runaway")
		out = append(out, describeShaped(step))
		if !step.Suspended() {
			return out
		}
		var as []Answer
		for _, c := range step.Calls {
			as = append(as, Answer{CallID: c.ID, Payload: echoArgs(c)})
		}
		x, step = x.ResumeWith(nil, as, pol.Limits)
	}
}

// TypeScript the parser reads runs exactly as the same source erased by
// esbuild: same calls, values, errors and console lines. Traceback
// positions are compared apart: the read program's are the source's own,
// where the transform's source map places a call after type arguments
// (f<T>(x)) at the "<", and the end of a top-level-await program a line
// early (TestTypeScriptReadPositions checks the read ones).
func TestTypeScriptReadRunsAsTransformed(t *testing.T) {
	sources := typeScriptSources(t)
	direct := 0
	for i := range sources {
		s := &sources[i]
		p, err := CompileLanguage(s.src, TypeScript, CompileOptions{})
		require.NoError(t, err, s.name)
		s.direct = p.lines.ts == nil
		if s.direct {
			direct++
		}
		want := runRead(t, p, *s)
		alwaysTransformTypeScript = true
		q, err := CompileLanguage(s.src, TypeScript, CompileOptions{})
		alwaysTransformTypeScript = false
		require.NoError(t, err, s.name)
		require.Equal(t, p.ID, q.ID, "the program's identity is its source")
		assert.Equal(t, framesUnplaced(want), framesUnplaced(runRead(t, q, *s)), s.name)
	}
	// The corpus is model-shaped TypeScript: nearly all of it is read
	// directly.
	assert.GreaterOrEqual(t, direct, len(sources)*3/4, "read directly: %d of %d", direct, len(sources))
}

var framePlace = regexp.MustCompile(`(?m)^(  at [^\n(]*) \(\d+:\d+\)`)

func framesUnplaced(steps []string) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = framePlace.ReplaceAllString(s, "$1")
	}
	return out
}

// Positions in a read program are the TypeScript source's own, as in
// JavaScript: a call at its "(", after any type arguments.
func TestTypeScriptReadPositions(t *testing.T) {
	src := "async function c<T>(f: () => T): Promise<T> { return f() }\nasync function main(): Promise<void> {\n  const v: number = await c<number>(() =>\n    boom());\n}\nawait main()\n"
	p := compileTS(t, src)
	require.Nil(t, p.lines.ts, "read, not transformed")
	got := runRead(t, p, tsSource{})
	assert.Equal(t, []string{"error Runtime: ReferenceError: boom is not defined\n  at <anonymous> (4:9)\n  at c (1:55)\n  at main (3:36)\n  at <script> (6:11)\n  at <script> (7:1) logs "}, got)
}
