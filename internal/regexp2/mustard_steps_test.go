package regexp2

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// stepCounter is a StepHook that adds up what it is told.
type stepCounter struct {
	total, calls int
	limit        int // > 0: fail once total passes it
}

var errStepLimit = errors.New("step limit")

func (c *stepCounter) hook(n int) error {
	c.total += n
	c.calls++
	if c.limit > 0 && c.total > c.limit {
		return errStepLimit
	}
	return nil
}

func countedSearch(t testing.TB, re *Regexp, input string, start int, c *stepCounter) (*Match, error) {
	t.Helper()
	return re.FindRunesMatchStartingAtWith(&SearchOptions{StepHook: c.hook, NoTimeout: true}, []rune(input), start)
}

// stepCases are patterns with lookarounds and backreferences (what goja
// runs on regexp2), catastrophic ones among them, and inputs. The
// catastrophic inputs are a few characters shorter in the default run
// (each character doubles the steps, or nearly), their full length in the
// long suites.
var stepCases = []struct{ pattern, input string }{
	{`(a+)+b(?=c)`, strings.Repeat("a", longtest.Pick(14, 18))},
	{`^(a|aa)+$(?!x)`, strings.Repeat("a", longtest.Pick(20, 24)) + "!"},
	{`(\w+)\s\1`, "hello world world again"},
	{`(?<=\$)\d+(\.\d\d)?`, "cost: $42.50 or $7"},
	{`(x+x+)+y\1`, strings.Repeat("x", longtest.Pick(12, 16))},
	{`\w+x(?=y)`, strings.Repeat("a", 300) + "x"},
	{`(?=(\d+))\w+\1`, "abc123def123"},
	{`[a-c]{3}(?!d)`, strings.Repeat("abcd", 50) + "abc"},
	{`(a|b)*?c(?<=bc)`, strings.Repeat("ab", 100) + "c"},
	{`foo|bar(?=!)`, strings.Repeat("x", 100) + "bar!"},
}

func TestStepHookDoesNotChangeResults(t *testing.T) {
	for _, tc := range stepCases {
		re := MustCompile(tc.pattern, ECMAScript)
		runes := []rune(tc.input)
		for start := 0; start <= len(runes); start += 1 + len(runes)/7 {
			want, err := re.FindRunesMatchStartingAt(runes, start)
			if err != nil {
				t.Fatal(err)
			}
			var c stepCounter
			got, err := countedSearch(t, re, tc.input, start, &c)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(matchGroups(want)) != fmt.Sprint(matchGroups(got)) {
				t.Errorf("%s on %q from %d: %v with the hook, %v without", tc.pattern, tc.input, start, matchGroups(got), matchGroups(want))
			}
			if c.total < 1 && start == 0 {
				t.Errorf("%s on %q from %d: no steps counted", tc.pattern, tc.input, start)
			}
		}
	}
}

func matchGroups(m *Match) []string {
	if m == nil {
		return nil
	}
	var out []string
	for _, g := range m.Groups() {
		if len(g.Captures) == 0 {
			out = append(out, "-")
			continue
		}
		out = append(out, fmt.Sprintf("%d:%d", g.RuneIndex, g.RuneLength))
	}
	return out
}

// The count is a function of the pattern, the input and the start: the
// same twice, however often the hook is called, and the same when other
// goroutines run the same Regexp with hooks of their own.
func TestStepCountDeterministic(t *testing.T) {
	for _, tc := range stepCases {
		re := MustCompile(tc.pattern, ECMAScript)
		var first stepCounter
		if _, err := countedSearch(t, re, tc.input, 0, &first); err != nil {
			t.Fatal(err)
		}
		for _, every := range []int{1, 7, 100, DefaultStepEvery} {
			var c stepCounter
			_, err := re.FindRunesMatchStartingAtWith(&SearchOptions{StepHook: c.hook, StepEvery: every}, []rune(tc.input), 0)
			if err != nil {
				t.Fatal(err)
			}
			if c.total != first.total {
				t.Errorf("%s: %d steps with StepEvery %d, %d the first time", tc.pattern, c.total, every, first.total)
			}
			if every == 1 && c.calls < 2 {
				t.Errorf("%s: %d calls for %d steps with StepEvery 1", tc.pattern, c.calls, c.total)
			}
		}
		var wg sync.WaitGroup
		totals := make([]int, 4)
		for i := range totals {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var c stepCounter
				if _, err := countedSearch(t, re, tc.input, 0, &c); err == nil {
					totals[i] = c.total
				}
			}()
		}
		wg.Wait()
		for _, n := range totals {
			if n != first.total {
				t.Errorf("%s: concurrent totals %v, alone %d", tc.pattern, totals, first.total)
				break
			}
		}
	}
}

// A catastrophic search counts steps in proportion to its work: one more
// character doubles both, and the hook's error ends it at once.
func TestStepHookEndsCatastrophicSearch(t *testing.T) {
	re := MustCompile(`(a+)+b(?=c)`, ECMAScript)
	var c16, c17 stepCounter
	countedSearch(t, re, strings.Repeat("a", 16), 0, &c16)
	countedSearch(t, re, strings.Repeat("a", 17), 0, &c17)
	if r := float64(c17.total) / float64(c16.total); r < 1.8 || r > 2.2 {
		t.Errorf("steps: %d for 16 characters, %d for 17", c16.total, c17.total)
	}

	// About 2^40 steps: hours without a bound.
	c := stepCounter{limit: 100000}
	m, err := countedSearch(t, re, strings.Repeat("a", 40), 0, &c)
	if err != errStepLimit || m != nil {
		t.Fatalf("got %v, %v; want the hook's error", m, err)
	}
	if c.total > c.limit+DefaultStepEvery+64 {
		t.Errorf("the search ran %d steps past the hook's error", c.total-c.limit)
	}

	// A backreference's comparisons and a find that looks ahead count too.
	c = stepCounter{limit: 100000}
	_, err = countedSearch(t, MustCompile(`(x+x+)+y\1`, ECMAScript), strings.Repeat("x", 40), 0, &c)
	if err != errStepLimit {
		t.Fatalf("backreference: got %v; want the hook's error", err)
	}
	// A search quadratic in its input counts steps quadratic in it.
	var q1, q2 stepCounter
	quad := MustCompile(`(?=(a+))a*b\1`, ECMAScript)
	countedSearch(t, quad, strings.Repeat("a", 500), 0, &q1)
	countedSearch(t, quad, strings.Repeat("a", 1000), 0, &q2)
	if r := float64(q2.total) / float64(q1.total); r < 3.5 || r > 4.5 {
		t.Errorf("steps: %d for 500 characters, %d for 1,000", q1.total, q2.total)
	}
}

// With NoTimeout a search runs past the Regexp's MatchTimeout; without it
// the timeout still applies (upstream's behaviour).
func TestSearchNoTimeout(t *testing.T) {
	re := MustCompile(`(a+)+b(?=c)`, ECMAScript)
	re.MatchTimeout = time.Millisecond
	in := []rune(strings.Repeat("a", 40))
	if _, err := re.FindRunesMatchStartingAtWith(&SearchOptions{}, in, 0); err == nil || !strings.HasPrefix(err.Error(), "match timeout") {
		t.Fatalf("got %v; want a timeout", err)
	}
	c := stepCounter{limit: longtest.Pick(1<<20, 1<<22)}
	if _, err := re.FindRunesMatchStartingAtWith(&SearchOptions{StepHook: c.hook, NoTimeout: true}, in, 0); err != errStepLimit {
		t.Fatalf("got %v; want the hook's error, not a timeout", err)
	}
}

// FindNextMatchWith counts the next search alone.
func TestFindNextMatchWith(t *testing.T) {
	re := MustCompile(`(\w)\1(?=\w)`, ECMAScript)
	in := "aabbccdd"
	var c stepCounter
	o := &SearchOptions{StepHook: c.hook}
	var got []string
	m, err := re.FindRunesMatchStartingAtWith(o, []rune(in), 0)
	for ; m != nil && err == nil; m, err = re.FindNextMatchWith(o, m) {
		got = append(got, m.String())
	}
	if err != nil || strings.Join(got, ",") != "aa,bb,cc" {
		t.Fatalf("got %v, %v", got, err)
	}
	if c.total == 0 {
		t.Fatal("no steps counted")
	}
}

// BenchmarkSteps reports the time a step takes (ns/step) on typical and
// catastrophic patterns, which is what a caller charging for steps needs.
func BenchmarkSteps(b *testing.B) {
	for _, bc := range []struct{ name, pattern, input string }{
		{"catastrophic-nested", `(a+)+b(?=c)`, strings.Repeat("a", 20)},
		{"catastrophic-alt", `^(a|aa)+$(?!x)`, strings.Repeat("a", 30) + "!"},
		{"catastrophic-backref", `(x+x+)+y\1`, strings.Repeat("x", 18)},
		{"catastrophic-lookahead", `^(?=(a*)*b)`, strings.Repeat("a", 20)},
		{"quadratic", `(?=(a+))a*b\1`, strings.Repeat("a", 1000)},
		{"backref-ci-nonascii", `(?i)^(\w|ä)*(ä+)\2$(?!x)`, strings.Repeat("Ää", 200) + "Äb"},
		{"large-class", `([\u0100-\u017f\u0400-\u04ff\u0590-\u05ff\u3040-\u30ff\uac00-\ud7af]+)+\.(?=x)`, strings.Repeat("\u0430\u3042\u05d0\uac00", 5)},
		{"backref-words", `(\w+)\s\1`, strings.Repeat("lorem ipsum dolor sit amet ", 40)},
		{"lookbehind-digits", `(?<=\$)\d+(\.\d\d)?`, strings.Repeat("cost: 42 or 7 ", 40) + "$12.50"},
		{"quadratic-find", `\w+x(?=y)`, strings.Repeat("a", 1000) + "x"},
		{"set-loop", `[a-z]+(?=\d)`, strings.Repeat("abcdefgh ", 100) + "z1"},
		{"multi", `(?:hello|world)+(?=!)`, strings.Repeat("helloworld", 50) + "?"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			re := MustCompile(bc.pattern, ECMAScript)
			in := []rune(bc.input)
			var c stepCounter
			o := &SearchOptions{StepHook: c.hook, NoTimeout: true}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := re.FindRunesMatchStartingAtWith(o, in, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(c.total), "ns/step")
			b.ReportMetric(float64(c.total)/float64(b.N), "steps/op")
		})
	}
}
