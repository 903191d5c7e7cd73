package engine

import (
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
)

// formatted is a console line's text and what making it cost.
type formatted struct {
	text      string
	truncated bool // longer than the bound given: text is a prefix
	work      int  // units of built-in work (meter.go)
}

// formatConsole formats console arguments into a line of at most max
// bytes.
func formatConsole(rt *goja.Runtime, args []goja.Value, max int) (formatted, error) {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if s, ok := a.(goja.String); ok {
			b.WriteString(guestString(s))
		} else {
			b.WriteString(a.String())
		}
		if b.Len() > max {
			return formatted{text: b.String()[:max], truncated: true, work: max}, nil
		}
	}
	return formatted{text: b.String(), work: b.Len()}, nil
}
