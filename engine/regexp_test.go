package engine

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runRegexp runs src, compiled at the given program format version, with
// a text input and the given instruction budget.
func runRegexp(t *testing.T, src string, version uint64, text string, budget uint64) Step {
	t.Helper()
	p, err := compileVersion(src, version)
	require.NoError(t, err)
	limits := policy.DefaultLimits()
	limits.InstructionBudget = budget
	h := snapshot.Header{Program: p.Bytes, Inputs: snapshot.SortedInputs([]value.Member{value.M("text", value.String(text))}), Seed: 1, ClockMillis: 1}
	x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: limits})
	require.Nil(t, x)
	return step
}

// The reference's crates/mustard/tests/security_hostile_inputs.rs,
// hostile_regex_patterns_do_not_pin_runtime: text.search(/^(a+)+$/) on 256
// a's and a "!" completes with -1 (there within 3 s and a budget of 20 of
// its instructions). Here the search costs 8 units of work a character
// scanned (docs/limits.md): 37 instructions in all. The same pattern
// searched from lastIndex, through a non-ASCII string or with a loop that
// can match empty ran on the backtracking engine, which gave up after 100
// ms with a Limit error; programs of format version 3 run them in linear
// time.
func TestHostileRegexpRunsLinear(t *testing.T) {
	hostile := strings.Repeat("a", 256) + "!"
	step := runRegexp(t, "text.search(/^(a+)+$/);", programVersion, hostile, policy.DefaultInstructionBudget)
	require.NoError(t, step.Err)
	assert.Equal(t, num(-1), step.Value)
	assert.Equal(t, uint64(37), step.Meter.Instructions, "5 instructions and 257 characters scanned")

	long := strings.Repeat("a", 20000) + "!"
	cases := []struct{ src, want string }{
		{"text.search(/^(a+)+$/)", "-1"},
		{"const r = /(a+)+b/g; r.lastIndex = 1; [r.exec(text), r.lastIndex]", "[null,0]"},
		{"('\u00e9' + text).replace(/(a+)+b/g, '').length", "20002"},
		{"('\u00e9' + text).match(/^(a|aa)+$/gu)", "null"},
		{"text.split(/(a*)*b/).length", "1"},
		{"Array.from(('\u00e9' + text).matchAll(/(a+)+b/g)).length", "0"},
		{"const y = /(a+)+!/y; y.lastIndex = 1; [y.test(text), y.lastIndex]", "[true,20001]"},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			start := time.Now()
			stmts, expr := splitLast(c.src)
			step := runRegexp(t, "JSON.stringify((() => { "+stmts+"; return "+expr+" })())", programVersion, long, policy.DefaultInstructionBudget)
			require.NoError(t, step.Err)
			assert.Equal(t, value.String(c.want), step.Value)
			// Linear: well under the 100 ms a backtracking match may take,
			// even on a busy machine (the old engine ends in a Limit).
			assert.Less(t, time.Since(start), 2*time.Second)
		})
	}

	// Programs of format version 2 keep the engines they ran on: their
	// journals replay with the same answers and charges.
	step = runRegexp(t, "const r = /(a+)+b/g; r.lastIndex = 1; r.exec(text)", programVersionStrict, strings.Repeat("a", 40), policy.DefaultInstructionBudget)
	require.Error(t, step.Err)
	assert.True(t, strings.HasPrefix(step.Err.Error(), "Limit: instruction budget exhausted"), step.Err.Error())
}

// splitLast splits a case of TestHostileRegexpRunsLinear into statements
// and the value returned: the text after the last "; ".
func splitLast(src string) (stmts, expr string) {
	if i := strings.LastIndex(src, "; "); i >= 0 {
		return src[:i], src[i+2:]
	}
	return "", src
}

// The reference's crates/mustard/tests/builtin_surface.rs,
// regex_helpers_cover_patterns_callbacks_and_state: its program, with its
// result passed through JSON.stringify, and the reference's answer
// (mustardscript 0.2.1).
func TestReferenceRegexpHelpers(t *testing.T) {
	src := `const exec = /(?<letters>[a-z]+)(\d+)/g;
const first = exec.exec("ab12cd34");
const firstLast = exec.lastIndex;
const second = exec.exec("ab12cd34");
const secondLast = exec.lastIndex;
const third = exec.exec("ab12cd34");
const thirdLast = exec.lastIndex;
const sticky = /a/y;
sticky.lastIndex = 1;
const stickyFirst = sticky.exec("ba");
const stickyFirstLast = sticky.lastIndex;
const stickySecond = sticky.exec("ba");
const stickySecondLast = sticky.lastIndex;
const matched = "abc123".match(/(?<letters>[a-z]+)(\d+)/);
JSON.stringify({
  split: "a1b2".split(/(\d)/),
  replaceLiteralCallback: "abc".replace("a", (match, offset, input) => ` + "`" + `${match}:${offset}:${input}` + "`" + `),
  replaceRegexTemplate: "abc123".replace(/(?<letters>[a-z]+)(\d+)/, "$<letters>-$2"),
  replaceAllRegexCallback: "alpha-1 beta-2".replaceAll(
    /([a-z]+)-(\d)/g,
    (match, word, digit, offset, input) => ` + "`" + `${word.toUpperCase()}:${digit}:${offset}:${input.length}` + "`" + `
  ),
  search: "abc123".search(/\d+/),
  matchSingle: [matched[0], matched[1], matched[2], matched.index, matched.input, matched.groups.letters],
  matchGlobal: "ab12cd34".match(/\d+/g),
  firstExec: [first[0], first[1], first[2], first.index, first.input, first.groups.letters, firstLast],
  secondExec: [second[0], second.index, secondLast],
  thirdExec: [third === null, thirdLast],
  testState: (() => {
    const regex = /a/g;
    return [regex.test("ba"), regex.lastIndex, regex.test("ba"), regex.lastIndex];
  })(),
  stickyState: [stickyFirst[0], stickyFirst.index, stickyFirstLast, stickySecond === null, stickySecondLast],
  ctor: [RegExp("a", "gi").flags, new RegExp(/b/g).source, new RegExp(/b/g).flags],
});
`
	step := runRegexp(t, src, programVersion, "", policy.DefaultInstructionBudget)
	require.NoError(t, step.Err)
	assert.Equal(t, value.String(`{"split":["a","1","b","2",""],"replaceLiteralCallback":"a:0:abcbc","replaceRegexTemplate":"abc-123","replaceAllRegexCallback":"ALPHA:1:0:14 BETA:2:8:14","search":3,"matchSingle":["abc123","abc","123",0,"abc123","abc"],"matchGlobal":["12","34"],"firstExec":["ab12","ab","12",0,"ab12cd34","ab",4],"secondExec":["cd34",4,8],"thirdExec":[true,0],"testState":[true,2,false,0],"stickyState":["a",1,2,true,0],"ctor":["gi","b","g"]}`), step.Value)
}

// A pattern whose counted repeats expand into a large program is charged
// for that program before it is built: 'x{1000}'.repeat(3000)+'y' (three
// million instructions) took about a second and 700 MB to compile before
// the heap check could see it; now the compile is refused at once. A loop
// of patterns that fit the heap ends at the budget, and a literal of the
// same kind in the source fails to compile.
func TestRegexpProgramSizeCharged(t *testing.T) {
	cases := []struct{ src, want string }{
		{"new RegExp('x{1000}'.repeat(3000) + 'y'); 1", "Limit: heap limit exceeded"},
		{"for (let i = 0; ; i++) new RegExp('x{1000}'.repeat(30) + i)", "Limit: instruction budget exhausted"},
		{"new RegExp('x{1000}y').test('x'.repeat(1000) + 'y')", ""},
		{"/x{1000}y/.test('x'.repeat(1000) + 'y')", ""},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			began := time.Now()
			step := runLimits(t, c.src, policy.DefaultLimits())
			runtime.ReadMemStats(&after)
			if c.want == "" {
				require.NoError(t, step.Err)
				assert.Equal(t, value.Bool(true), step.Value)
			} else {
				require.Error(t, step.Err)
				assert.Equal(t, c.want, step.Err.Error())
			}
			if !raceEnabled {
				assert.Less(t, time.Since(began), 10*time.Second)
				if c.want == "Limit: heap limit exceeded" {
					assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "allocated")
				}
			}
		})
	}

	// A literal is bounded by the parse's own work bound.
	_, err := Compile("const r = /" + strings.Repeat("x{1000}", 3000) + "y/; 1")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "source is too complex to parse")

	// The instructions past one a character cost 64 units each: about
	// one interpreter instruction.
	small := runLimits(t, "new RegExp('x{1}'); 1", policy.DefaultLimits())
	large := runLimits(t, "new RegExp('x{1000}'); 1", policy.DefaultLimits())
	require.NoError(t, small.Err)
	require.NoError(t, large.Err)
	extra := large.Meter.Instructions - small.Meter.Instructions
	assert.True(t, extra >= 990 && extra <= 1000, "the larger program cost %d instructions more", extra)
}
