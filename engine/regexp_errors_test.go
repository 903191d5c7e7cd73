package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A pattern's SyntaxError, caught by the guest or reported for a literal
// as the program's Parse error, says what V8 says, with neither engine's
// own text (internal/goja's TestRegExpErrorsInV8Words compares hundreds
// of patterns with Node's messages).
func TestRegexpErrorsAreV8s(t *testing.T) {
	caught := `const out = [];
for (const [p, f] of [['[z-a]', ''], ['(?<=a', ''], ['a**', 'g'], ['\\p{Nope}', 'u'], ['\\p', 'u'], ['a{2,1}', ''], ['(?<a>x)(?<a>y)', ''], ['a', 'x']]) {
  try { new RegExp(p, f); out.push('accepted') } catch (e) { out.push(e.name + ': ' + e.message) }
}
JSON.stringify(out)`
	step := runRegexp(t, caught, programVersion, "", policy.DefaultInstructionBudget)
	require.NoError(t, step.Err)
	var got []string
	require.NoError(t, json.Unmarshal([]byte(step.Value.Str), &got))
	assert.Equal(t, []string{
		"SyntaxError: Invalid regular expression: /[z-a]/: Range out of order in character class",
		"SyntaxError: Invalid regular expression: /(?<=a/: Unterminated group",
		"SyntaxError: Invalid regular expression: /a**/g: Nothing to repeat",
		"SyntaxError: Invalid regular expression: /\\p{Nope}/u: Invalid property name",
		"SyntaxError: Invalid regular expression: /\\p/u: Invalid property name",
		"SyntaxError: Invalid regular expression: /a{2,1}/: numbers out of order in {} quantifier",
		"SyntaxError: Invalid regular expression: /(?<a>x)(?<a>y)/: Duplicate capture group name",
		"SyntaxError: Invalid flags supplied to RegExp constructor 'x'",
	}, got)

	for src, want := range map[string]string{
		"const r = /[z-a]/;\nr": "Invalid regular expression: /[z-a]/: Range out of order in character class (1:11)",
		"let x = 1;\n/(?<=a/":   "Invalid regular expression: /(?<=a/: Unterminated group (2:1)",
		"/\\p{L}+/ug.test('é')": "",
		"/\\p{Nope}/u":          "Invalid regular expression: /\\p{Nope}/u: Invalid property name (1:1)",
		"/a/x":                  "Invalid regular expression flags",
		"/[a-z/.test('a')":      "Invalid regular expression: missing /",
	} {
		_, err := Compile(src)
		if want == "" {
			assert.NoError(t, err, src)
			continue
		}
		require.Error(t, err, src)
		assert.True(t, strings.HasPrefix(err.Error(), "Parse: "+want), "%s: %s", src, err)
		for _, w := range []string{"re2", "regexp2", "error parsing", "SyntaxError: SyntaxError"} {
			assert.NotContains(t, err.Error(), w, src)
		}
	}
}
