package protocol_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// Every member name the sidecar writes in a hand-assembled piece of JSON
// (a raw string holding `"name":`) is a name internal/wire declares.
func TestWrittenNamesAreWireNames(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	key := regexp.MustCompile(`"([a-z][a-z0-9_]*)":`)
	fset := token.NewFileSet()
	found := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING || !strings.HasPrefix(lit.Value, "`") {
				return true
			}
			for _, m := range key.FindAllStringSubmatch(lit.Value, -1) {
				found++
				if !slices.Contains(wire.Fields(), m[1]) {
					t.Errorf("%s: %q is not a name internal/wire declares", fset.Position(lit.Pos()), m[1])
				}
			}
			return true
		})
	}
	if found == 0 {
		t.Fatal("no hand-written member names found: the scan is broken")
	}
}
