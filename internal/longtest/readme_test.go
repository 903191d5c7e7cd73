package longtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeLayoutListsEveryPackage keeps the README's layout table whole:
// every top-level directory holding Go code (or one of its subdirectories),
// every internal package and every contrib module has a row.
func TestReadmeLayoutListsEveryPackage(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(readme), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no Layout section")
	}
	layout, _, _ = strings.Cut(layout, "\n## ")
	var dirs []string
	for _, parent := range []string{".", "internal", "contrib"} {
		entries, err := os.ReadDir(filepath.Join(root, parent))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := filepath.ToSlash(filepath.Join(parent, e.Name()))
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || name == "internal" || name == "contrib" {
				continue
			}
			if parent == "." && !holdsGo(filepath.Join(root, name)) {
				continue
			}
			dirs = append(dirs, name)
		}
	}
	for _, d := range dirs {
		if !strings.Contains(layout, "| `"+d+"` |") && !strings.Contains(layout, "| `"+d+"/") {
			t.Errorf("README.md's Layout table has no row for %s", d)
		}
	}
}

// holdsGo reports whether dir or a directory below it holds a Go file.
func holdsGo(dir string) bool {
	found := false
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || found {
			return filepath.SkipDir
		}
		if d.IsDir() && d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		found = !d.IsDir() && strings.HasSuffix(path, ".go")
		return nil
	})
	return found
}
