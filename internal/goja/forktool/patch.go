package main

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

const contextLines = 3

// op is one line of a unified diff: ' ' kept, '-' removed, '+' added.
type op struct {
	kind byte
	text string // with its "\n", unless it is a file's unterminated last line
}

type hunk struct {
	oldStart, oldLen, newStart, newLen int
	lines                              []op
}

// filePatch is one upstream file's part of a patch.
type filePatch struct {
	path  string
	hunks []hunk
}

// hunksOf groups a whole file's line operations into unified-diff hunks.
func hunksOf(ops []op) []hunk {
	var changes []int
	for i, o := range ops {
		if o.kind != ' ' {
			changes = append(changes, i)
		}
	}
	var hs []hunk
	for c := 0; c < len(changes); {
		start := changes[c] - contextLines
		if start < 0 {
			start = 0
		}
		end := changes[c] + 1
		for c < len(changes) && changes[c] <= end+2*contextLines-1+1 {
			end = changes[c] + 1
			c++
		}
		stop := end + contextLines
		if stop > len(ops) {
			stop = len(ops)
		}
		h := hunk{lines: ops[start:stop]}
		oldLine, newLine := 1, 1
		for _, o := range ops[:start] {
			if o.kind != '+' {
				oldLine++
			}
			if o.kind != '-' {
				newLine++
			}
		}
		for _, o := range h.lines {
			if o.kind != '+' {
				h.oldLen++
			}
			if o.kind != '-' {
				h.newLen++
			}
		}
		h.oldStart, h.newStart = oldLine, newLine
		if h.oldLen == 0 {
			h.oldStart--
		}
		if h.newLen == 0 {
			h.newStart--
		}
		hs = append(hs, h)
	}
	return hs
}

func writeFilePatch(w *bytes.Buffer, fp filePatch) {
	fmt.Fprintf(w, "diff --git a/%s b/%s\n", fp.path, fp.path)
	fmt.Fprintf(w, "--- a/%s\n", fp.path)
	fmt.Fprintf(w, "+++ b/%s\n", fp.path)
	for _, h := range fp.hunks {
		fmt.Fprintf(w, "@@ -%s +%s @@\n", rangeOf(h.oldStart, h.oldLen), rangeOf(h.newStart, h.newLen))
		for _, o := range h.lines {
			w.WriteByte(o.kind)
			w.WriteString(o.text)
			if !strings.HasSuffix(o.text, "\n") {
				w.WriteString("\n\\ No newline at end of file\n")
			}
		}
	}
}

func rangeOf(start, n int) string {
	if n == 1 {
		return strconv.Itoa(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// parsePatch reads the file patches of one patch file (text before the
// first "diff --git" is its message).
func parsePatch(name string, b []byte) ([]filePatch, error) {
	lines := splitLines(b)
	var fps []filePatch
	bad := func(i int, msg string) error {
		return fmt.Errorf("%s:%d: %s", name, i+1, msg)
	}
	i := 0
	for i < len(lines) && !strings.HasPrefix(lines[i], "diff --git ") {
		i++
	}
	for i < len(lines) {
		l := strings.TrimSuffix(lines[i], "\n")
		if !strings.HasPrefix(l, "diff --git a/") {
			return nil, bad(i, "expected diff --git")
		}
		fields := strings.SplitN(strings.TrimPrefix(l, "diff --git a/"), " b/", 2)
		fp := filePatch{path: fields[0]}
		i++
		for i < len(lines) && !strings.HasPrefix(lines[i], "@@") && !strings.HasPrefix(lines[i], "diff --git ") {
			l := strings.TrimSuffix(lines[i], "\n")
			for _, h := range []string{"new file mode", "deleted file mode", "rename from", "copy from", "GIT binary patch", "Binary files"} {
				if strings.HasPrefix(l, h) {
					return nil, bad(i, fmt.Sprintf("%s: %q: the series only changes upstream files (new files stay whole in internal/goja, listed by PATCHES.md; regenerate the series: go run ./internal/goja/forktool series)", fp.path, h))
				}
			}
			i++
		}
		for i < len(lines) && strings.HasPrefix(lines[i], "@@") {
			var h hunk
			var err error
			h.oldStart, h.oldLen, h.newStart, h.newLen, err = parseHunkHeader(lines[i])
			if err != nil {
				return nil, bad(i, err.Error())
			}
			i++
			oldN, newN := 0, 0
			for i < len(lines) && (oldN < h.oldLen || newN < h.newLen) {
				l := lines[i]
				if l == "" || (l[0] != ' ' && l[0] != '-' && l[0] != '+') {
					return nil, bad(i, "hunk line without ' ', '-' or '+'")
				}
				h.lines = append(h.lines, op{l[0], l[1:]})
				if l[0] != '+' {
					oldN++
				}
				if l[0] != '-' {
					newN++
				}
				i++
				if i < len(lines) && strings.HasPrefix(lines[i], `\ No newline`) {
					last := &h.lines[len(h.lines)-1]
					last.text = strings.TrimSuffix(last.text, "\n")
					i++
				}
			}
			if oldN != h.oldLen || newN != h.newLen {
				return nil, bad(i, "hunk shorter than its header")
			}
			fp.hunks = append(fp.hunks, h)
		}
		fps = append(fps, fp)
	}
	return fps, nil
}

func parseHunkHeader(l string) (os, ol, ns, nl int, err error) {
	var a, b string
	if _, err = fmt.Sscanf(l, "@@ -%s +%s @@", &a, &b); err != nil {
		return 0, 0, 0, 0, fmt.Errorf("bad hunk header %q", strings.TrimSpace(l))
	}
	parse := func(s string) (int, int, error) {
		start, n, ok := strings.Cut(s, ",")
		x, err := strconv.Atoi(start)
		if err != nil {
			return 0, 0, err
		}
		if !ok {
			return x, 1, nil
		}
		y, err := strconv.Atoi(n)
		return x, y, err
	}
	if os, ol, err = parse(a); err != nil {
		return
	}
	ns, nl, err = parse(b)
	return
}

// applyResult is how one hunk went.
type applyResult struct {
	hunk   int
	header string
	offset int // lines away from where the patch put it
	fuzz   int // context lines at either end left unmatched
	failed bool
}

// applyHunks applies hunks to lines. With fuzzy false a hunk applies only
// at its own line; with fuzzy true it may move (the nearest place where
// its context and removed lines match, else with up to two context lines
// at either end unmatched, as patch(1)'s fuzz), and one that matches
// nowhere is left out and reported failed.
func applyHunks(lines []string, hs []hunk, fuzzy bool) ([]string, []applyResult) {
	var out []string
	var res []applyResult
	pos := 0   // next line of lines not yet copied
	delta := 0 // where hunks land relative to their headers so far
	for hi, h := range hs {
		want := h.oldStart - 1
		if h.oldLen == 0 {
			want = h.oldStart
		}
		want += delta
		r := applyResult{hunk: hi + 1, header: fmt.Sprintf("@@ -%s +%s @@", rangeOf(h.oldStart, h.oldLen), rangeOf(h.newStart, h.newLen))}
		// Exactly where the header says; with fuzzy, anywhere, then
		// with up to two context lines at either end left unmatched.
		at, fuzz := -1, 0
		var old, nw []string
		for ; fuzz <= 2 && at < 0; fuzz++ {
			if fuzz > 0 && !fuzzy {
				break
			}
			lead, trail := 0, 0
			for lead < len(h.lines) && h.lines[lead].kind == ' ' {
				lead++
			}
			for trail < len(h.lines)-lead && h.lines[len(h.lines)-1-trail].kind == ' ' {
				trail++
			}
			lead, trail = min(lead, fuzz), min(trail, fuzz)
			old, nw = old[:0], nw[:0]
			for _, o := range h.lines[lead : len(h.lines)-trail] {
				if o.kind != '+' {
					old = append(old, o.text)
				}
				if o.kind != '-' {
					nw = append(nw, o.text)
				}
			}
			w := want + lead
			matches := func(at int) bool {
				if at < pos || at+len(old) > len(lines) {
					return false
				}
				for k, l := range old {
					if lines[at+k] != l {
						return false
					}
				}
				return true
			}
			if matches(w) {
				at = w
			} else if fuzzy {
				for d := 1; at < 0 && (w-d >= pos || w+d+len(old) <= len(lines)); d++ {
					if matches(w - d) {
						at = w - d
					} else if matches(w + d) {
						at = w + d
					}
				}
			}
			if at >= 0 {
				r.offset = at - w
				r.fuzz = fuzz
			}
		}
		if at < 0 {
			r.failed = true
			res = append(res, r)
			continue
		}
		delta += r.offset
		out = append(out, lines[pos:at]...)
		out = append(out, nw...)
		pos = at + len(old)
		res = append(res, r)
	}
	out = append(out, lines[pos:]...)
	return out, res
}
