package engine

import (
	"math"
	"math/bits"
	"reflect"
	"strconv"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
)

// Built-ins that can do a lot of work, allocate a lot, or recurse inside Go
// in one call are wrapped, so that no single call can escape the limits:
//   - size pre-checks refuse a result larger than the heap limit before any
//     memory is allocated (deterministic);
//   - the work of a call is charged to the instruction budget by size
//     (deterministic), one instruction per workUnit elements or bytes;
//   - built-ins that recurse in Go over nested values (join, toString,
//     JSON) are bounded to MaxNativeDepth nesting levels;
//   - a backtracking regular expression runs at most RegexpTimeout per call.

// MaxNativeDepth bounds the nesting a recursive built-in may walk.
const MaxNativeDepth = 1000

// RegexpTimeout bounds one backtracking regular-expression match.
const RegexpTimeout = 100 * time.Millisecond

func init() {
	// goja compiles patterns that RE2 cannot run with regexp2, which
	// backtracks; without a timeout one pattern could run for hours.
	regexp2.DefaultMatchTimeout = RegexpTimeout
}

type wrapper func(orig goja.Callable) func(goja.FunctionCall) goja.Value

// installGuards replaces the risky built-ins of the realm with guarded ones.
func (r *realm) installGuards() {
	rt := r.rt
	proto := func(ctor string) *goja.Object {
		return rt.Get(ctor).ToObject(rt).Get("prototype").ToObject(rt)
	}
	str, arr, re := proto("String"), proto("Array"), proto("RegExp")
	json := rt.Get("JSON").ToObject(rt)

	r.wrap(str, "repeat", r.guardRepeat)
	r.wrap(str, "padStart", r.guardPad)
	r.wrap(str, "padEnd", r.guardPad)
	for _, m := range []string{"split", "replace", "replaceAll", "match", "matchAll", "search"} {
		r.wrap(str, m, r.guardStringScan)
	}
	for _, m := range []string{"exec", "test"} {
		r.wrap(re, m, r.guardRegexp)
	}
	r.wrap(arr, "join", r.guardJoin)
	r.wrap(arr, "toString", r.guardRecursive(nil))
	r.wrap(arr, "toLocaleString", r.guardRecursive(chargeLength))
	r.wrap(arr, "fill", r.guardFill)
	r.wrap(arr, "sort", r.guardSort)
	promise := proto("Promise")
	for _, m := range []string{"then", "catch", "finally"} {
		r.wrap(promise, m, r.guardJob)
	}
	// Built-ins that make one element per unit of their input, in one call:
	// refused when the elements alone would pass the heap limit.
	for _, m := range []string{"keys", "values", "entries", "concat", "flat"} {
		r.wrap(arr, m, r.guardElements)
	}
	// Array.prototype[Symbol.iterator] is Array.prototype.values.
	_ = arr.DefineDataPropertySymbol(goja.SymIterator, arr.Get("values"), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	r.wrapSymbol(str, goja.SymIterator, r.guardElements)
	object := rt.Get("Object").ToObject(rt)
	for _, m := range []string{"keys", "values", "entries", "getOwnPropertyNames", "assign"} {
		r.wrap(object, m, r.guardElements)
	}
	r.wrap(rt.Get("Array").ToObject(rt), "from", r.guardElements)
	r.wrap(json, "stringify", r.guardStringify)
	r.wrap(json, "parse", r.guardParse)
	for _, name := range []string{"ArrayBuffer", "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"} {
		r.guardConstructor(name)
	}
}

// wrap replaces obj[name] with a Go function of the same name and length.
func (r *realm) wrap(obj *goja.Object, name string, w wrapper) {
	orig, ok := goja.AssertFunction(obj.Get(name))
	if !ok {
		return
	}
	length := int(obj.Get(name).ToObject(r.rt).Get("length").ToInteger())
	fn := r.newFunction(name, length, w(orig))
	_ = obj.DefineDataProperty(name, fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// wrapSymbol is wrap for a symbol-keyed method.
func (r *realm) wrapSymbol(obj *goja.Object, sym *goja.Symbol, w wrapper) {
	orig, ok := goja.AssertFunction(obj.GetSymbol(sym))
	if !ok {
		return
	}
	fn := r.newFunction("[Symbol.iterator]", 0, w(orig))
	_ = obj.DefineDataPropertySymbol(sym, fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// slotBytes is what one element of an array costs at least.
const slotBytes = 16

// elementCount is how many elements a call may produce from v: an array's
// or array-like's length, a string's length, a Map's or Set's size. It reads
// only the length/size data of built-ins, never runs guest code... except a
// guest-defined length getter, which the original would run anyway.
func elementCount(v goja.Value) int64 {
	switch v := v.(type) {
	case goja.String:
		return int64(v.Length())
	case *goja.Object:
		if v.ExportType() == proxyType {
			return 0
		}
		switch v.ClassName() {
		case "Map", "Set":
			return toCount(v.Get("size"))
		case "String":
			return toCount(v.Get("length"))
		}
		if _, isFn := goja.AssertFunction(v); isFn {
			return 0
		}
		return toCount(v.Get("length"))
	}
	return 0
}

func toCount(v goja.Value) int64 {
	if v == nil || numberKind(v) == reflect.Invalid {
		return 0
	}
	f := v.ToFloat()
	if !(f > 0) {
		return 0
	}
	return int64(math.Min(f, 1<<53))
}

// guardElements refuses a call whose receiver or arguments hold more
// elements than the heap limit has room for, and charges their number.
func (r *realm) guardElements(orig goja.Callable) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		x := r.x
		n := elementCount(c.This)
		for _, a := range c.Arguments {
			n += elementCount(a)
		}
		if !x.admitElements(n) {
			return goja.Undefined()
		}
		return call(orig, c.This, c.Arguments...)
	}
}

// admitElements checks that n elements fit the heap limit and charges
// them; on false the execution is already failing.
func (x *Execution) admitElements(n int64) bool {
	if x.overHeap(float64(n) * slotBytes) {
		x.fail(ErrHeapLimit)
		return false
	}
	return x.charge(uint64(n))
}

// guardJoin is Array.prototype.join written out, so the result's size is
// known as it grows: goja's own join builds the whole string in one native
// call, past the reach of the heap watchdog. Nested arrays reach this guard
// again through toString, bounded by MaxNativeDepth.
func (r *realm) guardJoin(orig goja.Callable) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		x := r.x
		rt := r.rt
		if c.This == nil || goja.IsUndefined(c.This) || goja.IsNull(c.This) {
			return call(orig, c.This, c.Arguments...)
		}
		if x.nativeDepth >= MaxNativeDepth {
			return x.fail(ErrCallDepth)
		}
		x.nativeDepth++
		defer func() { x.nativeDepth-- }()
		o := c.This.ToObject(rt)
		n := toCount(o.Get("length"))
		sep := goja.String(nil)
		if a := c.Argument(0); !goja.IsUndefined(a) {
			sep, _ = a.ToString().(goja.String)
		}
		if sep == nil {
			sep, _ = rt.ToValue(",").(goja.String)
		}
		if !x.charge(uint64(n)) {
			return goja.Undefined()
		}
		if n > 1 && x.overHeap(2*float64(n-1)*float64(sep.Length())) {
			return x.fail(ErrHeapLimit)
		}
		var b goja.StringBuilder
		size := 0
		for k := int64(0); k < n; k++ {
			if k > 0 {
				b.WriteString(sep)
				size += sep.Length()
			}
			el := o.Get(strconv.FormatInt(k, 10))
			if el == nil || goja.IsUndefined(el) || goja.IsNull(el) {
				continue
			}
			sv := el.ToString()
			es, ok := sv.(goja.String)
			if !ok {
				// Numbers and booleans convert to a Value that is not a
				// goja.String; their text is plain ASCII.
				es, _ = rt.ToValue(sv.String()).(goja.String)
			}
			size += es.Length()
			if x.overHeap(2 * float64(size)) {
				return x.fail(ErrHeapLimit)
			}
			b.WriteString(es)
		}
		return b.String()
	}
}

// call invokes a wrapped original, re-throwing its exception unchanged.
func call(orig goja.Callable, this goja.Value, args ...goja.Value) goja.Value {
	v, err := orig(this, args...)
	if err != nil {
		panic(err)
	}
	return v
}

// fail ends the execution with a limit error once the native call returns.
func (x *Execution) fail(e *Error) goja.Value {
	x.realm.rt.Interrupt(e)
	return goja.Undefined()
}

// charge adds the work of a built-in call to the instruction count.
func (x *Execution) charge(units uint64) bool {
	x.meter.Instructions += units / workUnit
	if x.meter.Instructions > x.limits.InstructionBudget {
		x.fail(ErrInstructionBudget)
		return false
	}
	return true
}

func (x *Execution) overHeap(bytes float64) bool {
	return bytes > float64(x.limits.HeapLimitBytes)
}

func isPrimitiveString(v goja.Value) bool {
	_, ok := v.(goja.String)
	return ok
}

// coerceThis converts a string method's receiver once, so a guest
// toString is not run twice (once here, once by the original).
func (x *Execution) coerceThis(this goja.Value) (goja.String, bool) {
	if this == nil || goja.IsUndefined(this) || goja.IsNull(this) {
		return nil, false
	}
	if s, ok := this.(goja.String); ok {
		return s, true
	}
	s, _ := this.ToString().(goja.String)
	return s, s != nil
}

func (r *realm) guardRepeat(orig goja.Callable) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		x := r.x
		s, ok := x.coerceThis(c.This)
		if !ok {
			return call(orig, c.This, c.Arguments...)
		}
		n := c.Argument(0).ToNumber()
		count := n.ToFloat()
		if chars := float64(s.Length()) * count; !math.IsNaN(chars) && count > 0 {
			if x.overHeap(2 * chars) {
				return x.fail(ErrHeapLimit)
			}
			if !x.charge(uint64(chars)) {
				return goja.Undefined()
			}
		}
		return call(orig, s, n)
	}
}

func (r *realm) guardPad(orig goja.Callable) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		x := r.x
		s, ok := x.coerceThis(c.This)
		if !ok {
			return call(orig, c.This, c.Arguments...)
		}
		n := c.Argument(0).ToNumber()
		if max := n.ToFloat(); max > float64(s.Length()) {
			if x.overHeap(2 * max) {
				return x.fail(ErrHeapLimit)
			}
			if !x.charge(uint64(max)) {
				return goja.Undefined()
			}
		}
		args := append([]goja.Value{n}, c.Arguments[min(1, len(c.Arguments)):]...)
		return call(orig, s, args...)
	}
}

// timed runs a call that may reach a backtracking regular expression and
// turns a regexp2 timeout, which goja reports as "no match", into a limit
// failure instead of a silently wrong answer. Only patterns RE2 cannot run
// go to regexp2; every other call is not timed at all.
func (x *Execution) timed(orig goja.Callable, this goja.Value, args []goja.Value, re goja.Value) goja.Value {
	if !mayBacktrack(re) {
		return call(orig, this, args...)
	}
	start := time.Now()
	v := call(orig, this, args...)
	if time.Since(start) >= RegexpTimeout {
		return x.fail(ErrInstructionBudget)
	}
	return v
}

// mayBacktrack reports whether v is a RegExp whose pattern needs goja's
// backtracking engine: lookaround or backreferences.
func mayBacktrack(v goja.Value) bool {
	o, ok := v.(*goja.Object)
	if !ok || o.ExportType() == proxyType || o.ClassName() != "RegExp" {
		return false
	}
	src, ok := o.Get("source").(goja.String)
	if !ok {
		return true
	}
	p := src.String()
	for i := 0; i+1 < len(p); i++ {
		switch {
		case p[i] == '\\' && (p[i+1] >= '1' && p[i+1] <= '9' || p[i+1] == 'k'):
			return true
		case p[i] == '\\':
			i++
		case p[i] == '(' && p[i+1] == '?' && i+2 < len(p) && (p[i+2] == '=' || p[i+2] == '!' || p[i+2] == '<'):
			return true
		}
	}
	return false
}

func (r *realm) guardStringScan(orig goja.Callable) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		x := r.x
		s, ok := x.coerceThis(c.This)
		if !ok {
			return call(orig, c.This, c.Arguments...)
		}
		if !x.charge(uint64(s.Length())) {
			return goja.Undefined()
		}
		return x.timed(orig, s, c.Arguments, c.Argument(0))
	}
}

func (r *realm) guardRegexp(orig goja.Callable) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		x := r.x
		if s, ok := c.Argument(0).(goja.String); ok && !x.charge(uint64(s.Length())) {
			return goja.Undefined()
		}
		return x.timed(orig, c.This, c.Arguments, c.This)
	}
}

// arrayLength reads an array-like receiver's length, 0 for anything else
// (including a negative or non-numeric length, as ToLength gives).
func arrayLength(this goja.Value) int64 {
	o, ok := this.(*goja.Object)
	if !ok || o.ExportType() == proxyType {
		return 0
	}
	return toCount(o.Get("length"))
}

func chargeLength(x *Execution, c goja.FunctionCall) bool {
	return x.charge(uint64(arrayLength(c.This)))
}

// guardRecursive bounds built-ins that recurse into nested arrays inside Go.
func (r *realm) guardRecursive(pre func(*Execution, goja.FunctionCall) bool) wrapper {
	return func(orig goja.Callable) func(goja.FunctionCall) goja.Value {
		return func(c goja.FunctionCall) goja.Value {
			x := r.x
			if x.nativeDepth >= MaxNativeDepth {
				x.fail(ErrCallDepth)
				return goja.Undefined()
			}
			if pre != nil && !pre(x, c) {
				return goja.Undefined()
			}
			x.nativeDepth++
			defer func() { x.nativeDepth-- }()
			return call(orig, c.This, c.Arguments...)
		}
	}
}

func (r *realm) guardJob(orig goja.Callable) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		x := r.x
		if !x.charge(JobWeight * workUnit) {
			return goja.Undefined()
		}
		return call(orig, c.This, c.Arguments...)
	}
}

func (r *realm) guardFill(orig goja.Callable) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		x := r.x
		// Lazily sized arrays allocate every slot on fill.
		if !x.admitElements(arrayLength(c.This)) {
			return goja.Undefined()
		}
		return call(orig, c.This, c.Arguments...)
	}
}

func (r *realm) guardSort(orig goja.Callable) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		x := r.x
		n := uint64(arrayLength(c.This))
		if !x.charge(n * uint64(bits.Len64(n))) {
			return goja.Undefined()
		}
		return call(orig, c.This, c.Arguments...)
	}
}

// guardStringify bounds JSON.stringify's recursion: a replacer of ours
// sees every value before it is serialized, tracks its depth, and charges
// the work. A guest replacer still runs, first.
func (r *realm) guardStringify(orig goja.Callable) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		x := r.x
		depth := map[*goja.Object]int{}
		var guestFn goja.Callable
		var allow map[string]bool
		if fn, ok := goja.AssertFunction(c.Argument(1)); ok {
			guestFn = fn
		} else if list, ok := c.Argument(1).(*goja.Object); ok && list.ClassName() == "Array" {
			allow = map[string]bool{}
			n := arrayLength(list)
			for i := int64(0); i < n && i < 1<<20; i++ {
				item := list.Get(strconv.FormatInt(i, 10))
				if item == nil {
					continue
				}
				if _, isString := item.(goja.String); isString || numberKind(item) != reflect.Invalid {
					allow[item.String()] = true
				}
			}
		}
		visited := uint64(0)
		size := 0
		replacer := x.realm.newFunction("", 2, func(rc goja.FunctionCall) goja.Value {
			key, val := rc.Argument(0), rc.Argument(1)
			holder, _ := rc.This.(*goja.Object)
			d := 0
			if holder != nil {
				d = depth[holder]
				if allow != nil && holder.ClassName() != "Array" && d > 0 && !allow[key.String()] {
					return goja.Undefined()
				}
			}
			if guestFn != nil {
				val = call(guestFn, rc.This, key, val)
			}
			visited++
			if visited%workUnit == 0 && !x.charge(workUnit) {
				return goja.Undefined()
			}
			// The output's size, estimated from what is about to be written
			// (goja builds it in one native call, past the watchdog's reach).
			size += 8
			if ks, ok := key.(goja.String); ok {
				size += ks.Length()
			}
			if vs, ok := val.(goja.String); ok {
				size += vs.Length()
			} else if numberKind(val) != reflect.Invalid {
				size += 24
			}
			if x.overHeap(2 * float64(size)) {
				x.fail(ErrHeapLimit)
				return goja.Undefined()
			}
			if o, ok := val.(*goja.Object); ok {
				if d+1 > MaxNativeDepth {
					x.fail(ErrCallDepth)
					return goja.Undefined()
				}
				if _, seen := depth[o]; !seen {
					depth[o] = d + 1
				}
			}
			return val
		})
		// The holder of the top-level value is a fresh object at depth 0.
		return call(orig, goja.Undefined(), c.Argument(0), replacer, c.Argument(2))
	}
}

// guardParse refuses JSON text nested deeper than MaxNativeDepth before
// goja's recursive parser sees it.
func (r *realm) guardParse(orig goja.Callable) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		x := r.x
		text := c.Argument(0)
		if o, ok := text.(*goja.Object); ok {
			text = o.ToString()
		}
		s, ok := text.(goja.String)
		if ok {
			if !x.charge(uint64(s.Length())) {
				return goja.Undefined()
			}
			if jsonNesting(s.String()) > MaxNativeDepth {
				return x.fail(ErrCallDepth)
			}
		}
		args := append([]goja.Value{text}, c.Arguments[min(1, len(c.Arguments)):]...)
		return call(orig, goja.Undefined(), args...)
	}
}

func jsonNesting(s string) int {
	depth, max := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '{':
			depth++
			if depth > max {
				max = depth
			}
		case ']', '}':
			depth--
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		}
	}
	return max
}

// guardConstructor refuses typed arrays and buffers larger than the heap
// limit; they allocate eagerly. The guarding proxy is built on first use of
// the global, which most programs never make.
func (r *realm) guardConstructor(name string) {
	global := r.rt.GlobalObject()
	ctor, ok := global.Get(name).(*goja.Object)
	if !ok {
		return
	}
	define := func(v goja.Value) {
		_ = global.DefineDataProperty(name, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
	getter := r.newFunction("get "+name, 0, func(goja.FunctionCall) goja.Value {
		guarded := r.guardedConstructor(name, ctor)
		define(guarded)
		return guarded
	})
	setter := r.newFunction("set "+name, 1, func(c goja.FunctionCall) goja.Value {
		define(c.Argument(0))
		return goja.Undefined()
	})
	_ = global.DefineAccessorProperty(name, getter, setter, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

func (r *realm) guardedConstructor(name string, ctor *goja.Object) goja.Value {
	rt := r.rt
	elem := float64(1)
	switch name {
	case "Int16Array", "Uint16Array":
		elem = 2
	case "Int32Array", "Uint32Array", "Float32Array":
		elem = 4
	case "Float64Array", "BigInt64Array", "BigUint64Array":
		elem = 8
	}
	tooLarge := func(x *Execution, args goja.Value) bool {
		list, ok := args.(*goja.Object)
		if !ok {
			return false
		}
		first := list.Get("0")
		if first == nil {
			return false
		}
		if numberKind(first) == reflect.Invalid {
			return false
		}
		return x.overHeap(first.ToFloat() * elem)
	}
	construct, _ := goja.AssertFunction(rt.Get("Reflect").ToObject(rt).Get("construct"))
	handler := rt.NewObject()
	_ = handler.Set("construct", r.newFunction("construct", 3, func(c goja.FunctionCall) goja.Value {
		x := r.x
		if tooLarge(x, c.Argument(1)) {
			x.fail(ErrHeapLimit)
			return rt.NewObject()
		}
		return call(construct, goja.Undefined(), c.Arguments...)
	}))
	guarded, err := rt.New(rt.Get("Proxy"), ctor, handler)
	if err != nil {
		return ctor
	}
	return guarded
}

// numberKind tells a primitive number (Int64 or Float64) from anything
// else (Invalid) without exporting, which would copy objects.
func numberKind(v goja.Value) reflect.Kind {
	if _, isObject := v.(*goja.Object); isObject || v == nil {
		return reflect.Invalid
	}
	if t := v.ExportType(); t != nil {
		if k := t.Kind(); k == reflect.Int64 || k == reflect.Float64 {
			return k
		}
	}
	return reflect.Invalid
}
