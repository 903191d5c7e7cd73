package host

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// jsonName is a struct tag's JSON member name: "" for none or "-".
func jsonName(tag reflect.StructTag) string {
	name, _, _ := strings.Cut(tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// Every member name of the structs a request is encoded from and a
// response decoded into is a name internal/wire declares: Go tags cannot
// name a constant, so this holds them to the list.
func TestWireStructNamesAreWireNames(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice || ty.Kind() == reflect.Array {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || seen[ty] || ty.PkgPath() != reflect.TypeOf(request{}).PkgPath() && ty.Name() != "" {
			return
		}
		seen[ty] = true
		for i := 0; i < ty.NumField(); i++ {
			f := ty.Field(i)
			name := jsonName(f.Tag)
			if f.Anonymous && name == "" {
				walk(f.Type, path)
				continue
			}
			if name != "" && !slices.Contains(wire.Fields(), name) {
				t.Errorf("%s.%s: json name %q is not a name internal/wire declares", path, f.Name, name)
			}
			if f.IsExported() || f.Anonymous {
				walk(f.Type, path+"."+f.Name)
			}
		}
	}
	for _, v := range []any{request{}, response{}, wireOptions{}, wireAnswer{}, wireAuth{}, wirePolicy{},
		wirePayload{}, wireCallError{}, Limits{}, Profile{}, Pong{}, LogLine{}} {
		walk(reflect.TypeOf(v), reflect.TypeOf(v).Name())
	}
	if len(seen) < 12 {
		t.Fatalf("walked %d structs: the walk is broken", len(seen))
	}
}

// The same holds for the structs declared inside functions, which decode
// results ({"kind":"step",...}) and write Limits' wall_time_ms: reflection
// cannot reach them, so the package's source is read.
func TestLocalStructNamesAreWireNames(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
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
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				st, ok := n.(*ast.StructType)
				if !ok {
					return true
				}
				for _, fld := range st.Fields.List {
					if fld.Tag == nil {
						continue
					}
					tag, _ := strconv.Unquote(fld.Tag.Value)
					name := jsonName(reflect.StructTag(tag))
					if name == "" {
						continue
					}
					found++
					if !slices.Contains(wire.Fields(), name) {
						t.Errorf("%s: json name %q is not a name internal/wire declares", fset.Position(fld.Pos()), name)
					}
				}
				return true
			})
		}
	}
	if found == 0 {
		t.Fatal("no struct inside a function has a json tag: the scan is broken")
	}
}
