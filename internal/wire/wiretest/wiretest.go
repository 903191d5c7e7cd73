// Package wiretest holds the JSON member names of Go structs to the names
// internal/wire declares. Go struct tags cannot name a constant, so each
// package that encodes or decodes the wire with tagged structs checks them
// in its tests with these functions.
package wiretest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// TagName is a struct tag's JSON member name: "" for none or "-".
func TagName(tag reflect.StructTag) string {
	name, _, _ := strings.Cut(tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// Declared reports whether name is a field name internal/wire declares. A
// capitalised name is a StructuredValue's variant ("Number", "String"),
// which the value package owns, and counts as declared.
func Declared(name string) bool {
	return name == "" || name[0] >= 'A' && name[0] <= 'Z' || slices.Contains(wire.Fields(), name)
}

// StructNames walks the structs of values (through pointers, slices,
// arrays, embedded structs and exported fields, within the package of the
// first value; unnamed structs too) and returns a line for each JSON
// member name that is not Declared, and how many structs it walked.
func StructNames(values ...any) (problems []string, walked int) {
	if len(values) == 0 {
		return nil, 0
	}
	pkg := reflect.TypeOf(values[0]).PkgPath()
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice || ty.Kind() == reflect.Array {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || seen[ty] || ty.Name() != "" && ty.PkgPath() != pkg {
			return
		}
		seen[ty] = true
		for i := 0; i < ty.NumField(); i++ {
			f := ty.Field(i)
			name := TagName(f.Tag)
			if f.Anonymous && name == "" {
				walk(f.Type, path)
				continue
			}
			if !Declared(name) {
				problems = append(problems, path+"."+f.Name+": json name "+strconv.Quote(name)+" is not a name internal/wire declares")
			}
			if f.IsExported() || f.Anonymous {
				walk(f.Type, path+"."+f.Name)
			}
		}
	}
	for _, v := range values {
		ty := reflect.TypeOf(v)
		walk(ty, ty.Name())
	}
	return problems, len(seen)
}

// LocalStructNames does the same for the structs declared inside the
// functions of the Go files named (reflection cannot reach them): a line
// for each JSON member name that is not Declared, and how many tags it
// read.
func LocalStructNames(files ...string) (problems []string, found int, err error) {
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return nil, 0, err
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
					name := TagName(reflect.StructTag(tag))
					if name == "" {
						continue
					}
					found++
					if !Declared(name) {
						problems = append(problems, fset.Position(fld.Pos()).String()+": json name "+strconv.Quote(name)+" is not a name internal/wire declares")
					}
				}
				return true
			})
		}
	}
	return problems, found, nil
}
