package main

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// markerRe finds a hunk's marker: `mustard(<slug>)`, in a comment
// (`// mustard(<slug>): why`).
var markerRe = regexp.MustCompile(`mustard\(([a-z0-9-]+)\)`)

// change is one block of the fork's difference from upstream in an
// upstream file, and the section it belongs to.
type change struct {
	path    string
	b       block
	section int      // index into the series; -1 when unmarked or unknown
	slugs   []string // the markers' slugs: one, or none when unmarked
}

// problem is something that keeps the series from describing the fork.
type problem struct {
	path string
	line int // in the fork's file, from 1; 0 for the whole file
	msg  string
}

func (p problem) String() string {
	if p.line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.path, p.line, p.msg)
	}
	return fmt.Sprintf("%s: %s", p.path, p.msg)
}

// analysis is the fork against upstream, sorted into the series' sections.
type analysis struct {
	secs     []section
	up, fork tree
	upLines  map[string][]string
	frkLines map[string][]string
	changes  []change       // in upstream files, by path then position
	newFile  map[string]int // fork-only file -> section
	problems []problem
}

func isBinary(b []byte) bool {
	return bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b)
}

func analyze(secs []section, up, fork tree) *analysis {
	a := &analysis{secs: secs, up: up, fork: fork, upLines: map[string][]string{}, frkLines: map[string][]string{}, newFile: map[string]int{}}
	bySlug := map[string]int{}
	for i, s := range secs {
		bySlug[s.slug] = i
	}
	for _, p := range up.paths() {
		if _, ok := fork[p]; !ok {
			a.problems = append(a.problems, problem{p, 0, "upstream file missing from the fork (the series changes upstream files and the fork adds new ones; neither deletes a file)"})
		}
	}
	var unlisted []string
	for _, p := range fork.paths() {
		ub, inUp := up[p]
		fb := fork[p]
		if !inUp {
			sec := -1
			for i, s := range secs {
				for _, e := range s.newFiles {
					if isNewFileOf(e, p) {
						if sec >= 0 && sec != i {
							a.problems = append(a.problems, problem{p, 0, fmt.Sprintf("new file listed by two sections: %s and %s", secs[sec].slug, s.slug)})
						}
						if sec < 0 {
							sec = i
						}
					}
				}
			}
			if sec < 0 {
				unlisted = append(unlisted, p)
				continue
			}
			a.newFile[p] = sec
			continue
		}
		if bytes.Equal(ub, fb) {
			continue
		}
		if isBinary(ub) || isBinary(fb) {
			a.problems = append(a.problems, problem{p, 0, "binary upstream file changed (not supported)"})
			continue
		}
		ul, fl := splitLines(ub), splitLines(fb)
		a.upLines[p], a.frkLines[p] = ul, fl
		for _, b := range splitBlocks(diffBlocks(ul, fl), fl) {
			c := change{path: p, b: b, section: -1}
			seen := map[string]bool{}
			for _, l := range fl[b.newStart:b.newEnd] {
				for _, m := range markerRe.FindAllStringSubmatch(l, -1) {
					if !seen[m[1]] {
						seen[m[1]] = true
						c.slugs = append(c.slugs, m[1])
					}
				}
			}
			line := b.newStart + 1
			if len(c.slugs) == 0 {
				what := "hunk without a mustard(<slug>) marker"
				if b.newEnd == b.newStart {
					what = "hunk that only removes lines, without a mustard(<slug>) marker (replace the lines by a marker comment)"
				}
				a.problems = append(a.problems, problem{p, line, what})
			}
			for _, s := range c.slugs {
				i, ok := bySlug[s]
				if !ok {
					a.problems = append(a.problems, problem{p, line, fmt.Sprintf("marker names %q, which no section's Patch: line names", s)})
					continue
				}
				c.section = i // one slug: splitBlocks split the others off
			}
			a.changes = append(a.changes, c)
		}
	}
	for _, p := range unlisted {
		a.problems = append(a.problems, problem{p, 0, a.unlistedMessage(p)})
	}
	for i, s := range secs {
		for _, e := range s.newFiles {
			found := false
			for p := range a.newFile {
				if isNewFileOf(e, p) {
					found = true
					break
				}
			}
			if !found {
				a.problems = append(a.problems, problem{"PATCHES.md", 0, fmt.Sprintf("section %s lists %s, which is not a new file of the fork", secs[i].slug, e)})
			}
		}
	}
	return a
}

// unlistedMessage says how to place new file p in a section: the line
// of PATCHES.md to add it to, and which section that likely is (the one
// of a new file with the same stem: mustard_x.go for mustard_x_test.go
// or testdata/mustard_x.json).
func (a *analysis) unlistedMessage(p string) string {
	stem := func(q string) string {
		b := path.Base(q)
		if i := strings.IndexByte(b, '.'); i > 0 {
			b = b[:i]
		}
		return strings.TrimSuffix(b, "_test")
	}
	want := stem(p)
	var kin []string
	for q := range a.newFile {
		if stem(q) == want {
			kin = append(kin, q)
		}
	}
	sort.Strings(kin)
	if len(kin) > 0 {
		s := a.secs[a.newFile[kin[0]]]
		return fmt.Sprintf("new file in no section: add `%s` to the line \"Patch: `%s`; new files ...\" of the section %q in PATCHES.md, the section of `%s` (or to the Patch: line of the section it belongs to)", p, s.slug, s.title, kin[0])
	}
	return fmt.Sprintf("new file in no section: add `%s` to the line \"Patch: `<slug>`; new files ...\" of the section it belongs to in PATCHES.md (paths relative to internal/goja; an entry ending in / takes a whole directory)", p)
}

// patches renders the series: one patch file per section, by name. A
// patch holds the section's hunks in upstream files only; its message
// names the section's new files, which stay whole in internal/goja.
func (a *analysis) patches() ([]string, map[string][]byte) {
	var names []string
	out := map[string][]byte{}
	byPath := map[string][]change{}
	var paths []string
	for _, c := range a.changes {
		if _, ok := byPath[c.path]; !ok {
			paths = append(paths, c.path)
		}
		byPath[c.path] = append(byPath[c.path], c)
	}
	for k, s := range a.secs {
		var buf bytes.Buffer
		fmt.Fprintf(&buf, "Subject: [PATCH %d/%d] %s\n\n", k+1, len(a.secs), s.title)
		fmt.Fprintf(&buf, "Section of internal/goja/PATCHES.md: %q.\nIts hunks in upstream files, each marked mustard(%s).\n", s.title, s.slug)
		if nf := a.newFilesOf(k); len(nf) > 0 {
			buf.WriteString("Its new files, whole in internal/goja (not in this patch):\n")
			for _, p := range nf {
				fmt.Fprintf(&buf, "  %s\n", p)
			}
		} else {
			buf.WriteString("Its new files: none.\n")
		}
		buf.WriteString("Generated by internal/goja/forktool\n(go run ./internal/goja/forktool series); do not edit.\n---\n")
		for _, p := range paths {
			if ops := a.opsFor(p, byPath[p], k); ops != nil {
				writeFilePatch(&buf, filePatch{path: p, hunks: hunksOf(ops)})
			}
		}
		name := patchName(k, s)
		names = append(names, name)
		out[name] = buf.Bytes()
	}
	return names, out
}

// newFilesOf lists section k's new files, sorted.
func (a *analysis) newFilesOf(k int) []string {
	var ps []string
	for p, sec := range a.newFile {
		if sec == k {
			ps = append(ps, p)
		}
	}
	sort.Strings(ps)
	return ps
}

// opsFor returns the line operations that take file p from the series'
// state before section k to the state after it, or nil when section k
// does not touch p. Changes of earlier sections are in both states,
// changes of later ones in neither.
func (a *analysis) opsFor(p string, cs []change, k int) []op {
	touched := false
	for _, c := range cs {
		if c.section == k {
			touched = true
		}
	}
	if !touched {
		return nil
	}
	ul, fl := a.upLines[p], a.frkLines[p]
	var ops []op
	at := 0
	for _, c := range cs {
		for ; at < c.b.oldStart; at++ {
			ops = append(ops, op{' ', ul[at]})
		}
		switch {
		case c.section < k:
			for _, l := range fl[c.b.newStart:c.b.newEnd] {
				ops = append(ops, op{' ', l})
			}
		case c.section == k:
			for _, l := range ul[c.b.oldStart:c.b.oldEnd] {
				ops = append(ops, op{'-', l})
			}
			for _, l := range fl[c.b.newStart:c.b.newEnd] {
				ops = append(ops, op{'+', l})
			}
		default:
			for _, l := range ul[c.b.oldStart:c.b.oldEnd] {
				ops = append(ops, op{' ', l})
			}
		}
		at = c.b.oldEnd
	}
	for ; at < len(ul); at++ {
		ops = append(ops, op{' ', ul[at]})
	}
	return ops
}

// hunkCount is the number of hunks (blocks) in upstream files and of them
// the unmarked ones.
func (a *analysis) hunkCount() (total, unmarked int) {
	for _, c := range a.changes {
		total++
		if len(c.slugs) == 0 {
			unmarked++
		}
	}
	return
}

// applySeries applies the named patches in order to base; with fuzzy
// false every hunk must apply where it says. It returns the result and a
// report line per patch that did not apply cleanly.
func applySeries(base tree, names []string, patches map[string][]byte, fuzzy bool) (tree, []string, error) {
	t := tree{}
	for p, b := range base {
		t[p] = b
	}
	var report []string
	for _, name := range names {
		fps, err := parsePatch(name, patches[name])
		if err != nil {
			return nil, nil, err
		}
		for _, fp := range fps {
			cur, exists := t[fp.path]
			if !exists {
				report = append(report, fmt.Sprintf("%s: %s: file not in upstream (%d hunks not applied)", name, fp.path, len(fp.hunks)))
				continue
			}
			out, res := applyHunks(splitLines(cur), fp.hunks, fuzzy)
			for _, r := range res {
				switch {
				case r.failed:
					report = append(report, fmt.Sprintf("%s: %s: hunk %d %s does not apply", name, fp.path, r.hunk, r.header))
				case r.fuzz > 0:
					report = append(report, fmt.Sprintf("%s: %s: hunk %d %s applies %+d lines away with fuzz %d", name, fp.path, r.hunk, r.header, r.offset, r.fuzz))
				case r.offset != 0:
					report = append(report, fmt.Sprintf("%s: %s: hunk %d %s applies %+d lines away", name, fp.path, r.hunk, r.header, r.offset))
				}
			}
			t[fp.path] = []byte(strings.Join(out, ""))
		}
	}
	return t, report, nil
}

// addNewFiles copies the fork's new files into t, a tree the series was
// applied to. A new file whose path upstream has too is a conflict (the
// fork's copy is kept), reported under its section's patch.
func (a *analysis) addNewFiles(t tree) []string {
	var report []string
	ps := make([]string, 0, len(a.newFile))
	for p := range a.newFile {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	for _, p := range ps {
		if _, exists := t[p]; exists {
			k := a.newFile[p]
			report = append(report, fmt.Sprintf("%s: %s: new file of the section is in upstream too (the fork's copy kept)", patchName(k, a.secs[k]), p))
		}
		t[p] = a.fork[p]
	}
	return report
}

// splitBlocks splits a block whose added lines carry markers of several
// sections where the slug changes: each marker starts a run of lines of
// its section (lines before the first marker belong to it). The first run
// takes the removed lines; the others are insertions after them.
func splitBlocks(bs []block, fl []string) []block {
	var out []block
	for _, b := range bs {
		start := b.newStart
		cur := ""
		first := true
		for i := b.newStart; i < b.newEnd; i++ {
			m := markerRe.FindStringSubmatch(fl[i])
			if m == nil {
				continue
			}
			if cur == "" {
				cur = m[1]
				continue
			}
			if m[1] == cur {
				continue
			}
			nb := block{oldStart: b.oldEnd, oldEnd: b.oldEnd, newStart: start, newEnd: i}
			if first {
				nb.oldStart = b.oldStart
				first = false
			}
			out = append(out, nb)
			start = i
			cur = m[1]
		}
		nb := block{oldStart: b.oldEnd, oldEnd: b.oldEnd, newStart: start, newEnd: b.newEnd}
		if first {
			nb.oldStart = b.oldStart
		}
		out = append(out, nb)
	}
	return out
}
