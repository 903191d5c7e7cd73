package longtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// layoutRow is a row of the README's Layout table: `| `dir` | what it owns |`.
var layoutRow = regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")

// TestReadmeLayoutListsEveryPackage keeps the README's layout table whole
// and true: every top-level directory has a row (its own, or one of a
// directory below it), so does every directory under internal, contrib,
// clients and cmd, and every directory a row names exists.
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
	var rows []string
	for _, m := range layoutRow.FindAllStringSubmatch(layout, -1) {
		rows = append(rows, m[1])
	}
	if len(rows) == 0 {
		t.Fatal("README.md's Layout section has no table rows")
	}
	for _, row := range rows {
		if fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(row))); err != nil || !fi.IsDir() {
			t.Errorf("README.md's Layout table has a row for %s, which is not a directory of the repository", row)
		}
	}
	listed := func(dir string) bool {
		for _, row := range rows {
			if row == dir || strings.HasPrefix(row, dir+"/") {
				return true
			}
		}
		return false
	}
	grouped := map[string]bool{"internal": true, "contrib": true, "clients": true, "cmd": true}
	for _, parent := range []string{".", "internal", "contrib", "clients", "cmd"} {
		entries, err := os.ReadDir(filepath.Join(root, parent))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "node_modules" {
				continue
			}
			dir := e.Name()
			if parent != "." {
				dir = parent + "/" + dir
			} else if grouped[dir] {
				continue // each directory below it has its row
			}
			if !listed(dir) {
				t.Errorf("README.md's Layout table has no row for %s (add \"| `%s` | what it owns |\")", dir, dir)
			}
		}
	}
}
