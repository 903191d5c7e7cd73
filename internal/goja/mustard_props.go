package goja

import (
	"iter"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/ast"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/unistring"
)

// propStore holds an object's own string-keyed properties (baseObject.values):
// a slice searched in order while the object has few of them, a map once it
// has more. Most objects a program makes have a handful of properties (an
// array has only its length, a function its length and name), and a Go map
// takes a whole group of eight slots (over 300 bytes) for even one entry, so
// a program holding many small objects, or many realms each with their
// built-ins, kept mostly empty slots. Which form an object's properties are
// in is not observable: their order is propNames', as before.
//
// As with the map it replaces, a name may be present with a nil value (a
// template's deleted property: a white hole).
type propStore struct {
	small []propEntry
	m     map[unistring.String]Value
}

type propEntry struct {
	name  unistring.String
	value Value
}

// propStoreSmall is how many properties the slice holds before the store
// becomes a map.
const propStoreSmall = 8

// sized readies the store for n properties.
func (s *propStore) sized(n int) {
	if n > propStoreSmall {
		s.m = make(map[unistring.String]Value, n)
		s.small = nil
	} else if n > 0 && s.m == nil && cap(s.small) < n {
		s.small = make([]propEntry, 0, n)
	}
}

// lookup is the value under name, and whether name is present.
func (s *propStore) lookup(name unistring.String) (Value, bool) {
	if s.m != nil {
		v, ok := s.m[name]
		return v, ok
	}
	for i := range s.small {
		if s.small[i].name == name {
			return s.small[i].value, true
		}
	}
	return nil, false
}

// get is the value under name, or nil.
func (s *propStore) get(name unistring.String) Value {
	v, _ := s.lookup(name)
	return v
}

// has reports whether name is present.
func (s *propStore) has(name unistring.String) bool {
	_, ok := s.lookup(name)
	return ok
}

// set puts v under name.
func (s *propStore) set(name unistring.String, v Value) {
	if s.m != nil {
		s.m[name] = v
		return
	}
	for i := range s.small {
		if s.small[i].name == name {
			s.small[i].value = v
			return
		}
	}
	if len(s.small) < propStoreSmall {
		s.small = append(s.small, propEntry{name, v})
		return
	}
	m := make(map[unistring.String]Value, 2*propStoreSmall)
	for _, e := range s.small {
		m[e.name] = e.value
	}
	m[name] = v
	s.m, s.small = m, nil
}

// del removes name.
func (s *propStore) del(name unistring.String) {
	if s.m != nil {
		delete(s.m, name)
		return
	}
	for i := range s.small {
		if s.small[i].name == name {
			last := len(s.small) - 1
			copy(s.small[i:], s.small[i+1:])
			s.small[last] = propEntry{}
			s.small = s.small[:last]
			return
		}
	}
}

// len is how many names are present.
func (s *propStore) len() int {
	if s.m != nil {
		return len(s.m)
	}
	return len(s.small)
}

// all yields every name and value, in no particular order; the loop must
// not change the store.
func (s *propStore) all() iter.Seq2[unistring.String, Value] {
	return func(yield func(unistring.String, Value) bool) {
		if s.m != nil {
			for k, v := range s.m {
				if !yield(k, v) {
					return
				}
			}
			return
		}
		for _, e := range s.small {
			if !yield(e.name, e.value) {
				return
			}
		}
	}
}

// newObjectSized makes an object literal's object with room for the
// properties the literal names (MustardNewObject): its property slice and
// key list are allocated once at their size instead of grown as each
// property is put. Only their capacity differs from newObject's.
type newObjectSized uint32

func (n newObjectSized) exec(vm *vm) {
	vm.push(vm.r.MustardNewObject(int(n)))
	vm.pc++
}

// objectLiteralMaker is the instruction that makes an object literal's
// object: newObjectSized when its size is known, newObject otherwise.
func objectLiteralMaker(props []ast.Property) instruction {
	if n := literalSize(props); n > 0 {
		return newObjectSized(n)
	}
	return newObject
}

// literalSize is how many properties an object literal's own keyed and
// shorthand properties put, for newObjectSized: 0 when it has none or more
// than propStoreSmall (a spread's or a computed key's count is not known).
func literalSize(props []ast.Property) int {
	n := 0
	for _, p := range props {
		switch p := p.(type) {
		case *ast.PropertyShort:
			n++
		case *ast.PropertyKeyed:
			if p.Computed {
				return 0
			}
			n++
		default:
			return 0
		}
	}
	if n > propStoreSmall {
		return 0
	}
	return n
}
