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
// without a final newline); a section's hunks see the earlier sections'
// changes as context. The patches hold hunks in upstream files only and
// name their sections' new files (a text and a binary one), which are
// added whole.
func TestSeriesRoundTrip(t *testing.T) {
	up := tree{
		"a.go":  []byte("package a\n\nfunc f() {\n\tx()\n}\n\nfunc g() {\n\ty()\n}\n"),
		"b.txt": []byte("one\ntwo\nthree"),
	}
	fork := tree{
		"a.go":                   []byte("package a\n\nfunc f() {\n\tm() // mustard(one): why\n\tx()\n}\n\nfunc g() {\n\tz() // mustard(two)\n\tn() // mustard(one)\n}\n"),
		"b.txt":                  []byte("one\ntwo // mustard(two)\nthree"),
		"mustard_one.go":         []byte("package a\n\nfunc m() {}\n"),
		"mustard_two.bin":        {0, 1, 2, 3, 255, 254},
		"testdata/mustard_two/x": []byte("data\n"),
	}
	secs, err := parseSections("# x\n\n## One\n\nPatch: `one`; new files `mustard_one.go`.\n\n## Two\n\nPatch: `two`; new files\n`mustard_two.bin`, `testdata/mustard_two/`.\n")
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
	if p := string(patches["0002-two.patch"]); !strings.Contains(p, "(not in this patch):\n  mustard_two.bin\n  testdata/mustard_two/x\n") ||
		strings.Contains(p, "diff --git a/mustard_two") || strings.Contains(p, "diff --git a/testdata") {
		t.Fatalf("0002-two.patch:\n%s", p)
	}
	if p := string(patches["0001-one.patch"]); !strings.Contains(p, "  mustard_one.go\n") || strings.Contains(p, "func m()") {
		t.Fatalf("0001-one.patch:\n%s", p)
	}
	got, report, err := applySeries(up, names, patches, false)
	if err != nil || len(report) > 0 {
		t.Fatal(err, report)
	}
	if report := a.addNewFiles(got); len(report) > 0 {
		t.Fatal(report)
	}
	for p, b := range fork {
		if !bytes.Equal(got[p], b) {
			t.Errorf("%s: got %q, want %q", p, got[p], b)
		}
	}
	if len(got) != len(fork) {
		t.Errorf("got %v", got.paths())
	}
	// Upstream added lines before f and changed the line after g's
	// body: the series applies elsewhere, with fuzz; a line it changes
	// that is gone is a conflict, and so is a new file upstream now has.
	moved := tree{
		"a.go":           []byte("package a\n\n// new\n// lines\n\nfunc f() {\n\tx()\n}\n\nfunc g() {\n\ty()\n}\n\n// more\n"),
		"b.txt":          []byte("one\nTWO\nthree"),
		"mustard_one.go": []byte("package a\n"),
	}
	got, report, err = applySeries(moved, names, patches, true)
	if err != nil {
		t.Fatal(err)
	}
	report = append(report, a.addNewFiles(got)...)
	want := []string{
		"0001-one.patch: a.go: hunk 1 @@ -1,9 +1,11 @@ applies +3 lines away with fuzz 1",
		"0002-two.patch: a.go: hunk 1 @@ -6,6 +6,6 @@ applies +3 lines away",
		"0002-two.patch: b.txt: hunk 1 @@ -1,3 +1,3 @@ does not apply",
		"0001-one.patch: mustard_one.go: new file of the section is in upstream too (the fork's copy kept)",
	}
	if strings.Join(report, "\n") != strings.Join(want, "\n") {
		t.Fatalf("report:\n%s", strings.Join(report, "\n"))
	}
	if w := "package a\n\n// new\n// lines\n\nfunc f() {\n\tm() // mustard(one): why\n\tx()\n}\n\nfunc g() {\n\tz() // mustard(two)\n\tn() // mustard(one)\n}\n\n// more\n"; string(got["a.go"]) != w {
		t.Fatalf("%s", got["a.go"])
	}
	if !bytes.Equal(got["mustard_one.go"], fork["mustard_one.go"]) || !bytes.Equal(got["mustard_two.bin"], fork["mustard_two.bin"]) {
		t.Fatal("new files not added")
	}
}

// A patch that creates a file (the series' old form) is refused: new
// files are not part of the patches.
func TestPatchWithNewFile(t *testing.T) {
	p := "Subject: x\n---\ndiff --git a/n.go b/n.go\nnew file mode 100644\n--- /dev/null\n+++ b/n.go\n@@ -0,0 +1 @@\n+package a\n"
	_, err := parsePatch("0001-x.patch", []byte(p))
	if err == nil || !strings.Contains(err.Error(), "only changes upstream files") {
		t.Fatal(err)
	}
}

// A new file in no section is an error that names the Patch: line to add
// it to: its source's section for a test or a testdata file with the same
// stem, else the section it belongs to.
func TestUnlistedNewFiles(t *testing.T) {
	up := tree{"a.go": []byte("package a\n")}
	fork := tree{
		"a.go":                           []byte("package a\n"),
		"mustard_x.go":                   []byte("package a\n"),
		"mustard_x_test.go":              []byte("package a\n"),
		"testdata/mustard_x.json":        []byte("{}\n"),
		"mustard_test262_test.go":        []byte("package a\n"),
		"testdata/test262-failures.txt":  []byte("\n"),
		"mustard_y_test.go":              []byte("package a\n"),
		"testdata/mustard_y/golden.json": []byte("{}\n"),
	}
	secs, err := parseSections("## The x\n\nPatch: `x`; new files `mustard_x.go`.\n\n## The y\n\nPatch: `y`; new files `testdata/mustard_y/`.\n")
	if err != nil {
		t.Fatal(err)
	}
	a := analyze(secs, up, fork)
	var msgs []string
	for _, p := range a.problems {
		msgs = append(msgs, p.String())
	}
	want := []string{
		"mustard_test262_test.go: new file in no section: add `mustard_test262_test.go` to the line \"Patch: `<slug>`; new files ...\" of the section it belongs to in PATCHES.md (paths relative to internal/goja; an entry ending in / takes a whole directory)",
		"mustard_x_test.go: new file in no section: add `mustard_x_test.go` to the line \"Patch: `x`; new files ...\" of the section \"The x\" in PATCHES.md, the section of `mustard_x.go` (or to the Patch: line of the section it belongs to)",
		"mustard_y_test.go: new file in no section: add `mustard_y_test.go` to the line \"Patch: `<slug>`; new files ...\" of the section it belongs to in PATCHES.md (paths relative to internal/goja; an entry ending in / takes a whole directory)",
		"testdata/mustard_x.json: new file in no section: add `testdata/mustard_x.json` to the line \"Patch: `x`; new files ...\" of the section \"The x\" in PATCHES.md, the section of `mustard_x.go` (or to the Patch: line of the section it belongs to)",
		"testdata/test262-failures.txt: new file in no section: add `testdata/test262-failures.txt` to the line \"Patch: `<slug>`; new files ...\" of the section it belongs to in PATCHES.md (paths relative to internal/goja; an entry ending in / takes a whole directory)",
	}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s", strings.Join(msgs, "\n"))
	}
	if !notFork("testdata/test262/test/a.js") || notFork("testdata/test262-failures.txt") {
		t.Fatal("testdata/test262/ is upstream's test262 checkout, not the fork's")
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
// on pristine upstream and, with the fork's new files, gives the fork too.
// Skipped without git or upstream.
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
	// The fork's new files are not in the patches; they are copied.
	for _, p := range fork.paths() {
		if _, ok := up[p]; !ok {
			got[p] = fork[p]
		}
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
