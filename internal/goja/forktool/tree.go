package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// upstreamModule is the module the fork is taken from, and baseVersion the
// version internal/goja is at (PATCHES.md, "goja, as mustard-sidecar uses it").
const (
	upstreamModule = "github.com/dop251/goja"
	baseVersion    = "v0.0.0-20260917113740-793a2a65c13b"
	forkImportPath = "github.com/mustard-sidecar/mustard-sidecar/internal/goja"
)

// tree is a directory's files by slash-separated path relative to its root.
type tree map[string][]byte

func (t tree) paths() []string {
	ps := make([]string, 0, len(t))
	for p := range t {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

// leftOut reports whether an upstream file is left out of the fork:
// upstream's REPL command (goja/), its module files and its test262 harness
// (tc39_*.go and its scripts).
func leftOut(p string) bool {
	switch {
	case strings.HasPrefix(p, "goja/"),
		p == "go.mod", p == "go.sum",
		p == ".tc39_test262_checkout.sh",
		p == "extract_failed_tests.sh", p == "extract_passed_tests.sh",
		!strings.Contains(p, "/") && strings.HasPrefix(p, "tc39_") && strings.HasSuffix(p, ".go"):
		return true
	}
	return false
}

// notFork reports whether a file under internal/goja is outside the fork
// proper: this series' own files, what is kept next to it without being
// a change to upstream's code (the test262 subset runner), and
// testdata/test262/, where upstream's test262 harness checks test262 out
// (ignored by upstream's .gitignore). Other files in testdata/ are the
// fork's like any other: upstream's, or new files listed by a section.
func notFork(p string) bool {
	return p == "PATCHES.md" ||
		strings.HasPrefix(p, "patches/") ||
		strings.HasPrefix(p, "forktool/") ||
		strings.HasPrefix(p, "test262/") ||
		strings.HasPrefix(p, "testdata/test262/")
}

var importRe = regexp.MustCompile(`github\.com/dop251/goja(["/])`)

// rewriteImports moves upstream's Go files into this module: its own import
// paths (and nothing else, goja_nodejs links stay) name the fork's package.
func rewriteImports(p string, b []byte) []byte {
	if !strings.HasSuffix(p, ".go") {
		return b
	}
	out := importRe.ReplaceAll(b, []byte(forkImportPath+"$1"))
	if bytes.Equal(out, b) {
		return b
	}
	// The new paths sort elsewhere among the imports: gofmt sorts them.
	if f, err := format.Source(out); err == nil {
		return f
	}
	return out
}

// moduleZip finds version's zip through the go command (the module cache,
// else the module proxy).
func moduleZip(version string) (zipPath, resolved string, err error) {
	cmd := exec.Command("go", "mod", "download", "-json", upstreamModule+"@"+version)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var info struct {
		Version string
		Zip     string
		Error   string
	}
	if jerr := json.Unmarshal(out, &info); jerr == nil && info.Error != "" {
		return "", "", &downloadError{fmt.Sprintf("go mod download %s@%s: %s", upstreamModule, version, info.Error)}
	}
	if err != nil {
		return "", "", &downloadError{fmt.Sprintf("go mod download %s@%s: %v: %s", upstreamModule, version, err, strings.TrimSpace(stderr.String()))}
	}
	if info.Zip == "" {
		return "", "", &downloadError{fmt.Sprintf("go mod download %s@%s: no zip", upstreamModule, version)}
	}
	return info.Zip, info.Version, nil
}

// downloadError is an upstream version that could not be obtained (no
// network, no proxy); the test skips on it.
type downloadError struct{ msg string }

func (e *downloadError) Error() string { return e.msg }

// loadUpstream returns upstream goja at version as the fork starts from it:
// the left-out files dropped, import paths rewritten.
func loadUpstream(version string) (tree, string, error) {
	zp, resolved, err := moduleZip(version)
	if err != nil {
		return nil, "", err
	}
	zr, err := zip.OpenReader(zp)
	if err != nil {
		return nil, "", err
	}
	defer zr.Close()
	prefix := upstreamModule + "@" + resolved + "/"
	t := tree{}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || !strings.HasPrefix(f.Name, prefix) {
			continue
		}
		p := strings.TrimPrefix(f.Name, prefix)
		if leftOut(p) {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, "", err
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, "", err
		}
		t[p] = rewriteImports(p, b)
	}
	return t, resolved, nil
}

// loadFork reads the fork's files under dir (internal/goja).
func loadFork(dir string) (tree, error) {
	t := tree{}
	err := filepath.WalkDir(dir, func(fp string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, fp)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if notFork(rel) {
			return nil
		}
		b, err := os.ReadFile(fp)
		if err != nil {
			return err
		}
		t[rel] = b
		return nil
	})
	return t, err
}

// isNewFileOf reports whether p is covered by a section's new-file entry
// (a file, or a directory ending in a slash).
func isNewFileOf(entry, p string) bool {
	if strings.HasSuffix(entry, "/") {
		return strings.HasPrefix(p, entry)
	}
	return path.Clean(entry) == p
}
