package main

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"fmt"
	"io"
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

// filePatch is one file's part of a patch.
type filePatch struct {
	path    string
	newFile bool
	binary  []byte // a new binary file's contents
	hunks   []hunk
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
	if fp.newFile {
		w.WriteString("new file mode 100644\n")
	}
	if fp.binary != nil {
		// git apply wants the blob's full id to apply a binary patch.
		h := sha1.New()
		fmt.Fprintf(h, "blob %d\x00", len(fp.binary))
		h.Write(fp.binary)
		fmt.Fprintf(w, "index %040x..%x\n", 0, h.Sum(nil))
		w.WriteString("GIT binary patch\n")
		fmt.Fprintf(w, "literal %d\n", len(fp.binary))
		writeBase85Lines(w, deflate(fp.binary))
		w.WriteString("literal 0\nHcmV?d00001\n\n")
		return
	}
	if fp.newFile {
		w.WriteString("--- /dev/null\n")
	} else {
		fmt.Fprintf(w, "--- a/%s\n", fp.path)
	}
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
			switch {
			case strings.HasPrefix(l, "new file mode"):
				fp.newFile = true
			case l == "GIT binary patch":
				i++
				if i >= len(lines) || !strings.HasPrefix(lines[i], "literal ") {
					return nil, bad(i, "expected literal")
				}
				size, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(lines[i], "literal ")))
				if err != nil {
					return nil, bad(i, "bad literal size")
				}
				i++
				var enc []string
				for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
					enc = append(enc, strings.TrimSuffix(lines[i], "\n"))
					i++
				}
				z, err := readBase85Lines(enc)
				if err != nil {
					return nil, bad(i, err.Error())
				}
				data, err := inflate(z)
				if err != nil || len(data) != size {
					return nil, bad(i, "bad binary literal")
				}
				fp.binary = data
				// The reverse literal ("literal 0") and blank lines follow.
				for i < len(lines) && !strings.HasPrefix(lines[i], "diff --git ") {
					i++
				}
				i--
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

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&buf, zlib.BestCompression)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func inflate(b []byte) ([]byte, error) {
	zr, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// git's base85 alphabet and line format for binary patches: each line
// starts with its byte count ('A'-'Z' 1-26, 'a'-'z' 27-52).
const b85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"

func writeBase85Lines(w *bytes.Buffer, b []byte) {
	for len(b) > 0 {
		n := len(b)
		if n > 52 {
			n = 52
		}
		if n <= 26 {
			w.WriteByte(byte('A' + n - 1))
		} else {
			w.WriteByte(byte('a' + n - 27))
		}
		chunk := b[:n]
		for i := 0; i < n; i += 4 {
			var v uint32
			for k := 0; k < 4; k++ {
				v <<= 8
				if i+k < n {
					v |= uint32(chunk[i+k])
				}
			}
			var enc [5]byte
			for k := 4; k >= 0; k-- {
				enc[k] = b85[v%85]
				v /= 85
			}
			w.Write(enc[:])
		}
		w.WriteByte('\n')
		b = b[n:]
	}
	w.WriteByte('\n')
}

func readBase85Lines(ls []string) ([]byte, error) {
	var dec [256]int
	for i := range dec {
		dec[i] = -1
	}
	for i := 0; i < len(b85); i++ {
		dec[b85[i]] = i
	}
	var out []byte
	for _, l := range ls {
		if len(l) < 1 {
			return nil, fmt.Errorf("empty base85 line")
		}
		var n int
		switch c := l[0]; {
		case c >= 'A' && c <= 'Z':
			n = int(c-'A') + 1
		case c >= 'a' && c <= 'z':
			n = int(c-'a') + 27
		default:
			return nil, fmt.Errorf("bad base85 line length")
		}
		body := l[1:]
		if len(body) != (n+3)/4*5 {
			return nil, fmt.Errorf("bad base85 line")
		}
		var chunk []byte
		for i := 0; i < len(body); i += 5 {
			var v uint64
			for k := 0; k < 5; k++ {
				d := dec[body[i+k]]
				if d < 0 {
					return nil, fmt.Errorf("bad base85 character")
				}
				v = v*85 + uint64(d)
			}
			if v > 0xffffffff {
				return nil, fmt.Errorf("bad base85 group")
			}
			chunk = append(chunk, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
		}
		out = append(out, chunk[:n]...)
	}
	return out, nil
}
