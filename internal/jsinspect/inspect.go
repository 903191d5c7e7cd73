package jsinspect

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
)

// Node's defaults.
const (
	maxArrayLength  = 100
	maxStringLength = 10000
	breakLength     = 80
	compact         = 3
	kMinLineLength  = 16
)

// The three kinds of entry lists reduceToSingleString tells apart.
const (
	kObjectType = iota
	kArrayType
	kArrayExtrasType
)

// ctx is util.inspect's ctx for one top-level value.
type ctx struct {
	in             *inspector
	depth          int
	showHidden     bool
	showProxy      bool
	indentationLvl int
	seen           []*goja.Object
	circular       map[*goja.Object]int
	currentDepth   int
}

func newCtx(in *inspector, depth int, showHidden, showProxy bool) *ctx {
	return &ctx{in: in, depth: depth, showHidden: showHidden, showProxy: showProxy}
}

// inspect is util.inspect(v, options).
func (in *inspector) inspect(v goja.Value, c *ctx) string {
	return c.formatValue(v, 0, false)
}

func (c *ctx) key(s string) goja.Value { return c.in.rt.ToValue(s) }

// isObject tells an object from a primitive.
func isObject(v goja.Value) (*goja.Object, bool) {
	o, ok := v.(*goja.Object)
	return o, ok
}

func (c *ctx) formatValue(v goja.Value, recurseTimes int, typedArray bool) string {
	c.in.step()
	o, ok := isObject(v)
	if !ok {
		s := c.formatPrimitive(v)
		c.in.emit(len(s))
		return s
	}
	if target, handler, isProxy := o.MustardProxy(); isProxy {
		if target == nil {
			c.in.emit(15)
			return "<Revoked Proxy>"
		}
		if c.showProxy {
			return c.formatProxy(target, handler, recurseTimes)
		}
		// A proxy whose target is a proxy is shown as the innermost
		// target: reading the middle one would run its traps.
		for {
			t, _, p := target.MustardProxy()
			if !p {
				break
			}
			if t == nil {
				c.in.emit(15)
				return "<Revoked Proxy>"
			}
			target = t
		}
		o = target
	}
	for _, s := range c.seen {
		if s == o {
			idx := 1
			if c.circular == nil {
				c.circular = map[*goja.Object]int{o: 1}
			} else if i, ok := c.circular[o]; ok {
				idx = i
			} else {
				idx = len(c.circular) + 1
				c.circular[o] = idx
			}
			s := "[Circular *" + strconv.Itoa(idx) + "]"
			c.in.emit(len(s))
			return s
		}
	}
	return c.formatRaw(o, recurseTimes, typedArray)
}

func (c *ctx) formatProxy(target, handler *goja.Object, recurseTimes int) string {
	if recurseTimes > c.depth {
		return "Proxy [Array]"
	}
	recurseTimes++
	c.indentationLvl += 2
	var hv goja.Value = goja.Null()
	if handler != nil {
		hv = handler
	}
	res := []string{c.formatValue(target, recurseTimes, false), c.formatValue(hv, recurseTimes, false)}
	c.indentationLvl -= 2
	return c.reduceToSingleString(res, "", [2]string{"Proxy [", "]"}, kArrayExtrasType, recurseTimes, nil)
}

// dataGet reads key along o's prototype chain, data properties only: an
// accessor or a proxy on the way ends the walk (ok false).
func (in *inspector) dataGet(o *goja.Object, key goja.Value) (goja.Value, bool) {
	for i := 0; o != nil && i < 10000; i++ {
		in.step()
		if _, _, p := o.MustardProxy(); p {
			return nil, false
		}
		p := o.MustardOwnProp(key)
		if p.Present {
			if p.Value == nil {
				return nil, false
			}
			return p.Value, true
		}
		o = o.MustardProto()
	}
	return nil, false
}

// proto is o's prototype, nil at the end of the chain or at a proxy.
func proto(o *goja.Object) *goja.Object {
	if _, _, p := o.MustardProxy(); p {
		return nil
	}
	return o.MustardProto()
}

// instanceOf is OrdinaryHasInstance(f, o) read without running guest code:
// f's own prototype data property found on o's prototype chain.
func (in *inspector) instanceOf(o, f *goja.Object) bool {
	pv := f.MustardOwnProp(in.rt.ToValue("prototype"))
	p, ok := pv.Value.(*goja.Object)
	if !ok {
		return false
	}
	for x, i := proto(o), 0; x != nil && i < 10000; x, i = proto(x), i+1 {
		in.step()
		if x == p {
			return true
		}
	}
	return false
}

func (in *inspector) hasInProtoChain(o, p *goja.Object) bool {
	for x, i := proto(o), 0; x != nil && i < 10000; x, i = proto(x), i+1 {
		in.step()
		if x == p {
			return true
		}
	}
	return false
}

// funcName is f.name read as data along its prototype chain.
func (in *inspector) funcName(f *goja.Object) string {
	v, ok := in.dataGet(f, in.rt.ToValue("name"))
	if !ok || v == nil {
		return ""
	}
	if _, isObj := v.(*goja.Object); isObj {
		return ""
	}
	if sym, isSym := v.(*goja.Symbol); isSym {
		return symbolString(sym)
	}
	return jsString(v)
}

func isFunction(o *goja.Object) bool {
	_, ok := goja.AssertFunction(o)
	return ok
}

// builtInObjects is the set of global constructors' names Node treats as
// built in.
var builtInObjects = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(`Object Function Array Number Boolean String Symbol Date Promise RegExp Error
AggregateError EvalError RangeError ReferenceError SyntaxError TypeError URIError ArrayBuffer Uint8Array Int8Array
Uint16Array Int16Array Uint32Array Int32Array Float32Array Float64Array Uint8ClampedArray BigUint64Array BigInt64Array
DataView Map BigInt Set WeakMap WeakSet Proxy Reflect FinalizationRegistry WeakRef SharedArrayBuffer Atomics JSON Math Intl`) {
		m[n] = true
	}
	return m
}()

// constructorName is getConstructorName: ok false for null.
func (c *ctx) getConstructorName(obj *goja.Object, recurseTimes int, protoProps *[]string) (string, bool) {
	in := c.in
	tmp := obj
	var firstProto *goja.Object
	firstSet := false
	ctorKey := c.key("constructor")
	for i := 0; obj != nil && i < 10000; i++ {
		in.step()
		if obj == in.objProto || obj == in.funcProto {
			name := "Object"
			if obj == in.funcProto {
				name = "Function"
			}
			if in.hasInProtoChain(tmp, obj) {
				if protoProps != nil && firstProto != obj {
					fp := firstProto
					if !firstSet {
						fp = tmp
					}
					c.addPrototypeProperties(tmp, fp, recurseTimes, protoProps)
				}
				return name, true
			}
		}
		if _, _, p := obj.MustardProxy(); p {
			break
		}
		d := obj.MustardOwnProp(ctorKey)
		if f, ok := d.Value.(*goja.Object); ok && isFunction(f) {
			if name := in.funcName(f); name != "" && in.instanceOf(tmp, f) {
				if protoProps != nil && (firstProto != obj || !builtInObjects[name]) {
					fp := firstProto
					if !firstSet {
						fp = tmp
					}
					c.addPrototypeProperties(tmp, fp, recurseTimes, protoProps)
				}
				return name, true
			}
		}
		obj = obj.MustardProto()
		if !firstSet {
			firstProto, firstSet = obj, true
		}
	}
	if firstProto == nil {
		return "", false
	}
	res := c.internalConstructorName(tmp)
	if recurseTimes > c.depth {
		return res + " <Complex prototype>", true
	}
	protoConstr, ok := c.getConstructorName(firstProto, recurseTimes+1, protoProps)
	if !ok {
		sub := &ctx{in: in, depth: -1}
		return res + " <" + sub.formatValue(firstProto, 0, false) + ">", true
	}
	return res + " <" + protoConstr + ">", true
}

// internalConstructorName is V8's JSReceiver::GetConstructorName: the
// name of the constructor that made the object when it is not Object (here:
// its internal kind), else its Symbol.toStringTag data property, else the
// name of its constructor data property, else Object.
func (c *ctx) internalConstructorName(o *goja.Object) string {
	switch k := o.MustardKind(); k {
	case "Object", "Map Iterator", "Set Iterator", "Proxy", "Arguments":
	case "TypedArray":
		info, _ := o.MustardTypedArray()
		return info.Name
	default:
		return k
	}
	if v, ok := c.in.dataGet(o, symToStringTag); ok && v != nil {
		if _, isObj := v.(*goja.Object); !isObj && goja.IsString(v) {
			return jsString(v)
		}
	}
	if v, ok := c.in.dataGet(o, c.key("constructor")); ok {
		if f, isObj := v.(*goja.Object); isObj && isFunction(f) {
			if name := c.in.funcName(f); name != "" {
				return name
			}
		}
	}
	return "Object"
}

// addPrototypeProperties lists the non-function properties of up to three
// user-defined prototype layers (showHidden only).
func (c *ctx) addPrototypeProperties(main, obj *goja.Object, recurseTimes int, output *[]string) {
	in := c.in
	var keySet map[any]bool
	var keys []goja.Value
	ctorKey := c.key("constructor")
	for depth := 0; depth < 3; depth++ {
		if depth != 0 || main == obj {
			obj = proto(obj)
			if obj == nil {
				return
			}
			d := obj.MustardOwnProp(ctorKey)
			if f, ok := d.Value.(*goja.Object); ok && isFunction(f) && builtInObjects[in.funcName(f)] {
				return
			}
		}
		if depth == 0 {
			keySet = map[any]bool{}
		} else {
			for _, k := range keys {
				keySet[keyID(k)] = true
			}
		}
		keys = keys[:0]
		obj.MustardEachOwnKey(false, func(k goja.Value, _ bool) bool {
			in.step()
			keys = append(keys, k)
			return true
		})
		c.seen = append(c.seen, main)
		for _, k := range keys {
			if s, ok := k.(goja.String); ok && s.String() == "constructor" {
				continue
			}
			if main.MustardOwnProp(k).Present || (depth != 0 && keySet[keyID(k)]) {
				continue
			}
			d := obj.MustardOwnProp(k)
			if f, ok := d.Value.(*goja.Object); ok && isFunction(f) {
				continue
			}
			*output = append(*output, c.formatProperty(obj, recurseTimes, k, kObjectType, &d))
		}
		c.seen = c.seen[:len(c.seen)-1]
	}
}

// keyID makes a property key comparable as a map key.
func keyID(k goja.Value) any {
	if sym, ok := k.(*goja.Symbol); ok {
		return sym
	}
	return jsString(k)
}

func getPrefix(constructor string, isNull bool, tag, fallback, size string) string {
	if isNull {
		if tag != "" && fallback != tag {
			return "[" + fallback + size + ": null prototype] [" + tag + "] "
		}
		return "[" + fallback + size + ": null prototype] "
	}
	if tag != "" && constructor != tag {
		return constructor + size + " [" + tag + "] "
	}
	return constructor + size + " "
}

// keyList is getKeys' (or getOwnNonIndexProperties') result, read lazily:
// extra keys first (byteLength, ...), the object's own keys (less those
// skip drops), then pushed ones (cause, errors).
type keyList struct {
	o        *goja.Object
	all      bool
	nonIndex bool
	skip     func(goja.Value) bool
	pre      []goja.Value
	post     []goja.Value
}

func (c *ctx) getKeys(o *goja.Object, nonIndex bool) *keyList {
	return &keyList{o: o, all: c.showHidden, nonIndex: nonIndex}
}

func (k *keyList) each(in *inspector, fn func(goja.Value)) {
	for _, key := range k.pre {
		fn(key)
	}
	k.o.MustardEachOwnKey(k.nonIndex, func(key goja.Value, enumerable bool) bool {
		in.step()
		if (!enumerable && !k.all) || (k.skip != nil && k.skip(key)) {
			return true
		}
		fn(key)
		return true
	})
	for _, key := range k.post {
		fn(key)
	}
}

func (k *keyList) empty(in *inspector) bool {
	if len(k.pre) != 0 || len(k.post) != 0 {
		return false
	}
	empty := true
	k.o.MustardEachOwnKey(k.nonIndex, func(key goja.Value, enumerable bool) bool {
		in.step()
		if (!enumerable && !k.all) || (k.skip != nil && k.skip(key)) {
			return true
		}
		empty = false
		return false
	})
	return empty
}

// has tells whether the list holds the string key name.
func (k *keyList) has(c *ctx, name string) bool {
	for _, p := range k.pre {
		if jsString(p) == name {
			return true
		}
	}
	for _, p := range k.post {
		if jsString(p) == name {
			return true
		}
	}
	if k.skip != nil && k.skip(c.key(name)) {
		return false
	}
	p := k.o.MustardOwnProp(c.key(name))
	return p.Present && (k.all || p.Enumerable)
}

var symToStringTag = goja.SymToStringTag
var symIterator = goja.SymIterator

func (c *ctx) formatRaw(value *goja.Object, recurseTimes int, typedArray bool) string {
	in := c.in
	var protoProps *[]string
	if c.showHidden && recurseTimes <= c.depth {
		protoProps = &[]string{}
	}
	constructor, hasCtor := c.getConstructorName(value, recurseTimes, protoProps)
	isNull := !hasCtor
	if protoProps != nil && len(*protoProps) == 0 {
		protoProps = nil
	}
	kind := value.MustardKind()

	tag := ""
	if kind == "TypedArray" {
		info, _ := value.MustardTypedArray()
		tag = info.Name
	}
	if tv, ok := in.dataGet(value, symToStringTag); ok && tv != nil {
		if goja.IsString(tv) {
			if _, isObj := tv.(*goja.Object); !isObj {
				tag = jsString(tv)
			}
		} else {
			tag = ""
		}
	} else if kind != "TypedArray" {
		tag = ""
	}
	if tag != "" {
		own := value.MustardOwnProp(symToStringTag)
		if own.Present && (c.showHidden || own.Enumerable) {
			tag = ""
		}
	}

	base := ""
	var formatter func(recurseTimes int) []string
	braces := [2]string{"{", "}"}
	extrasType := kObjectType
	var keys *keyList
	noIterator := true
	noProto := protoProps == nil

	hasIterator := false
	if !isNull {
		_, hasIterator = in.hasProperty(value, symIterator)
	}
	if hasIterator || isNull {
		noIterator = false
		switch kind {
		case "Array":
			length := c.arrayLength(value)
			prefix := ""
			if constructor != "Array" || tag != "" {
				prefix = getPrefix(constructor, isNull, tag, "Array", "("+strconv.FormatInt(length, 10)+")")
			}
			keys = c.getKeys(value, true)
			braces = [2]string{prefix + "[", "]"}
			if length == 0 && keys.empty(in) && noProto {
				in.emit(len(braces[0]) + 1)
				return braces[0] + "]"
			}
			extrasType = kArrayExtrasType
			formatter = func(rt int) []string { return c.formatArray(value, length, rt) }
		case "Set", "Map":
			var size int
			n, _ := value.MustardEntries(func(k, v goja.Value) bool { return false })
			size = n
			prefix := getPrefix(constructor, isNull, tag, kind, "("+strconv.Itoa(size)+")")
			keys = c.getKeys(value, false)
			isMap := kind == "Map"
			formatter = func(rt int) []string { return c.formatCollection(value, size, isMap, rt) }
			if size == 0 && keys.empty(in) && noProto {
				in.emit(len(prefix) + 2)
				return prefix + "{}"
			}
			braces = [2]string{prefix + "{", "}"}
		case "TypedArray":
			keys = c.getKeys(value, true)
			info, _ := value.MustardTypedArray()
			size := info.Length
			fallback := ""
			if isNull {
				fallback = info.Name
			}
			prefix := getPrefix(constructor, isNull, tag, fallback, "("+strconv.Itoa(size)+")")
			braces = [2]string{prefix + "[", "]"}
			if size == 0 && keys.empty(in) && !c.showHidden {
				in.emit(len(braces[0]) + 1)
				return braces[0] + "]"
			}
			formatter = func(rt int) []string { return c.formatTypedArray(info, rt) }
			extrasType = kArrayExtrasType
		case "Map Iterator", "Set Iterator":
			keys = c.getKeys(value, false)
			t := strings.TrimSuffix(kind, " Iterator")
			braces = getIteratorBraces(t, tag)
			formatter = func(rt int) []string { return c.formatIterator(value, &braces, rt) }
		default:
			noIterator = true
		}
	}
	if noIterator {
		keys = c.getKeys(value, false)
		braces = [2]string{"{", "}"}
		switch {
		case kind == "Function":
			base = c.getFunctionBase(value, constructor, isNull, tag)
			if keys.empty(in) && noProto {
				in.emit(len(base))
				return base
			}
		case constructor == "Object" && !isNull:
			if kind == "Arguments" {
				braces[0] = "[Arguments] {"
			} else if tag != "" {
				braces[0] = getPrefix(constructor, isNull, tag, "Object", "") + "{"
			}
			if keys.empty(in) && noProto {
				in.emit(len(braces[0]) + 1)
				return braces[0] + "}"
			}
		case kind == "RegExp":
			base, _ = value.MustardRegExp()
			prefix := getPrefix(constructor, isNull, tag, "RegExp", "")
			if prefix != "RegExp " {
				base = prefix + base
			}
			if (keys.empty(in) && noProto) || recurseTimes > c.depth {
				in.emit(len(base))
				return base
			}
		case kind == "Date":
			ms, _ := value.MustardDate()
			if math.IsNaN(ms) {
				base = "Invalid Date"
			} else {
				base = isoString(ms)
			}
			prefix := getPrefix(constructor, isNull, tag, "Date", "")
			if prefix != "Date " {
				base = prefix + base
			}
			if keys.empty(in) && noProto {
				in.emit(len(base))
				return base
			}
		case kind == "Error" || (kind == "Object" && in.hasInProtoChain(value, in.errProto)):
			base = c.formatError(value, constructor, isNull, tag, keys)
			if keys.empty(in) && noProto {
				in.emit(len(base))
				return base
			}
		case kind == "ArrayBuffer":
			prefix := getPrefix(constructor, isNull, tag, "ArrayBuffer", "")
			ab := value.Export()
			buf, _ := ab.(goja.ArrayBuffer)
			if !typedArray {
				formatter = func(int) []string { return c.formatArrayBuffer(buf) }
			} else if keys.empty(in) && noProto {
				s := prefix + "{ byteLength: " + strconv.Itoa(len(buf.Bytes())) + " }"
				in.emit(len(s))
				return s
			}
			braces[0] = prefix + "{"
			keys.pre = []goja.Value{c.key("byteLength")}
		case kind == "DataView":
			braces[0] = getPrefix(constructor, isNull, tag, "DataView", "") + "{"
			keys.pre = []goja.Value{c.key("byteLength"), c.key("byteOffset"), c.key("buffer")}
		case kind == "Promise":
			braces[0] = getPrefix(constructor, isNull, tag, "Promise", "") + "{"
			formatter = func(rt int) []string { return c.formatPromise(value, rt) }
		case kind == "WeakSet" || kind == "WeakMap":
			braces[0] = getPrefix(constructor, isNull, tag, kind, "") + "{"
			formatter = func(int) []string { return []string{"<items unknown>"} }
		case isBoxed(kind):
			base = c.getBoxedBase(value, kind, keys, constructor, isNull, tag)
			if keys.empty(in) && noProto {
				in.emit(len(base))
				return base
			}
		default:
			if keys.empty(in) && noProto {
				s := c.getCtxStyle(value, constructor, isNull, tag) + "{}"
				in.emit(len(s))
				return s
			}
			braces[0] = c.getCtxStyle(value, constructor, isNull, tag) + "{"
		}
	}

	if recurseTimes > c.depth {
		name := c.getCtxStyle(value, constructor, isNull, tag)
		name = name[:len(name)-1]
		if !isNull {
			name = "[" + name + "]"
		}
		in.emit(len(name))
		return name
	}
	recurseTimes++
	c.seen = append(c.seen, value)
	c.currentDepth = recurseTimes
	var output []string
	if formatter != nil {
		output = formatter(recurseTimes)
	}
	keys.each(in, func(k goja.Value) {
		output = append(output, c.formatProperty(value, recurseTimes, k, extrasType, nil))
	})
	if protoProps != nil {
		output = append(output, *protoProps...)
	}
	if c.circular != nil {
		if idx, ok := c.circular[value]; ok {
			ref := "<ref *" + strconv.Itoa(idx) + ">"
			if base == "" {
				base = ref
			} else {
				base = ref + " " + base
			}
		}
	}
	c.seen = c.seen[:len(c.seen)-1]
	return c.reduceToSingleString(output, base, braces, extrasType, recurseTimes, value)
}

func isBoxed(kind string) bool {
	switch kind {
	case "Number", "String", "Boolean", "BigInt", "Symbol":
		return true
	}
	return false
}

// hasProperty is `key in o` for a non-proxy chain.
func (in *inspector) hasProperty(o *goja.Object, key goja.Value) (goja.Value, bool) {
	for i := 0; o != nil && i < 10000; i++ {
		in.step()
		if _, _, p := o.MustardProxy(); p {
			return nil, false
		}
		if p := o.MustardOwnProp(key); p.Present {
			return p.Value, true
		}
		o = o.MustardProto()
	}
	return nil, false
}

func (c *ctx) arrayLength(o *goja.Object) int64 {
	p := o.MustardOwnProp(c.key("length"))
	if p.Value == nil {
		return 0
	}
	return p.Value.ToInteger()
}

func (c *ctx) getCtxStyle(value *goja.Object, constructor string, isNull bool, tag string) string {
	fallback := ""
	if isNull {
		fallback = c.internalConstructorName(value)
		if fallback == tag {
			fallback = "Object"
		}
	}
	return getPrefix(constructor, isNull, tag, fallback, "")
}

func getIteratorBraces(typ, tag string) [2]string {
	if tag != typ+" Iterator" {
		if tag != "" {
			tag += "] ["
		}
		tag += typ + " Iterator"
	}
	return [2]string{"[" + tag + "] {", "}"}
}

func (c *ctx) getBoxedBase(value *goja.Object, typ string, keys *keyList, constructor string, isNull bool, tag string) string {
	prim := value.MustardPrimitive()
	if typ == "String" {
		keys.nonIndex = true
	}
	base := "[" + typ
	if typ != constructor || isNull {
		if isNull {
			base += " (null prototype)"
		} else {
			base += " (" + constructor + ")"
		}
	}
	sub := &ctx{in: c.in, depth: c.depth, indentationLvl: c.indentationLvl}
	base += ": " + sub.formatPrimitive(prim) + "]"
	if tag != "" && tag != constructor {
		base += " [" + tag + "]"
	}
	return base
}

func (c *ctx) getFunctionBase(value *goja.Object, constructor string, isNull bool, tag string) string {
	in := c.in
	fk := value.MustardFunctionKind()
	if fk == "class" {
		return c.getClassBase(value, constructor, isNull, tag)
	}
	base := "[" + fk
	if isNull {
		base += " (null prototype)"
	}
	if name := in.funcName(value); name == "" {
		base += " (anonymous)"
	} else {
		base += ": " + name
	}
	base += "]"
	if constructor != fk && !isNull {
		base += " " + constructor
	}
	if tag != "" && constructor != tag {
		base += " [" + tag + "]"
	}
	return base
}

func (c *ctx) getClassBase(value *goja.Object, constructor string, isNull bool, tag string) string {
	in := c.in
	name := ""
	if p := value.MustardOwnProp(c.key("name")); p.Present {
		if p.Value != nil && p.Value.ToBoolean() {
			if sym, ok := p.Value.(*goja.Symbol); ok {
				name = symbolString(sym)
			} else if _, isObj := p.Value.(*goja.Object); !isObj {
				name = jsString(p.Value)
			}
		}
	}
	if name == "" {
		name = "(anonymous)"
	}
	base := "class " + name
	if constructor != "Function" && !isNull {
		base += " [" + constructor + "]"
	}
	if tag != "" && constructor != tag {
		base += " [" + tag + "]"
	}
	if !isNull {
		if p := proto(value); p != nil {
			if super := in.funcName(p); super != "" {
				base += " extends " + super
			}
		}
	} else {
		base += " extends [null prototype]"
	}
	return "[" + base + "]"
}

var errStartRe = regexp.MustCompile(`^([A-Z][a-z_ A-Z0-9[\]()-]+)(?::|\n {4}at)`)
var errOnlyRe = regexp.MustCompile(`^([a-z_A-Z0-9-]*Error)$`)

func (c *ctx) improveStack(stack, constructor string, isNull bool, name, tag string) string {
	ln := len(name)
	if isNull || (strings.HasSuffix(name, "Error") && strings.HasPrefix(stack, name) &&
		(len(stack) == ln || stack[ln] == ':' || stack[ln] == '\n')) {
		fallback := "Error"
		if isNull {
			m := errStartRe.FindStringSubmatch(stack)
			if m == nil {
				m = errOnlyRe.FindStringSubmatch(stack)
			}
			fallback = ""
			if m != nil {
				fallback = m[1]
			}
			ln = len(fallback)
			if fallback == "" {
				fallback = "Error"
			}
		}
		prefix := getPrefix(constructor, isNull, tag, fallback, "")
		prefix = prefix[:len(prefix)-1]
		if name != prefix {
			if strings.Contains(prefix, name) {
				if ln == 0 {
					stack = prefix + ": " + stack
				} else {
					stack = prefix + stack[ln:]
				}
			} else {
				stack = prefix + " [" + name + "]" + stack[ln:]
			}
		}
	}
	return stack
}

// errorStack is Node's getStackString: the stack property when it is a
// string (read as data), else Error.prototype.toString's text.
func (c *ctx) errorStack(err *goja.Object) string {
	in := c.in
	if v, ok := in.dataGet(err, c.key("stack")); ok && v != nil && v.ToBoolean() {
		if _, isObj := v.(*goja.Object); !isObj {
			if sym, isSym := v.(*goja.Symbol); isSym {
				return symbolString(sym)
			}
			stack := primString(v)
			if in.stack != nil {
				stack = in.stack(stack)
			}
			return v8Frames(stack)
		}
	}
	name := "Error"
	if v, ok := in.dataGet(err, c.key("name")); ok && v != nil && !goja.IsUndefined(v) {
		if _, isObj := v.(*goja.Object); !isObj {
			name = jsString(v)
		}
	}
	msg := ""
	if v, ok := in.dataGet(err, c.key("message")); ok && v != nil && !goja.IsUndefined(v) {
		if _, isObj := v.(*goja.Object); !isObj {
			msg = jsString(v)
		}
	}
	switch {
	case name == "":
		return msg
	case msg == "":
		return name
	}
	return name + ": " + msg
}

func (c *ctx) formatError(err *goja.Object, constructor string, isNull bool, tag string, keys *keyList) string {
	in := c.in
	name := "Error"
	if v, ok := in.dataGet(err, c.key("name")); ok && v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
		if _, isObj := v.(*goja.Object); !isObj {
			name = jsString(v)
		}
	}
	stack := c.errorStack(err)
	// removeDuplicateErrorKeys
	if !c.showHidden {
		drop := map[string]bool{}
		for _, n := range []string{"name", "message", "stack"} {
			if keys.has(c, n) {
				if v, ok := in.dataGet(err, c.key(n)); ok && v != nil {
					if _, isObj := v.(*goja.Object); !isObj && strings.Contains(stack, primString(v)) {
						drop[n] = true
					}
				}
			}
		}
		if len(drop) > 0 {
			prev := keys.skip
			keys.skip = func(k goja.Value) bool {
				if s, ok := k.(goja.String); ok && drop[s.String()] {
					return true
				}
				return prev != nil && prev(k)
			}
		}
	}
	if _, ok := in.hasProperty(err, c.key("cause")); ok && !keys.has(c, "cause") {
		keys.post = append(keys.post, c.key("cause"))
	}
	if v, ok := in.dataGet(err, c.key("errors")); ok {
		if eo, isObj := v.(*goja.Object); isObj && eo.MustardKind() == "Array" && !keys.has(c, "errors") {
			keys.post = append(keys.post, c.key("errors"))
		}
	}
	stack = c.improveStack(stack, constructor, isNull, name, tag)

	pos := -1
	if v, ok := in.dataGet(err, c.key("message")); ok && v != nil && v.ToBoolean() {
		if _, isObj := v.(*goja.Object); !isObj {
			msg := primString(v)
			if i := strings.Index(stack, msg); i != -1 && i != 0 {
				pos = i + len(msg)
			} else if i == 0 {
				pos = -1
			}
		}
	}
	from := pos
	if from < 0 {
		from = 0
	}
	stackStart := -1
	if from <= len(stack) {
		if i := strings.Index(stack[from:], "\n    at"); i != -1 {
			stackStart = from + i
		}
	}
	if stackStart == -1 {
		stack = "[" + stack + "]"
	} else {
		frames := c.getStackFrames(err, strings.Split(stack[stackStart+1:], "\n"))
		stack = stack[:stackStart] + "\n" + strings.Join(frames, "\n")
	}
	if c.indentationLvl != 0 {
		stack = strings.ReplaceAll(stack, "\n", "\n"+strings.Repeat(" ", c.indentationLvl))
	}
	return stack
}

// v8Frames writes the frames of a stack as goja makes it ("\tat f
// (file:1:2(3))" lines and a last newline) as V8 does ("    at ..."), so
// that Node's rules (a stack with frames is shown bare, one without in
// brackets) apply to it as to a V8 stack.
func v8Frames(stack string) string {
	if !strings.Contains(stack, "\n\tat ") {
		return stack
	}
	stack = strings.TrimSuffix(stack, "\n")
	return strings.ReplaceAll(stack, "\n\tat ", "\n    at ")
}

// getStackFrames replaces the frames an error shares with its cause's
// stack by one line saying how many were left out.
func (c *ctx) getStackFrames(err *goja.Object, frames []string) []string {
	cv, ok := c.in.dataGet(err, c.key("cause"))
	cause, isObj := cv.(*goja.Object)
	if !ok || !isObj || !c.isError(cause) {
		return frames
	}
	causeStack := c.errorStack(cause)
	start := strings.Index(causeStack, "\n    at")
	if start == -1 {
		return frames
	}
	causeFrames := strings.Split(causeStack[start+1:], "\n")
	n, offset := identicalSequenceRange(frames, causeFrames)
	if n > 0 {
		skipped := n - 2
		msg := "    ... " + strconv.Itoa(skipped) + " lines matching cause stack trace ..."
		out := append([]string{}, frames[:offset+1]...)
		out = append(out, msg)
		frames = append(out, frames[offset+1+skipped:]...)
	}
	return frames
}

func identicalSequenceRange(a, b []string) (int, int) {
	for i := 0; i < len(a)-3; i++ {
		pos := -1
		for j, s := range b {
			if s == a[i] {
				pos = j
				break
			}
		}
		if pos != -1 {
			rest := len(b) - pos
			if rest > 3 {
				n := 1
				maxLen := min(len(a)-i, rest)
				for maxLen > n && a[i+n] == b[pos+n] {
					n++
				}
				if n > 3 {
					return n, i
				}
			}
		}
	}
	return 0, 0
}

// isError is Node's isError: an object an Error constructor made, or one
// that inherits from Error.prototype.
func (c *ctx) isError(o *goja.Object) bool {
	for {
		t, _, p := o.MustardProxy()
		if !p {
			break
		}
		if t == nil {
			return false
		}
		o = t
	}
	return o.MustardKind() == "Error" || c.in.hasInProtoChain(o, c.in.errProto)
}

// primString is String(v) for a primitive.
func primString(v goja.Value) string {
	if sym, ok := v.(*goja.Symbol); ok {
		return symbolString(sym)
	}
	if goja.IsNumber(v) {
		return numberString(v.ToFloat())
	}
	return jsString(v)
}

func (c *ctx) formatArrayBuffer(buf goja.ArrayBuffer) []string {
	if buf.Detached() {
		return []string{"(detached)"}
	}
	data := buf.Bytes()
	n := min(maxArrayLength, len(data))
	var b strings.Builder
	const hex = "0123456789abcdef"
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte(hex[data[i]>>4])
		b.WriteByte(hex[data[i]&15])
	}
	if rem := len(data) - maxArrayLength; rem > 0 {
		b.WriteString(" ... " + strconv.Itoa(rem) + " more byte" + plural(rem))
	}
	s := "[Uint8Contents]: <" + b.String() + ">"
	c.in.emit(len(s))
	return []string{s}
}

func plural(n int) string {
	if n > 1 {
		return "s"
	}
	return ""
}

func remainingText(n int64) string {
	s := "... " + strconv.FormatInt(n, 10) + " more item"
	if n > 1 {
		s += "s"
	}
	return s
}

func (c *ctx) formatArray(value *goja.Object, valLen int64, recurseTimes int) []string {
	in := c.in
	length := min(int64(maxArrayLength), valLen)
	remaining := valLen - length
	var output []string
	for i := int64(0); i < length; i++ {
		k := in.rt.ToValue(i)
		d := value.MustardOwnProp(k)
		if !d.Present {
			return c.formatSpecialArray(value, valLen, recurseTimes, int(length), output, i)
		}
		output = append(output, c.formatProperty(value, recurseTimes, k, kArrayType, &d))
	}
	if remaining > 0 {
		output = append(output, remainingText(remaining))
	}
	return output
}

// formatSpecialArray lists a sparse array: holes as <n empty items>.
func (c *ctx) formatSpecialArray(value *goja.Object, valLen int64, recurseTimes, maxLength int, output []string, i int64) []string {
	in := c.in
	index := i
	// Node walks Object.keys from position i; the own index keys (in
	// ascending order) past i are the ones that matter.
	pos := int64(0)
	value.MustardEachOwnKey(false, func(key goja.Value, enumerable bool) bool {
		in.step()
		if !enumerable {
			return true
		}
		if pos < i {
			pos++
			return true
		}
		pos++
		if len(output) >= maxLength {
			return false
		}
		ks := jsString(key)
		tmp, err := strconv.ParseInt(ks, 10, 64)
		if _, isSym := key.(*goja.Symbol); isSym || err != nil || !numberRe.MatchString(ks) {
			return false
		}
		if tmp > 1<<32-2 {
			return false
		}
		if strconv.FormatInt(index, 10) != ks {
			empty := tmp - index
			msg := "<" + strconv.FormatInt(empty, 10) + " empty item" + plural(int(min(empty, 2))) + ">"
			in.emit(len(msg))
			output = append(output, msg)
			index = tmp
			if len(output) == maxLength {
				return false
			}
		}
		output = append(output, c.formatProperty(value, recurseTimes, key, kArrayType, nil))
		index++
		return true
	})
	remaining := valLen - index
	if len(output) != maxLength {
		if remaining > 0 {
			msg := "<" + strconv.FormatInt(remaining, 10) + " empty item" + plural(int(min(remaining, 2))) + ">"
			in.emit(len(msg))
			output = append(output, msg)
		}
	} else if remaining > 0 {
		output = append(output, remainingText(remaining))
	}
	return output
}

var numberRe = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)

func (c *ctx) formatTypedArray(info goja.MustardTypedArrayInfo, recurseTimes int) []string {
	in := c.in
	length := info.Length
	maxLength := min(maxArrayLength, length)
	output := make([]string, 0, maxLength+1)
	for i := 0; i < maxLength; i++ {
		in.step()
		v := info.Elem(i)
		var s string
		if goja.IsBigInt(v) {
			s = v.String() + "n"
		} else {
			s = formatNumber(v.ToFloat())
		}
		in.emit(len(s))
		output = append(output, s)
	}
	if rem := length - maxLength; rem > 0 {
		output = append(output, remainingText(int64(rem)))
	}
	if c.showHidden {
		c.indentationLvl += 2
		for _, kv := range []struct {
			k string
			v goja.Value
		}{
			{"BYTES_PER_ELEMENT", in.rt.ToValue(info.ElemSize)},
			{"length", in.rt.ToValue(length)},
			{"byteLength", in.rt.ToValue(length * info.ElemSize)},
			{"byteOffset", in.rt.ToValue(info.ByteOffset)},
			{"buffer", info.Buffer},
		} {
			output = append(output, "["+kv.k+"]: "+c.formatValue(kv.v, recurseTimes, true))
		}
		c.indentationLvl -= 2
	}
	return output
}

func (c *ctx) formatCollection(value *goja.Object, size int, isMap bool, recurseTimes int) []string {
	maxLength := min(maxArrayLength, size)
	var output []string
	c.indentationLvl += 2
	i := 0
	value.MustardEntries(func(k, v goja.Value) bool {
		if i >= maxLength {
			return false
		}
		if isMap {
			output = append(output, c.formatValue(k, recurseTimes, false)+" => "+c.formatValue(v, recurseTimes, false))
		} else {
			output = append(output, c.formatValue(v, recurseTimes, false))
		}
		i++
		return true
	})
	if rem := size - maxLength; rem > 0 {
		output = append(output, remainingText(int64(rem)))
	}
	c.indentationLvl -= 2
	return output
}

func (c *ctx) formatIterator(value *goja.Object, braces *[2]string, recurseTimes int) []string {
	var entries []goja.Value
	n := 0
	_, pairs := value.MustardEntries(func(k, v goja.Value) bool {
		c.in.step()
		entries = append(entries, k, v)
		n++
		return true
	})
	var output []string
	if pairs {
		braces[0] = strings.Replace(braces[0], " Iterator] {", " Entries] {", 1)
		maxLength := min(maxArrayLength, n)
		c.indentationLvl += 2
		for i := 0; i < maxLength; i++ {
			res := []string{c.formatValue(entries[2*i], recurseTimes, false), c.formatValue(entries[2*i+1], recurseTimes, false)}
			output = append(output, c.reduceToSingleString(res, "", [2]string{"[", "]"}, kArrayExtrasType, recurseTimes, nil))
		}
		c.indentationLvl -= 2
		if rem := n - maxLength; rem > 0 {
			output = append(output, remainingText(int64(rem)))
		}
		return output
	}
	maxLength := min(maxArrayLength, n)
	c.indentationLvl += 2
	for i := 0; i < maxLength; i++ {
		output = append(output, c.formatValue(entries[2*i+1], recurseTimes, false))
	}
	c.indentationLvl -= 2
	if rem := n - maxLength; rem > 0 {
		output = append(output, remainingText(int64(rem)))
	}
	return output
}

func (c *ctx) formatPromise(value *goja.Object, recurseTimes int) []string {
	p, _ := value.Export().(*goja.Promise)
	if p == nil || p.State() == goja.PromiseStatePending {
		c.in.emit(9)
		return []string{"<pending>"}
	}
	c.indentationLvl += 2
	str := c.formatValue(p.Result(), recurseTimes, false)
	c.indentationLvl -= 2
	if p.State() == goja.PromiseStateRejected {
		return []string{"<rejected> " + str}
	}
	return []string{str}
}

var keyStrRe = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z_0-9]*$`)

func (c *ctx) formatProperty(value *goja.Object, recurseTimes int, key goja.Value, typ int, desc *goja.MustardProp) string {
	in := c.in
	in.step()
	var d goja.MustardProp
	if desc != nil {
		d = *desc
	} else {
		d = value.MustardOwnProp(key)
		if !d.Present {
			// Node: { value: value[key], enumerable: true }; a key listed
			// by the keys step (byteLength, cause, errors) read as data.
			d = goja.MustardProp{Present: true, Enumerable: true}
			d.Value = c.virtualProp(value, key)
		}
	}
	var str string
	switch {
	case d.Value != nil && !goja.IsUndefined(d.Value):
		c.indentationLvl += 2
		str = c.formatValue(d.Value, recurseTimes, false)
		c.indentationLvl -= 2
	case d.Getter:
		if d.Setter {
			str = "[Getter/Setter]"
		} else {
			str = "[Getter]"
		}
	case d.Setter:
		str = "[Setter]"
	default:
		str = "undefined"
	}
	if d.Value == nil || goja.IsUndefined(d.Value) {
		in.emit(len(str))
	}
	if typ == kArrayType {
		return str
	}
	var name string
	if sym, ok := key.(*goja.Symbol); ok {
		name = "[" + escapeAll(utf16.Encode([]rune(symbolString(sym)))) + "]"
	} else {
		ks := keyUnits(key)
		kstr := utf16ToString(ks)
		switch {
		case kstr == "__proto__":
			name = "['__proto__']"
		case !d.Enumerable:
			name = "[" + escapeAll(ks) + "]"
		case keyStrRe.MatchString(kstr):
			name = kstr
		default:
			name = strEscape(ks)
		}
	}
	in.emit(len(name))
	return name + ": " + str
}

// virtualProp reads a key the keys step added that is not an own property:
// an ArrayBuffer's or DataView's byte figures, an Error's cause or errors
// found on its prototype chain (data only).
func (c *ctx) virtualProp(value *goja.Object, key goja.Value) goja.Value {
	in := c.in
	ks := jsString(key)
	if bl, off, buf, ok := value.MustardDataView(); ok {
		switch ks {
		case "byteLength":
			return in.rt.ToValue(bl)
		case "byteOffset":
			return in.rt.ToValue(off)
		case "buffer":
			return buf
		}
	}
	if value.MustardKind() == "ArrayBuffer" && ks == "byteLength" {
		if ab, ok := value.Export().(goja.ArrayBuffer); ok {
			return in.rt.ToValue(len(ab.Bytes()))
		}
	}
	v, ok := in.dataGet(value, key)
	if !ok {
		return goja.Undefined()
	}
	return v
}

// isBelowBreakLength: output fits on one line of breakLength.
func (c *ctx) isBelowBreakLength(output []string, start int, base string) bool {
	total := len(output) + start
	if total+len(output) > breakLength {
		return false
	}
	for _, s := range output {
		total += jsLen(s)
		if total > breakLength {
			return false
		}
	}
	return base == "" || !strings.Contains(base, "\n")
}

func (c *ctx) reduceToSingleString(output []string, base string, braces [2]string, extrasType, recurseTimes int, value *goja.Object) string {
	entries := len(output)
	if extrasType == kArrayExtrasType && entries > 6 {
		output = c.groupArrayElements(output, value)
	}
	if c.currentDepth-recurseTimes < compact && entries == len(output) {
		start := len(output) + c.indentationLvl + jsLen(braces[0]) + jsLen(base) + 10
		if c.isBelowBreakLength(output, start, base) {
			joined := strings.Join(output, ", ")
			if !strings.Contains(joined, "\n") {
				b := ""
				if base != "" {
					b = base + " "
				}
				return b + braces[0] + " " + joined + " " + braces[1]
			}
		}
	}
	ind := "\n" + strings.Repeat(" ", c.indentationLvl)
	b := ""
	if base != "" {
		b = base + " "
	}
	return b + braces[0] + ind + "  " + strings.Join(output, ","+ind+"  ") + ind + braces[1]
}

func (c *ctx) groupArrayElements(output []string, value *goja.Object) []string {
	totalLength := 0
	maxLength := 0
	outputLength := len(output)
	if maxArrayLength < len(output) {
		// the "... n more items" entry is not grouped
		outputLength--
	}
	const separatorSpace = 2
	dataLen := make([]int, outputLength)
	for i := 0; i < outputLength; i++ {
		l := stringWidth(output[i])
		dataLen[i] = l
		totalLength += l + separatorSpace
		if maxLength < l {
			maxLength = l
		}
	}
	actualMax := maxLength + separatorSpace
	if actualMax*3+c.indentationLvl < breakLength &&
		(float64(totalLength)/float64(actualMax) > 5 || maxLength <= 6) {
		const approxCharHeights = 2.5
		averageBias := math.Sqrt(float64(actualMax) - float64(totalLength)/float64(len(output)))
		biasedMax := math.Max(float64(actualMax)-3-averageBias, 1)
		columns := min(
			int(math.Round(math.Sqrt(approxCharHeights*biasedMax*float64(outputLength))/biasedMax)),
			(breakLength-c.indentationLvl)/actualMax,
			compact*4,
			15,
		)
		if columns <= 1 {
			return output
		}
		var tmp []string
		maxLineLength := make([]int, 0, columns)
		for i := 0; i < columns; i++ {
			lineMaxLength := 0
			for j := i; j < len(output); j += columns {
				if j < outputLength && dataLen[j] > lineMaxLength {
					lineMaxLength = dataLen[j]
				}
			}
			maxLineLength = append(maxLineLength, lineMaxLength+separatorSpace)
		}
		padStart := true
		if value != nil {
			padStart = c.allNumbers(value, len(output))
		}
		for i := 0; i < outputLength; i += columns {
			maxI := min(i+columns, outputLength)
			var str strings.Builder
			j := i
			for ; j < maxI-1; j++ {
				padding := maxLineLength[j-i] + jsLen(output[j]) - dataLen[j]
				str.WriteString(pad(output[j]+", ", padding, padStart))
			}
			if padStart {
				padding := maxLineLength[j-i] + jsLen(output[j]) - dataLen[j] - separatorSpace
				str.WriteString(pad(output[j], padding, true))
			} else {
				str.WriteString(output[j])
			}
			tmp = append(tmp, str.String())
		}
		if outputLength < len(output) {
			tmp = append(tmp, output[outputLength])
		}
		output = tmp
	}
	return output
}

// allNumbers: value[i] is a number or bigint for every i < n (Node reads
// value[i] here; holes and accessors count as not numbers).
func (c *ctx) allNumbers(value *goja.Object, n int) bool {
	if info, ok := value.MustardTypedArray(); ok {
		return n <= info.Length
	}
	for i := 0; i < n; i++ {
		c.in.step()
		d := value.MustardOwnProp(c.in.rt.ToValue(i))
		if d.Value == nil {
			if !d.Present {
				// a hole reads through the prototype chain; an array's
				// prototype holds no numbers.
				return false
			}
			return false
		}
		if _, isObj := d.Value.(*goja.Object); isObj {
			return false
		}
		if !goja.IsNumber(d.Value) && !goja.IsBigInt(d.Value) {
			return false
		}
	}
	return true
}

func pad(s string, width int, start bool) string {
	n := jsLen(s)
	if n >= width {
		return s
	}
	if start {
		return strings.Repeat(" ", width-n) + s
	}
	return s + strings.Repeat(" ", width-n)
}

// formatPrimitive formats a primitive as inspect shows it inside a value.
func (c *ctx) formatPrimitive(v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	case goja.IsNumber(v):
		return formatNumber(v.ToFloat())
	case goja.IsBigInt(v):
		return v.String() + "n"
	}
	if sym, ok := v.(*goja.Symbol); ok {
		return symbolString(sym)
	}
	if s, ok := v.(goja.String); ok {
		units := unitsOf(s)
		trailer := ""
		if len(units) > maxStringLength {
			rem := len(units) - maxStringLength
			units = units[:maxStringLength]
			trailer = "... " + strconv.Itoa(rem) + " more character" + plural(rem)
		}
		if len(units) > kMinLineLength && len(units) > breakLength-c.indentationLvl-4 {
			// split after each \n
			var parts []string
			last := 0
			for i, u := range units {
				if u == '\n' {
					parts = append(parts, strEscape(units[last:i+1]))
					last = i + 1
				}
			}
			if last < len(units) || len(parts) == 0 {
				parts = append(parts, strEscape(units[last:]))
			}
			return strings.Join(parts, " +\n"+strings.Repeat(" ", c.indentationLvl+2)) + trailer
		}
		return strEscape(units) + trailer
	}
	// boolean
	if v.ToBoolean() {
		return "true"
	}
	return "false"
}
