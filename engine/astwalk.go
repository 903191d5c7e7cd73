package engine

import (
	"reflect"
	"sync"
)

// astFields is what a walk over the parser's tree needs to know of one
// struct type, worked out once per type. Asking reflection for every
// field's name and export, and whether the type is a node, at every
// struct of every compile took about a third of a compile's time.
type astFields struct {
	skip   bool  // not walked at all (file.File)
	node   bool  // a pointer to it is an ast.Node
	fields []int // its exported fields that can lead to a node, in order
}

// astFieldsByType caches astFieldsOf: the parser's tree has a few dozen
// struct types, shared by every compile.
var astFieldsByType sync.Map // reflect.Type → *astFields

// astFieldsOf returns t's astFields. A field can lead to a node when it is
// an interface, a pointer, a struct, or a slice of one of these; the walks
// do nothing at fields of any other kind, so leaving them out changes no
// walk.
func astFieldsOf(t reflect.Type) *astFields {
	if f, ok := astFieldsByType.Load(t); ok {
		return f.(*astFields)
	}
	f := &astFields{skip: t == fileType, node: reflect.PointerTo(t).Implements(nodeType)}
	for i := range t.NumField() {
		if sf := t.Field(i); sf.IsExported() && mayLeadToNode(sf.Type) {
			f.fields = append(f.fields, i)
		}
	}
	got, _ := astFieldsByType.LoadOrStore(t, f)
	return got.(*astFields)
}

// mayLeadToNode reports whether a walk does anything at a value of type t.
func mayLeadToNode(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Interface, reflect.Pointer, reflect.Struct:
		return true
	case reflect.Slice:
		switch t.Elem().Kind() {
		case reflect.Interface, reflect.Pointer, reflect.Struct, reflect.Slice:
			return true
		}
	}
	return false
}

// seenHint sizes a walk's map of nodes seen for a program of src: about
// one struct of the tree for every five bytes of source (685 for the
// 3.3 KB expenses workload), so that a program of up to 16 KB does not
// grow it, and no larger, so that a long source of comments does not
// allocate for nodes it does not have.
func seenHint(src string) int { return min(len(src)/4, 4096) }
