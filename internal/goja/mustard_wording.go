package goja

import (
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/unistring"
)

// V8's words for the language's and the built-ins' common TypeErrors (see
// PATCHES.md, "errors in V8's words"): reading or writing a property of
// null or undefined, `in` on a primitive, a callback that is not a
// function, a Map or Set method on an incompatible receiver.

// mustardRender is a value as V8 writes it into an error message
// (Object::NoSideEffectsToString): a primitive's text (a Symbol's
// description form), an error's `name: message`, `#<Ctor>` for an object
// whose toString is Object.prototype.toString and whose constructor is a
// named function, and `[object Tag]` otherwise. Only data properties are
// read, and nothing through a proxy, so no guest code runs. A BigInt's
// digits are charged as String(big) charges them.
func (r *Runtime) mustardRender(v Value) string {
	o, ok := v.(*Object)
	if !ok {
		if b, ok := v.(*valueBigInt); ok {
			return r.bigIntString(b).String()
		}
		if v == nil {
			return "undefined"
		}
		if s, ok := v.(*Symbol); ok {
			return s.descriptiveString().String()
		}
		return v.String()
	}
	toString := r.mustardDataProp(o, "toString")
	if _, isErr := o.self.(*errorObject); isErr || toString != nil && toString == r.mustardDataProp(r.getErrorPrototype(), "toString") {
		name := mustardDataString(r.mustardDataProp(o, "name"), "Error")
		msg := mustardDataString(r.mustardDataProp(o, "message"), "")
		switch {
		case name == "":
			return msg
		case msg == "":
			return name
		}
		return name + ": " + msg
	}
	if toString != nil && toString == r.mustardDataProp(r.global.ObjectPrototype, "toString") {
		if ctor, ok := r.mustardDataProp(o, "constructor").(*Object); ok {
			if _, callable := ctor.self.assertCallable(); callable {
				if name := mustardDataString(r.mustardDataProp(ctor, "name"), ""); name != "" {
					return "#<" + name + ">"
				}
			}
		}
	}
	tag := o.self.className()
	if t, ok := r.mustardDataPropSym(o, SymToStringTag).(String); ok {
		tag = t.String()
	}
	return "[object " + tag + "]"
}

// mustardDataProp is the value of a data property found on o or its
// prototypes, nil for an accessor, a missing property or a proxy.
func (r *Runtime) mustardDataProp(o *Object, name unistring.String) Value {
	return mustardDataPropBy(o, func(self objectImpl) Value { return self.getOwnPropStr(name) })
}

func (r *Runtime) mustardDataPropSym(o *Object, s *Symbol) Value {
	return mustardDataPropBy(o, func(self objectImpl) Value { return self.getOwnPropSym(s) })
}

// mustardDataPropBy walks o's prototype chain with own, the lookup of one
// own property, stopping at a proxy (whose traps are guest code).
func mustardDataPropBy(o *Object, own func(objectImpl) Value) Value {
	for ; o != nil; o = o.self.proto() {
		if _, isProxy := o.self.(*proxyObject); isProxy {
			return nil
		}
		if v := own(o.self); v != nil {
			if p, ok := v.(*valueProperty); ok {
				if p.accessor {
					return nil
				}
				return p.value
			}
			return v
		}
	}
	return nil
}

func mustardDataString(v Value, def string) string {
	if s, ok := v.(String); ok {
		return s.String()
	}
	return def
}

// mustardKey is a property key as V8 quotes it in "Cannot read properties
// of null (reading 'k')"; ok is false for an object key, whose conversion
// would run guest code (V8 leaves the parenthesis out).
func (r *Runtime) mustardKey(key Value) (string, bool) {
	switch k := key.(type) {
	case *Object:
		return "", false
	case *Symbol:
		return k.descriptiveString().String(), true
	case *valueBigInt:
		return r.bigIntString(k).String(), true
	case nil:
		return "undefined", true
	}
	return key.String(), true
}

// mustardNullishAccess is V8's TypeError for reading (or, with set,
// writing) the property key of base, null or undefined.
func (r *Runtime) mustardNullishAccess(base, key Value, set bool) *Object {
	verb, ing := "read", "reading"
	if set {
		verb, ing = "set", "setting"
	}
	what := "undefined"
	if base == _null {
		what = "null"
	}
	if k, ok := r.mustardKey(key); ok {
		return r.NewTypeError("Cannot %s properties of %s (%s '%s')", verb, what, ing, k)
	}
	return r.NewTypeError("Cannot %s properties of %s", verb, what)
}

// mustardSetBase is base as an object for a property write, or V8's
// TypeError when it is null or undefined.
func (r *Runtime) mustardSetBase(base, key Value) *Object {
	switch base.(type) {
	case valueNull, valueUndefined:
		panic(r.mustardNullishAccess(base, key, true))
	}
	return base.ToObject(r)
}

// mustardNotAFunction is V8's TypeError for a callback argument that is
// not callable.
func (r *Runtime) mustardNotAFunction(v Value) *Object {
	return r.NewTypeError("%s is not a function", r.mustardRender(v))
}

// mustardCallable is toCallable with V8's words for a value that is not a
// function.
func (r *Runtime) mustardCallable(v Value) func(FunctionCall) Value {
	if o, ok := v.(*Object); ok {
		if call, ok := o.self.assertCallable(); ok {
			return call
		}
	}
	panic(r.mustardNotAFunction(v))
}

// mustardTypeOfRender is a value as V8 writes it after its type, when it
// has no call site to quote (Map and Set forEach): `number 1`,
// `string "a"`, `object null`, `object`, `undefined`.
func mustardTypeOfRender(v Value) string {
	switch v := v.(type) {
	case nil, valueUndefined:
		return "undefined"
	case valueNull:
		return "object null"
	case valueBool:
		return "boolean " + v.String()
	case valueInt, valueFloat:
		return "number " + v.String()
	case String:
		return "string \"" + v.String() + "\""
	case *Symbol:
		return "symbol"
	case *valueBigInt:
		return "bigint"
	}
	return "object"
}

// mustardReceiver is a built-in method's receiver as an object, or V8's
// TypeError naming the method when it is a primitive.
func (r *Runtime) mustardReceiver(this Value, method string) *Object {
	if o, ok := this.(*Object); ok {
		return o
	}
	panic(r.NewTypeError("Method %s called on incompatible receiver %s", method, r.mustardRender(this)))
}

// mustardInTarget is the right operand of `in` as an object, or V8's
// TypeError for a primitive.
func (r *Runtime) mustardInTarget(key, target Value) *Object {
	if o, ok := target.(*Object); ok {
		return o
	}
	k, _ := r.mustardKey(key)
	if _, isObj := key.(*Object); isObj {
		k = r.mustardRender(key)
	}
	panic(r.NewTypeError("Cannot use 'in' operator to search for '%s' in %s", k, r.mustardRender(target)))
}

func (r *Runtime) mustardIsCallable(v Value) bool {
	if o, ok := v.(*Object); ok {
		_, callable := o.self.assertCallable()
		return callable
	}
	return false
}

// mustardThisNumber is toNumber for Number.prototype's methods, with V8's
// TypeError naming the method for a receiver that is not a Number.
func (r *Runtime) mustardThisNumber(this Value, method string) Value {
	switch t := this.(type) {
	case valueInt, valueFloat:
		return t
	case *Object:
		if p, ok := t.self.(*primitiveValueObject); ok {
			switch p.pValue.(type) {
			case valueInt, valueFloat:
				return p.pValue
			}
		} else if _, ok := t.self.(*objectGoReflect); ok || t == r.global.NumberPrototype {
			return r.toNumber(t)
		}
	}
	panic(r.NewTypeError("Number.prototype.%s requires that 'this' be a Number", method))
}

// mustardArrayThis is ToObject(this) for the Array.prototype methods V8
// words its own TypeError for on null or undefined.
func (r *Runtime) mustardArrayThis(this Value, method string) *Object {
	switch this.(type) {
	case valueNull, valueUndefined:
		panic(r.NewTypeError("Array.prototype.%s called on null or undefined", method))
	}
	return this.ToObject(r)
}

// mustardTypeOfArticle is a value's type as V8 writes it after "which is":
// `a number`, `an object`, `null` (and, as V8 does, `a undefined`).
func mustardTypeOfArticle(v Value) string {
	switch v.(type) {
	case valueNull:
		return "null"
	case *Object:
		return "an object"
	case nil, valueUndefined:
		return "a undefined"
	case valueBool:
		return "a boolean"
	case String:
		return "a string"
	case valueInt, valueFloat:
		return "a number"
	case *valueBigInt:
		return "a bigint"
	case *Symbol:
		return "a symbol"
	}
	return "an object"
}

// mustardPlainRender is v as V8 writes it where it runs nothing: a
// primitive's text, an object's class tag (`[object Array]`), never the
// object's own toString (guest code, or a large array joined, uncharged).
func mustardPlainRender(v Value) string {
	if o, ok := v.(*Object); ok {
		return "[object " + o.self.className() + "]"
	}
	if s, ok := v.(*Symbol); ok {
		return s.descriptiveString().String()
	}
	if v == nil {
		return "undefined"
	}
	return v.String()
}
