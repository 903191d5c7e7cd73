package bench

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// wireTagName is a struct tag's JSON member name: "" for none or "-".
func wireTagName(tag reflect.StructTag) string {
	name, _, _ := strings.Cut(tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// The structs the driver decodes responses into name only members
// internal/wire declares (Go tags cannot name a constant): the named ones
// by reflection, the ones declared inside functions from the source of
// the files that speak the protocol.
func TestResponseStructNamesAreWireNames(t *testing.T) {
	check := func(where, name string) {
		// A capitalised name is a StructuredValue's variant ("Number",
		// "String"), which the value package owns.
		if name != "" && !unicode.IsUpper(rune(name[0])) && !slices.Contains(wire.Fields(), name) {
			t.Errorf("%s: json name %q is not a name internal/wire declares", where, name)
		}
	}
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct {
			return
		}
		for i := 0; i < ty.NumField(); i++ {
			f := ty.Field(i)
			if f.Anonymous {
				walk(f.Type, path)
				continue
			}
			if name := wireTagName(f.Tag); name != "" {
				check(path+"."+f.Name, name)
				walk(f.Type, path+"."+f.Name)
			}
		}
	}
	walk(reflect.TypeOf(soakResponse{}), "soakResponse")

	fset := token.NewFileSet()
	found := 0
	for _, name := range []string{"host.go", "calls.go", "driver.go", "large.go", "soak.go"} {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if st, ok := n.(*ast.StructType); ok {
					for _, fld := range st.Fields.List {
						if fld.Tag != nil {
							tag, _ := strconv.Unquote(fld.Tag.Value)
							found++
							check(fset.Position(fld.Pos()).String(), wireTagName(reflect.StructTag(tag)))
						}
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
