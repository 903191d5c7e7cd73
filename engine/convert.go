package engine

import (
	"errors"
	"math/big"
	"reflect"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/unistring"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// boundaryError is a value that may not cross the structured host boundary.
type boundaryError struct{ msg string }

func (e *boundaryError) Error() string { return e.msg }

var (
	proxyType  = reflect.TypeOf(goja.Proxy{})
	bigIntType = reflect.TypeOf((*big.Int)(nil))
	// What goja exports a Map and a Set as: no other object of class
	// "Object" exports as either.
	mapType = reflect.TypeOf([][2]any{})
	setType = reflect.TypeOf([]any{})
)

// exporter converts one guest value to a structured value. A guest array
// or object may appear only once in a value (trees, not graphs), and
// accessors are never invoked.
type exporter struct {
	r    *realm
	seen map[*goja.Object]bool // true while on the current path
	room uint64                // bytes the exported value may still take
}

// errTooLarge: the exported value would take more memory than the heap
// limit allows (the same 4 MB string 1,000 times is 4 GB once copied and
// encoded), checked before it is built.
var errTooLarge = errors.New("value too large")

// What one exported element or member takes besides its text.
const (
	elemBytes   = uint64(unsafe.Sizeof(value.Value{}))
	memberBytes = uint64(unsafe.Sizeof(value.Member{}))
)

// export converts a value crossing the boundary, within the execution's
// heap limit.
func (r *realm) export(v goja.Value) (value.Value, error) {
	return r.exporter().value(v, 0)
}

// exporter starts an export whose values share the room of one heap limit.
func (r *realm) exporter() *exporter {
	return &exporter{r: r, seen: map[*goja.Object]bool{}, room: r.x.limits.HeapLimitBytes}
}

// stringBytes bounds the WTF-8 size of a guest string: its length when it
// is ASCII, at most 3 bytes per UTF-16 unit otherwise.
// An imported string answers its length without becoming UTF-16: one the
// guest passes on as it came never does.
func stringBytes(s goja.String) uint64 {
	if goja.IsASCII(s) {
		return uint64(s.Length())
	}
	return 3 * uint64(s.Length())
}

// take reserves n bytes of the export's room.
func (e *exporter) take(n uint64) error {
	if n > e.room {
		return errTooLarge
	}
	e.room -= n
	return nil
}

func (e *exporter) value(v goja.Value, depth int) (value.Value, error) {
	if v == nil || goja.IsUndefined(v) {
		return value.Undefined(), nil
	}
	if goja.IsNull(v) {
		return value.Null(), nil
	}
	switch v := v.(type) {
	case *goja.Object:
		return e.object(v, depth)
	case *goja.Symbol:
		return value.Value{}, &boundaryError{"symbols cannot cross the structured host boundary"}
	case goja.String:
		if err := e.take(stringBytes(v)); err != nil {
			return value.Value{}, err
		}
		return value.String(guestString(v)), nil
	}
	t := v.ExportType()
	if t == nil {
		return value.Value{}, &boundaryError{"value cannot cross the structured host boundary"}
	}
	switch t.Kind() {
	case reflect.Bool:
		return value.Bool(v.ToBoolean()), nil
	case reflect.Int64, reflect.Float64, reflect.Int, reflect.Int32, reflect.Uint32:
		return value.Number(v.ToFloat()), nil
	case reflect.String:
		return value.String(v.String()), nil
	}
	if t == bigIntType {
		return value.Value{}, &boundaryError{"BigInt values cannot cross the structured host boundary"}
	}
	return value.Value{}, &boundaryError{"value cannot cross the structured host boundary"}
}

func (e *exporter) object(o *goja.Object, depth int) (value.Value, error) {
	if depth >= value.MaxDepth {
		return value.Value{}, &boundaryError{"structured host boundary nesting limit exceeded"}
	}
	if onPath, ok := e.seen[o]; ok {
		if onPath {
			return value.Value{}, &boundaryError{"cyclic values cannot cross the structured host boundary"}
		}
		return value.Value{}, &boundaryError{"a value reachable twice (shared reference) cannot cross the structured host boundary"}
	}
	exported := o.ExportType()
	if exported == proxyType {
		return value.Value{}, &boundaryError{"proxies cannot cross the structured host boundary"}
	}
	if _, callable := goja.AssertFunction(o); callable {
		return value.Value{}, &boundaryError{"functions cannot cross the structured host boundary"}
	}
	class := o.ClassName()
	proto := o.Prototype()
	switch {
	case class == "Array" && proto == e.r.rt.MustardArrayPrototype():
		e.seen[o] = true
		defer func() { e.seen[o] = false }()
		return e.array(o, depth)
	case class == "Object" && (proto == nil || proto == e.r.rt.MustardObjectPrototype()):
		e.seen[o] = true
		defer func() { e.seen[o] = false }()
		return e.plain(o, depth)
	case class == "Function":
		return value.Value{}, &boundaryError{"functions cannot cross the structured host boundary"}
	case class == "Object" && (exported == mapType || exported == setType):
		return value.Value{}, &boundaryError{"Map and Set values cannot cross the structured host boundary"}
	case class == "Object" || class == "Array":
		return value.Value{}, &boundaryError{"class instances cannot cross the structured host boundary"}
	}
	return value.Value{}, &boundaryError{class + " objects cannot cross the structured host boundary"}
}

// ownData reads an own data property without running any accessor: an
// accessor property fails the export. The read is native (no descriptor
// object is built, no prototype consulted), so nothing the guest defined
// elsewhere can interfere.
func (e *exporter) ownData(o *goja.Object, key goja.Value) (v goja.Value, present bool, err error) {
	v, present, accessor := o.MustardOwnData(key)
	if accessor {
		return nil, true, &boundaryError{"accessor properties cannot cross the structured host boundary"}
	}
	return v, present, nil
}

// ownKeys returns an object's own enumerable string keys as guest strings,
// in property order, so keys that Go strings cannot hold survive.
func (e *exporter) ownKeys(o *goja.Object) ([]goja.Value, error) {
	if len(o.Symbols()) > 0 {
		return nil, &boundaryError{"symbol-keyed properties cannot cross the structured host boundary"}
	}
	keys, err := o.MustardOwnKeys()
	if err != nil {
		return nil, e.keysFailed(err)
	}
	return keys, nil
}

// keysFailed is why listing an object's keys failed. Listing them is
// metered as Object.keys is, so a budget (or the heap limit) can run out
// while a value is copied out of the guest: that is the limit's own
// failure, wherever it strikes, as is any other interrupt (a cancel, a
// wall-time limit).
func (e *exporter) keysFailed(err error) error {
	if ie, ok := err.(*goja.InterruptedError); ok {
		return e.r.x.failure(ie)
	}
	return &boundaryError{"value cannot cross the structured host boundary"}
}

func (e *exporter) array(o *goja.Object, depth int) (value.Value, error) {
	n := o.Get("length").ToInteger()
	if n > value.MaxArrayLength {
		return value.Value{}, &boundaryError{"arrays longer than 1000000 elements cannot cross the structured host boundary"}
	}
	// Only the elements cross, as in the reference: other own properties
	// (a match result's index, input and groups, anything a guest added,
	// symbol-keyed ones) stay behind, unread. The keys are still listed
	// so that the export is metered as it always was: snapshots record
	// meter readings taken after a call's arguments were exported.
	if _, err := o.MustardOwnKeys(); err != nil {
		return value.Value{}, e.keysFailed(err)
	}
	if err := e.take(uint64(n) * elemBytes); err != nil {
		return value.Value{}, err
	}
	elems := make([]value.Value, n)
	for i := range elems {
		ev, present, err := e.ownData(o, e.r.rt.ToValue(i))
		if err != nil {
			return value.Value{}, err
		}
		if !present {
			elems[i] = value.Hole()
			continue
		}
		if elems[i], err = e.value(ev, depth+1); err != nil {
			return value.Value{}, err
		}
	}
	return value.Array(elems...), nil
}

func (e *exporter) plain(o *goja.Object, depth int) (value.Value, error) {
	keys, err := e.ownKeys(o)
	if err != nil {
		return value.Value{}, err
	}
	if err := e.take(uint64(len(keys)) * memberBytes); err != nil {
		return value.Value{}, err
	}
	members := make([]value.Member, 0, len(keys))
	for _, k := range keys {
		pv, present, err := e.ownData(o, k)
		if err != nil {
			return value.Value{}, err
		}
		if !present {
			continue
		}
		mv, err := e.value(pv, depth+1)
		if err != nil {
			return value.Value{}, err
		}
		ks, _ := k.(goja.String)
		if ks == nil {
			ks, _ = k.ToString().(goja.String)
		}
		if err := e.take(stringBytes(ks)); err != nil {
			return value.Value{}, err
		}
		members = append(members, value.Member{Key: guestString(ks), Value: mv})
	}
	return value.Object(members...), nil
}

// guestString converts a guest string to WTF-8 without losing unpaired
// surrogates.
func guestString(s goja.String) string {
	if str, ok := goja.MustardUTF8(s); ok {
		return str
	}
	if u := goja.MustardUTF16(s); u != nil {
		return value.FromUTF16(u)
	}
	str := s.String()
	ascii := true
	for i := 0; i < len(str); i++ {
		if str[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return str
	}
	u := make([]uint16, s.Length())
	for i := range u {
		u[i] = s.CharAt(i)
	}
	return value.FromUTF16(u)
}

// importBytes is what importValue will make of v, counted before it is
// made, as the walk of what a parked execution keeps counts it
// (internal/goja/mustard_retained.go): strings by their guest size (a
// byte per character when ASCII, two per UTF-16 unit otherwise).
func importBytes(v value.Value) uint64 {
	switch v.Kind {
	case value.KindNumber:
		return goja.MustardRetainedNumber
	case value.KindString:
		return goja.MustardRetainedString + guestStringBytes(v.Str)
	case value.KindArray:
		n := uint64(goja.MustardRetainedObject + goja.MustardRetainedArray)
		for _, el := range v.Elems {
			n += goja.MustardRetainedSlot + importBytes(el)
		}
		return n
	case value.KindObject:
		n := uint64(goja.MustardRetainedObject)
		for _, m := range v.Members {
			n += goja.MustardRetainedProperty + guestStringBytes(m.Key) + importBytes(m.Value)
		}
		return n
	}
	return 0
}

// guestStringBytes is the size goja keeps a string at: a byte per
// character when ASCII, two per UTF-16 unit otherwise. Its ASCII prefix
// is read eight bytes at a time: an answer of a megabyte is counted in
// well under its import's time.
func guestStringBytes(s string) uint64 {
	i := unistring.ASCIIPrefix(s)
	if i == len(s) {
		return uint64(len(s))
	}
	return 2 * uint64(i+unistring.UTF16Len(s[i:]))
}

// importValue builds a guest value from a structured value.
func (r *realm) importValue(v value.Value) goja.Value {
	rt := r.rt
	switch v.Kind {
	case value.KindNull:
		return goja.Null()
	case value.KindBool:
		return rt.ToValue(v.Bool)
	case value.KindNumber:
		return rt.ToValue(v.Num)
	case value.KindString:
		return r.importString(v.Str)
	case value.KindArray:
		dense := true
		for _, el := range v.Elems {
			if el.Kind == value.KindHole {
				dense = false
				break
			}
		}
		if dense {
			items := make([]interface{}, len(v.Elems))
			for i, el := range v.Elems {
				items[i] = r.importValue(el)
			}
			return rt.NewArray(items...)
		}
		// Defined, not set: a guest setter on Array.prototype must not run.
		arr := rt.NewArray()
		for i, el := range v.Elems {
			if el.Kind != value.KindHole {
				_ = arr.DefineDataProperty(strconv.Itoa(i), r.importValue(el), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
			}
		}
		_ = arr.Set("length", len(v.Elems))
		return arr
	case value.KindObject:
		o := rt.MustardNewObject(len(v.Members))
		for _, m := range v.Members {
			// Define, not Set: a "__proto__" key is an own property.
			if utf8.ValidString(m.Key) {
				o.MustardPutData(m.Key, r.importValue(m.Value))
				continue
			}
			// A key with an unpaired surrogate needs a guest string.
			o.MustardPutDataKey(r.importString(m.Key).(goja.String), r.importValue(m.Value))
		}
		return o
	}
	return goja.Undefined()
}

// importEncoded is importValue for a value's checked binary form (an
// answer, hot or journaled): the same guest values, made in the same
// order, read straight from the bytes instead of from a decoded Value.
func (r *realm) importEncoded(e *value.Encoded) (goja.Value, error) {
	return r.importEncodedAt(e, false)
}

// importEncodedAt imports the next value; elem is set for an array's
// element, which may be a hole (nil).
func (r *realm) importEncodedAt(e *value.Encoded, elem bool) (goja.Value, error) {
	it, err := e.Next()
	if err != nil {
		return nil, err
	}
	rt := r.rt
	switch it.Kind {
	case value.KindNull:
		return goja.Null(), nil
	case value.KindBool:
		return rt.ToValue(it.Bool), nil
	case value.KindNumber:
		return rt.ToValue(it.Num), nil
	case value.KindString:
		return r.importString(it.Str), nil
	case value.KindArray:
		// Elements first, as importValue's dense path makes them; holes
		// (nil) send the array down its sparse path.
		items := make([]interface{}, it.Len)
		dense := true
		for i := range items {
			v, err := r.importEncodedAt(e, true)
			if err != nil {
				return nil, err
			}
			if v == nil {
				dense = false
				continue
			}
			items[i] = v
		}
		if dense {
			return rt.NewArray(items...), nil
		}
		arr := rt.NewArray()
		for i, v := range items {
			if v != nil {
				_ = arr.DefineDataProperty(strconv.Itoa(i), v.(goja.Value), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
			}
		}
		_ = arr.Set("length", len(items))
		return arr, nil
	case value.KindObject:
		o := rt.MustardNewObject(it.Len)
		for range it.Len {
			k, err := e.Key()
			if err != nil {
				return nil, err
			}
			v, err := r.importEncodedAt(e, false)
			if err != nil {
				return nil, err
			}
			if utf8.ValidString(k) {
				o.MustardPutData(k, v)
				continue
			}
			o.MustardPutDataKey(r.importString(k).(goja.String), v)
		}
		return o, nil
	case value.KindHole:
		if elem {
			return nil, nil
		}
		return nil, value.ErrNotChecked // only an array's element may be one
	}
	return goja.Undefined(), nil
}

// encodedBytes is importBytes for a value's checked binary form, read
// with value.NewEncodedView so that counting copies nothing.
func encodedBytes(e *value.Encoded) (uint64, error) {
	it, err := e.Next()
	if err != nil {
		return 0, err
	}
	switch it.Kind {
	case value.KindNumber:
		return goja.MustardRetainedNumber, nil
	case value.KindString:
		return goja.MustardRetainedString + guestStringBytes(it.Str), nil
	case value.KindArray:
		n := uint64(goja.MustardRetainedObject + goja.MustardRetainedArray)
		for range it.Len {
			b, err := encodedBytes(e)
			if err != nil {
				return 0, err
			}
			n += goja.MustardRetainedSlot + b
		}
		return n, nil
	case value.KindObject:
		n := uint64(goja.MustardRetainedObject)
		for range it.Len {
			k, err := e.Key()
			if err != nil {
				return 0, err
			}
			b, err := encodedBytes(e)
			if err != nil {
				return 0, err
			}
			n += goja.MustardRetainedProperty + guestStringBytes(k) + b
		}
		return n, nil
	}
	return 0, nil
}

func (r *realm) importString(s string) goja.Value {
	if v, ok := r.rt.MustardStringUTF8(s); ok {
		return v
	}
	return goja.StringFromUTF16(value.ToUTF16(s))
}
