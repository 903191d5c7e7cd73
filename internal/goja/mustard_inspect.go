package goja

// Native reads for an inspector that formats guest values the way Node's
// util.inspect does (internal/jsinspect): what V8 exposes to Node as
// internal slots (a value's kind, a Map's entries, a Promise's state, a
// Proxy's target, ...) and own properties read without running any getter
// or proxy trap. None of these run guest code; the caller excludes
// proxies where a method says so.

import (
	"math"
	"strings"
	"sync/atomic"
	"unicode/utf16"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/unistring"
)

// MustardProp is one own property as MustardOwnProp reads it.
type MustardProp struct {
	Present    bool
	Value      Value // a data property's value; nil for an accessor
	Getter     bool  // an accessor with a getter
	Setter     bool  // an accessor with a setter
	Enumerable bool
}

// MustardOwnProp reads o's own property key (a string, number or symbol
// value) without running a getter or consulting a prototype. The caller
// excludes proxies.
func (o *Object) MustardOwnProp(key Value) MustardProp {
	if e, ok := o.self.(*errorObject); ok && !e.stackPropAdded {
		// An error's stack is made on its first read from its name and
		// message, read with getters and converted with toString: taken
		// as absent while that would run guest code.
		if k, isStr := key.(String); isStr && k.String() == "stack" && !e.mustardPlainNaming() {
			return MustardProp{}
		}
	}
	p := o.getOwnProp(key)
	if p == nil {
		return MustardProp{}
	}
	if vp, ok := p.(*valueProperty); ok {
		if vp.accessor {
			return MustardProp{Present: true, Getter: vp.getterFunc != nil, Setter: vp.setterFunc != nil, Enumerable: vp.enumerable}
		}
		return MustardProp{Present: true, Value: vp.value, Enumerable: vp.enumerable}
	}
	return MustardProp{Present: true, Value: p, Enumerable: true}
}

// MustardEachOwnKey calls fn with o's own string keys (in the order
// Object.getOwnPropertyNames gives them) and then its own symbol keys, and
// whether each is enumerable, one at a time until fn returns false;
// without the array index keys of an array, a typed array or a String
// object when nonIndex (found without walking the elements). Nothing is
// collected first, so a caller that stops early does not pay for the rest.
// The caller excludes proxies.
func (o *Object) MustardEachOwnKey(nonIndex bool, fn func(key Value, enumerable bool) bool) {
	strKeys := o.self.iterateStringKeys
	if e, ok := o.self.(*errorObject); ok && !e.stackPropAdded {
		// listing an error's keys makes its stack: only when that runs
		// no guest code, else the keys are listed without it
		if e.mustardPlainNaming() {
			e.addStackProp()
		} else {
			strKeys = e.baseObject.iterateStringKeys
		}
	}
	if nonIndex {
		switch s := o.self.(type) {
		case *arrayObject:
			strKeys = s.baseObject.iterateStringKeys
		case *sparseArrayObject:
			strKeys = s.baseObject.iterateStringKeys
		case *typedArrayObject:
			strKeys = s.baseObject.iterateStringKeys
		case *stringObject:
			strKeys = s.baseObject.iterateStringKeys
		}
	}
	for _, iterate := range [2]func() iterNextFunc{strKeys, o.self.iterateSymbols} {
		for item, next := iterate()(); next != nil; item, next = next() {
			if nonIndex {
				if s, ok := item.name.(String); ok && strToArrayIdx(s.string()) != math.MaxUint32 {
					continue
				}
			}
			v := item.value
			if v == nil {
				v = o.getOwnProp(item.name)
			}
			enumerable := true
			if vp, ok := v.(*valueProperty); ok && !vp.enumerable {
				enumerable = false
			}
			if !fn(item.name, enumerable) {
				return
			}
		}
	}
}

// MustardProto is o's prototype read from its internal slot. The caller
// excludes proxies (whose getPrototypeOf trap it would run).
func (o *Object) MustardProto() *Object { return o.self.proto() }

// MustardProxy returns a proxy's target and handler (both nil once it is
// revoked); ok is false when o is not a proxy.
func (o *Object) MustardProxy() (target, handler *Object, ok bool) {
	p, ok := o.self.(*proxyObject)
	if !ok {
		return nil, nil, false
	}
	if p.handler == nil {
		return nil, nil, true
	}
	if h, isJS := p.handler.(*jsProxyHandler); isJS {
		handler = h.handler
	}
	return p.target, handler, true
}

// MustardKind names the internal kind of o, as V8's type checks tell them
// apart: "Array", "Function", "Error" (an object made by an Error
// constructor), "Date", "RegExp", "Map", "Set", "WeakMap", "WeakSet",
// "Promise", "TypedArray", "ArrayBuffer", "DataView", "Number", "String",
// "Boolean", "BigInt", "Symbol" (boxed primitives), "Arguments",
// "Map Iterator", "Set Iterator", "Proxy", or "Object" for anything else.
func (o *Object) MustardKind() string {
	switch s := o.self.(type) {
	case *proxyObject:
		return "Proxy"
	case *arrayObject, *sparseArrayObject:
		return "Array"
	case *errorObject:
		return "Error"
	case *dateObject:
		return "Date"
	case *regexpObject:
		return "RegExp"
	case *mapObject:
		return "Map"
	case *setObject:
		return "Set"
	case *weakMapObject:
		return "WeakMap"
	case *weakSetObject:
		return "WeakSet"
	case *Promise:
		return "Promise"
	case *typedArrayObject:
		return "TypedArray"
	case *arrayBufferObject:
		return "ArrayBuffer"
	case *dataViewObject:
		return "DataView"
	case *argumentsObject:
		return "Arguments"
	case *mapIterObject:
		return "Map Iterator"
	case *setIterObject:
		return "Set Iterator"
	case *primitiveValueObject:
		switch s.pValue.(type) {
		case valueInt, valueFloat:
			return "Number"
		case String:
			return "String"
		case valueBool:
			return "Boolean"
		case *Symbol:
			return "Symbol"
		}
		if _, ok := s.pValue.(*valueBigInt); ok {
			return "BigInt"
		}
		return "Object"
	}
	if _, ok := o.self.assertCallable(); ok {
		return "Function"
	}
	switch o.self.className() {
	case classString:
		return "String"
	case classArray:
		return "Array"
	}
	return "Object"
}

// MustardFunctionKind tells a function's kind: "class", "AsyncFunction",
// "GeneratorFunction", "AsyncGeneratorFunction" or "Function".
func (o *Object) MustardFunctionKind() string {
	switch o.self.(type) {
	case *classFuncObject:
		return "class"
	case *asyncFuncObject, *asyncMethodFuncObject, *asyncArrowFuncObject:
		return "AsyncFunction"
	case *generatorFuncObject, *generatorMethodFuncObject:
		return "GeneratorFunction"
	case *asyncGeneratorFuncObject, *asyncGeneratorMethodFuncObject:
		return "AsyncGeneratorFunction"
	}
	return "Function"
}

// MustardPrimitive is the primitive a boxed Number, String, Boolean,
// BigInt or Symbol holds, nil for any other object.
func (o *Object) MustardPrimitive() Value {
	if p, ok := o.self.(*primitiveValueObject); ok {
		return p.pValue
	}
	if s, ok := o.self.(*stringObject); ok {
		return s.value
	}
	return nil
}

// MustardDate is a Date's time value (NaN when invalid); ok is false for
// any other object.
func (o *Object) MustardDate() (msec float64, ok bool) {
	d, ok := o.self.(*dateObject)
	if !ok {
		return 0, false
	}
	if d.msec == timeUnset {
		return math.NaN(), true
	}
	return float64(d.msec), true
}

// MustardRegExp is RegExp.prototype.toString's text for a RegExp as its
// internal slots hold it: /source/flags.
func (o *Object) MustardRegExp() (string, bool) {
	re, ok := o.self.(*regexpObject)
	if !ok {
		return "", false
	}
	var b strings.Builder
	b.WriteByte('/')
	b.WriteString(v8EscapedSource(re.source))
	b.WriteByte('/')
	p := re.pattern
	for _, f := range [...]struct {
		on bool
		c  byte
	}{{p.global, 'g'}, {p.ignoreCase, 'i'}, {p.multiline, 'm'}, {p.dotAll, 's'}, {p.unicode, 'u'}, {p.sticky, 'y'}} {
		if f.on {
			b.WriteByte(f.c)
		}
	}
	return b.String(), true
}

// MustardEntries calls fn with a Map's entries (key and value), a Set's
// values (value twice), or the entries a Map or Set iterator has still to
// give, in order, until fn returns false; n is the number of entries (a
// collection's size; -1 for an iterator). pairs tells a Map iterator of
// [key, value] entries from one of keys or values.
func (o *Object) MustardEntries(fn func(k, v Value) bool) (n int, pairs bool) {
	var cur *mapEntry
	var m *orderedMap
	keyOnly := false
	switch s := o.self.(type) {
	case *mapObject:
		m, n = s.m, s.m.size
		pairs = true
	case *setObject:
		m, n = s.m, s.m.size
	case *mapIterObject:
		n = -1
		if s.iter == nil || s.iter.m == nil {
			return n, s.kind == iterationKindKeyValue
		}
		m, cur = s.iter.m, s.iter.cur
		pairs = s.kind == iterationKindKeyValue
		keyOnly = s.kind == iterationKindKey
	case *setIterObject:
		n = -1
		if s.iter == nil || s.iter.m == nil {
			return n, s.kind == iterationKindKeyValue
		}
		m, cur = s.iter.m, s.iter.cur
		pairs = s.kind == iterationKindKeyValue
	default:
		return 0, false
	}
	it := &orderedMapIter{m: m, cur: cur}
	for e := it.next(); e != nil; e = it.next() {
		k, v := e.key, e.value
		switch o.self.(type) {
		case *setObject, *setIterObject:
			v = k
		case *mapIterObject:
			if keyOnly {
				v = k
			} else if !pairs {
				k = v
			}
		}
		if !fn(k, v) {
			break
		}
	}
	return n, pairs
}

// MustardTypedArrayInfo describes a typed array.
type MustardTypedArrayInfo struct {
	Name       string // its constructor's name: Uint8Array, ...
	Length     int    // 0 once its buffer is detached
	ElemSize   int
	ByteOffset int
	Buffer     *Object
	Elem       func(i int) Value // element i < Length
}

// MustardTypedArray describes a typed array; ok is false for any other
// object.
func (o *Object) MustardTypedArray() (info MustardTypedArrayInfo, ok bool) {
	a, ok := o.self.(*typedArrayObject)
	if !ok {
		return info, false
	}
	if ctor := a.defaultCtor; ctor != nil {
		v := ctor.self.getOwnPropStr("name")
		if vp, isProp := v.(*valueProperty); isProp && !vp.accessor {
			v = vp.value
		}
		if n, isStr := v.(String); isStr {
			info.Name = n.String()
		}
	}
	info.Length = a.length
	if !a.viewedArrayBuf.ensureNotDetached(false) {
		info.Length = 0
	}
	info.ElemSize = a.elemSize
	info.ByteOffset = a.offset * a.elemSize
	info.Buffer = a.viewedArrayBuf.val
	info.Elem = func(i int) Value { return a.typedArray.get(a.offset + i) }
	return info, true
}

// MustardDataView is a DataView's byte length, byte offset and buffer.
func (o *Object) MustardDataView() (byteLength, byteOffset int, buffer *Object, ok bool) {
	d, ok := o.self.(*dataViewObject)
	if !ok {
		return 0, 0, nil, false
	}
	return d.byteLen, d.byteOffset, d.viewedArrayBuf.val, true
}

// MustardIntrinsic returns the realm's own Object.prototype,
// Function.prototype or Error.prototype (by that name), whatever guest code
// did to the globals; nil for any other name.
func (r *Runtime) MustardIntrinsic(name string) *Object {
	switch name {
	case "Object.prototype":
		return r.global.ObjectPrototype
	case "Function.prototype":
		return r.global.FunctionPrototype
	case "Error.prototype":
		return r.getErrorPrototype()
	}
	return nil
}

// MustardTry runs f as a native function called by guest code runs: a
// guest exception f raises (a conversion calling guest code) comes back
// as a *Exception, an interrupt as an *InterruptedError.
func (r *Runtime) MustardTry(f func()) error { return r.runWrapped(f) }

// MustardPoll returns the pending interrupt (another goroutine called
// Interrupt) as the *InterruptedError a built-in would end with, nil when
// there is none: a long native walk calls it now and then, as built-ins
// poll.
func (r *Runtime) MustardPoll() (err error) {
	if atomic.LoadUint32(&r.vm.interrupted) == 0 {
		return nil
	}
	defer func() {
		if x := recover(); x != nil {
			ie, ok := x.(*InterruptedError)
			if !ok {
				panic(x)
			}
			err = ie
		}
	}()
	r.vm.checkInterrupt()
	return nil
}

// MustardParseInt and MustardParseFloat are the realm's own parseInt(v)
// and parseFloat(v) (v is converted to a string first, which may run
// guest code: call them inside MustardTry). MustardJSONStringify is its
// JSON.stringify(v).
func (r *Runtime) MustardParseInt(v Value) Value {
	return r.builtin_parseInt(FunctionCall{Arguments: []Value{v}})
}

func (r *Runtime) MustardParseFloat(v Value) Value {
	return r.builtin_parseFloat(FunctionCall{Arguments: []Value{v}})
}

func (r *Runtime) MustardJSONStringify(v Value) Value {
	return r.builtinJSON_stringify(FunctionCall{Arguments: []Value{v}})
}

// v8EscapedSource is a pattern's source as V8's RegExp.prototype.source
// writes it: a / outside a character class as \/, line terminators
// escaped, an empty pattern as (?:).
func v8EscapedSource(src String) string {
	n := src.Length()
	if n == 0 {
		return "(?:)"
	}
	u := make([]uint16, n)
	for i := range u {
		u[i] = src.CharAt(i)
	}
	out := make([]uint16, 0, n)
	inClass := false
	for i := 0; i < n; i++ {
		c := u[i]
		switch {
		case c == '\\' && i+1 < n:
			out = append(out, c, u[i+1])
			i++
			continue
		case c == '[':
			inClass = true
		case c == ']':
			inClass = false
		case c == '/' && !inClass:
			out = append(out, '\\', '/')
			continue
		case c == '\n':
			out = append(out, '\\', 'n')
			continue
		case c == '\r':
			out = append(out, '\\', 'r')
			continue
		case c == 0x2028:
			out = append(out, []uint16{'\\', 'u', '2', '0', '2', '8'}...)
			continue
		case c == 0x2029:
			out = append(out, []uint16{'\\', 'u', '2', '0', '2', '9'}...)
			continue
		}
		out = append(out, c)
	}
	return string(utf16.Decode(out))
}

// mustardPlainNaming: the error's name and message, found along its
// prototype chain, are data properties holding no object or symbol, so
// making its stack runs no guest code.
func (e *errorObject) mustardPlainNaming() bool {
	for _, name := range [...]unistring.String{"name", "message"} {
		for o, i := e.val, 0; o != nil; o, i = o.self.proto(), i+1 {
			if _, isProxy := o.self.(*proxyObject); isProxy || i > 10000 {
				return false
			}
			p := o.self.getOwnPropStr(name)
			if p == nil {
				continue
			}
			if vp, ok := p.(*valueProperty); ok {
				if vp.accessor {
					return false
				}
				p = vp.value
			}
			switch p.(type) {
			case *Object, *Symbol:
				return false
			}
			break
		}
	}
	return true
}
