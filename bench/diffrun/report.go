package diffrun

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Summary counts comparisons by class.
type Summary struct {
	Total   int
	ByClass map[string][]Comparison
}

// Summarize groups comparisons by class.
func Summarize(cs []Comparison) Summary {
	s := Summary{Total: len(cs), ByClass: map[string][]Comparison{}}
	for _, c := range cs {
		s.ByClass[c.Class] = append(s.ByClass[c.Class], c)
	}
	return s
}

// Count is the number of programs in class.
func (s Summary) Count(class string) int { return len(s.ByClass[class]) }

// Classes lists every class in report order: agree, the issue's classes,
// the kept ones, the coarse ones, then any other.
func (s Summary) Classes() []string {
	order := append(append(append([]string{Agree}, IssueClasses...), KeptClasses...), CoarseClasses...)
	seen := map[string]bool{}
	for _, c := range order {
		seen[c] = true
	}
	var extra []string
	for c := range s.ByClass {
		if !seen[c] {
			extra = append(extra, c)
		}
	}
	sort.Strings(extra)
	return append(order, extra...)
}

// WriteMarkdown writes the counts by class and up to perClass examples of
// each disagreement class.
func (s Summary) WriteMarkdown(w io.Writer, title, header string, perClass int) {
	fmt.Fprintf(w, "# %s\n\n%s\n\n", title, header)
	agree := s.Count(Agree)
	fmt.Fprintf(w, "%d programs: %d agree (%.1f %%), %d disagree.\n\n", s.Total, agree, pct(agree, s.Total), s.Total-agree)
	fmt.Fprintf(w, "| class | programs |\n| --- | ---: |\n")
	for _, c := range s.Classes() {
		fmt.Fprintf(w, "| %s | %d |\n", c, s.Count(c))
	}
	for _, c := range s.Classes() {
		if c == Agree || s.Count(c) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n## %s (%d)\n", c, s.Count(c))
		for i, x := range s.ByClass[c] {
			if i == perClass {
				fmt.Fprintf(w, "\n… and %d more.\n", s.Count(c)-perClass)
				break
			}
			p := x.Program
			fmt.Fprintf(w, "\n- `%s` (%s, test `%s`): %s\n\n  ```js\n  %s\n  ```\n", p.ID, p.File, clip(p.Test, 120), x.Detail,
				strings.ReplaceAll(clip(strings.TrimSpace(p.Source), 400), "```", "`\u200b``"))
		}
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
