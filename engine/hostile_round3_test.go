package engine

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// BigInt operations are charged by operand size before they run and
// bounded as V8 bounds them, under default limits.
func TestBigIntUnderDefaultLimits(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`BigInt.asIntN(2**31, 5n) === 5n`, "true"},
		{`String(5n >> 2n**64n) + ' ' + String(-5n >> 2n**64n)`, "0 -1"},
		{`String(1n << (2n**64n + 5n))`, "Runtime: RangeError: Maximum BigInt size exceeded"},
		{`1n << (2n**31n)`, "Runtime: RangeError: Maximum BigInt size exceeded"},
		{`BigInt('1'.repeat(2e6)) > 0n`, "Limit: instruction budget exhausted"},
		{`3n ** BigInt(1e8)`, "Limit: "},
		{`let x = 1n << 2000000n; for (let i = 0; i < 100; i++) x * x; 1`, "Limit: instruction budget exhausted"},
		{`function f() { return 7n ** 7n ** 9n } 1`, "1"},
		{`if (false) { 1n << (2n ** 31n) } 1`, "1"},
		{`String(2n ** 64n * 3n + 1n)`, "55340232221128654849"},
	} {
		t.Run(c.src, func(t *testing.T) {
			began := time.Now()
			step := runLimits(t, c.src, policy.DefaultLimits())
			if step.Err != nil {
				assert.True(t, strings.HasPrefix(step.Err.Error(), c.want), "%s: %v", c.src, step.Err)
			} else {
				require.True(t, step.Done)
				got := step.Value
				switch got.Kind {
				case value.KindString:
					assert.Equal(t, c.want, got.Str)
				case value.KindBool:
					assert.Equal(t, c.want == "true", got.Bool)
				case value.KindNumber:
					assert.Equal(t, c.want, strconv.FormatFloat(got.Num, 'g', -1, 64))
				default:
					t.Fatalf("unexpected result %v", got)
				}
			}
			if !raceEnabled {
				assert.Less(t, time.Since(began), 10*time.Second)
			}
		})
	}
}

// A lone surrogate survives string methods that change nothing around it.
func TestLoneSurrogatesSurviveNoOpMethods(t *testing.T) {
	step := runLimits(t, `const s = 'a\ud800b'; [s.normalize(), s.toUpperCase().toLowerCase(), (' ' + s + ' ').trim()].map(x => JSON.stringify(x)).join(' ')`, policy.DefaultLimits())
	require.NoError(t, step.Err)
	assert.Equal(t, `"a\ud800b" "a\ud800b" "a\ud800b"`, step.Value.Str)
}
