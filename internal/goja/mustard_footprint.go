package goja

import (
	"reflect"
	"sync"
	"unsafe"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/file"
)

// MustardFootprint estimates the bytes a compiled program keeps live (a
// mustard-sidecar addition; see PATCHES.md): its code, every value and
// name its instructions hold, its source map and those of every function
// nested in it, counted from the Go types that hold them. An embedder that
// caches compiled programs weighs them with it.
//
// The count is deterministic: it depends only on the program. It is the
// size of the Go values, not of the allocations that hold them (the
// allocator rounds up to its size classes); an embedder calibrates it
// against measured heap growth. Strings that are part of the program's
// source text (a function's own text, most names) share its memory and are
// not counted; nor is the source itself, which the embedder holds and
// counts once.
func (p *Program) MustardFootprint() uint64 {
	f := footprint{}
	if p.src != nil {
		s := p.src.Source()
		if len(s) > 0 {
			f.lo = uintptr(unsafe.Pointer(unsafe.StringData(s)))
			f.hi = f.lo + uintptr(len(s))
		}
	}
	f.program(p)
	return f.n
}

type footprint struct {
	n      uint64
	lo, hi uintptr // the source text
}

// footprintDepth bounds how deep the walk follows pointers below one
// instruction. A compiled program is a tree of programs whose
// instructions hold values, names and small tables; nothing in it links
// back, but the bound makes sure a cycle could not make the walk loop.
const footprintDepth = 16

var (
	programPtrType = reflect.TypeOf((*Program)(nil))
	filePtrType    = reflect.TypeOf((*file.File)(nil))
	// Runtime-side values, never part of a compiled program: not followed.
	skipTypes = map[reflect.Type]bool{
		reflect.TypeOf((*Object)(nil)):  true,
		reflect.TypeOf((*Runtime)(nil)): true,
		reflect.TypeOf((*vm)(nil)):      true,
		reflect.TypeOf((*Symbol)(nil)):  true, // well-known symbols are shared
	}
	instructionSize = uint64(reflect.TypeOf((*instruction)(nil)).Elem().Size())
	srcMapItemSize  = uint64(reflect.TypeOf(srcMapItem{}).Size())
	programSize     = uint64(reflect.TypeOf(Program{}).Size())
)

func (f *footprint) program(p *Program) {
	f.n += programSize
	f.n += uint64(cap(p.code)) * instructionSize
	for _, ins := range p.code {
		if ins != nil {
			f.iface(reflect.ValueOf(ins), 0)
		}
	}
	f.n += uint64(cap(p.srcMap)) * srcMapItemSize
	f.str(string(p.funcName))
}

// str counts a string's bytes unless they are the source's.
func (f *footprint) str(s string) {
	if len(s) == 0 {
		return
	}
	if at := uintptr(unsafe.Pointer(unsafe.StringData(s))); at >= f.lo && at < f.hi {
		return
	}
	f.n += uint64(len(s))
}

// iface counts a value held in an interface: its box, unless it is
// pointer-shaped (stored in the interface itself) or empty, and what it
// refers to.
func (f *footprint) iface(v reflect.Value, depth int) {
	t := v.Type()
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Map && t.Kind() != reflect.Chan &&
		t.Kind() != reflect.Func && t.Kind() != reflect.UnsafePointer {
		f.n += uint64(t.Size())
	}
	f.value(v, depth)
}

// value counts the memory v refers to; v's own bytes are its holder's.
func (f *footprint) value(v reflect.Value, depth int) {
	t := v.Type()
	if flat(t) || depth > footprintDepth {
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		switch {
		case t == programPtrType:
			f.program((*Program)(v.UnsafePointer()))
			return
		case t == filePtrType || skipTypes[t]:
			return
		}
		f.n += uint64(t.Elem().Size())
		f.value(v.Elem(), depth+1)
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		f.iface(v.Elem(), depth+1)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f.value(v.Field(i), depth)
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			f.value(v.Index(i), depth)
		}
	case reflect.Slice:
		if v.IsNil() {
			return
		}
		f.n += uint64(v.Cap()) * uint64(t.Elem().Size())
		if !flat(t.Elem()) {
			for i := 0; i < v.Len(); i++ {
				f.value(v.Index(i), depth+1)
			}
		}
	case reflect.String:
		f.str(v.String())
	case reflect.Map:
		if v.IsNil() {
			return
		}
		// A map's table: each slot holds a key, a value and a control
		// byte, and the table doubles as it grows.
		slot := uint64(t.Key().Size()+t.Elem().Size()) + 1
		f.n += 48 + 2*uint64(v.Len())*slot
		if !flat(t.Key()) || !flat(t.Elem()) {
			it := v.MapRange()
			for it.Next() {
				f.value(it.Key(), depth+1)
				f.value(it.Value(), depth+1)
			}
		}
	}
}

var flatTypes sync.Map // reflect.Type → bool

// flat reports whether a value of type t refers to no memory of its own:
// it holds no pointer, string, slice, map or interface.
func flat(t reflect.Type) bool {
	if b, ok := flatTypes.Load(t); ok {
		return b.(bool)
	}
	b := computeFlat(t, 0)
	flatTypes.Store(t, b)
	return b
}

func computeFlat(t reflect.Type, depth int) bool {
	if depth > footprintDepth {
		return false
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.String, reflect.Slice, reflect.Map:
		return false
	case reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true // not followed
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if !computeFlat(t.Field(i).Type, depth+1) {
				return false
			}
		}
	case reflect.Array:
		return t.Len() == 0 || computeFlat(t.Elem(), depth+1)
	}
	return true
}

// MustardSourceLength is the length of the text the program was compiled
// from, which it keeps (a mustard-sidecar addition).
func (p *Program) MustardSourceLength() int {
	if p.src == nil {
		return 0
	}
	return len(p.src.Source())
}
