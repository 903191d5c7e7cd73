package goja

import "github.com/mustard-sidecar/mustard-sidecar/internal/goja/unistring"

// globalFixed are the global object's properties that are not
// configurable (builtin_global.go): deleting them fails.
var globalFixed = map[unistring.String]bool{"NaN": true, "undefined": true, "Infinity": true}

// MustardDeleteGlobals deletes properties of the global object as the
// delete operator in strict code does. A built-in property not read yet
// is removed from the global object's template without being made: the
// realm is the same as if it had been made and deleted, minus the objects
// nothing can reach any more (a built-in made later, such as GoError for
// NewGoError, is made then, as a built-in).
func (r *Runtime) MustardDeleteGlobals(names ...string) error {
	return r.try(func() {
		for _, s := range names {
			name := unistring.NewFromString(s)
			if g, ok := r.globalObject.self.(*templatedObject); ok && !globalFixed[name] {
				if made := g.values.has(name); !made && g.tmpl.props[name] != nil {
					g.materialisePropNames()
					g._delete(name)
					g.values.set(name, nil) // white hole, as deleteStr leaves
					continue
				}
			}
			r.globalObject.self.deleteStr(name, true)
		}
	})
}

// MustardNewNativeFunc makes a Go function object with the given name and
// length: what ToValue(fn) then redefining its "name" and "length" (not
// writable, not enumerable, configurable) makes, without looking up the Go
// symbol's name first.
func (r *Runtime) MustardNewNativeFunc(fn func(FunctionCall) Value, name string, length int) *Object {
	return r.newNativeFunc(fn, unistring.NewFromString(name), length)
}
