package goja

import (
	"errors"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/unistring"
)

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

// MustardStubConstructors makes function the realm's Function (the global
// Function and Function.prototype's constructor), and generator, async
// and asyncGenerator the constructors of the generator, async and async
// generator function prototypes, in place of the built-in constructors
// that compile source text. Each stub must be a function made by a script
// (its "prototype" not read yet) that nothing else reaches. The three
// prototypes are still made only when a guest first needs one, and their
// stub is linked to them then, as a built-in. A prototype's "constructor"
// is neither writable nor configurable, and neither is its stub's
// "prototype". It must be called before the realm makes the built-in
// Function or any of the three prototypes.
func (r *Runtime) MustardStubConstructors(function, generator, async, asyncGenerator *Object) error {
	if r.global.Function != nil || r.global.GeneratorFunctionPrototype != nil || r.global.AsyncFunctionPrototype != nil || r.global.AsyncGeneratorFunctionPrototype != nil {
		return errors.New("goja: constructors stubbed after they were made")
	}
	for _, o := range []*Object{function, generator, async, asyncGenerator} {
		if f, ok := o.self.(*funcObject); !ok || f.values.has("prototype") {
			return errors.New("goja: a constructor stub must be a script function whose prototype was not read")
		}
	}
	r.global.Function = function
	r.global.GeneratorFunction, r.global.AsyncFunction, r.global.AsyncGeneratorFunction = generator, async, asyncGenerator
	r.constructorsStubbed = true
	r.linkStub(function, r.getFunctionPrototype())
	return nil
}

// stubbedConstructor puts proto's "constructor": the constructor the
// realm has, writable and configurable as the built-in's unless it is a
// stub (MustardStubConstructors), which is linked to proto as its
// "prototype".
func (r *Runtime) stubbedConstructor(proto *baseObject, ctor *Object, writable bool) {
	if !r.constructorsStubbed {
		proto._putProp("constructor", ctor, writable, false, true)
		return
	}
	proto._putProp("constructor", ctor, false, false, false)
	r.linkStub(ctor, proto.val)
}

// linkStub gives a constructor stub its "prototype". The runtime makes
// it, as it makes a built-in: its own properties now are the realm's
// (madeBuiltins).
func (r *Runtime) linkStub(stub, proto *Object) {
	defer r.makingBuiltins()()
	stub.self.(*funcObject)._putProp("prototype", proto, false, false, false)
	r.builtinsMade = append(r.builtinsMade, stub)
}

// MustardObjectPrototype, MustardArrayPrototype and MustardErrorConstructor
// are the realm's own intrinsics, whatever guest code did to the global
// object, made now if they were not yet (as built-ins).
func (r *Runtime) MustardObjectPrototype() *Object  { return r.global.ObjectPrototype }
func (r *Runtime) MustardArrayPrototype() *Object   { return r.getArrayPrototype() }
func (r *Runtime) MustardErrorConstructor() *Object { return r.getError() }
