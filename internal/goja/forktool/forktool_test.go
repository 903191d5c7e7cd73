package main

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestCheck is `forktool check`: pristine upstream plus the committed
// series is internal/goja byte for byte, and every hunk in an upstream file
// carries its section's marker. Upstream comes from the module cache or
// proxy; without either the test skips, unless MUSTARD_FORK_CHECK=1 (set
// by .ci/run) makes that a failure.
func TestCheck(t *testing.T) {
	dir, err := forkDir("")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	a, err := load(dir)
	var de *downloadError
	if errors.As(err, &de) {
		if os.Getenv("MUSTARD_FORK_CHECK") == "1" {
			t.Fatalf("upstream goja is needed to check the fork's patch series: %v", err)
		}
		t.Skipf("upstream goja not reachable (module cache or proxy), patch series not checked: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := check(a, dir, &out, start); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log(strings.TrimSpace(out.String()))
}

func applyBlocks(a, b []string, bs []block) []string {
	var out []string
	at := 0
	for _, bl := range bs {
		out = append(out, a[at:bl.oldStart]...)
		out = append(out, b[bl.newStart:bl.newEnd]...)
		at = bl.oldEnd
	}
	return append(out, a[at:]...)
}

func randomLines(r *rand.Rand, n int) []string {
	ls := make([]string, n)
	for i := range ls {
		ls[i] = string(rune('a'+r.Intn(4))) + "\n"
	}
	return ls
}

// The blocks of a diff take the old lines to the new ones, and keep as
// many lines as the shortest edit script does.
func TestDiffBlocks(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		a := randomLines(r, r.Intn(30))
		b := append([]string(nil), a...)
		for k := r.Intn(6); k > 0; k-- {
			switch at := r.Intn(len(b) + 1); r.Intn(3) {
			case 0:
				b = append(b[:at], append(randomLines(r, 1+r.Intn(3)), b[at:]...)...)
			case 1:
				if at < len(b) {
					b = append(b[:at], b[at+1:]...)
				}
			default:
				if at < len(b) {
					b[at] = "x\n"
				}
			}
		}
		bs := diffBlocks(a, b)
		if got := applyBlocks(a, b, bs); strings.Join(got, "") != strings.Join(b, "") {
			t.Fatalf("blocks do not rebuild the new text:\n%q\n%q\n%v", a, b, bs)
		}
		kept := len(a)
		for _, bl := range bs {
			kept -= bl.oldEnd - bl.oldStart
		}
		if want := lcs(a, b); kept != want {
			t.Fatalf("kept %d lines, the longest common subsequence is %d: %q %q", kept, want, a, b)
		}
	}
}

func lcs(a, b []string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				d[i][j] = d[i+1][j+1] + 1
			} else {
				d[i][j] = max(d[i+1][j], d[i][j+1])
			}
		}
	}
	return d[0][0]
}

// A series written and read back applies: changed files (one of them
// without a final newline), a new text file and a new binary file; a
// section's hunks see the earlier sections' changes as context.
func TestSeriesRoundTrip(t *testing.T) {
	up := tree{
		"a.go":  []byte("package a\n\nfunc f() {\n\tx()\n}\n\nfunc g() {\n\ty()\n}\n"),
		"b.txt": []byte("one\ntwo\nthree"),
	}
	fork := tree{
		"a.go":            []byte("package a\n\nfunc f() {\n\tm() // mustard(one): why\n\tx()\n}\n\nfunc g() {\n\tz() // mustard(two)\n\tn() // mustard(one)\n}\n"),
		"b.txt":           []byte("one\ntwo // mustard(two)\nthree"),
		"mustard_one.go":  []byte("package a\n\nfunc m() {}\n"),
		"mustard_two.bin": {0, 1, 2, 3, 255, 254},
	}
	secs, err := parseSections("# x\n\n## One\n\nPatch: `one`; new files `mustard_one.go`.\n\n## Two\n\nPatch: `two`; new files\n`mustard_two.bin`.\n")
	if err != nil {
		t.Fatal(err)
	}
	a := analyze(secs, up, fork)
	if len(a.problems) > 0 {
		t.Fatal(a.problems)
	}
	names, patches := a.patches()
	if len(names) != 2 || names[0] != "0001-one.patch" || names[1] != "0002-two.patch" {
		t.Fatal(names)
	}
	got, report, err := applySeries(up, names, patches, false)
	if err != nil || len(report) > 0 {
		t.Fatal(err, report)
	}
	for p, b := range fork {
		if !bytes.Equal(got[p], b) {
			t.Errorf("%s: got %q, want %q", p, got[p], b)
		}
	}
	// Upstream added lines before f and changed the line after g's
	// body: the series applies elsewhere, with fuzz; a line it changes
	// that is gone is a conflict.
	moved := tree{
		"a.go":  []byte("package a\n\n// new\n// lines\n\nfunc f() {\n\tx()\n}\n\nfunc g() {\n\ty()\n}\n\n// more\n"),
		"b.txt": []byte("one\nTWO\nthree"),
	}
	got, report, err = applySeries(moved, names, patches, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"0001-one.patch: a.go: hunk 1 @@ -1,9 +1,11 @@ applies +3 lines away with fuzz 1",
		"0002-two.patch: a.go: hunk 1 @@ -6,6 +6,6 @@ applies +3 lines away",
		"0002-two.patch: b.txt: hunk 1 @@ -1,3 +1,3 @@ does not apply",
	}
	if strings.Join(report, "\n") != strings.Join(want, "\n") {
		t.Fatalf("report:\n%s", strings.Join(report, "\n"))
	}
	if w := "package a\n\n// new\n// lines\n\nfunc f() {\n\tm() // mustard(one): why\n\tx()\n}\n\nfunc g() {\n\tz() // mustard(two)\n\tn() // mustard(one)\n}\n\n// more\n"; string(got["a.go"]) != w {
		t.Fatalf("%s", got["a.go"])
	}
}

func TestUnmarkedHunks(t *testing.T) {
	up := tree{"a.go": []byte("package a\n\nvar x = 1\n\nvar y = 2\n")}
	fork := tree{"a.go": []byte("package a\n\nvar x = 3\n\nvar y = 2 // mustard(nope)\n")}
	secs, err := parseSections("## One\n\nPatch: `one`; no new files.\n")
	if err != nil {
		t.Fatal(err)
	}
	a := analyze(secs, up, fork)
	var msgs []string
	for _, p := range a.problems {
		msgs = append(msgs, p.String())
	}
	want := []string{
		"a.go:3: hunk without a mustard(<slug>) marker",
		`a.go:5: marker names "nope", which no section's Patch: line names`,
	}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s", strings.Join(msgs, "\n"))
	}
	if _, err := parseSections("## One\n\ntext\n"); err == nil || !strings.Contains(err.Error(), "no \"Patch: `slug`\" line") {
		t.Fatal(err)
	}
}

func TestSplitBlocks(t *testing.T) {
	fl := []string{"a // mustard(x)\n", "b\n", "c // mustard(y)\n", "d // mustard(y)\n", "e // mustard(x)\n"}
	got := splitBlocks([]block{{oldStart: 7, oldEnd: 9, newStart: 0, newEnd: 5}}, fl)
	want := []block{{7, 9, 0, 2}, {9, 9, 2, 4}, {9, 9, 4, 5}}
	if len(got) != len(want) {
		t.Fatal(got)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatal(got)
		}
	}
}

func TestRewriteImports(t *testing.T) {
	src := "package p\n\nimport (\n\t\"github.com/dop251/goja/ast\"\n\t\"github.com/b/c\"\n)\n\n// https://github.com/dop251/goja_nodejs\n"
	got := string(rewriteImports("p.go", []byte(src)))
	want := "package p\n\nimport (\n\t\"github.com/b/c\"\n\t\"github.com/mustard-sidecar/mustard-sidecar/internal/goja/ast\"\n)\n\n// https://github.com/dop251/goja_nodejs\n"
	if got != want {
		t.Fatalf("got\n%s", got)
	}
	if got := string(rewriteImports("README.md", []byte(src))); got != src {
		t.Fatal("a non-Go file is rewritten")
	}
}

// The patches are ordinary git diffs: git apply takes the series in order
// on pristine upstream and gives the fork too. Skipped without git or
// upstream.
func TestGitApply(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	dir, err := forkDir("")
	if err != nil {
		t.Fatal(err)
	}
	up, _, err := loadUpstream(baseVersion)
	var de *downloadError
	if errors.As(err, &de) {
		t.Skipf("upstream goja not reachable: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	fork, err := loadFork(dir)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	for p, b := range up {
		fp := filepath.Join(work, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(fp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fp, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	patches, _ := filepath.Glob(filepath.Join(dir, "patches", "*.patch"))
	sort.Strings(patches)
	for _, p := range patches {
		if b, err := os.ReadFile(p); err != nil || !bytes.Contains(b, []byte("\ndiff --git ")) {
			continue // a section with no hunks: git apply wants at least one
		}
		cmd := exec.Command(git, "apply", "--whitespace=nowarn", p)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(work))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git apply %s: %v\n%s", filepath.Base(p), err, out)
		}
	}
	got, err := loadFork(work)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range fork.paths() {
		if !bytes.Equal(got[p], fork[p]) {
			t.Errorf("%s: git apply makes it differently", p)
		}
	}
	for _, p := range got.paths() {
		if _, ok := fork[p]; !ok {
			t.Errorf("%s: made by git apply, not in the fork", p)
		}
	}
}
