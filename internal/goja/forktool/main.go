// Command forktool keeps internal/goja as a patch series on upstream goja:
// one patch per section of internal/goja/PATCHES.md, in
// internal/goja/patches, of the section's hunks in upstream files, plus the
// section's new files, which stay whole in internal/goja.
//
//	go run ./internal/goja/forktool series           # regenerate the patches
//	go run ./internal/goja/forktool check            # the series and new files rebuild the fork exactly
//	go run ./internal/goja/forktool rebase -to latest # try the series on a newer upstream
//
// Upstream comes from the Go module cache or proxy (go mod download).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "series":
		err = cmdSeries(os.Args[2:], os.Stdout)
	case "check":
		err = cmdCheck(os.Args[2:], os.Stdout)
	case "rebase":
		err = cmdRebase(os.Args[2:], os.Stdout)
	case "hunks":
		err = cmdHunks(os.Args[2:], os.Stdout)
	case "-h", "-help", "--help", "help":
		usage(os.Stdout)
		return
	default:
		usage(os.Stderr)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "forktool:", err)
		os.Exit(1)
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: forktool <command> [-dir internal/goja]
  series            regenerate internal/goja/patches from the fork and PATCHES.md
  check             apply the series to pristine upstream, compare with the fork, check markers
  hunks             list the hunks in upstream files, their lines in the fork and sections
  rebase -to V      apply the series to upstream goja at version V (a version,
                    commit or "latest") in memory, add the new files, and
                    report what conflicts
`)
}

// forkDir finds internal/goja from the working directory up.
func forkDir(flagDir string) (string, error) {
	if flagDir != "" {
		return flagDir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && bytes.Contains(b, []byte("module github.com/mustard-sidecar/mustard-sidecar\n")) {
			return filepath.Join(d, "internal", "goja"), nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("not inside the mustard-sidecar module (use -dir)")
		}
	}
}

// load reads PATCHES.md, the fork and pristine upstream, and sorts the
// fork's changes into the series.
func load(dir string) (*analysis, error) {
	md, err := os.ReadFile(filepath.Join(dir, "PATCHES.md"))
	if err != nil {
		return nil, err
	}
	secs, err := parseSections(string(md))
	if err != nil {
		return nil, err
	}
	fork, err := loadFork(dir)
	if err != nil {
		return nil, err
	}
	up, _, err := loadUpstream(baseVersion)
	if err != nil {
		return nil, err
	}
	return analyze(secs, up, fork), nil
}

func reportProblems(w io.Writer, a *analysis) {
	for _, p := range a.problems {
		fmt.Fprintln(w, "  "+p.String())
	}
}

// forkFlags parses a command's flags, the -dir every command takes and
// those extra defines, and returns the fork's directory.
func forkFlags(name string, args []string, extra func(*flag.FlagSet)) (string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	dirFlag := fs.String("dir", "", "the fork's directory (default: internal/goja of the module)")
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	return forkDir(*dirFlag)
}

func cmdSeries(args []string, w io.Writer) error {
	dir, err := forkFlags("series", args, nil)
	if err != nil {
		return err
	}
	a, err := load(dir)
	if err != nil {
		return err
	}
	if len(a.problems) > 0 {
		fmt.Fprintln(w, "the fork does not sort into the series:")
		reportProblems(w, a)
		return fmt.Errorf("%d problems, patches not written", len(a.problems))
	}
	names, patches := a.patches()
	pdir := filepath.Join(dir, "patches")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(pdir, "*.patch"))
	for _, o := range old {
		if _, keep := patches[filepath.Base(o)]; !keep {
			if err := os.Remove(o); err != nil {
				return err
			}
		}
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(pdir, n), patches[n], 0o644); err != nil {
			return err
		}
	}
	total, _ := a.hunkCount()
	fmt.Fprintf(w, "%d patches, %d hunks in upstream files, %d new files\n", len(names), total, len(a.newFile))
	return nil
}

func cmdCheck(args []string, w io.Writer) error {
	dir, err := forkFlags("check", args, nil)
	if err != nil {
		return err
	}
	start := time.Now()
	a, err := load(dir)
	if err != nil {
		return err
	}
	return check(a, dir, w, start)
}

func check(a *analysis, dir string, w io.Writer, start time.Time) error {
	failures := 0
	if len(a.problems) > 0 {
		fmt.Fprintln(w, "hunks and files the series cannot place:")
		reportProblems(w, a)
		failures += len(a.problems)
	}
	// The committed patches, applied to pristine upstream, plus the fork's
	// new files, must give the fork byte for byte.
	pdir := filepath.Join(dir, "patches")
	files, _ := filepath.Glob(filepath.Join(pdir, "*.patch"))
	sort.Strings(files)
	names := make([]string, 0, len(files))
	onDisk := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		names = append(names, filepath.Base(f))
		onDisk[filepath.Base(f)] = b
	}
	got, report, err := applySeries(a.up, names, onDisk, false)
	if err != nil {
		return err
	}
	report = append(report, a.addNewFiles(got)...)
	if len(report) > 0 {
		fmt.Fprintln(w, "the committed series does not apply to upstream "+baseVersion+":")
		for _, r := range report {
			fmt.Fprintln(w, "  "+r)
		}
		failures += len(report)
	}
	var diffs []string
	for _, p := range a.fork.paths() {
		g, ok := got[p]
		_, inUp := a.up[p]
		_, listed := a.newFile[p]
		switch {
		case !ok && !inUp && !listed:
			// a new file in no section, reported above
		case !ok:
			diffs = append(diffs, p+": in the fork, not made by the series")
		case !bytes.Equal(g, a.fork[p]):
			diffs = append(diffs, p+": the series makes it differently")
		}
	}
	for _, p := range got.paths() {
		if _, ok := a.fork[p]; !ok {
			diffs = append(diffs, p+": made by the series, not in the fork")
		}
	}
	if len(diffs) > 0 {
		fmt.Fprintln(w, "upstream plus the committed series is not the fork:")
		for _, d := range diffs {
			fmt.Fprintln(w, "  "+d)
		}
		failures += len(diffs)
	}
	// And they must be what the markers and PATCHES.md say now.
	if len(a.problems) == 0 {
		wantNames, want := a.patches()
		var stale []string
		for _, n := range wantNames {
			if !bytes.Equal(want[n], onDisk[n]) {
				stale = append(stale, n)
			}
		}
		for _, n := range names {
			if _, ok := want[n]; !ok {
				stale = append(stale, n+" (no such section)")
			}
		}
		if len(stale) > 0 {
			fmt.Fprintln(w, "patches out of date with the fork, its markers or PATCHES.md (run: go run ./internal/goja/forktool series):")
			for _, s := range stale {
				fmt.Fprintln(w, "  "+s)
			}
			failures += len(stale)
		}
	}
	total, unmarked := a.hunkCount()
	fmt.Fprintf(w, "%d sections, %d hunks in upstream files, %d unmarked, %d new files; %s\n",
		len(a.secs), total, unmarked, len(a.newFile), time.Since(start).Round(time.Millisecond))
	if failures > 0 {
		return fmt.Errorf("check failed: %d problems", failures)
	}
	fmt.Fprintln(w, "ok: upstream "+baseVersion+" plus "+fmt.Sprint(len(names))+" patches plus "+fmt.Sprint(len(a.newFile))+" new files is internal/goja, byte for byte")
	return nil
}

func cmdRebase(args []string, w io.Writer) error {
	var to, out *string
	dir, err := forkFlags("rebase", args, func(fs *flag.FlagSet) {
		to = fs.String("to", "", "upstream version: a module version, a commit, or latest")
		out = fs.String("out", "", "write the rebased tree here for inspection (default: nowhere)")
	})
	if err != nil {
		return err
	}
	if *to == "" {
		return errors.New("rebase needs -to <version>")
	}
	// The fork's new files, by section, come from PATCHES.md against the
	// base version.
	a, err := load(dir)
	if err != nil {
		return err
	}
	up, resolved, err := loadUpstream(*to)
	if err != nil {
		return err
	}
	pdir := filepath.Join(dir, "patches")
	files, _ := filepath.Glob(filepath.Join(pdir, "*.patch"))
	sort.Strings(files)
	var names []string
	patches := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		names = append(names, filepath.Base(f))
		patches[filepath.Base(f)] = b
	}
	if len(names) == 0 {
		return errors.New("no patches in " + pdir)
	}
	got, report, err := applySeries(up, names, patches, true)
	if err != nil {
		return err
	}
	report = append(report, a.addNewFiles(got)...)
	conflicts, moved := 0, 0
	perPatch := map[string]int{}
	for _, r := range report {
		if strings.Contains(r, "lines away") {
			moved++
			continue
		}
		conflicts++
		perPatch[strings.SplitN(r, ":", 2)[0]]++
	}
	if len(a.problems) > 0 {
		fmt.Fprintln(w, "the fork does not sort into the series (run check); the rebased tree leaves out what is not placed:")
		reportProblems(w, a)
	}
	fmt.Fprintf(w, "series of %d patches and %d new files on upstream %s (base %s):\n", len(names), len(a.newFile), resolved, baseVersion)
	for _, r := range report {
		fmt.Fprintln(w, "  "+r)
	}
	for _, n := range names {
		if c := perPatch[n]; c > 0 {
			fmt.Fprintf(w, "conflicts: %s: %d\n", n, c)
		}
	}
	fmt.Fprintf(w, "%d hunks or new files conflict, %d hunks apply elsewhere than their line\n", conflicts, moved)
	if *out != "" {
		for p, b := range got {
			fp := filepath.Join(*out, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(fp), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(fp, b, 0o644); err != nil {
				return err
			}
		}
		fmt.Fprintln(w, "rebased tree written to", *out)
	}
	if conflicts > 0 {
		return fmt.Errorf("%d conflicts", conflicts)
	}
	return nil
}

func cmdHunks(args []string, w io.Writer) error {
	dir, err := forkFlags("hunks", args, nil)
	if err != nil {
		return err
	}
	a, err := load(dir)
	if err != nil {
		return err
	}
	for _, c := range a.changes {
		slug := "-"
		if c.section >= 0 {
			slug = a.secs[c.section].slug
		}
		// path, the fork's lines [from, to) (from 1), upstream's, section
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%s\n", c.path, c.b.newStart+1, c.b.newEnd+1, c.b.oldStart+1, c.b.oldEnd+1, slug)
	}
	return nil
}
